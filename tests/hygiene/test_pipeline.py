"""The hygiene pipeline end to end: real commits, a real Redis, a real RQ worker (burst), the embedded judge or
the vLLM client against a local OpenAI-compatible test server."""
import pytest
from django.core.management import call_command
from django_rq.connection_utils import get_redis_connection
from rq import Queue

from memory.models import Conflict, Review, Verdict
from memory.models import Memory
from tenants import rls
from tests.support.memories import remember_id
from tests.support.tenants import build_tenant


def state(tenant, model, **filters):
    with rls.tenant_scope(tenant.scope):
        return list(model.objects.filter(**filters))


def memory(tenant, memory_id) -> Memory:
    with rls.tenant_scope(tenant.scope):
        return Memory.objects.get(pk=memory_id)


def test_a_clear_replacement_is_retired_by_the_judge(api, work, fake_vllm):
    acme = build_tenant("acme")
    # Stated facts of one writer, the same subject with a changed value: the shape the judge may retire alone.
    old = remember_id(api, acme.member_token, "Production deploys for web happen Mondays at 10:00 UTC.", kind="fact")
    new = remember_id(api, acme.member_token, "Web production deploys moved to Thursdays at 15:00 UTC.", kind="fact")
    work()
    retired = memory(acme, old)
    assert retired.status == "superseded" and retired.superseded_by_id == new
    assert "vllm:test-judge judged supersedes (0.95)" in retired.invalidated_reason
    (verdict,) = state(acme, Verdict, memory_id=new)
    assert (verdict.other_id, verdict.decision, verdict.prompt_version) == (old, "auto_retired", "judge-v2")
    assert state(acme, Review, memory_id=new)[0].state == "done"
    history = api(acme.member_token).get(f"/api/v1/memories/{new}/history").json()["chain"]
    assert [m["id"] for m in history] == [old, new]


@pytest.mark.slow
def test_an_uncertain_verdict_becomes_a_conflict_for_a_human(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.87, "rationale": "maybe newer"}
    acme = build_tenant("acme")
    old = remember_id(api, acme.member_token, "Checkout is owned by Dana.")
    new = remember_id(api, acme.member_token, "Ivan owns checkout.")
    work()
    assert memory(acme, old).status == "live"
    (conflict,) = state(acme, Conflict)
    assert (conflict.a_id, conflict.b_id, conflict.relation, conflict.status) == (old, new, "supersedes", "open")
    listed = api(acme.member_token).get("/api/v1/conflicts?status=open").json()["results"]
    assert [(c["a"], c["b"], c["confidence"], c["judge"]) for c in listed] == [(old, new, 0.87, "vllm:test-judge")]
    both = api(acme.member_token).post("/api/v1/recall", {"query": "Who owns checkout?", "k": 2}, format="json").json()
    assert {r["memory"]["id"] for r in both["results"]} == {old, new}
    assert all("in_conflict" in r["flags"] for r in both["results"])
    # k = 1 leaves no room for the partner (partners count towards k), but the hit still names it.
    (one,) = api(acme.member_token).post("/api/v1/recall", {"query": "Who owns checkout?", "k": 1},
                                         format="json").json()["results"]
    assert "in_conflict" in one["flags"] and one["conflicts_with"] == list({old, new} - {one["memory"]["id"]})


