"""The benchmarks call the services as an entry point does (tenants/rls.py): embed first, then one scope in which
the caller is loaded and the service runs. Each call records its steps, so a bench can print time per step."""
from config.timing import StepTimer
from memory import recall, services
from memory.embeddings import embed_one
from tenants import rls
from tenants.auth import Principal, load_principal


def remember(principal: Principal, content: str, steps: StepTimer | None = None, **fields) -> services.RememberResult:
    steps = steps or StepTimer()
    embedded = services.memory_embedding(content)
    steps.lap("embed")
    with rls.tenant_scope(principal.scope):
        caller = _identity(principal)
        steps.lap("identity")
        result = services.memory_remember(
            principal=caller, draft=services.MemoryDraft(content=content, **fields), embedded=embedded, steps=steps
        )
    steps.lap("commit")
    return result


def recall_as(principal: Principal, q: recall.RecallQuery, steps: StepTimer | None = None) -> recall.RecallResult:
    steps = steps or StepTimer()
    vector = embed_one(q.query)
    steps.lap("embed")
    with rls.tenant_scope(principal.scope):
        caller = _identity(principal)
        steps.lap("identity")
        result = recall.memory_recall(principal=caller, q=q, vector=vector, steps=steps)
    steps.lap("commit")
    return result


def _identity(principal: Principal) -> Principal:
    """Load the caller again, as every request does (its membership and token may have changed)."""
    return load_principal(principal.scope, principal.token.id if principal.token else None)
