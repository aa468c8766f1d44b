"""Generate tests/eval/conversations.json from the conversation scripts:
cd evalsets/conversations && python gen.py ../../tests/eval/conversations.json

The scripts (c_*.py) hold each conversation turn by turn with its labels (dsl.py); filler.py and extras.py the small
talk and details that answer nothing. Output is deterministic (seeded): regenerating without edits gives the same file.
"""
import json
import random
import sys
from datetime import datetime, timedelta

from dsl import Chain
from filler import PERSONAL, WORK
from extras import EXTRA
import c_personal_a as pa, c_personal_b as pb, c_project_a as ja, c_project_b as jb, c_project_c as jc

CONVS = [pa.C01, pa.C02, pa.C03, pa.C04, pb.C05, pb.C06, pb.C07, ja.C08, ja.C09, jb.C10, jb.C11, jc.C12, jc.C13,
         jc.C14, jc.C15, pb.C16]
USERS = {"maya": {"projects": ["atlas", "harbor"]}, "tom": {"projects": ["atlas"]},
         "lena": {"projects": ["harbor", "orchard"]}}

DESCRIPTION = (
    "Second evaluation set for zero-memory, different in kind from dataset.json: 16 long conversations between three "
    "people and their agents, written turn by turn as an agent stores them (one memory per user turn or extracted "
    "fact, small talk included), over weeks between January and May 2026. Users: maya (personal; projects atlas and "
    "harbor), tom (personal; atlas), lena (personal; harbor and orchard). Personal conversations (trips, diet, a move, "
    "a wedding, family, a side business, a renovation) are written in personal scope; project conversations (a mobile "
    "app's releases and backend, a data platform, a nonprofit's website and board) in project scope, where a teammate "
    "sometimes writes the next version of a fact. Values change over weeks: most changes are undeclared "
    "(replaces_undeclared: the newer memory replaces the listed ones without any link), some are declared (supersedes, "
    "with reason; a declared change still leaves the older version's restatements to be replaced undeclared). "
    "Restatements are near-duplicates (duplicates), complementary facts must never be retired (complements), and "
    "contradictions have no direction (contradicts). Fields beyond dataset.json: each memory has `at` (when the turn "
    "was said, ISO 8601 UTC) and `session` (the conversation, passed as session_id); memories are listed in "
    "chronological order, so write order is time order (created_at). Query types: undeclared_supersede and "
    "declared_supersede (the current value, by how the last change was made; answers = the current version and its "
    "restatements, stale = every older version), previous_value (what it was before: answers = the earlier version "
    "asked for, stale = the other older versions, `current` = the current version; scored on recall with "
    "include_history=true after removing the `current` memories from the ranking, since API.md ranks a current version "
    "above its superseded ones), stable_fact and personal (facts that never change, in project and personal scope), "
    "complementary (the added fact, not the one it complements) and contradiction (either side). Kept out of tuning: "
    "report on it, never choose thresholds or weights by it."
)


POOLS: dict[tuple, list[str]] = {}


def build(seed: int = 20260113) -> dict:
    rng = random.Random(seed)
    memories, queries = [], []
    for conv in CONVS:
        mems, qs = build_conv(conv, rng)
        memories += mems
        queries += qs
    memories.sort(key=lambda m: (m["at"], m["key"]))
    for i, q in enumerate(queries, start=1):
        q["id"] = f"q{i:03d}"
    return {"description": DESCRIPTION, "users": USERS, "memories": memories, "queries": queries}


def memory(conv, key, content, kind, pos, user=None, **rel):
    return {"key": key, "user": user or conv.user, "project": conv.project, "kind": kind, "content": content,
            "supersedes": rel.get("supersedes", []), "replaces_undeclared": rel.get("replaces_undeclared", []),
            "complements": rel.get("complements", []), "duplicates": rel.get("duplicates", []),
            "contradicts": rel.get("contradicts", []), "reason": rel.get("reason"), "_pos": pos}