@pytest.mark.slow
def test_a_thing_already_in_the_queue_opens_no_second_conflict_and_the_next_is_queued_once_it_is_settled(
        api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.87, "rationale": "maybe newer"}
    acme = build_tenant("acme")
    client = api(acme.member_token)
    first = remember_id(api, acme.member_token, "Checkout is owned by Dana.", kind="fact")
    work()
    second = remember_id(api, acme.member_token, "Ivan owns checkout.", kind="fact")
    work()
    third = remember_id(api, acme.member_token, "Checkout is owned by Priya.", kind="fact")
    work()
    (queued,) = client.get("/api/v1/conflicts?status=open").json()["results"]
    (shown,) = client.get("/api/v1/conflicts?status=shown").json()["results"]
    assert (queued["a"], queued["b"]) == (first, second) and shown["b"] == third
    assert client.get("/api/v1/stats").json()["conflicts"]["open"] == 1
    assert {v.decision for v in state(acme, Verdict, memory_id=third)} == {"shown", "recorded"}
    # The reader sees every disagreement of the thing, queued or not.
    results = client.post("/api/v1/recall", {"query": "Who owns checkout?", "k": 5}, format="json").json()["results"]
    flagged = {r["memory"]["id"]: r for r in results if "in_conflict" in r["flags"]}
    assert set(flagged) == {first, second, third}
    assert flagged[third]["conflicts_with"] == [shown["a"]]

    settled = client.post(f"/api/v1/conflicts/{queued['id']}/resolve", {"decision": "keep_both"}, format="json")
    assert settled.status_code == 200
    (now_queued,) = client.get("/api/v1/conflicts?status=open").json()["results"]
    assert now_queued["id"] == shown["id"]
    assert client.get("/api/v1/conflicts?status=shown").json()["results"] == []


def test_a_declared_pair_is_never_judged(api, work, fake_vllm):
    acme = build_tenant("acme")
    old = remember_id(api, acme.member_token, "Search runs Elasticsearch 7.")
    new = remember_id(api, acme.member_token, "Search runs Elasticsearch 8.", links=[{"type": "supersedes", "dst": old}])
    work()
    assert state(acme, Review, memory_id=new) == [] and fake_vllm.requests == []
    assert state(acme, Conflict) == []


def test_a_linked_pair_is_not_judged_again(api, work, fake_vllm):
    acme = build_tenant("acme")
    old = remember_id(api, acme.member_token, "Search indexes rebuild nightly at 01:00.")
    remember_id(api, acme.member_token, "Search indexes rebuild nightly at 03:00 now.",
             links=[{"type": "relates_to", "dst": old}])
    work()
    assert fake_vllm.requests == [] and state(acme, Verdict) == []


def test_a_watcher_never_retires_an_authoritative_memory(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.99, "rationale": "sure"}
    acme = build_tenant("acme")
    old = remember_id(api, acme.member_token, "The VPN gateway is vpn1.acme.test.")
    watcher = api(acme.member_token).post("/api/v1/tokens", {"name": "w", "writer": "watcher", "project": "web"},
                                          format="json").json()["token"]
    remember_id(api, watcher, "The VPN gateway is now vpn2.acme.test.")
    work()
    assert memory(acme, old).status == "live"
    assert [c.relation for c in state(acme, Conflict)] == ["supersedes"]


@pytest.mark.slow
def test_running_a_review_again_changes_nothing(api, work, fake_vllm):
    fake_vllm.verdict = {"relation": "contradicts", "confidence": 0.88, "rationale": "disagree"}
    acme = build_tenant("acme")
    remember_id(api, acme.member_token, "Backups are kept for 30 days.")
    new = remember_id(api, acme.member_token, "Backups are kept for 14 days.")
    work()
    (review,) = state(acme, Review, memory_id=new)
    calls = len(fake_vllm.requests)
    # As if a worker died after its work and the job ran again: same review, pending once more.
    with rls.tenant_scope(acme.scope):
        Review.objects.filter(pk=review.id).update(state="pending")
    from memory.outbox import review_enqueue

    review_enqueue(review_id=review.id, org_id=acme.org.id, user_id=acme.member.id)
    work()
    assert len(state(acme, Conflict)) == 1 and len(state(acme, Verdict)) == 1
    assert len(fake_vllm.requests) == calls  # the pair already has a verdict: no second judge call
    assert state(acme, Review, memory_id=new)[0].state == "done"


