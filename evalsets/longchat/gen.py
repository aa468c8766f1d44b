"""Generate the long-chat evaluation set: cd evalsets/longchat && python3 gen.py

Writes tests/eval/longchat_tune.json and tests/eval/longchat_heldout.json. The conversations (conv_*.py) hold what is said about
each slot and the questions about it (dsl.py); filler.py holds what the turns are mostly about. Every conversation
has its own seeded random generator, so the output is deterministic: rerunning without edits gives identical bytes.
"""
import json
import random
import re
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import conv_personal_a
import conv_personal_b
import conv_project_a
import conv_project_b
from filler import SESSION_OPEN, TOPICS, WORDS, fill

SEED = 20260301
HERE = Path(__file__).resolve().parent
EVAL = HERE.parents[1] / "tests" / "eval"  # where the tests read the sets
OUT = {"tune": EVAL / "longchat_tune.json", "heldout": EVAL / "longchat_heldout.json"}
USERS = {"maya": {"projects": ["atlas", "harbor"]}, "tom": {"projects": ["atlas", "quill"]},
         "lena": {"projects": ["harbor", "orchard"]}, "raj": {"projects": ["orchard", "quill"]}}
ALL = {c.id: c for m in (conv_personal_a, conv_personal_b, conv_project_a, conv_project_b) for c in m.CONVS}
# Odd conversation numbers are tuned on, even ones are held out: each half has three conversations per user and
# six personal and six project conversations.
HALVES = {"tune": sorted(k for k in ALL if int(k[1:]) % 2), "heldout": sorted(k for k in ALL if not int(k[1:]) % 2)}
SENTENCE = re.compile(r"(?<=[.!?])\s+")
LEAD_INS = ["Oh, and", "Also,", "By the way,", "Side note,", "Unrelated, but", "Before I forget,", "Random thing, but",
            "Oh right,", "Totally different topic, but", "Also, so you know,"]
LOWER_OK = {"the", "we", "our", "my", "it", "its", "that", "this", "there", "they", "their", "for", "on", "in",
            "a", "an", "each", "every", "four", "five", "six", "twelve", "half", "apparently"}

DESCRIPTION = """\
Long-chat evaluation set for zero-memory, {half} half ({role}) of two. It is different in kind from dataset.json and \
conversations.json: it imitates the most common agent, one that never declares updates and stores every user turn \
of a long chat as an untyped memory. {convs} conversations ({personal} in personal scope, {project} in project \
scope, where the writer is a member of the project) between four people (maya: projects atlas and harbor; tom: \
atlas and quill; lena: harbor and orchard; raj: orchard and quill) and their assistant, each in 3 sessions spread \
over weeks of 2026 (session id "<conversation>-s<N>-<user>"), {turns} turns in all ({tmin}-{tmax} per \
conversation). Every memory is one user turn of kind "note", 2 to 5 sentences, mostly about something else (coding \
help, email drafts, meetings, cooking, books, small talk...). Inside some turns, in passing, the user states the \
value of a slot (a date, a count, a person, a version, a place, a price, a vendor, a time): {slots} slots, most \
of which change value once or twice later in the conversation, in another session or later in the same one. Each \
new value is worded differently from the one it replaces; {marked} changes say in words that something changed \
(a varied vocabulary: "pushed back to", "correction:", "we ended up with", "isn't ... anymore", "brought \
forward"...) and {unmarked} simply state the new value with no marker at all. Other turns name the same subject \
without a value (distractors, unlabelled), add a different fact on the same topic, often with its own number \
(complements), restate a current value in other words (duplicates), or disagree with an earlier statement without \
any marker (contradicts: two sources, no direction). Turns are generated from pools of sentence templates with \
slot substitution (no two turns are identical); the statements and questions are written by hand. The generator \
is tests/eval/longchat_source (python3 gen.py; seeded, deterministic). \
Memory fields: key, user, project (null: personal scope), kind ("note"), content, at (ISO 8601 UTC; memories are \
listed in strictly increasing time order), session (pass as session_id), and the labels: supersedes (always \
empty: nobody declares), replaces_undeclared (the earlier version(s) of the slot this statement replaces, with \
their restatements), complements, duplicates, contradicts, reason (null), and marked (true only on a \
changed-value statement that carries a change marker in words, false everywhere else). Keys: "<conversation>-<slot>-vN" \
for the Nth value of a slot (a slot with one version never changed), "-vN-rM" for its restatements, "-cN" for \
complements, "-a" and "-b" for the two sides of a contradiction, "-dN" for distractors (no labels) and \
"<conversation>-tNNN" for filler turns (no labels). Marker-like words also occur where nothing changed ("the \
panel keeps rescheduling"), and complements often carry numbers of their own. \
Queries are paraphrased (they share little beyond the subject noun with the turn that answers them) and asked by \
the conversation's user in its scope (project, or null for personal). Types: undeclared_supersede (the value \
changed: answers = the current version and its restatements, stale = every older version; `marked` says whether \
the last change carried a marker), stable_fact and personal (a value that never changed, in project and personal \
scope, next to distractors and complements that share its subject words), previous_value (answers = the earlier \
version asked for, stale = the other older versions, current = the current version), contradiction (answers = \
both statements; `earlier` and `later` name them in time order) and complementary (answers = the added fact, \
never the value it complements). {query_counts}. \
{role_sentence}"""
ROLE = {"tune": ("used for tuning", "This tune half may be used to choose thresholds and weights; its twin, "
                 "longchat_heldout.json, is only reported."),
        "heldout": ("held out, only reported", "This held-out half is only reported: never choose thresholds or weights by it; "
                    "tune on longchat_tune.json.")}


