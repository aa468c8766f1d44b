"""A marked update: the newer text's own words bind a new value to the thing the older gave a value for.

"I've increased my snack budget to $75" after "my snack budget is $65"; "the meeting is rescheduled to March 22 at
4:30 PM" after "a Zoom meeting ... on March 22 at 3 PM"; "coverage improved from 65% to 78%". This is the shape the
review retires on a conversation's turns (hygiene/services.marked_update), so it is narrower than the words rule
that flags a disagreement at read time (memory/disagreement.py): a change word anywhere in a turn ("and now I'm
wondering", "the latest best practices", "starting from scratch") says nothing about which value it changes. Here
the change word must stand right before the new value (at most GAP words, no clause break between), the thing the
value belongs to (one of the two words nearest the change) must be named near the older's value too, with the same
word before it if any ("snack budget", not "entertainment budget"), a count must keep its unit and what it counts,
and an amount stay within RATIO of the old one. "from X to Y" names the old value too: X must be the older's.

Measured on BEAM-100K's turns (bench/beam.py): 11 of its 55 labelled changed facts read as marked updates, none of
its 42 contradicting pairs, and 8 of the other 116,220 pairs of turns within 60 of each other, 7 of them changes BEAM
does not label ("$3,000 for relocation" -> "adjusted my relocation budget to $3,500", "completed 40% of the course"
-> "now that I've completed 90%"). The read-time words rule (disagreement.MARKER anywhere in the sentence) marked
22 of the 55 and 4 of the 42 contradictions.
"""
import functools
import re
from collections.abc import Iterator
from typing import NamedTuple

from memory import disagreement

# A change word that binds the value after it. Verbs of change, "now" ("has now reached 165"), "the new ... of".
CUE = re.compile(
    r"\b(?:increased|decreased|raised|lowered|reduced|cut|dropped|improved|grew|rose|fell|jumped|climbed|doubled"
    r"|moved|rescheduled|pushed back|postponed|delayed|brought forward|changed|updated|switched|bumped|extended"
    r"|shortened|adjusted|revised|upgraded|downgraded|went up|went down|gone up|gone down|now|new)\b",
    re.IGNORECASE,
)
GAP = 4  # words between the change word and the value it binds
BREAK = re.compile(r"[,;:.!?()]")  # a clause break: the value after it belongs to another clause
VALUE_KINDS = ("money", "percent", "time", "version", "number", "date")
# Words that name no thing: how the writer feels about it, fillers, the writer themselves.
FILLER = {disagreement.stem(w) for w in """i'm i've i'll i'd im ive kinda sorta really actually already recently
just want wanted trying try worried about think thinking considering wondering sure gonna wanna like also even""".split()}
NEAR = 6  # words before a value that name its thing
AFTER = 5  # and after it
# Words that say when or how often, not what: "monthly", "since June", "starting Sept 1", "over 2 weeks".
WHEN = {disagreement.stem(w) for w in """daily weekly monthly annual annually yearly month week day year today since
starting start until till through over during from by before after total per""".split()} | set(
    disagreement.stem(m) for m in disagreement.MONTHS) | {disagreement.stem(d) for d in disagreement.WEEKDAYS}
# The word before a value that makes it something else than the thing's new value: "by 25%" is how much it
# changed, "on May 12" when it did.
NOT_THE_VALUE = re.compile(r"\b(?:by|on|since|in|during|within|over|after|before|from|around|about)"
                           r"(?:\s+(?:the|a|an|my|our|its|their))?\s*$", re.IGNORECASE)
# Two amounts of one thing: an update moves a budget from $500 to $550, not to a $120,000 cap. At 4x, 23 pairs of
# BEAM-100K's turns read as marked; the 3 between 3x and 4x were all a $200 limit per pair of sneakers read as the
# $650 a year, and the other 20 read the same down to 1.5x.
RATIO = 3
YEAR = re.compile(r"(?:19|20)\d\d")


