"""`make bench ARGS="retrieval [--dataset conversations]"`: an evaluation set (tests/eval/), loaded through the real
services into a fresh organization, then every query through the real recall selector.

Metrics per query type and overall: recall@1 (a correct current answer at rank 1), MRR (over the top 10),
nDCG@5 (binary relevance), stale@1 (a superseded or replaced version at rank 1), stale@1u (the same, counted only on
queries with a version replaced without a declaration, and only those versions), and recall latency. After the hygiene
review: open conflicts per 100 writes, and what became of each labelled undeclared replacement (did the pair reach
the judge, was the older one retired or queued) and of each complementary pair (never retired).

A second table shows what a reader sees of changed facts (disagreement_scores): the current value above the old
one, both returned, the two flagged as disagreeing, false disagreement flags where nothing changed, the later of a
contradiction above the earlier; beside plain BM25 over the same turns (PlainBM25), the baseline recall must beat
on long conversations.

previous_value queries ask what a fact was before: they run with include_history (superseded versions come back,
always below their current version by API.md's rule), and are scored after removing their `current` memories from
the ranking, so the earlier version asked for must be the first thing after the current one.
"""
import argparse
import json
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
from django.conf import settings
from rank_bm25 import BM25Okapi

from bench import beam, calls
from bench.ceiling import ceiling, visible
from memory import recall, services
from tenants import rls
from tenants.auth import load_principal
from tenants.ids import ulid
from tenants.models import Membership
from tenants.services import api_token_issue, org_bootstrap, project_member_add, user_add

EVAL = Path(settings.BASE_DIR) / "tests" / "eval"
DATASETS = {  # --dataset NAME: the first set (tuned on), the conversations (nothing fitted on it), the long chats
    "dataset": EVAL / "dataset.json",
    "conversations": EVAL / "conversations.json",
    "longchat-tune": EVAL / "longchat_tune.json",  # long conversations of untyped turns: the half tuned on
    "longchat-heldout": EVAL / "longchat_heldout.json",  # the other half, only reported
    # The same chats, each question rewritten in the writer's own words, as people ask about what they said (the
    # public conversations' questions share 0.68 of their words with the answer; these 0.63 and 0.60; the originals
    # 0.16 and 0.13)
    "longchat-tune-words": EVAL / "longchat_tune_words.json",
    "longchat-heldout-words": EVAL / "longchat_heldout_words.json",
    "beam-100k": beam.PATH,  # public long conversations (bench/beam.py): tune and held-out halves by conversation
}
DATASET = DATASETS["dataset"]
# CI floors per set, just under what was measured: guards, not targets to tune the conversations on
FLOORS = {name: EVAL / ("floors.json" if name == "dataset" else f"floors_{name.replace('-', '_')}.json")
          for name in DATASETS}
METRICS = ("recall@1", "mrr", "ndcg@5", "stale@1")


def _principals(dataset: dict) -> dict:
    """A fresh organization with the dataset's users and projects; an agent token (principal) per user."""
    users = dataset["users"]
    projects = sorted({p for spec in users.values() for p in spec["projects"]})
    first, *others = users
    boot = org_bootstrap(org_slug=f"eval-{ulid().lower()}", admin_email=f"{first}@eval.test", project_slugs=projects)
    admin_scope = rls.Scope(org_id=boot.org.id, user_id=boot.user.id)
    user_ids = {first: boot.user.id}
    with rls.tenant_scope(admin_scope):
        admin = load_principal(admin_scope, token_id=None)
        for name in others:
            member = user_add(principal=admin, email=f"{name}@eval.test", role=Membership.Role.MEMBER).user
            user_ids[name] = member.id
            for project in users[name]["projects"]:
                project_member_add(principal=admin, project_slug=project, user_id=member.id)
    principals = {}
    for name, user_id in user_ids.items():
        scope = rls.Scope(org_id=boot.org.id, user_id=user_id)
        with rls.tenant_scope(scope):
            me = load_principal(scope, token_id=None)
            token, _ = api_token_issue(principal=me, name="eval agent", writer="agent", project_slug=None, user_id=None)
            principals[name] = load_principal(scope, token_id=token.id)
    return principals


