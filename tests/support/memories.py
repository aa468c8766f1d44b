"""Writing memories in the tests: the links of a declared supersede, an in-process write as a principal, a write
through the API that returns the new memory's id, and writers released together in threads."""
import threading
from collections.abc import Callable
from typing import TypeVar

from django.db import connection

from memory import services

T = TypeVar("T")


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


def at_once(count: int, work: Callable[[int], T]) -> list[T | Exception]:
    """Run ``work(0)`` .. ``work(count - 1)`` in as many threads, released together by a barrier, each on its own
    database connection (closed after); a thread's exception is its result."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = work(index)
        except Exception as error:  # noqa: BLE001 - returned as the thread's result
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
