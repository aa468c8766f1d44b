"""Writing memories in the tests: the links of a declared supersede, an in-process write as a principal, and a write
through the API that returns the new memory's id."""
from memory import services


def supersedes(*ids, reason=None):
    return [{"type": "supersedes", "dst": i, **({"reason": reason} if reason else {})} for i in ids]


WRITERS = 8  # concurrent writers of the race tests


def remember_in_process(principal, content: str, embedded=None, **kwargs) -> services.RememberResult:
    embedded = services.memory_embedding(content) if embedded is None else embedded
    draft = services.MemoryDraft(content=content, project="web", **kwargs)
    return services.memory_remember(principal=principal, draft=draft, embedded=embedded)


def remember_id(api, token, content, expect=201, **body):
    response = api(token).post("/api/v1/memories", {"content": content, **body}, format="json")
    assert response.status_code == expect, response.content
    return response.json()["memory"]["id"]