def load(dataset: dict, principals: dict, say: Callable[[str], None]) -> dict[str, str]:
    ids: dict[str, str] = {}
    for i, spec in enumerate(dataset["memories"], start=1):
        links = [services.LinkSpec("supersedes", ids[key], spec.get("reason")) for key in spec["supersedes"]]
        result = calls.remember(
            principals[spec["user"]], spec["content"], kind=spec["kind"],
            scope="project" if spec["project"] else "personal", project=spec["project"], links=tuple(links),
            session_id=spec.get("session"),  # the conversation, as an agent sends it (near-verbatim dedup uses it)
        )
        ids[spec["key"]] = result.memory.id
        if i % 50 == 0:
            say(f"  loaded {i}/{len(dataset['memories'])} memories")
    return ids


def review_all(ids: dict[str, str], principals: dict, say: Callable[[str], None]) -> dict[str, int]:
    """Run the hygiene review of every undeclared write now, in order, as the worker would (configured judge)."""
    from hygiene.jobs import review_run
    from memory.models import Review

    outcomes: dict[str, int] = defaultdict(int)
    for principal in principals.values():
        with rls.tenant_scope(principal.scope):
            reviews = list(Review.objects.filter(memory__owner_id=principal.user.id).order_by("id")
                           .values_list("id", flat=True))
        for review_id in reviews:
            for outcome in review_run(review_id=review_id, scope=principal.scope).split(","):
                outcomes[outcome] += 1
    say(f"  hygiene reviews: {dict(outcomes)}")
    return dict(outcomes)


def _ndcg_at_5(ranked: list[str], answers: set[str]) -> float:
    dcg = sum(1 / math.log2(rank + 1) for rank, memory_id in enumerate(ranked[:5], start=1) if memory_id in answers)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(answers), 5) + 1))
    return dcg / ideal if ideal else 0.0