def sentences(text: str) -> list[str]:
    return [s for s in SENTENCE.split(text.strip()) if s]


class Exhausted(Exception):
    pass


class Writer:
    """Composes the turns of one conversation: episodes of filler topics, no repeated sentence or turn."""

    def __init__(self, conv, rng, seen):
        self.rng, self.seen, self.conv = rng, seen, conv
        self.forbidden = {w.lower() for s in conv.slots + conv.contras for w in s.w.split()}
        home = conv.project is None
        self.topics = [t for t in TOPICS if t not in conv.avoid]
        self.weights = [(3 if (TOPICS[t]["domain"] == "home") == home else 1) for t in self.topics]
        self.used_templates: Counter = Counter()
        self.used_sentences: set[str] = set()
        self.turn_words: list[set[str]] = []
        self.topic, self.left, self.fresh = None, 0, True
        self.binding: dict[str, str] = {}
        self.turn = 0  # turns composed so far
        self.last_used: dict[str, int] = {}  # template -> the turn that last used it

    def next_episode(self, new_session: bool):
        if new_session:
            self.left = 0
        if self.left <= 0:
            choices = [(t, w) for t, w in zip(self.topics, self.weights) if t != self.topic]
            self.topic = self.rng.choices([t for t, _ in choices], [w for _, w in choices])[0]
            self.left = self.rng.choice([1, 2, 2, 3, 3, 4])
            self.fresh = True
            self.binding = {}
        else:
            self.fresh = False
        self.left -= 1

    def clean(self, text: str) -> bool:
        """No subject word of the conversation's slots: a stem of 5+ letters, a shorter word or its plural."""
        return not any(tok.startswith(f) if len(f) >= 5 else tok in (f, f + "s", f + "es")
                       for tok in WORDS.findall(text.lower()) for f in self.forbidden)

    def sentence(self, part: str) -> str:
        topic = TOPICS[self.topic]
        for attempt in range(80):
            cap, gap = (2, 12) if attempt < 40 else (3, 1)  # never one template twice in a turn
            template = self.rng.choice(topic[part])
            if self.used_templates[template] >= cap or self.turn - self.last_used.get(template, -99) < gap:
                continue
            text = fill(template, topic, self.rng, self.binding)
            if text in self.used_sentences or not self.clean(text):
                continue
            self.used_templates[template] += 1
            self.last_used[template] = self.turn
            self.used_sentences.add(text)
            return text
        raise Exhausted(self.topic)

    def host(self, n: int) -> list[str]:
        """n sentences of the current episode: an opening (or a follow-up), details, maybe a question."""
        while True:
            try:
                return self.compose(n)
            except Exhausted:  # this conversation has used up the topic: go on with another one
                i = self.topics.index(self.topic)
                del self.topics[i], self.weights[i]
                self.left = 0
                self.next_episode(new_session=False)

    def compose(self, n: int) -> list[str]:
        parts = ["open" if self.fresh else "follow"]
        if n >= 2:
            parts += ["more"] * (n - 2) + [self.rng.choice(["ask", "ask", "more"])]
        if not self.fresh and self.rng.random() < 0.3:
            parts[0] = "more"
        return [self.sentence(p) for p in parts]

    def words(self, text: str) -> set[str]:
        return {w for w in WORDS.findall(text.lower()) if len(w) > 2}

    def accept(self, text: str, strict: bool) -> bool:
        words = self.words(text)
        if text in self.seen:
            return False
        if strict and any(len(words & w) / max(1, len(words | w)) > 0.5 for w in self.turn_words):
            return False
        self.seen.add(text)
        self.turn_words.append(words)
        self.turn += 1
        return True

    def filler(self, greet: bool) -> str:
        for _ in range(40):
            n = self.rng.choices([2, 3, 4, 5], [30, 38, 22, 10])[0]
            parts = self.host(n - 1 if greet else n)
            if greet:
                parts.insert(0, self.rng.choice(SESSION_OPEN))
            text = " ".join(parts)
            if self.accept(text, strict=True):
                return text
        raise RuntimeError(f"{self.conv.id}: no fresh filler turn")

    def wrap(self, statement: str, bare_ok: bool, greet: bool) -> str:
        """The statement said in passing: 1-4 sentences of the current episode around it (2-5 in all)."""
        k = len(sentences(statement))
        for _ in range(40):
            room = 5 - k - (1 if greet else 0)
            low = 0 if bare_ok and k >= 2 and self.rng.random() < 0.3 else 1
            n = min(room, self.rng.choices([1, 2, 3, 4], [45, 38, 14, 3])[0]) if low else 0
            parts = self.host(n) if n else []
            said = statement
            where = self.rng.choices(["end", "middle", "start"], [55, 25, 20])[0] if parts else "start"
            first = said.split()[0]
            if where != "start" and self.rng.random() < 0.35 and (first.lower() in LOWER_OK or first == "I"):
                lead = self.rng.choice(LEAD_INS)
                said = f"{lead} {said if first == 'I' else said[0].lower() + said[1:]}"
            if where == "end":
                parts.append(said)
            elif where == "middle" and len(parts) >= 2:
                parts.insert(1, said)
            elif where == "middle":
                parts.append(said)
            else:
                parts.insert(0, said)
            if greet:
                parts.insert(0, self.rng.choice(SESSION_OPEN))
            text = " ".join(parts)
            if self.accept(text, strict=False):
                return text
        raise RuntimeError(f"{self.conv.id}: cannot wrap {statement!r}")


