"""Keyed memories (API.md "Keyed memories"): a namespace and a key name one fact, and writing the key again
replaces it, as a declared supersede of the key's live holder under the same guardrails as a link in the body.

Keys belong to the organization: one live holder per key, whoever wrote it. Writers of one key take its lock in
turn, so the second finds the first's version and replaces it (never two live holders); a deferred exclusion
constraint (migration 0013) holds the rule even if that failed. A key held by a memory the caller cannot see is
refused, not shared.
"""
import hashlib
import json

from django.db import connection

from tenants import rls


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