def hygiene_outcomes(dataset: dict, ids: dict[str, str], principals: dict) -> dict:
    """After review: open conflicts per 100 writes, and the fate of the labelled undeclared and complementary pairs.

    Read from outside the hygiene code: a pair reached the judge when a Verdict row (newer, older) exists; it was
    retired when the older memory's successor is the newer one, queued when an open conflict joins the two.
    Conflicts and verdicts are visible where their memories are, so the union over the users' scopes is all of them.
    """
    from memory.models import Conflict, Memory, Verdict

    conflicts, verdicts, successor = {}, {}, {}
    for principal in principals.values():
        with rls.tenant_scope(principal.scope):
            conflicts.update({c.id: c for c in Conflict.objects.all()})
            verdicts.update({(v.memory_id, v.other_id): v.decision for v in Verdict.objects.all()})
            superseded = Memory.objects.filter(superseded_by__isnull=False)
            successor.update(dict(superseded.values_list("id", "superseded_by_id")))
    open_pairs = {frozenset((c.a_id, c.b_id)) for c in conflicts.values() if c.status == Conflict.Status.OPEN}
    replaced = [(ids[m["key"]], ids[old]) for m in dataset["memories"] for old in m["replaces_undeclared"]
                if ids[m["key"]] != ids[old]]  # an update absorbed into its older version is no pair (counted apart)
    decisions: dict[str, int] = defaultdict(int)
    for pair in replaced:
        decisions[verdicts.get(pair, "not judged")] += 1
    retired = sum(successor.get(old) == new for new, old in replaced)
    queued = sum(successor.get(old) != new and frozenset((new, old)) in open_pairs for new, old in replaced)
    in_conflict = {memory_id for pair in open_pairs for memory_id in pair}
    retired_by_other = sum(old in successor and successor[old] != new for new, old in replaced)
    queued_with_other = sum(old not in successor and frozenset((new, old)) not in open_pairs and old in in_conflict
                            for new, old in replaced)
    complements = [(ids[m["key"]], ids[other]) for m in dataset["memories"] for other in m["complements"]]
    # Every retirement after review, by what the labels say it was: a labelled replacement or duplicate, one note by
    # another (small talk in the conversations), or unlabelled (a memory retired by one no label calls its successor).
    labelled = {frozenset((ids[m["key"]], ids[other])) for m in dataset["memories"]
                for other in m["supersedes"] + m["replaces_undeclared"] + m["duplicates"]}
    kind = {ids[m["key"]]: m["kind"] for m in dataset["memories"]}
    content = {ids[m["key"]]: m["content"] for m in dataset["memories"]}
    later: dict[str, set[str]] = defaultdict(set)  # each memory's labelled successors, for chains (A -> B -> C)
    for m in dataset["memories"]:
        for other in m["supersedes"] + m["replaces_undeclared"]:
            later[ids[other]].add(ids[m["key"]])
    for m in dataset["memories"]:  # a restatement of a later version is that version
        for other in m["duplicates"]:
            for earlier in [e for e, nexts in later.items() if ids[other] in nexts]:
                later[earlier].add(ids[m["key"]])

    def along_chain(old: str, new: str) -> bool:
        """new is a later version of old's labelled chain: retiring old by it loses nothing old's successor kept."""
        seen, todo = set(), [old]
        while todo:
            for nxt in later[todo.pop()] - seen:
                if nxt == new:
                    return True
                seen.add(nxt)
                todo.append(nxt)
        return False

    retirements: dict[str, int] = defaultdict(int)
    wrong = []  # retired, but no label calls it replaced or duplicated: each one knowledge lost without anyone asking
    for old, new in successor.items():
        if frozenset((old, new)) in labelled:
            retirements["labelled"] += 1
            continue
        if along_chain(old, new):
            retirements["labelled, by a later version of its chain (or its restatement)"] += 1
            continue
        retirements["between notes" if kind.get(old) == kind.get(new) == "note" else "unlabelled"] += 1
        wrong.append({"older": content.get(old, ""), "older_kind": kind.get(old),
                      "newer": content.get(new, ""), "newer_kind": kind.get(new)})
    replaced_pairs = set(replaced)
    with rls.tenant_scope(next(iter(principals.values())).scope):  # the admin: the org's verdicts as RLS shows them
        kept = [  # in the result file: what was acted on, and every verdict on a labelled replacement
            {"relation": v.relation, "confidence": v.confidence, "decision": v.decision, "rationale": v.rationale,
             "labelled_replacement": (v.memory_id, v.other_id) in replaced_pairs,
             "older": content.get(v.other_id, ""), "newer": content.get(v.memory_id, "")}
            for v in Verdict.objects.all()
            if v.decision != "recorded" or (v.memory_id, v.other_id) in replaced_pairs
        ]
    writes = len(dataset["memories"])
    open_count = sum(c.status == Conflict.Status.OPEN for c in conflicts.values())
    shown_pairs = {frozenset((c.a_id, c.b_id)) for c in conflicts.values() if c.status == Conflict.Status.SHOWN}
    in_line = sum(successor.get(old) != new and frozenset((new, old)) in shown_pairs for new, old in replaced)
    return {
        "writes": writes,
        "conflicts_open": open_count,
        "conflicts_open_per_100_writes": round(100 * open_count / writes, 1),
        # Other disagreements of a thing already queued: flagged at read time, queued when the one before is settled.
        "conflicts_shown": len(shown_pairs),
        "undeclared_pairs_shown": in_line,
        "undeclared_pairs": len(replaced),
        "undeclared_pairs_judged": len(replaced) - decisions.get("not judged", 0),
        "undeclared_pairs_by_decision": dict(decisions),
        "undeclared_pairs_retired": retired,
        "undeclared_pairs_queued": queued,
        # Queued: open, or in line behind its thing's open conflict (shown, queued once that one is settled).
        "undeclared_pairs_retired_or_queued":
            round((retired + queued + in_line) / len(replaced), 3) if replaced else None,
        "undeclared_pairs_retired_by_another": retired_by_other,
        "undeclared_pairs_queued_with_another": queued_with_other,
        "retirements": dict(retirements),
        "wrong_retirements": len(wrong),
        "wrong_retirement_pairs": wrong,
        "verdicts": kept,
        "complementary_pairs": len(complements),
        "complementary_pairs_retired": sum(successor.get(a) == b or successor.get(b) == a for a, b in complements),
    }