@pytest.mark.slow
def test_a_queue_outage_at_commit_loses_nothing(api, work, queue, monkeypatch, fake_vllm):
    acme = build_tenant("acme")
    remember_id(api, acme.member_token, "Grafana lives at grafana.acme.test.")
    # Connected the way the app connects (django_rq): a plain redis.Redis retries a refused connection for 4 s.
    dead = Queue("default", connection=get_redis_connection({"URL": "redis://127.0.0.1:1/0"}))
    monkeypatch.setattr("memory.outbox.review_queue", lambda: dead)
    new = remember_id(api, acme.member_token, "Grafana moved to metrics.acme.test.")  # the write still succeeds
    assert [r.state for r in state(acme, Review, memory_id=new)] == ["pending"]
    monkeypatch.undo()  # Redis is back
    call_command("hygiene_flush", "--older-than", "0")
    work()
    assert [r.state for r in state(acme, Review, memory_id=new)] == ["done"]
    assert len(state(acme, Verdict, memory_id=new)) == 1


@pytest.mark.slow
def test_a_judge_outage_is_retried_then_marked_and_can_be_rerun(api, work, settings, fake_vllm):
    settings.JUDGE_RETRY_INTERVALS = [0, 0]
    fake_vllm.fail_next = 9  # 3 job attempts x 3 client attempts: every try fails
    acme = build_tenant("acme")
    remember_id(api, acme.member_token, "Sentry DSN rotates quarterly.")
    new = remember_id(api, acme.member_token, "Sentry DSN now rotates monthly.")
    work()
    (review,) = state(acme, Review, memory_id=new)
    assert (review.state, review.attempts) == ("unavailable", 3) and "503" in review.last_error
    assert len(fake_vllm.requests) == 9
    call_command("hygiene_rerun")  # the judge is back
    work()
    assert state(acme, Review, memory_id=new)[0].state == "done"
    assert len(state(acme, Verdict, memory_id=new)) == 1


def test_the_embedded_judge_reviews_writes_too(api, work):
    acme = build_tenant("acme")
    old = remember_id(api, acme.member_token, "The staging database is refreshed every Sunday night.")
    new = remember_id(api, acme.member_token, "Staging's database gets refreshed every Sunday night.")
    work()
    (verdict,) = state(acme, Verdict, memory_id=new)
    assert verdict.judge.startswith("local:") and verdict.other_id == old
    assert verdict.relation in {"duplicate", "supersedes", "complementary", "contradicts", "unrelated"}
    assert 0 <= verdict.confidence <= 1


@pytest.mark.slow
def test_verdict_and_conflict_rows_carry_the_identity_of_the_judge_that_answered(api, work, settings, fake_vllm):
    """The vLLM judge answers the first review; while it is down the embedded judge answers, and says so."""
    settings.JUDGE_VLLM_FALLBACK = "local"
    fake_vllm.verdict = {"relation": "contradicts", "confidence": 0.88, "rationale": "disagree"}
    acme = build_tenant("acme")
    remember_id(api, acme.member_token, "Backups are kept for 30 days.")
    first = remember_id(api, acme.member_token, "Backups are kept for 14 days.")
    work()
    fake_vllm.fail_next = 99  # the server goes down
    second = remember_id(api, acme.member_token, "Nightly backups of the web database are kept for 14 days now.")
    work()
    rows = {v.memory_id: v for v in state(acme, Verdict)}
    assert (rows[first].judge, rows[first].prompt_version) == ("vllm:test-judge", "judge-v2")
    assert rows[second].judge == "local:minilm-signals-v2 (fallback for vllm:test-judge)"
    assert rows[second].prompt_version == "judge-v2"
    assert state(acme, Review, memory_id=second)[0].state == "done"  # no retry needed: the fallback answered
    for conflict in state(acme, Conflict):
        verdict = rows[conflict.b_id]
        assert (conflict.judge, conflict.prompt_version) == (verdict.judge, verdict.prompt_version)
    assert [c.judge for c in state(acme, Conflict, b_id=first)] == ["vllm:test-judge"]
