"""The optional fields of remember, recall and the feed, each declared once for both clients.

The methods take them as keyword arguments (`remember(content, kind="fact", project="web")`), typed through
`Unpack[...]`, and send exactly the keys the caller gave: the server's defaults apply to the rest. A field the API
gains is one line here (e.g. `namespace: Sequence[str]` in RememberFields) and both clients take it.
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


class RecallFields(TypedDict, total=False):
    k: int  # 1..50, default 10
    project: str | None
    scope: str  # personal | project | all
    kinds: Sequence[str]
    include_history: bool
    as_of: datetime | str | None


class FeedFields(TypedDict, total=False):
    lifecycle: str  # live (default) | superseded | forgotten | all
    kind: str
    project: str
    scope: str  # personal | project
    limit: int  # 1..200, default 50


def declared(fields_type: type) -> frozenset[str]:
    return frozenset(fields_type.__annotations__)
