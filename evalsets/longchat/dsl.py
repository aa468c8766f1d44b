"""The few shapes a long conversation is written in: slots whose value may change, contradictions, conversations.

A slot's first value is a plain string; every later value starts with "M|" (the turn says in words that it changed:
"pushed back to", "correction:", "we ended up with", ...) or "U|" (the new value is simply stated, no marker).
Every statement is one or two sentences said in passing; gen.py wraps it in a turn about something else.
"""
from dataclasses import dataclass, field


@dataclass
class Slot:
    name: str
    vals: list[str]  # versions in order; a single value: a stable slot (personal / stable_fact questions)
    ask: list[str] = field(default_factory=list)  # questions about the current value
    prev: list[tuple[str, int]] = field(default_factory=list)  # (question, index of the earlier version asked for)
    noise: list[str] = field(default_factory=list)  # same subject words, no value of the slot (distractors)
    comps: list[tuple[str, list[str]]] = field(default_factory=list)  # (a different fact on the topic, questions)
    restate: dict[int, list[str]] = field(default_factory=dict)  # version index -> same value in other words
    w: str = ""  # subject words: filler turns must not contain them


@dataclass
class Contra:
    """Two statements of the same thing with different values and no marker: sources disagree, nobody resolves it."""
    name: str
    a: str
    b: str
    ask: list[str]
    noise: list[str] = field(default_factory=list)
    w: str = ""


@dataclass
class Conv:
    id: str
    user: str
    project: str | None
    start: str  # YYYY-MM-DD, the first session
    turns: int
    about: str
    slots: list[Slot]
    contras: list[Contra] = field(default_factory=list)
    avoid: tuple[str, ...] = ()  # filler topics that would touch the conversation's subjects
