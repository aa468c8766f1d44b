"""The benchmarks are entry points too (tenants/rls.py): embed first, then one scope around the service."""
from memory import recall, services
from memory.embeddings import embed_one
from tenants import rls
from tenants.auth import Principal


def remember(principal: Principal, content: str, **fields) -> services.RememberResult:
    vector = services.memory_embedding(content)
    draft = services.MemoryDraft(content=content, **fields)
    with rls.tenant_scope(principal.scope):
        return services.memory_remember(principal=principal, draft=draft, vector=vector)


def recall_as(principal: Principal, q: recall.RecallQuery) -> recall.RecallResult:
    vector = embed_one(q.query)
    with rls.tenant_scope(principal.scope):
        return recall.memory_recall(principal=principal, q=q, vector=vector)
