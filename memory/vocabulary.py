"""The words the memory domain answers with, one enum each: what the judge may say of a pair, how a person resolves
a conflict, why a declared link was skipped, how a write was absorbed, and the flags a reader sees on a memory.
Serializers take their choices from here, so the API's enums and the code cannot drift apart."""
from enum import StrEnum


class Relation(StrEnum):
    """What a newer memory is to an older one, as the judge (or a rule) reads the pair."""

    SUPERSEDES = "supersedes"
    DUPLICATE = "duplicate"
    COMPLEMENTARY = "complementary"
    CONTRADICTS = "contradicts"
    UNRELATED = "unrelated"


# The relations that may retire the older memory. A contradiction never does: both stay live and the reader sees it.
RETIRING = frozenset({Relation.SUPERSEDES, Relation.DUPLICATE})


class Resolution(StrEnum):
    """A person's decision on a conflict, recorded on it."""

    SUPERSEDE = "supersede"
    KEEP_BOTH = "keep_both"


class SkipReason(StrEnum):
    """Why a declared link of remember was skipped instead of written."""

    MISSING = "missing"
    DEAD = "dead"
    SELF = "self"


class Dedup(StrEnum):
    """How a write was absorbed into a memory that already said it."""

    EXACT = "exact"
    NEAR_VERBATIM = "near_verbatim"


class Flag(StrEnum):
    """What a reader is told about a memory beside its content (API.md, recall and the feed)."""

    EXPIRED = "expired"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"  # the feed and history only: recall never returns a forgotten memory
    IN_CONFLICT = "in_conflict"
    DISAGREES = "disagrees"  # recall only: read from the hits themselves
    PROVISIONAL = "provisional"
    OPEN_LOOP = "open_loop"
    FAILED_CHECK = "failed_check"


RECALL_FLAGS = [flag for flag in Flag if flag is not Flag.FORGOTTEN]
