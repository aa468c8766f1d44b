"""Typed results: frozen dataclasses for the objects of the API, parsed from its JSON.

Forward compatible by construction: a key the server sends that a class does not declare is kept in `extra` (so a
client older than the server loses nothing and does not fail), and a declared key the server leaves out reads
None. Times become timezone-aware `datetime`s; lists become tuples, so a result cannot be changed by accident.
Adding a field the server starts sending is one line, with a default so that code building the class by hand keeps
working (as `namespace` and `key` on Memory: `namespace: tuple[str, ...] | None = None`).
"""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, Callable, TypeVar, Union

T = TypeVar("T", bound="Model")


def parse_datetime(value: str) -> datetime:
    """The server writes ISO-8601 UTC with a `Z`; `fromisoformat` before Python 3.11 does not take the `Z`."""
    return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)


def _identity(value: Any) -> Any:
    return value


def _converter(hint: Any) -> Callable[[Any], Any]:
    """A function from the JSON value to the declared type: datetime, a nested Model, a tuple of them, or as is."""
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)] or [Any]
        convert = _converter(inner)
        return lambda value: None if value is None else convert(value)
    if hint is datetime:
        return parse_datetime
    if isinstance(hint, type) and issubclass(hint, Model):
        return hint.from_json
    if origin is tuple:
        item = _converter(typing.get_args(hint)[0])
        return lambda value: tuple(item(v) for v in value)
    return _identity


@lru_cache(maxsize=None)
def _plan(cls: type[Model]) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _converter(hints[f.name])) for f in dataclasses.fields(cls) if f.name != "extra")


@dataclass(frozen=True)
class Model:
    """Base of every result class: `from_json` parses the server's object, `extra` keeps keys not declared here."""

    @classmethod
    def from_json(cls: type[T], data: dict[str, Any]) -> T:
        plan = _plan(cls)
        values = {name: None if data.get(name) is None else convert(data[name]) for name, convert in plan}
        known = {name for name, _ in plan}
        extra = {key: value for key, value in data.items() if key not in known}
        return cls(**values, extra=extra)  # type: ignore[call-arg]


def _extra() -> Any:
    return field(default_factory=dict, repr=False, compare=False)


# --- memories ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Owner(Model):
    id: str
    email: str
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class Provenance(Model):
    writer: str  # agent, human, watcher, hygiene, review, check, source
    authoritative: bool
    token: str | None
    session_id: str | None
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class Memory(Model):
    """The memory object of the contract, every field."""

    id: str
    content: str
    kind: str
    scope: str  # personal | project
    project: str | None
    owner: Owner
    status: str  # live | superseded | forgotten
    superseded_by: str | None
    invalidated_at: datetime | None
    invalidated_reason: str | None
    provenance: Provenance
    valid_from: datetime | None
    valid_until: datetime | None
    expired: bool
    loop: str | None  # open | closed | None
    closed_by: str | None
    source: dict[str, Any] | None  # {"source_id", "version", "url"} for a source's version
    metadata: dict[str, Any]
    created_at: datetime
    namespace: tuple[str, ...] | None = None  # a keyed memory's labels, outermost first
    key: str | None = None  # unique among the organization's live memories of the same namespace
    key_since: datetime | None = None  # a keyed memory: when the first version of its chain was written
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class SimilarMemory(Model):
    id: str
    kind: str
    scope: str
    project: str | None
    content_preview: str
    distance: float  # cosine distance: 0 same direction, 2 opposite
    age_seconds: int
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class SkippedLink(Model):
    dst: str
    reason: str  # missing | dead | self
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class RememberResult(Model):
    memory: Memory
    created: bool
    dedup: str | None  # None | exact | near_verbatim
    absorbed_into: str | None
    superseded: tuple[str, ...]
    skipped: tuple[SkippedLink, ...]
    similar_existing: tuple[SimilarMemory, ...] | None  # None when the write declared supersedes
    hint: str | None
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class FeedPage(Model):
    results: tuple[Memory, ...]
    next_cursor: str | None
    extra: dict[str, Any] = _extra()


