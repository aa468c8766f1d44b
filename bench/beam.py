"""BEAM-100K (tests/eval/beam-100k/, CC BY-SA 4.0: its README) as an evaluation set of bench/retrieval.py's shape.

Public long conversations where facts change and nobody declares it. As its README says to run it: each
conversation a project of its own, every user turn remembered in order as an untyped memory (a note, one session id
per session, no links), then the reviews, then each question through recall (k 10, the conversation's project).

The set is split by conversation: odd-numbered conversations are the half tuned on, even-numbered ones the held-out
half, only reported (``half``). Question types: ``knowledge_update`` (the answer changed: ``answers`` are the current
turns, ``stale`` the old ones) and ``contradiction`` (two statements that cannot both hold: both are answers, the
later one ``later``, the earlier ``earlier``).
"""
import json
from pathlib import Path

from django.conf import settings

PATH = Path(settings.BASE_DIR) / "tests" / "eval" / "beam-100k" / "beam-100k.json"
USER = "beam"
HALVES = ("tune", "heldout")


def half(chat: str) -> str:
    return "tune" if int(chat) % 2 else "heldout"


def _key(chat: str, turn_id: int) -> str:
    return f"b{int(chat):02d}-t{turn_id:03d}"


def dataset(path: Path = PATH) -> dict:
    """The conversations as bench/retrieval.py's dataset: users, memories in order, queries (each with its ``half``)."""
    source = json.loads(path.read_text())
    memories, queries = [], []
    for chat in source["chats"]:
        project = f"beam-{int(chat['chat']):02d}"
        replaces: dict[int, set[int]] = {}  # a current turn -> the old turns written before it (a labelled update)
        for question in chat["questions"]:
            if question["category"] == "knowledge_update":
                for new in question["current_ids"]:
                    replaces.setdefault(new, set()).update(old for old in question["old_ids"] if old < new)
        for turn in chat["turns"]:
            memories.append({
                "key": _key(chat["chat"], turn["id"]), "user": USER, "project": project, "kind": "note",
                "content": turn["text"], "supersedes": [],
                "replaces_undeclared": [_key(chat["chat"], old) for old in sorted(replaces.get(turn["id"], ()))],
                "complements": [], "duplicates": [], "contradicts": [], "reason": None, "marked": False,
                "at": turn["ts"], "session": f"{project}-s{turn['session']}",
            })
        for question in chat["questions"]:
            current = [_key(chat["chat"], i) for i in question["current_ids"]]
            old = [_key(chat["chat"], i) for i in question["old_ids"]]
            query = {"id": question["qid"], "user": USER, "project": project, "kinds": None, "query":
                     question["question"], "half": half(chat["chat"])}
            if question["category"] == "knowledge_update":
                queries.append({**query, "type": "knowledge_update", "answers": current, "stale": old})
            else:
                queries.append({**query, "type": "contradiction", "answers": current + old, "stale": [],
                                "later": current, "earlier": old})
    projects = sorted({m["project"] for m in memories})
    return {"description": "BEAM-100K (tests/eval/beam-100k/README.md)", "users": {USER: {"projects": projects}},
            "memories": memories, "queries": queries}
