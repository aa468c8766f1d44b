"""What recall is asked and what it answers."""
from dataclasses import dataclass, field
from datetime import datetime

from memory.models import Check, Memory


@dataclass
class RecallQuery:
    query: str
    k: int = 10
    project: str | None = None
    scope: str = "all"
    kinds: list[str] | None = None
    include_history: bool = False
    as_of: datetime | None = None
    namespace_prefix: list[str] | None = None


@dataclass
class Hit:
    memory: Memory
    score: float
    vector_rank: int | None = None
    vector_distance: float | None = None
    text_rank: int | None = None
    flags: list[str] = field(default_factory=list)
    conflicts_with: list[str] = field(default_factory=list)
    supersede_reason: str | None = None
    partner_of: str | None = None  # set when the hit is only here as an open-conflict partner
    # Open conflicts judged "supersedes" (the newer probably replaces the older): ids of the other side.
    probably_replaces: list[str] = field(default_factory=list)
    probably_replaced_by: list[str] = field(default_factory=list)
    found_via: str | None = None  # an earlier version of this memory that matched the query
    # The retired probable successor(s) in an open conflict that this memory, their current version, stands in for.
    stands_for: list[str] = field(default_factory=list)
    # Read-time disagreement (memory/disagreement.py): other returned memories giving another value for the same
    # thing, and of those, the ones this newer memory says in words it updates, or that say they update it.
    disagrees_with: list[Memory] = field(default_factory=list)
    updates: dict[str, str] = field(default_factory=dict)  # older id -> the words that say this is an update
    updated_by: dict[str, str] = field(default_factory=dict)  # newer id -> those words
    disagreement_values: dict[str, str] = field(default_factory=dict)  # other id -> the values, described


@dataclass
class RecallResult:
    hits: list[Hit]
    warnings: list[tuple[Memory, Check]]
    trace: dict