# --- links, events, checks, conflicts ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Link(Model):
    id: str
    src: str
    dst: str
    type: str  # supersedes | relates_to | derived_from | contradicts | depends_on
    reason: str | None
    retired_dst: bool
    origin: str | None  # declared, judge, review, check, source; None for a plain POST /links edge
    created_by: str | None
    created_at: datetime
    undone_at: datetime | None
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class Event(Model):
    action: str
    actor: str | None
    token: str | None
    payload: dict[str, Any]
    created_at: datetime
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class Check(Model):
    id: str
    memory: str
    outcome: str  # pass | fail
    detail: str
    corrected_by: str | None
    created_at: datetime
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class ConflictSummary(Model):
    """A conflict as listed in a memory's detail (without the two memories)."""

    id: str
    a: str
    b: str
    relation: str
    confidence: float | None
    judge: str
    rationale: str
    status: str
    created_at: datetime
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class ConflictMemories(Model):
    a: Memory
    b: Memory
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class Conflict(Model):
    """A conflict of the review queue: `a` is the older memory."""

    id: str
    a: str
    b: str
    relation: str
    confidence: float | None
    judge: str
    rationale: str
    status: str  # open | resolved
    resolution: str | None
    created_at: datetime
    resolved_at: datetime | None
    memories: ConflictMemories
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class MemoryDetail(Model):
    memory: Memory
    chain: tuple[Memory, ...]  # versions, oldest first
    links: tuple[Link, ...]
    events: tuple[Event, ...]
    checks: tuple[Check, ...]
    conflicts: tuple[ConflictSummary, ...]
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class SourceResult(Model):
    memory: Memory
    created: bool
    superseded: str | None  # the previous version this one retired
    conflict: str | None  # the conflict a watcher's version opened
    extra: dict[str, Any] = _extra()


# --- recall --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RecallWhy(Model):
    vector_rank: int | None
    vector_distance: float | None
    text_rank: int | None
    note: str
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class Disagreeing(Model):
    id: str
    created_at: datetime
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class RecallHit(Model):
    memory: Memory
    rank: int
    score: float
    flags: tuple[str, ...]
    superseded_by: str | None
    conflicts_with: tuple[str, ...]
    disagrees_with: tuple[Disagreeing, ...]
    why: RecallWhy
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class RecallWarning(Model):
    memory: Memory
    check: Check
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class RecallResult(Model):
    """Iterating over it gives the hits in rank order."""

    warnings: tuple[RecallWarning, ...]
    results: tuple[RecallHit, ...]
    trace: dict[str, Any]
    extra: dict[str, Any] = _extra()

    def __iter__(self) -> typing.Iterator[RecallHit]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def memories(self) -> tuple[Memory, ...]:
        return tuple(hit.memory for hit in self.results)


# --- stats ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemoryCounts(Model):
    live: int
    superseded: int
    forgotten: int
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class SupersedeCounts(Model):
    declared: int
    judge: int
    review: int
    check: int
    source: int
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class ConflictCounts(Model):
    open: int
    resolved: int
    auto_resolved: int
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class JudgeStats(Model):
    calls: int
    latency_ms_p50: float | None
    latency_ms_p95: float | None
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class QueueStats(Model):
    pending: int
    same_writer_share: float
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class Stats(Model):
    memories: MemoryCounts
    supersedes: SupersedeCounts
    conflicts: ConflictCounts
    explicit_link_ratio: float
    judge: JudgeStats
    queue: QueueStats
    extra: dict[str, Any] = _extra()


# --- tenancy -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Token(Model):
    id: str
    name: str
    writer: str  # agent | human | watcher
    project: str | None
    user_id: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class IssuedToken(Token):
    """A token as issued: `token` is the secret (`zm_...`), shown this once."""

    token: str = ""


@dataclass(frozen=True)
class Project(Model):
    slug: str
    name: str
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class ProjectMember(Model):
    project: str
    user_id: str
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class User(Model):
    id: str
    email: str
    role: str  # admin | member
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class UserRef(Model):
    id: str
    email: str
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class Me(Model):
    user: UserRef
    org: str
    role: str
    token: Token | None  # None for a web session
    projects: tuple[str, ...]
    extra: dict[str, Any] = _extra()


@dataclass(frozen=True)
class OrgSettings(Model):
    require_supersede_reason: bool
    extra: dict[str, Any] = _extra()