def parse(value: str) -> tuple[str, bool | None]:
    """'M|text' -> (text, True), 'U|text' -> (text, False), a first value -> (text, None)."""
    if value[:2] in ("M|", "U|"):
        return value[2:], value[0] == "M"
    return value, None


def build_conv(conv, rng, seen):
    n = conv.turns
    taken: dict[int, dict] = {}

    def place(lo: float, hi: float, item: dict) -> int:
        lo_i, hi_i = max(0, int(lo * n)), min(n - 1, max(int(lo * n), int(hi * n)))
        free = [i for i in range(lo_i, hi_i + 1) if i not in taken]
        if not free:
            free = [i for i in range(lo_i, n) if i not in taken]
        i = rng.choice(free)
        taken[i] = item
        return i

    def item(key, text, **labels):
        return {"key": key, "text": text, "rel": labels, "marked": labels.pop("marked", False),
                "bare_ok": labels.pop("bare_ok", False)}

    queries = []
    ranges = {1: [(0.02, 0.55)], 2: [(0.02, 0.38), (0.45, 0.95)], 3: [(0.02, 0.28), (0.34, 0.62), (0.68, 0.96)]}
    changes = []
    for slot in conv.slots:
        versions, where, marks = [], [], []
        for i, value in enumerate(slot.vals):
            text, marked = parse(value)
            key = f"{conv.id}-{slot.name}-v{i + 1}"
            rel = {"replaces_undeclared": list(versions[-1])} if versions else {}
            lo, hi = ranges[len(slot.vals)][i]
            if where:
                lo = max(lo, (where[-1] + 2) / n)
            at = place(lo, hi, item(key, text, marked=bool(marked), **rel))
            where.append(at)
            versions.append([key])
            marks.append(marked)
            if i:
                changes.append(bool(marked))
        for i, texts in sorted(slot.restate.items()):
            end = where[i + 1] if i + 1 < len(where) else n
            for j, text in enumerate(texts, start=1):
                key = f"{versions[i][0]}-r{j}"
                place((where[i] + 1) / n, (end - 1) / n, item(key, text, duplicates=[versions[i][0]]))
                versions[i].append(key)
        for j, text in enumerate(slot.noise, start=1):
            place(0.0, 0.99, item(f"{conv.id}-{slot.name}-d{j}", text, bare_ok=True))
        for j, (text, asks) in enumerate(slot.comps, start=1):
            key = f"{conv.id}-{slot.name}-c{j}"
            at = place((where[0] + 1) / n, 0.99, item(key, text, bare_ok=True))
            base = max(i for i, w in enumerate(where) if w < at)
            taken[at]["rel"]["complements"] = [versions[base][0]]
            for ask in asks:
                queries.append(query(conv, "complementary", ask, [key], []))
        stale = [k for group in versions[:-1] for k in group]
        for ask in slot.ask:
            if len(versions) == 1:
                queries.append(query(conv, "personal" if conv.project is None else "stable_fact", ask, versions[0], []))
            else:
                queries.append(query(conv, "undeclared_supersede", ask, versions[-1], stale, marked=bool(marks[-1])))
        for ask, index in slot.prev:
            assert index < len(versions) - 1, (conv.id, slot.name)
            others = [k for i, group in enumerate(versions[:-1]) if i != index for k in group]
            queries.append(query(conv, "previous_value", ask, versions[index], others, current=list(versions[-1])))
    for contra in conv.contras:
        ka, kb = f"{conv.id}-{contra.name}-a", f"{conv.id}-{contra.name}-b"
        at = place(0.05, 0.45, item(ka, contra.a))
        place(min(0.9, (at + 0.2 * n) / n), 0.97, item(kb, contra.b, contradicts=[ka]))
        for j, text in enumerate(contra.noise, start=1):
            place(0.0, 0.99, item(f"{conv.id}-{contra.name}-d{j}", text, bare_ok=True))
        for ask in contra.ask:
            queries.append(query(conv, "contradiction", ask, [ka, kb], [], earlier=ka, later=kb))

    # Three sessions over weeks, a sitting each: turns a minute or a few apart.
    s1 = int(n * rng.uniform(0.29, 0.37))
    s2 = int(n * rng.uniform(0.29, 0.37))
    bounds = [0, s1, s1 + s2, n]
    day2 = rng.randint(9, 20)
    days = [0, day2, day2 + rng.randint(9, 22)]
    start = datetime.fromisoformat(conv.start)
    writer = Writer(conv, rng, seen)
    memories = []
    for s in range(3):
        at = start + timedelta(days=days[s], hours=rng.randint(8, 19), minutes=rng.randint(0, 59))
        for i in range(bounds[s], bounds[s + 1]):
            at += timedelta(seconds=rng.randint(35, 260))
            greet = i == bounds[s] and rng.random() < 0.7
            writer.next_episode(new_session=i == bounds[s])
            spec = taken.get(i)
            if spec is None:
                key, content, rel, marked = f"{conv.id}-t{i + 1:03d}", writer.filler(greet), {}, False
            else:
                key, rel, marked = spec["key"], spec["rel"], spec["marked"]
                content = writer.wrap(spec["text"], spec["bare_ok"], greet)
            memories.append({
                "key": key, "user": conv.user, "project": conv.project, "kind": "note", "content": content,
                "supersedes": [], "replaces_undeclared": rel.get("replaces_undeclared", []),
                "complements": rel.get("complements", []), "duplicates": rel.get("duplicates", []),
                "contradicts": rel.get("contradicts", []), "reason": None, "marked": marked,
                "at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "session": f"{conv.id}-s{s + 1}-{conv.user}"})
    return memories, queries, changes


def query(conv, type_, text, answers, stale, **extra):
    return {"id": None, "user": conv.user, "project": conv.project, "type": type_, "query": text, "kinds": None,
            "answers": list(answers), "stale": list(stale), **extra}


def build(half: str, seen: set[str]) -> tuple[dict, dict]:
    memories, queries, changes = [], [], []
    for cid in HALVES[half]:
        mems, qs, ch = build_conv(ALL[cid], random.Random(SEED + int(cid[1:])), seen)
        memories += mems
        queries += qs
        changes += ch
    memories.sort(key=lambda m: (m["at"], m["key"]))
    for before, after in zip(memories, memories[1:]):  # strictly increasing: bump a tie by a second
        if after["at"] <= before["at"]:
            after["at"] = (datetime.strptime(before["at"], "%Y-%m-%dT%H:%M:%SZ") + timedelta(seconds=1)).strftime(
                "%Y-%m-%dT%H:%M:%SZ")
    for i, q in enumerate(queries, start=1):
        q["id"] = f"q{i:03d}"
    convs = [ALL[c] for c in HALVES[half]]
    per_conv = Counter(m["session"].split("-")[0] for m in memories)
    types = Counter(q["type"] for q in queries)
    stats = {
        "conversations": len(convs), "turns": len(memories), "queries": dict(sorted(types.items())),
        "marked_changes": sum(changes), "unmarked_changes": len(changes) - sum(changes),
        "contradictions": sum(1 for m in memories if m["contradicts"]),
        "undeclared_marked": sum(1 for q in queries if q.get("marked")),
    }
    order = ["undeclared_supersede", "previous_value", "stable_fact", "personal", "contradiction", "complementary"]
    role, role_sentence = ROLE[half]
    description = DESCRIPTION.format(
        half={"tune": "tune", "heldout": "held-out"}[half], role=role, convs=len(convs), personal=sum(c.project is None for c in convs),
        project=sum(c.project is not None for c in convs), turns=len(memories), tmin=min(per_conv.values()),
        tmax=max(per_conv.values()), slots=sum(len(c.slots) + len(c.contras) for c in convs),
        marked=stats["marked_changes"], unmarked=stats["unmarked_changes"],
        query_counts=f"{len(queries)} queries: " + ", ".join(f"{types[t]} {t}" for t in order)
        + f" ({stats['undeclared_marked']} of the undeclared_supersede queries marked)",
        role_sentence=role_sentence)
    return {"description": description, "users": USERS, "memories": memories, "queries": queries}, stats


def main() -> None:
    seen: set[str] = set()
    for half in ("tune", "heldout"):
        data, stats = build(half, seen)
        with open(OUT[half], "w") as f:
            json.dump(data, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(OUT[half].name, json.dumps(stats), file=sys.stderr)


if __name__ == "__main__":
    main()
