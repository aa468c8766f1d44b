"""Text normalisation for dedup: what counts as "the same content", and what a restatement must keep."""
import hashlib
import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")
# Numbers, versions, times, amounts and identifiers with digits ("eu-2", "v1.4", "14:00", "$29").
_SIGNALS = re.compile(r"[$€£]?\d[\w.:/-]*")
_NEGATIONS = re.compile(r"\b(?:not|no|never|none|nobody|nothing|without|cannot|isn't|aren't|wasn't|don't|doesn't"
                        r"|didn't|won't|can't|no longer|any more|anymore)\b", re.IGNORECASE)


def normalize(content: str) -> str:
    """Exact dedup ignores whitespace differences (and Unicode composition), nothing else."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", content)).strip()


def content_hash(content: str) -> str:
    return hashlib.sha256(normalize(content).encode()).hexdigest()


def same_signals(a: str, b: str) -> bool:
    """Whether two texts name the same numbers and identifiers and agree on negation.

    An update often changes one number and nothing else ("Friday 14:00" -> "Friday 15:00"), and MiniLM scores such
    pairs 0.97-0.99, as high as true restatements. Near-verbatim dedup must never absorb an update, so it also
    requires this.
    """
    return signal_tokens(a) == signal_tokens(b) and negations(a) == negations(b)


def signal_tokens(text: str) -> list[str]:
    return sorted(match.lower().rstrip(".") for match in _SIGNALS.findall(text))


def mask_signals(text: str) -> str:
    """The text with each number and identifier replaced by '#': what two versions of one template share."""
    return _SIGNALS.sub("#", text)


def negations(text: str) -> list[str]:
    return sorted(match.lower() for match in _NEGATIONS.findall(text))
