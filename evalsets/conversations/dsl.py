"""A tiny DSL for the conversation set: chains of versions, stable facts, complements, contradictions, chat."""
from dataclasses import dataclass, field


@dataclass
class V:
    text: str
    how: str | None = None  # None: first version; "u": undeclared replacement; "d": declared supersede
    reason: str | None = None
    restate: list[str] = field(default_factory=list)  # later near-duplicates of this version
    user: str | None = None  # a teammate writes this version (project conversations)
    kind: str | None = None


@dataclass
class Chain:
    slot: str
    versions: list[V]
    now: list[str]  # questions about the current value
    prev: list[tuple[str, int]] = field(default_factory=list)  # (question, index of the version asked for)
    kind: str = "fact"
    asker: str | None = None  # a teammate asks the current-value questions


@dataclass
class Stable:
    slot: str
    text: str
    q: list[str]
    restate: list[str] = field(default_factory=list)
    kind: str = "fact"


@dataclass
class Comp:
    """A complementary fact about the same topic as `of` (a chain or stable slot): must never retire it."""
    slot: str
    text: str
    of: str
    q: list[str]
    kind: str = "fact"
    user: str | None = None


@dataclass
class Contra:
    slot: str
    a: str
    b: str
    q: list[str]
    user_b: str | None = None
    kind: str = "fact"


@dataclass
class Conv:
    id: str
    user: str
    project: str | None
    start: str  # YYYY-MM-DD
    days: int
    turns: int
    topic: str
    chains: list[Chain]
    stable: list[Stable] = field(default_factory=list)
    comps: list[Comp] = field(default_factory=list)
    contras: list[Contra] = field(default_factory=list)
    chat: list[str] = field(default_factory=list)  # conversation-specific small talk and questions to the agent