@functools.lru_cache(maxsize=8192)
def _values(text: str) -> tuple[tuple[str, int, int, frozenset[str]], ...]:
    """The typed values of ``text``: (type, start, end, normalised values), in order. Cached: the review reads the
    same older sentences once per change word of each candidate."""
    found = []
    for match in disagreement._DAY_OF_MONTH.finditer(text):
        found.append(("date", match.start(), match.end(), match.group()))
    masked = disagreement._DAY_OF_MONTH.sub(lambda m: " " * len(m.group()), text)
    for match in disagreement._TOKEN.finditer(masked):
        kind = "date" if match.lastgroup in ("ordinal", "slash") else match.lastgroup
        if kind in VALUE_KINDS:
            found.append((kind, match.start(), match.end(), match.group()))
    out = []
    for kind, start, end, _ in sorted(found, key=lambda v: v[1]):
        # Read with its unit word: "4 hours" is a span, "10 problems" a count of problems.
        unit = re.match(r"\s*[A-Za-z]+", text[end:])
        values = disagreement._values(text[start:end] + (unit.group() if unit else "")).get(kind, frozenset())
        if kind == "number" and any(YEAR.fullmatch(v) for v in values):
            continue  # a year is part of a date, not a count
        if values:
            out.append((kind, start, end, values))
    return tuple(out)


def _clause_before(text: str, start: int, then: str = "") -> list[str]:
    """The words of the clause that ends at ``start``, at most NEAR of them; the clause before it too when this one
    and what follows (``then``) name nothing ("the growth of commits on the main branch, which has now reached 165")."""
    clauses = BREAK.split(text[:start])
    words = re.findall(r"\S+", clauses[-1])
    if len(clauses) > 1 and not disagreement.stems(" ".join(words) + then) - FILLER:
        words = re.findall(r"\S+", clauses[-2]) + words
    return words[-NEAR:]


def _thing(text: str, start: int, end: int) -> set[str]:
    """The words that name what the value at text[start:end] belongs to: those of its clause around it."""
    rest = re.sub(r"^,?\s*(?:19|20)\d\d\b", "", text[end:])  # "April 1, 2024, for the first sprint"
    after = " ".join(re.findall(r"\S+", BREAK.split(rest.lstrip(", "))[0])[:AFTER])
    return disagreement.stems(" ".join(_clause_before(text, start, after)) + f" {after}") - FILLER - WHEN


def _words(text: str) -> list[str]:
    """The stems of ``text``'s words that can name a thing, in order."""
    found = (disagreement.stem(w) for w in re.findall(r"[a-z][a-z'’-]*", text.lower())
             if w not in disagreement.STOP and len(w) > 1 and not CUE.fullmatch(w))
    return [w for w in found if w not in FILLER]


def _modifier(phrase: str, word: str) -> str | None:
    """The word right before ``word`` (a stem) in ``phrase``: "snack" in "my snack budget", "monthly" in "my
    monthly savings". A shared "budget" names the same thing only if the older names the newer's kind of budget
    too: "$100 entertainment budget" is not the "snack budget" that was increased."""
    tokens = re.findall(r"[a-z][a-z'’-]*", phrase.lower())
    for before, token in zip(tokens, tokens[1:]):
        if disagreement.stem(token) == word:
            modifier = disagreement.stem(before)
            return None if before in disagreement.STOP or modifier in FILLER or CUE.fullmatch(before) else modifier
    return None


def _unit(value: str) -> str:
    return value.partition(" ")[2]


def _amount(value: str) -> float | None:
    number = re.match(r"\d+(?:\.\d+)?", value.replace(",", ""))
    return float(number.group()) if number else None


def _counted(text: str, end: int) -> str | None:
    """The content word right after a bare count: "sources" in "45 sources"."""
    following = re.match(r"\s+([a-z][a-z'’-]*)", text[end:].lower())
    word = following.group(1) if following else None
    return None if word is None or word in disagreement.STOP else disagreement.stem(word)