def build_conv(conv, rng):
    mems, qs = [], []
    slots: dict[str, tuple[str, float, list[str]]] = {}  # slot -> (current key, position, its restatement keys)
    chain_keys: dict[str, list[list[str]]] = {}
    for chain in conv.chains:
        n = len(chain.versions)
        first = rng.uniform(0.0, 0.3)
        last = rng.uniform(0.6, 0.97)
        positions = [first] + sorted(first + (last - first) * (i / (n - 1)) + rng.uniform(-0.04, 0.04)
                                     for i in range(1, n))
        versions: list[list[str]] = []
        for i, (v, pos) in enumerate(zip(chain.versions, positions)):
            key = f"{conv.id}-{chain.slot}-v{i + 1}"
            rel = {}
            if i:
                prev = versions[-1]
                if v.how == "d":
                    rel = {"supersedes": [prev[0]], "replaces_undeclared": prev[1:], "reason": v.reason}
                else:
                    rel = {"replaces_undeclared": list(prev)}
            mems.append(memory(conv, key, v.text, v.kind or chain.kind, pos, v.user, **rel))
            keys = [key]
            end = positions[i + 1] if i + 1 < n else 1.0
            for j, text in enumerate(v.restate, start=1):
                rkey = f"{key}-r{j}"
                mems.append(memory(conv, rkey, text, v.kind or chain.kind, rng.uniform(pos, end), v.user,
                                   duplicates=[key]))
                keys.append(rkey)
            versions.append(keys)
        chain_keys[chain.slot] = versions
        slots[chain.slot] = (versions[-1][0], positions[-1], versions[-1][1:])
        kind_of_change = "declared_supersede" if chain.versions[-1].how == "d" else "undeclared_supersede"
        stale = [k for ks in versions[:-1] for k in ks]
        for j, text in enumerate(chain.now):
            asker = chain.asker if chain.asker and (j % 2 == 1 or len(chain.now) == 1) else conv.user
            qs.append(query(conv, asker, kind_of_change, text, versions[-1], stale, rng))
        for text, index in chain.prev:
            others = [k for i, ks in enumerate(versions[:-1]) if i != index for k in ks]
            q = query(conv, conv.user, "previous_value", text, versions[index], others, rng)
            q["current"] = list(versions[-1])
            qs.append(q)
    for st in conv.stable:
        pos = rng.uniform(0.0, 0.7)
        mems.append(memory(conv, f"{conv.id}-{st.slot}", st.text, st.kind, pos))
        keys = [f"{conv.id}-{st.slot}"]
        for j, text in enumerate(st.restate, start=1):
            mems.append(memory(conv, f"{keys[0]}-r{j}", text, st.kind, rng.uniform(pos, 1.0), duplicates=[keys[0]]))
            keys.append(f"{keys[0]}-r{j}")
        slots[st.slot] = (keys[0], pos, keys[1:])
        for text in st.q:
            qs.append(query(conv, conv.user, "personal" if conv.project is None else "stable_fact", text, keys, [], rng))
    for comp in conv.comps:
        base, base_pos, _ = slots[comp.of]
        key = f"{conv.id}-{comp.slot}"
        mems.append(memory(conv, key, comp.text, comp.kind, rng.uniform(base_pos, 1.0), comp.user, complements=[base]))
        for text in comp.q:
            qs.append(query(conv, conv.user, "complementary", text, [key], [], rng))
    for contra in conv.contras:
        pa_ = rng.uniform(0.05, 0.5)
        ka, kb = f"{conv.id}-{contra.slot}-a", f"{conv.id}-{contra.slot}-b"
        mems.append(memory(conv, ka, contra.a, contra.kind, pa_))
        mems.append(memory(conv, kb, contra.b, contra.kind, rng.uniform(pa_ + 0.1, 0.97), contra.user_b,
                           contradicts=[ka]))
        for text in contra.q:
            qs.append(query(conv, conv.user, "contradiction", text, [ka, kb], [], rng))
    for j, text in enumerate(EXTRA.get(conv.id, []), start=1):
        mems.append(memory(conv, f"{conv.id}-detail-{j}", text, "fact", rng.random()))
    small = [(text, rng.random()) for text in conv.chat]
    # Small talk is drawn without replacement per writer and place, so exact repeats (absorbed by dedup) stay rare.
    pool = POOLS.setdefault((conv.user, conv.project), rng.sample(WORK if conv.project else PERSONAL,
                                                                 len(WORK if conv.project else PERSONAL)))
    while len(mems) + len(small) < conv.turns:
        small.append((pool.pop() if pool else rng.choice(WORK if conv.project else PERSONAL), rng.random()))
    for text, pos in small:
        mems.append(memory(conv, None, text, "note", pos))
    mems.sort(key=lambda m: m["_pos"])
    start = datetime.fromisoformat(conv.start)
    hour = 8 + int(conv.id[1:]) % 12  # conversations of one day happen at different hours
    per_day: dict[int, int] = {}
    for i, m in enumerate(mems, start=1):
        day = int(m.pop("_pos") * conv.days)
        n = per_day[day] = per_day.get(day, 0) + 1
        m["at"] = (start + timedelta(days=day, hours=hour, seconds=75 * n)).isoformat() + "Z"
        m["session"] = f"{conv.id}-{m['user']}"
        if m["key"] is None:
            m["key"] = f"{conv.id}-t{i:03d}"
    return mems, qs


def query(conv, user, type_, text, answers, stale, rng):
    project = conv.project if conv.project and rng.random() < 0.3 else None
    return {"id": None, "user": user, "type": type_, "query": text, "project": project, "kinds": None,
            "answers": list(answers), "stale": list(stale)}


if __name__ == "__main__":
    data = build()
    out = sys.argv[1]
    with open(out, "w") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    from collections import Counter
    print(len(data["memories"]), "memories", len(data["queries"]), "queries")
    print(Counter(q["type"] for q in data["queries"]))
    print(Counter(m["session"].split("-")[0] for m in data["memories"]))
