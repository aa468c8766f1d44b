"""The benchmarks call the services as an entry point does (tenants/entry.py): embed first, then one scope in which
the caller is loaded and the service runs. Each call records its steps, so a bench can print time per step."""
from memory import recall, services
from memory.embeddings import embed_one
from plumbing.timing import StepTimer
from tenants import entry
from tenants.auth import Identity, Principal


def remember(principal: Principal, content: str, steps: StepTimer | None = None, **fields) -> services.RememberResult:
    steps = steps or StepTimer()
    with entry.enter(_identity(principal), steps, prepare=lambda: services.memory_embedding(content)) as entered:
        result = services.memory_remember(principal=entered.principal, draft=services.MemoryDraft(
            content=content, **fields), embedded=entered.prepared, steps=steps)
    steps.lap("commit")
    return result


def recall_as(principal: Principal, q: recall.RecallQuery, steps: StepTimer | None = None) -> recall.RecallResult:
    steps = steps or StepTimer()
    with entry.enter(_identity(principal), steps, prepare=lambda: embed_one(q.query)) as entered:
        result = recall.memory_recall(principal=entered.principal, q=q, vector=entered.prepared, steps=steps)
    steps.lap("commit")
    return result


def _identity(principal: Principal) -> Identity:
    """The caller as a token or session presents it: entering loads it again, as every request does."""
    return Identity(scope=principal.scope, token_id=principal.token.id if principal.token else None)
