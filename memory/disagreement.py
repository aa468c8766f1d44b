"""Disagreement nobody declared: two memories that give different values for the same thing, and which of them says
in words that it is an update.

Seed 004: "a contradiction without a marker shows both"; and age is never a stand-in for "no longer true". So recall
flags both memories of such a pair, each naming the other, and moves the newer above the older only where the newer
itself says it is an update ("moved to", "no longer", "the new … is"): the writer's words carry the relationship,
not the clock. The review (hygiene) reads the same evidence: an update in words is the shape a judge may retire, a
disagreement without one is for a person.

A turn of a conversation is mostly about something else ("can you look at the release script? also the launch moved
to the 14th"), so each memory is read through one sentence: the one that shares most of the query's words (for a
pair without a query, the two sentences that share most words with each other), and, where the question and its
answer share no word, the statement nearest to the question in meaning (the passages' vectors: ``Meaning``). Values
are typed (a date, a time, a price, a percentage, a version, a count, a name), and two sentences disagree only on a
type that both give: "the launch checklist has 14 items" does not disagree with "the launch is on March 3rd".
"""
import functools
import re
import threading
from dataclasses import dataclass

import numpy as np
import snowballstemmer

from memory.normalize import negations

_local = threading.local()


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A word stemmed as Postgres's `english` configuration does. Snowball's stemmer keeps its state on the object
    while it works, so each thread has its own (web threads share this module: one shared stemmer failed under the
    soak's concurrent recalls)."""
    if not hasattr(_local, "stemmer"):
        _local.stemmer = snowballstemmer.stemmer("english")
    return _local.stemmer.stemWord(word)

# Words that say a statement replaces an earlier one, by family: movement in time, change, replacement, what is
# current now, what stopped, and corrections. Read in the sentence that gives the value, never elsewhere in the turn.
MARKER = re.compile(
    r"\b(?:"
    r"mov(?:e|ed|es|ing) (?:to|up|back|out|forward|over)|pushed (?:back|out|to|up)?|bump(?:ed|s)? (?:to|up|down)"
    r"|brought forward|rescheduled|postponed|delayed|slipped|shifted|reschedul\w+|push(?:ed|ing)? it"
    r"|chang(?:e|ed|es|ing)(?: \w+)? (?:from|to)|changed|updated?|update:|revised|amended|corrected|correction"
    r"|instead(?: of)?|rather than|replaced|replacing|switch(?:ed|ing)?|swapped|migrated|went with|going with"
    r"|ended up|decided (?:to go with|on)|settled on|opted for|upgraded|downgraded|raised|lowered|increased"
    r"|decreased|cut (?:to|down)|dropped (?:to|from)|grew to|now|nowadays|these days|from now on|going forward"
    r"|as of (?:today|now|this|next|monday|tuesday|wednesday|thursday|friday|the)|starting (?:today|now|next|from|on)"
    r"|effective|new \w+ is|latest|no longer|not \w+ any ?more|any ?more|used to|previously|formerly"
    r"|turns out|turned out|actually|scratch that|change of plans?|plans changed|not anymore"
    r")\b",
    re.IGNORECASE,
)
MONTHS = {m: i for i, names in enumerate([
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")], start=1) for m in names}
WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"
    " eighteen nineteen twenty".split())} | {"thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "dozen": 12}
STOP = set("""a an the is are was were be been being am of to in on for at by with from and or but not no it its this
that these those we our us they them their he she his her you your i me my as into per via than then there here so if
do does did has have had will would can could should must may might all any each every only also too very just still
same what when where which who whom whose why how whats when's what's it's that's let's okay ok yes yeah please
thanks new old""".split())
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
# "April 9", "9 April", "the 9th of April": one date, not a month and a count.
_DAY_OF_MONTH = re.compile(rf"\b(?P<m1>{_MONTH})\.? (?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\b"
                           rf"|\b(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? (?P<m2>{_MONTH})\b", re.IGNORECASE)
_TOKEN = re.compile(
    r"(?P<money>[$€£]\s?\d[\d,]*(?:\.\d+)?\s?[km]?\b|\b\d[\d,]*(?:\.\d+)?\s?(?:dollars|euros|pounds|usd|eur|gbp|bucks)\b)"
    r"|(?P<percent>\b\d+(?:\.\d+)?\s?(?:%|percent\b))"
    r"|(?P<time>\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b|\bnoon\b|\bmidnight\b)"
    r"|(?P<version>\bv?\d+\.\d+(?:\.\d+)+\b|\bv\d+(?:\.\d+)?\b)"
    r"|(?P<ordinal>\b\d{1,2}(?:st|nd|rd|th)\b)"
    r"|(?P<slash>\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b)"
    r"|(?P<number>\b\d[\d,]*(?:\.\d+)?[km]?\b)"
    r"|(?P<id>\b[A-Za-z][\w-]*\d[\w.-]*\w|\b[A-Za-z][\w-]*\.[\w.-]*\d\w*)"
    r"|(?P<word>[A-Za-z][A-Za-z'’-]*)",
    re.IGNORECASE,
)
# What a count counts, when the next word says so: "14 days" and "50,000 users" are not two values of one thing.
UNITS = {stem(w) for w in """user person people guest attendee member tester volunteer customer item step page room
floor seat ticket request call credit screen model dashboard report table row file test node broker server instance
metre meter kilometre km mile kg gb mb tb megabit""".split()}
# A span of time is one quantity whatever its unit: "60 seconds" and "5 minutes" are two values of one TTL.
SPANS = {stem(w) for w in "second minute hour day night week weekend month year".split()}
# Two statements answering a query by meaning are about the same thing at this cosine or nearer (all-MiniLM-L6-v2).
# On the long conversations' tuning half (offline, over the top 10 by meaning): at 0.6, added to the word rule, 0.52
# of the changed facts returned with their old value were flagged instead of 0.23, and flags on the answers to
# questions whose answer never changed stayed at 4 of 42; at 0.5, 0.55 and 9 of 42.
SAME_THING = 0.6
# Words of a value's unit: shared by two sentences ("euros", "days"), they say nothing of the subject.
UNIT_WORDS = SPANS | {stem(w) for w in "euro dollar pound usd eur gbp bucks percent".split()}
# Capitalised words that name nothing (a sentence's opener): anything else capitalised is a name.
OPENERS = STOP | set("""i'm i've i'll i'd we're we've we'll you're it's that's there's let's also maybe quick random
side good great long short sorry oh ah hey hi hmm ugh well so thanks thank just not one two anyway btw fyi update
before after today tomorrow yesterday tonight last next new old can could would should please any some our my your
their his her""".split())
_SENTENCES = re.compile(r"(?<=[.!?;])\s+(?=\S)|\n+|\s+[-–—]\s+")


@dataclass(frozen=True)
class Sentence:
    text: str
    stems: frozenset[str]  # content words, stemmed as Postgres's english configuration does
    values: dict[str, frozenset[str]]  # type -> values of that type ("number" values carry their unit)
    marked: str | None  # the words that say it is an update, if any


def stems(text: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z][a-z'’-]*", text.lower()) if w not in STOP and len(w) > 1}



def _count(number: str, text: str, end: int) -> str:
    """A count as a value: the number, and its unit when the next word (past "of the", "and a half", or joined by a
    hyphen: "a 14-day trial") names one ("14 day" and "5 span" for "5 minutes")."""
    unit = _count_unit(text, end)
    return f"{number} {unit}" if unit else number


def _count_unit(text: str, end: int) -> str | None:
    following = re.match(r"(?:\s+|-)(?:and an? (?:half|quarter)\s+)?(?:of\s+(?:the\s+)?)?([a-z]+)", text[end:].lower())
    unit = stem(following.group(1)) if following else None
    return "span" if unit in SPANS else unit if unit in UNITS else None


def _thousands(token: str) -> str:
    """"22k" -> "22000", "1.5m" -> "1500000": one amount however it is written."""
    if not (match := re.fullmatch(r"(\d+(?:\.\d+)?)([km])", token)):
        return token
    value = float(match[1]) * (1_000 if match[2] == "k" else 1_000_000)
    return str(int(value)) if value.is_integer() else str(value)


def _values(text: str) -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for match in _DAY_OF_MONTH.finditer(text):
        month = MONTHS[(match.group("m1") or match.group("m2")).lower()]
        found.setdefault("date", set()).add(f"{month}/{int(match.group('d1') or match.group('d2'))}")
    masked = _DAY_OF_MONTH.sub(lambda m: " " * len(m.group()), text)
    for match in _TOKEN.finditer(masked):
        kind, token = match.lastgroup, match.group().lower().rstrip(".,")
        if kind == "word":
            word = token.strip("'’-")
            if word in MONTHS and (word != "may" or match.group()[0] == "M"):
                kind, token = "date", f"month {MONTHS[word]}"
            elif word in WEEKDAYS or (word.endswith("s") and word[:-1] in WEEKDAYS):  # "on Tuesdays": a weekly day
                kind, token = "date", word.removesuffix("s")
            elif word in NUMBER_WORDS:
                kind, token = "number", _count(str(NUMBER_WORDS[word]), masked, match.end())
            elif match.group()[0].isupper() and not match.group().isupper() and word not in OPENERS:
                kind, token = "name", word
            else:
                continue
        elif kind in ("ordinal", "slash"):
            kind = "date"
            token = re.sub(r"(st|nd|rd|th)$", "", token)
        elif kind == "money":
            token = _thousands(re.sub(r"[\s,$€£]|dollars|euros|pounds|usd|eur|gbp|bucks", "", token))
        elif kind == "number":
            token = _count(_thousands(token.replace(",", "")), masked, match.end())
        found.setdefault(kind, set()).add(token)
    return {kind: frozenset(values) for kind, values in found.items()}


@functools.lru_cache(maxsize=8192)
def sentences(text: str) -> tuple[Sentence, ...]:
    """The statements of ``text``: its sentences, less questions (a question gives no value). Cached: recall reads
    the same memories again and again, and parsing ten of them took 2 ms."""
    return tuple(_read(part) for part in _SENTENCES.split(text.strip()) if part and not part.rstrip().endswith("?"))


def _read(part: str) -> Sentence:
    marker = MARKER.search(part)
    return Sentence(part, frozenset(stems(part)), _values(part), marker.group() if marker else None)


# A question of a conversation that states the asker's own situation on its way ("I've secured 3 interviews so far,
# how do I prepare?", "I won't meet the new April 25 deadline, can you help?"): on BEAM's long conversations most
# user turns are such questions, and the value that changed was said inside one in 14 of the 25 changed facts whose
# two turns the statements alone could not read.
STATES_OWN = re.compile(r"\b(?:i'?m|i am|i'?ve|i have|i had|i was|i'?ll|i will|i won'?t|i just|i recently|i already"
                        r"|i (?:set|got|made|moved|switched|changed|updated|increased|reduced|raised|lowered|added"
                        r"|agreed|decided|secured|completed|finished|spent|reached|scheduled|booked|allocated)"
                        r"|my \w+(?: \w+)? (?:is|are|was|were|has|have|reached|went|dropped|grew)|we'?ve|we have|we'?re"
                        r"|we (?:set|got|agreed|decided|moved|switched|changed|scheduled|allocated))\b", re.IGNORECASE)


@functools.lru_cache(maxsize=8192)
def claims(text: str) -> tuple[Sentence, ...]:
    """The sentences of ``text`` that state a value: its statements, and its questions that state the asker's own
    situation with a value (STATES_OWN). Read by the words rule only: the stored passages stay one per statement."""
    out = []
    for part in _SENTENCES.split(text.strip()):
        question = part.rstrip().endswith("?")
        if part and (not question or STATES_OWN.search(part)):
            sentence = _read(part)
            if sentence.values or not question:
                out.append(sentence)
    return tuple(out)


# What a question asks for, by its words: the value type that answers it (first match wins).
EXPECTS = [
    ("time", re.compile(r"\bwhat time\b|\bat what hour\b|\bhow early\b|\bhow late\b", re.I)),
    ("date", re.compile(r"\bwhen\b|\b(?:what|which) (?:day|date|month|weekday|weekend)\b|\bby when\b|\bdeadline\b"
                        r"|\bhow soon\b|\bwhat (?:day|date)s?\b", re.I)),
    ("money", re.compile(r"\bhow much (?:money|does|do|did|is|are|will|would|can|should)\b|\bcosts?\b|\bprices?\b"
                         r"|\bbudget\b|\bfees?\b|\brent\b|\bspend\b|\bpay\b|\bsalary\b", re.I)),
    ("percent", re.compile(r"\bpercent|\bpercentage\b|\bwhat share\b|\brate\b", re.I)),
    ("version", re.compile(r"\bversion\b|\brelease number\b", re.I)),
    ("number", re.compile(r"\bhow (?:many|long|often|big|much|far|large|old)\b|\bwhat size\b|\bnumber of\b", re.I)),
    ("name", re.compile(r"\bwho(?:m|se)?\b|\bwhere\b", re.I)),
]


# The value types that answer what a question asks: a price is often written without its currency.
ANSWERS = {"money": ("money", "number"), "percent": ("percent", "number"), "version": ("version", "number")}


def expects(query: str) -> str | None:
    return next((kind for kind, words in EXPECTS if words.search(query)), None)


def answering(text: str, query_stems: set[str], kind: str | None = None) -> Sentence | None:
    """The sentence of ``text`` that answers the query: of those giving a value of ``kind`` (any kind when None),
    the one sharing most of the query's words (None when there is none; with no kind, when none shares a word)."""
    best, best_score = None, -1 if kind else 0
    wanted = set(ANSWERS.get(kind, (kind,))) if kind else None
    for sentence in claims(text):
        if not (wanted & sentence.values.keys() if wanted else sentence.values):
            continue
        score = len(sentence.stems & query_stems)
        if score > best_score:
            best, best_score = sentence, score
    return best



def _new_counts(older: frozenset[str], newer: frozenset[str]) -> bool:
    """Whether ``newer`` gives a count that ``older`` does not, comparing only counts of the same unit (or both
    without one)."""
    def unit(value: str) -> str:
        return value.partition(" ")[2]

    return any(value not in older and any(unit(old) == unit(value) for old in older) for value in newer)


# A sentence that speaks of money: its bare numbers may be prices ("We revised Pro pricing: 15 a seat").
PRICE_WORDS = re.compile(r"\b(?:costs?|price[sd]?|pricing|budget|fees?|rent|spend|pay|paid|salary|limit|charged?"
                         r"|per (?:seat|user|person|month|year)|a (?:seat|user|month|year))\b", re.IGNORECASE)


def _amounts(sentence: Sentence) -> frozenset[str]:
    """Its prices: money values, and bare numbers (no unit) where it speaks of money."""
    money = sentence.values.get("money", frozenset())
    if not PRICE_WORDS.search(sentence.text):
        return money
    return money | {n for n in sentence.values.get("number", ()) if " " not in n}


def differing(older: Sentence, newer: Sentence, kind: str | None = None, names: bool = False
              ) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """The value types both sentences give (only those answering ``kind``, when given) where the newer gives a value
    the older does not. Names count only when asked for: in recall, without a question asking for one, a different
    name is mostly another subject."""
    if kind == "money" and not ("money" in older.values and "money" in newer.values):
        # A price is often written as a bare number ("15 a seat" against "12 euros"); as a bare number may count
        # anything, the two must then give no amount in common.
        a, b = _amounts(older), _amounts(newer)
        return {kind: (a, b)} if a and b and not a & b else {}
    kinds = older.values.keys() & newer.values.keys()
    if kind:
        kinds &= set(ANSWERS.get(kind, (kind,)))
    elif not names:
        kinds -= {"name"}
    out = {}
    for k in sorted(kinds):  # a set's order changes from process to process; the answer must not
        a, b = older.values[k], newer.values[k]
        if _new_counts(a, b) if k == "number" else not b <= a:
            out[k] = (a, b)
    return out


@dataclass(frozen=True)
class Disagreement:
    values: dict[str, tuple[frozenset[str], frozenset[str]]]  # type -> (the older's values, the newer's)
    marker: str | None  # the newer's words that say it is an update; None: nobody said which is current


def between(older: Sentence | None, newer: Sentence | None, subject: set[str],
            kind: str | None = None) -> Disagreement | None:
    """Whether two answering sentences give different values for the same thing. With the ``kind`` of value the
    question asks for, they must differ on it, share a word with each other (two for names: another name is also
    another subject) and each share one with the question (``subject``); without, they must share two words, one of
    them the question's, and differ on a value type.

    Measured on the long conversations' tuning half (bench retrieval, read off its top 10s): a word shared with the
    question or the other sentence was enough at first, and flagged 0.39 of the answers to questions whose answer
    never changed; with the rules above 0.03, while 0.57 of the changed facts returned with their old value are
    flagged (0.81 before)."""
    if older is None or newer is None:
        return None
    shared = older.stems & newer.stems - UNIT_WORDS
    if kind:
        if len(shared) < (2 if kind == "name" else 1) or not (older.stems & subject and newer.stems & subject):
            return None
    elif not (shared & subject) or len(shared) < 2:
        return None
    values = differing(older, newer, kind)
    return Disagreement(values, newer.marked) if values else None


@dataclass(frozen=True)
class Found:
    newer: str
    older: str
    disagreement: Disagreement


@dataclass(frozen=True)
class Meaning:
    """The vectors of a reading by meaning: the query's, and each memory's statements' in the order of
    ``sentences`` (memory/passages.py; a memory of one statement: its whole text's). Unit length, so a dot product is
    the cosine."""

    query: np.ndarray
    statements: dict[str, np.ndarray]  # memory id -> one row per statement


def answering_by_meaning(text: str, vectors: np.ndarray, query: np.ndarray, kind: str | None) -> Sentence | None:
    """Of the statements giving a value of ``kind`` (any value when None), the nearest to the query."""
    wanted = set(ANSWERS.get(kind, (kind,))) if kind else None
    best, best_score = None, -2.0
    for sentence, vector in zip(sentences(text), vectors):
        if not (wanted & sentence.values.keys() if wanted else sentence.values):
            continue
        if (score := float(vector @ query)) > best_score:
            best, best_score = sentence, score
    return best


def _vector_of(sentence: Sentence, text: str, vectors: np.ndarray) -> np.ndarray:
    return vectors[sentences(text).index(sentence)]


def between_by_meaning(older: tuple[Sentence, np.ndarray], newer: tuple[Sentence, np.ndarray],
                       kind: str | None) -> Disagreement | None:
    """Whether two statements that answer the query by meaning give different values for the same thing: near in
    meaning (SAME_THING), one word in common, different values of the kind asked for."""
    (a, a_vector), (b, b_vector) = older, newer
    if float(a_vector @ b_vector) < SAME_THING or not (a.stems & b.stems - UNIT_WORDS):
        return None
    values = differing(a, b, kind)
    return Disagreement(values, b.marked) if values else None


# A question whether something ever happened ("Have I ever used Zotero?", "Did I test the form before?"): its answer
# is a yes or a no, not a value, so two memories disagree on it when one says it never happened and the other says
# it did. Read in the sentence sharing most of the question's words (at least two), statements and the questions
# that state the asker's own situation alike.
YES_NO = re.compile(r"^\s*(?:have|has|had|did|do|does|am|is|are|was|were)\s+(?:i|we|my|our)\b", re.IGNORECASE)
NEVER = re.compile(r"\b(?:never|haven'?t|hasn'?t|hadn'?t|didn'?t|have not|has not|did not|not yet|not \w+ any)\b",
                   re.IGNORECASE)
ASKING = STOP | {"ever", "before", "yet", "any", "project"}


# A clause of a sentence: "I met Kyle at a sneaker expo, but I've never tried Nike Air Max" says yes to meeting Kyle;
# its "never" is about something else.
_CLAUSES = re.compile(r",?\s+(?:but|and|so|although|though|while|whereas)\s+|;\s*", re.IGNORECASE)


@functools.lru_cache(maxsize=8192)
def _stated(text: str) -> tuple[tuple[tuple[str, frozenset[str]], ...], ...]:
    """The sentences of ``text`` that say something of the writer's, each as its clauses with their words: its
    statements, and its questions that state the asker's own situation (with a value or without). Words only: a yes
    or a no needs no values read, and reading them cost a yes/no recall 3 ms more on BEAM's long turns."""
    return tuple(tuple((clause, frozenset(stems(clause))) for clause in _CLAUSES.split(part) if clause)
                 for part in _SENTENCES.split(text.strip())
                 if part and (not part.rstrip().endswith("?") or STATES_OWN.search(part)))


def _stance(text: str, subject: set[str]) -> str | None:
    """What of ``text`` answers a yes/no question: a clause that says "never" and shares at least two of its words,
    or else the sentence sharing most of them (at least two), less its clauses that say "never" of something else.
    A turn that says it never did the thing says no, whatever else it shares with the question ("I'm having trouble
    with my contact form. I've never tested it with any API integration before" for "Have I tested the contact form
    submission with any API integration?"), and "I met Kyle at a sneaker expo, but I've never tried Nike Air Max"
    says yes to meeting Kyle."""
    best, best_shared = None, 1
    for clauses in _stated(text):
        for clause, words in clauses:
            if len(words & subject) >= 2 and NEVER.search(clause):
                return clause
        if (shared := len(frozenset().union(*(words for _, words in clauses)) & subject)) > best_shared:
            best, best_shared = clauses, shared
    return best and ", ".join(clause for clause, _ in best if not NEVER.search(clause))


def _yes_and_no(query: str, memories: list[tuple[str, str]]) -> list[Found]:
    """The pairs of which one says what the yes/no ``query`` asks about never happened and the other that it did."""
    if not YES_NO.search(query):
        return []
    subject = stems(query) - {stem(w) for w in ASKING}
    read = [(memory_id, _stance(text, subject)) for memory_id, text in memories]
    found = []
    for i, (older_id, older) in enumerate(read):
        for newer_id, newer in read[i + 1:]:
            if older and newer and bool(NEVER.search(older)) != bool(NEVER.search(newer)):
                said = [frozenset(m.group().lower() for m in NEVER.finditer(s)) or frozenset({"yes"})
                        for s in (older, newer)]
                # No marker: a "never" against a "did" says nothing of which holds now, so neither moves.
                found.append(Found(newer_id, older_id, Disagreement({"yes/no": tuple(said)}, None)))
    return found


def find(query: str, memories: list[tuple[str, str]], meaning: Meaning | None = None) -> list[Found]:
    """The pairs of ``memories`` ((id, text), oldest first) that disagree on what ``query`` asks: read through the
    sentence sharing most of the query's words (``between``), or, with ``meaning``, through the statement nearest
    to the query in meaning (``between_by_meaning``), where the question and the answer share no word."""
    subject, kind = stems(query), expects(query)
    read = [(memory_id, answering(text, subject, kind)) for memory_id, text in memories]
    by_meaning = {}
    for memory_id, text in memories:
        vectors = meaning.statements.get(memory_id) if meaning else None
        if vectors is not None and (sentence := answering_by_meaning(text, vectors, meaning.query, kind)):
            by_meaning[memory_id] = (sentence, _vector_of(sentence, text, vectors))
    found = []
    for i, (older_id, older) in enumerate(read):
        for newer_id, newer in read[i + 1:]:
            disagreeing = between(older, newer, subject, kind)
            if disagreeing is None and older_id in by_meaning and newer_id in by_meaning:
                disagreeing = between_by_meaning(by_meaning[older_id], by_meaning[newer_id], kind)
            if disagreeing is not None:
                found.append(Found(newer_id, older_id, disagreeing))
    if kind is None:
        seen = {(f.newer, f.older) for f in found}
        found += [f for f in _yes_and_no(query, memories) if (f.newer, f.older) not in seen]
    return found


def of_texts(older: str, newer: str) -> Disagreement | None:
    """Whether two texts disagree without a query (the review's question): of their sentence pairs that share a word
    and give different values of one type (names too: "Checkout is owned by Dana" / "Ivan owns checkout"), or that
    share two and one negates what the other does not ("drained by hand" / "nobody drains it by hand"), the one
    sharing most words."""
    best, shared_best = None, 0
    for a in sentences(older):
        for b in sentences(newer):
            shared = len(a.stems & b.stems)
            if shared <= shared_best:
                continue
            values = differing(a, b, names=True)
            if not values and shared >= 2 and negations(a.text) != negations(b.text):
                values = {"negation": (frozenset(negations(a.text)), frozenset(negations(b.text)))}
            if values:
                best, shared_best = Disagreement(values, b.marked), shared
    return best


def update_words(older: str, newer: str) -> str | None:
    """The newer text's words that say it updates the older: read in the sentence where the two disagree (of_texts),
    or anywhere in it when no sentence pair does (a short statement)."""
    found = of_texts(older, newer)
    if found is not None:
        return found.marker
    marker = MARKER.search(newer)
    return marker.group() if marker else None


def describe(values: dict[str, tuple[frozenset[str], frozenset[str]]]) -> str:
    """"date: 3/3 against 3/17" for why.note."""
    return "; ".join(f"{kind}: {', '.join(sorted(a))} against {', '.join(sorted(b))}" for kind, (a, b) in values.items())