class PlainBM25:
    """Plain BM25 over the turns a query's user may see with its filters (offline: no server, no hygiene, no
    supersession): the baseline recall must beat on long conversations (rank_bm25's Okapi BM25, words lowercased)."""

    def __init__(self, dataset: dict) -> None:
        self.dataset = dataset
        self.indexes: dict[tuple, tuple[list[str], BM25Okapi]] = {}

    @staticmethod
    def _words(text: str) -> list[str]:
        return re.findall(r"[a-z0-9]+", text.lower())

    def rank(self, query: dict, exclude: list[str] = ()) -> list[str]:
        """The visible memories' keys, best first, the top 10 (less ``exclude``)."""
        key = (query["user"], query.get("project"), tuple(query.get("kinds") or ()))
        if key not in self.indexes:
            turns = visible(self.dataset, query)
            self.indexes[key] = ([m["key"] for m in turns], BM25Okapi([self._words(m["content"]) for m in turns]))
        keys, index = self.indexes[key]
        scores = index.get_scores(self._words(query["query"]))
        order = [keys[i] for i in np.argsort(-scores, kind="stable") if keys[i] not in exclude]
        return order[:10]


def _first(ranked: list[str], wanted: set[str]) -> int | None:
    return next((i for i, memory_id in enumerate(ranked) if memory_id in wanted), None)


def _above(ranked: list[str], first: set[str], second: set[str]) -> float:
    """1 when something of ``first`` is returned and ranks above everything of ``second``."""
    a, b = _first(ranked, first), _first(ranked, second)
    return float(a is not None and (b is None or a < b))


def _names(hit) -> set[str]:
    """The memories a hit names as disagreeing with it, newer than it, or in an open conflict with it."""
    return ({m.id for m in hit.disagrees_with} | set(hit.conflicts_with) | set(hit.probably_replaced_by)
            | set(hit.probably_replaces) | set(hit.updated_by) | set(hit.updates))


def _flagged(hits: dict, a: str, b: str) -> float:
    """Either of two returned memories names the other (a flag or a link): the reader sees they disagree."""
    return float(b in _names(hits[a]) or a in _names(hits[b]))


