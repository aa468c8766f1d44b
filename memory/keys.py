"""Keyed memories (API.md "Keyed memories"): a namespace and a key name one fact, and writing the key again
replaces it, as a declared supersede of the key's live holder under the same guardrails as a link in the body.

Keys belong to the organization: one live holder per key, whoever wrote it. Writers of one key take its lock in
turn, so the second finds the first's version and replaces it (never two live holders); a unique index of live
holders (migration 0015) holds the rule even if that failed. A key held by a memory the caller cannot see is
refused, not shared.
"""
import hashlib
import json

from django.db import connection

from memory.models import Memory
from memory.normalize import content_hash
from plumbing.errors import Code, Forbidden, Invalid
from tenants import rls
from tenants.auth import Principal
from tenants.models import Project


def key_hash(namespace: list[str] | None, key: str) -> str:
    """What the index holds for a key: labels and keys together can be longer than a btree entry may be."""
    return hashlib.sha256(json.dumps([namespace or [], key], ensure_ascii=False).encode()).hexdigest()


def lock_key(digest: str) -> None:
    """Until the transaction ends, this writer alone reads and replaces the key's holder."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 2))",
                       [f"{rls.require_scope().org_id}:{digest}"])


def key_holder(digest: str) -> str | None:
    """The live memory of the caller's organization that holds the key, visible to the caller or not (an id only:
    the caller learns whether to replace it or to be refused)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT zm_key_holder(%s)", [digest])
        return cursor.fetchone()[0]


def claim(namespace: list[str] | None, key: str | None) -> str | None:
    """For a keyed write: take the key's lock and answer its live holder, which the write replaces."""
    if key is None:
        return None
    digest = key_hash(namespace, key)
    lock_key(digest)
    return key_holder(digest)


def require_visible(holder: str, locked: dict, namespace: list[str] | None, key: str) -> None:
    if holder not in locked:  # the id is not the caller's to learn: the key says which memory is meant
        raise Forbidden(Code.TARGET_INVISIBLE, "This key is held by a memory that is not visible to you; nothing was "
                        "stored.", {"namespace": namespace, "key": key})


def same_memory(holder: Memory, content: str, metadata: dict, scope: str, project: Project | None) -> bool:
    """Whether a write would store the holder again (content, metadata and place): a new value in a field the
    content leaves out is a new version, not a duplicate."""
    return (holder.content_hash, holder.metadata, holder.scope, holder.project_id) == (
        content_hash(content), metadata, scope, project.id if project else None)


def check_replace(principal: Principal, holder: str, namespace: list[str] | None, key: str) -> None:
    """A keyed write replaces its key's holder under the rules of a declared supersede."""
    where = {"namespace": namespace, "key": key}
    if principal.is_watcher:
        raise Forbidden(Code.SUPERSEDE_FORBIDDEN, "Watcher tokens write provisional memories and cannot replace the "
                        "memory that holds a key.", {**where, "dst": holder})
    if principal.org.require_supersede_reason:
        raise Invalid(Code.REASON_REQUIRED, "This organization requires a reason on every supersede: declare the key's"
                      " current memory as a supersedes link with a reason.", {**where, "dst": [holder]})


def take(memory: Memory, digest: str) -> None:
    """Give a new version its key once the version it replaces is retired: the unique index of live holders is
    checked at once, so the two cannot both hold it for a moment."""
    Memory.objects.filter(pk=memory.pk).update(key_hash=digest)
    memory.key_hash = digest
