"""The optional fields of remember, recall and the feed, each declared once for both clients.

The methods take them as keyword arguments (`remember(content, kind="fact", project="web")`), typed through
`Unpack[...]`, and send exactly the keys the caller gave: the server's defaults apply to the rest. A field the API
gains is one line here (as `namespace` and `key` were) and both clients take it.
"""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypedDict


class LinkSpec(TypedDict, total=False):
    """A link in a write: `{"type": "supersedes", "dst": "mem_...", "reason": "why"}` (`type` and `dst` required)."""

    type: str  # supersedes | relates_to | derived_from | contradicts | depends_on
    dst: str
    reason: str


class RememberFields(TypedDict, total=False):
    kind: str  # fact, decision, lesson, preference, plan, diagnosis, task, open-question, note (default note)
    scope: str  # personal | project
    project: str | None
    links: Sequence[LinkSpec | dict[str, Any]]
    session_id: str | None
    valid_from: datetime | str | None
    valid_until: datetime | str | None
    source: dict[str, Any] | None
    metadata: dict[str, Any]
    # A keyed write: 1..10 labels of 1..200 characters, and a key of 1..512; a write whose (namespace, key) a live
    # memory holds supersedes it (or is absorbed when content and metadata are the same).
    namespace: Sequence[str] | None
    key: str | None


class RecallFields(TypedDict, total=False):
    k: int  # 1..50, default 10
    project: str | None
    scope: str  # personal | project | all
    kinds: Sequence[str]
    include_history: bool
    as_of: datetime | str | None
    namespace_prefix: Sequence[str]  # only memories whose namespace starts with these labels


class FeedFields(TypedDict, total=False):
    lifecycle: str  # live (default) | superseded | forgotten | all
    kind: str
    project: str
    scope: str  # personal | project
    limit: int  # 1..200, default 50
    namespace: Sequence[str]  # exactly this namespace (sent as repeated query parameters, in order)
    key: str
    namespace_prefix: Sequence[str]  # namespaces that start with these labels


def declared(fields_type: type) -> frozenset[str]:
    return frozenset(fields_type.__annotations__)