def disagreement_scores(query: dict, ids: dict[str, str], ranked: list[str], hits: dict,
                        bm25_ranked: list[str]) -> dict[str, float]:
    """What a reader sees of a change nobody declared, per query (the second table of the report).

    - current@1 / old@1: a current answer / an older version first; above_old: a current answer returned above
      every older version; both_shown: a current answer and an older version both returned; pair_flagged (of
      those): the first of each flagged as disagreeing with each other (read-time `disagrees`, an open conflict, or
      the judge's probable replacement); misled: an older version first, and nothing on it names a returned current
      answer (the reader was given the old value as if it were the answer);
    - false_flag (questions whose answer never changed, contradictions aside): the answer returned first carries
      `disagrees`;
    - later_above (contradictions): the later statement returned above the earlier, both returned; both_flagged:
      both returned and flagged as disagreeing (BEAM's good outcome: show both, ask which holds);
    - bm25@1, bm25_above_old: the same two for plain BM25 (PlainBM25).
    """
    answers = {ids[key] for key in query["answers"]}
    out: dict[str, float] = {}
    if query["type"] == "contradiction" and "later" in query:
        def keys(side):
            return {ids[key] for key in ([side] if isinstance(side, str) else side)}

        later, earlier = keys(query["later"]), keys(query["earlier"])
        a, b = _first(ranked, later), _first(ranked, earlier)
        both = a is not None and b is not None
        out["later_above"] = float(both) * _above(ranked, later, earlier)
        out["both_flagged"] = _flagged(hits, ranked[a], ranked[b]) if both else 0.0
        out["bm25_later_above"] = float(all(_first(bm25_ranked, s) is not None for s in (later, earlier))) * _above(
            bm25_ranked, later, earlier)
        return out
    stale = {ids[key] for key in query["stale"]}
    out["current@1"] = float(bool(ranked) and ranked[0] in answers)
    out["bm25@1"] = float(bool(bm25_ranked) and bm25_ranked[0] in answers)
    if stale and "current" not in query:
        out["old@1"] = float(bool(ranked) and ranked[0] in stale)
        returned_current = {memory_id for memory_id in ranked if memory_id in answers}
        out["misled"] = float(out["old@1"] == 1.0 and not _names(hits[ranked[0]]) & returned_current)
        out["above_old"] = _above(ranked, answers, stale)
        out["bm25_above_old"] = _above(bm25_ranked, answers, stale)
        a, b = _first(ranked, answers), _first(ranked, stale)
        out["both_shown"] = float(a is not None and b is not None)
        if a is not None and b is not None:
            out["pair_flagged"] = _flagged(hits, ranked[a], ranked[b])
    elif not stale and query["type"] not in ("previous_value", "contradiction"):  # a contradiction disagrees
        first = _first(ranked, answers)
        if first is not None:
            out["false_flag"] = float("disagrees" in hits[ranked[first]].flags)
    return out


def evaluate(*, say: Callable[[str], None] = print, dataset_path: Path = DATASET) -> dict:
    dataset = beam.dataset(dataset_path) if dataset_path == beam.PATH else json.loads(dataset_path.read_text())
    principals = _principals(dataset)
    ids = load(dataset, principals, say)
    hygiene = review_all(ids, principals, say)
    halves = sorted({q["half"] for q in dataset["queries"] if "half" in q})
    return {
        "halves": {name: score({**dataset, "queries": [q for q in dataset["queries"] if q.get("half") == name]},
                               ids, principals) for name in halves},
        "dataset": dataset_path.name,
        "ceiling": ceiling(dataset),
        "memories": len(dataset["memories"]),
        "absorbed_writes": len(dataset["memories"]) - len(set(ids.values())),
        "hygiene": hygiene,
        "hygiene_outcomes": hygiene_outcomes(dataset, ids, principals),
        **score(dataset, ids, principals),
    }