def _comparable(kind: str, new: frozenset[str], old: frozenset[str], newer: str, older: str, quote: str,
                old_end: int) -> bool:
    """Whether two values can be two states of one thing: a count keeps its unit and what it counts ("45 sources"
    is not a version 6.0), and an amount stays within RATIO of the old one."""
    if kind == "number" and not {_unit(v) for v in new} & {_unit(v) for v in old}:
        return False
    if kind == "number" and _counted(newer, newer.find(quote) + len(quote)) != _counted(older, old_end):
        return False
    if kind in ("money", "number"):
        amounts = [(_amount(a), _amount(b)) for a in new for b in old]
        return any(a and b and 1 / RATIO <= a / b <= RATIO for a, b in amounts)
    return True


class Bound(NamedTuple):
    """A value a change word binds, and what names its thing."""
    quote: str  # from the change word to the value
    kind: str
    new: frozenset[str]  # the value
    named_old: frozenset[str]  # the old value, where "from X to" names it
    phrase: str  # the words of the clause up to the value
    head: frozenset[str]  # its last two words that can name a thing ("the pilot delivery date": delivery, date)


def _bound(sentence: str) -> Iterator[Bound]:
    """Each value a change word binds: the first value at most GAP words after it, and the values that follow that
    one in the same phrase ("to March 22 at 4:30 PM")."""
    values = _values(sentence)
    for cue in CUE.finditer(sentence):
        after = [v for v in values if v[1] >= cue.end()]
        between = sentence[cue.end():after[0][1]] if after else ""
        if not after or BREAK.search(between) or len(between.split()) > GAP:
            continue
        if cue.group().lower() == "new" and between.strip() and not re.search(r"\b(?:of|is|at|to|on|for)\s*$", between):
            continue  # "a new project using Bootstrap 5.3.0" names something new, not a new value of a thing
        phrase = " ".join(_clause_before(sentence, cue.start(), between)) + f" {cue.group()}{between}"
        named = [w for w in _words(phrase) if w not in WHEN]
        bound = Bound(sentence[cue.start():], after[0][0], after[0][3], frozenset(), phrase, frozenset(named[-2:]))
        if re.search(r"\bfrom\s*$", between) and len(after) > 1 and after[1][0] == after[0][0] \
                and re.fullmatch(r"\s+to\s+", sentence[after[0][2]:after[1][1]]):
            # "from 65% to 78%": the first names the old value
            bound, after = bound._replace(named_old=after[0][3], new=after[1][3]), after[1:]
        elif NOT_THE_VALUE.search(between):
            continue
        yield bound._replace(quote=sentence[cue.start():after[0][2]])
        for previous, (kind, start, stop, new) in zip(after, after[1:]):
            link = sentence[previous[2]:start]
            if {kind, previous[0]} != {"date", "time"} or BREAK.search(link) or len(link.split()) > 2:
                break  # only a day and its hour are one value: "on May 30" after "to version 6.0" says when
            yield bound._replace(quote=sentence[cue.start():stop], kind=kind, new=new)


@functools.lru_cache(maxsize=4096)  # a review asks it of the same pair up to three times (hygiene/services.py)
def marked(older: str, newer: str) -> str | None:
    """The newer's words that mark it as an update of the older (quoted in the chain's reason), or None."""
    for claim in disagreement.claims(newer):
        for bound in _bound(claim.text):
            for old_claim in disagreement.claims(older):
                given = old_claim.values.get(bound.kind, frozenset())
                if bound.new <= given or (bound.named_old and not bound.named_old <= given):
                    continue
                for kind, start, end, old in _values(old_claim.text):
                    if kind != bound.kind or not _comparable(kind, bound.new, old, claim.text, old_claim.text,
                                                             bound.quote, end):
                        continue
                    old_thing = _thing(old_claim.text, start, end)
                    if any(_modifier(bound.phrase, word) in old_thing | {None}
                           for word in bound.head & old_thing):
                        return bound.quote.rstrip(" ,")
    return None
