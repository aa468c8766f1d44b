"""BEAM-100K as bench retrieval reads it (bench/beam.py), and the two measures it added: misled and both_flagged.

No database: the conversion is checked against the source file, the measures on hand-built hits.
"""
import json
from types import SimpleNamespace

from bench import beam
from bench.retrieval import FLOORS, disagreement_scores, floor_violations


def test_every_user_turn_is_one_untyped_memory_in_order_and_the_halves_split_by_conversation():
    source = json.loads(beam.PATH.read_text())
    data = beam.dataset()
    assert len(data["memories"]) == sum(len(c["turns"]) for c in source["chats"])
    assert {m["kind"] for m in data["memories"]} == {"note"}
    assert all(not m["supersedes"] for m in data["memories"])  # nobody declares
    keys = [m["key"] for m in data["memories"]]
    assert len(set(keys)) == len(keys)
    position = {key: i for i, key in enumerate(keys)}
    for memory in data["memories"]:  # a labelled update points back to an earlier turn of its own conversation
        for old in memory["replaces_undeclared"]:
            assert position[old] < position[memory["key"]] and old[:3] == memory["key"][:3]
    halves = {}
    for query in data["queries"]:
        assert set(query["answers"]) | set(query["stale"]) <= position.keys()
        halves.setdefault(query["project"], set()).add(query["half"])
    assert all(len(h) == 1 for h in halves.values())  # a conversation is wholly in one half
    assert {h for hs in halves.values() for h in hs} == set(beam.HALVES)
    assert len(data["queries"]) == 73


def _hit(memory_id: str, **names) -> SimpleNamespace:
    fields = {"disagrees_with": [], "conflicts_with": [], "probably_replaced_by": [], "probably_replaces": [],
              "updated_by": {}, "updates": {}, "flags": []} | names
    return SimpleNamespace(memory=SimpleNamespace(id=memory_id), **fields)


CHANGED = {"type": "knowledge_update", "answers": ["new"], "stale": ["old"]}
IDS = {"new": "m-new", "old": "m-old", "later": "m-later", "earlier": "m-earlier"}


def test_an_old_value_first_is_misled_unless_it_names_the_returned_newer_one():
    ranked = ["m-old", "m-new"]
    silent = disagreement_scores(CHANGED, IDS, ranked, {"m-old": _hit("m-old"), "m-new": _hit("m-new")}, [])
    assert silent["misled"] == 1.0 and silent["pair_flagged"] == 0.0
    flagged = {"m-old": _hit("m-old", disagrees_with=[SimpleNamespace(id="m-new")]), "m-new": _hit("m-new")}
    named = disagreement_scores(CHANGED, IDS, ranked, flagged, [])
    assert named["misled"] == 0.0 and named["pair_flagged"] == 1.0
    current_first = disagreement_scores(CHANGED, IDS, ["m-new", "m-old"], flagged, [])
    assert current_first["misled"] == 0.0 and current_first["old@1"] == 0.0


def test_a_contradiction_counts_both_flagged_only_when_both_are_returned_and_one_names_the_other():
    query = {"type": "contradiction", "answers": ["later", "earlier"], "stale": [], "later": ["later"],
             "earlier": ["earlier"]}
    hits = {"m-later": _hit("m-later", conflicts_with=["m-earlier"]), "m-earlier": _hit("m-earlier")}
    both = disagreement_scores(query, IDS, ["m-later", "m-earlier"], hits, [])
    assert both == {"later_above": 1.0, "both_flagged": 1.0, "bm25_later_above": 0.0}
    one = disagreement_scores(query, IDS, ["m-later"], {"m-later": hits["m-later"]}, [])
    assert one["both_flagged"] == 0.0 and one["later_above"] == 0.0


def test_the_held_out_floors_are_read_from_their_half():
    floors = json.loads(FLOORS["beam-100k"].read_text())

    def half(misled: float) -> dict:
        rows = {bucket.split("/")[1]: {metric: {"value": value, "queries": 17} for metric, value in metrics.items()}
                for bucket, metrics in floors.items()}
        rows["knowledge_update"]["misled"]["value"] = misled
        return {"table": {}, "disagreement_table": rows}

    at_the_floor = floors["heldout/knowledge_update"]["misled"]
    report = {"halves": {"tune": half(1.0), "heldout": half(at_the_floor)}}
    assert floor_violations(report, "beam-100k") == []  # the tune half is not held to them
    report["halves"]["heldout"] = half(at_the_floor + 0.06)
    assert floor_violations(report, "beam-100k") == [
        f"heldout/knowledge_update misled = {at_the_floor + 0.06}, must be at most {at_the_floor}"]