def score(dataset: dict, ids: dict[str, str], principals: dict) -> dict:
    """Every query of the set through recall, on the loaded store: the tables of the report."""
    replaced_undeclared = {old for m in dataset["memories"] for old in m["replaces_undeclared"]}
    per_type: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    latencies, misses, retired_returned = [], [], 0
    words_only = PlainBM25(dataset)
    shown: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for query in dataset["queries"]:
        answers = {ids[key] for key in query["answers"]}
        stale = {ids[key] for key in query["stale"]}
        stale_undeclared = {ids[key] for key in query["stale"] if key in replaced_undeclared}
        history = "current" in query  # previous_value: see the module docstring
        start = time.perf_counter()
        result = calls.recall_as(principals[query["user"]], recall.RecallQuery(
            query=query["query"], k=10, project=query.get("project"), kinds=query.get("kinds"),
            include_history=history,
        ))
        latencies.append(time.perf_counter() - start)
        ranked = [hit.memory.id for hit in result.hits]
        if history:
            current = {ids[key] for key in query["current"]}
            ranked = [memory_id for memory_id in ranked if memory_id not in current]
        else:
            retired_returned += sum(hit.memory.status != "live" for hit in result.hits)  # at any rank
        first_hit = next((rank for rank, memory_id in enumerate(ranked, start=1) if memory_id in answers), None)
        scores = {
            "recall@1": float(bool(ranked) and ranked[0] in answers),
            "mrr": 1 / first_hit if first_hit else 0.0,
            "ndcg@5": _ndcg_at_5(ranked, answers),
            "stale@1": float(bool(ranked) and ranked[0] in stale),
        }
        if stale_undeclared:
            scores["stale@1u"] = float(bool(ranked) and ranked[0] in stale_undeclared)
        for bucket in (query["type"], "overall"):
            for metric, value in scores.items():
                per_type[bucket][metric].append(value)
        if not scores["recall@1"]:
            misses.append({"id": query["id"], "type": query["type"], "query": query["query"], "answer_rank": first_hit})
        hits = {hit.memory.id: hit for hit in result.hits if hit.memory.id in ranked}
        bm25_ranked = [ids[key] for key in words_only.rank(query, exclude=query.get("current", []))]
        for bucket in (query["type"], "overall"):
            for metric, value in disagreement_scores(query, ids, ranked, hits, bm25_ranked).items():
                shown[bucket][metric].append(value)
    table = {
        bucket: {
            "queries": len(values["recall@1"]),
            **{m: round(float(np.mean(values[m])), 3) for m in METRICS},
            "stale@1u": round(float(np.mean(values["stale@1u"])), 3) if values["stale@1u"] else None,
            "queries_undeclared": len(values["stale@1u"]),
        }
        for bucket, values in sorted(per_type.items(), key=lambda item: (item[0] == "overall", item[0]))
    }
    ms = np.array(latencies) * 1000
    return {
        "queries": len(dataset["queries"]),
        "table": table,
        "disagreement_table": {
            bucket: {metric: {"value": round(float(np.mean(v)), 3), "queries": len(v)} for metric, v in values.items()}
            for bucket, values in sorted(shown.items(), key=lambda item: (item[0] == "overall", item[0]))
        },
        "retired_returned": retired_returned,
        "latency_ms": {"p50": round(float(np.percentile(ms, 50)), 2), "p95": round(float(np.percentile(ms, 95)), 2)},
        "misses": misses,
    }


LOWER_IS_BETTER = {"stale@1", "old@1", "false_flag", "misled"}


def floor_violations(report: dict, dataset: str = "dataset") -> list[str]:
    """Each floor of the set (FLOORS) that the report falls below (or, for LOWER_IS_BETTER, rises above); a metric is
    read from the main table or else from the disagreement table; a bucket named "HALF/TYPE" from that half's
    tables (a set split by conversation: bench/beam.py)."""
    violations = []
    if not FLOORS[dataset].exists():  # the words variants: measured beside their originals, not held to floors
        return violations
    for bucket, floors in json.loads(FLOORS[dataset].read_text()).items():
        part, _, row = bucket.rpartition("/")
        tables = report["halves"][part] if part else report
        for metric, floor in floors.items():
            value = tables["table"].get(row, {}).get(metric)
            if value is None:
                value = tables.get("disagreement_table", {}).get(row, {}).get(metric, {}).get("value")
            lower = metric in LOWER_IS_BETTER
            if value is None or (value > floor if lower else value < floor):
                violations.append(f"{bucket} {metric} = {value}, must be {'at most' if lower else 'at least'} {floor}")
    return violations


SHOWN = ("current@1", "above_old", "old@1", "misled", "both_shown", "pair_flagged", "false_flag", "later_above",
         "both_flagged", "bm25@1", "bm25_above_old", "bm25_later_above")


def format_disagreement_table(report: dict, title: str = "") -> list[str]:
    """What a reader sees of changes, per query type, beside plain BM25 (disagreement_scores); '-' where a measure
    does not apply to the type, (n) where it counts fewer queries than the type has."""
    lines = [f"  what a reader sees of changes{title} (recall, then plain BM25 over the same turns):",
             f"  {'type':<22}" + "".join(f"{m:>14}" for m in SHOWN)]
    for bucket, row in report["disagreement_table"].items():
        cells = []
        for metric in SHOWN:
            cell = row.get(metric)
            cells.append(f"{cell['value']:.3f} ({cell['queries']})" if cell else "-")
        lines.append(f"  {bucket:<22}" + "".join(f"{c:>14}" for c in cells))
    return lines


def format_table(report: dict) -> list[str]:
    columns = (*METRICS, "stale@1u")
    lines = [f"  {'type':<22}{'queries':>8}" + "".join(f"{m:>10}" for m in columns) + f"{'ceiling@1':>11}"]
    for bucket, row in report["table"].items():
        u = row.get("stale@1u")
        lines.append(f"  {bucket:<22}{row['queries']:>8}" + "".join(f"{row[m]:>10.3f}" for m in METRICS)
                     + (f"{u:>10.3f}" if u is not None else f"{'-':>10}")
                     + f"{report['ceiling'].get(bucket, 0.0):>11.3f}")
    lines.append("  ceiling@1: recall@1 of the embedding model alone with perfect supersession (bench/ceiling.py)")
    lines.extend(format_disagreement_table(report))
    for name, half in report.get("halves", {}).items():
        lines.extend(format_disagreement_table(half, f", {name} half ({half['queries']} questions)"))
    lines.append("  stale@1u: stale@1 on queries with a version replaced without a declaration, counting only those")
    lines.append(f"  superseded or forgotten memories returned, at any rank (previous_value aside): "
                 f"{report['retired_returned']}")
    if "hygiene_outcomes" in report:
        o = report["hygiene_outcomes"]
        judged = o["undeclared_pairs_judged"]
        lines.append(f"  writes {o['writes']} ({report.get('absorbed_writes', 0)} absorbed by dedup); open conflicts"
                     f" after review: {o['conflicts_open']} ({o['conflicts_open_per_100_writes']} per 100 writes),"
                     f" {o.get('conflicts_shown', 0)} more shown at read time beside them")
        lines.append(f"  undeclared replacements (labelled pairs): {o['undeclared_pairs']}; reached the judge {judged}"
                     f" {dict(sorted(o['undeclared_pairs_by_decision'].items()))}; older one retired"
                     f" {o['undeclared_pairs_retired']}, queued in an open conflict {o['undeclared_pairs_queued']}"
                     f" (older one retired by another memory {o['undeclared_pairs_retired_by_another']}, in a conflict"
                     f" with another only {o['undeclared_pairs_queued_with_another']})")
        lines.append(f"  retired or queued: {o['undeclared_pairs_retired_or_queued']} of the undeclared replacements"
                     f" ({o.get('undeclared_pairs_shown', 0)} of them in line behind their thing's open conflict)")
        lines.append(f"  complementary pairs retired: {o['complementary_pairs_retired']} of {o['complementary_pairs']};"
                     f" every retirement by its labels: {dict(sorted(o['retirements'].items()))}; wrong retirements"
                     f" (no label calls them replaced): {o['wrong_retirements']}")
        for pair in o["wrong_retirement_pairs"]:
            lines.append(f"    {pair['older_kind']} {pair['older'][:60]!r} -> "
                         f"{pair['newer_kind']} {pair['newer'][:60]!r}")
    latency = report["latency_ms"]
    lines.append(f"  recall latency p50 {latency['p50']} ms, p95 {latency['p95']} ms")
    return lines


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict:
    """The set named by --dataset, with the floors it falls below (floor_violations; --check exits 1 on them)."""
    path = DATASETS[args.dataset]
    say(f"bench retrieval: the evaluation set (tests/eval/{path.name}) through remember and recall")
    result = evaluate(say=say, dataset_path=path)
    result["floor_violations"] = floor_violations(result, args.dataset)
    return result


def report(result: dict, say: Callable[[str], None]) -> None:
    for line in format_table(result):
        say(line)
    for violation in result["floor_violations"]:
        say(f"  BELOW FLOOR: {violation}")
