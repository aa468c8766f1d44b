"""A review left `running` by a worker that died is queued again by the periodic flush once it is stale."""
from datetime import timedelta
from io import StringIO

from django.core.management import call_command
from django.utils import timezone

from memory.models import Review
from memory.outbox import stale_run
from tenants import rls
from tests.support.tenants import build_tenant


def remember(api, token, content):
    response = api(token).post("/api/v1/memories", {"content": content}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["memory"]["id"]


def reviews(tenant, **filters):
    with rls.tenant_scope(tenant.scope):
        return {r.memory_id: r.state for r in Review.objects.filter(**filters)}


def flush() -> str:
    out = StringIO()
    call_command("hygiene_flush", stdout=out)  # what `make run` runs every 30 s (default --older-than 30)
    return out.getvalue().strip()


def test_the_periodic_flush_requeues_a_review_whose_worker_died(api, queue, work):
    acme = build_tenant("acme")
    stale = remember(api, acme.member_token, "The on-call rota changes every Monday.")
    fresh = remember(api, acme.member_token, "Grafana dashboards live in the ops folder.")
    queue.empty()  # the jobs died with their worker: only the rows are left
    with rls.tenant_scope(acme.scope):
        # Claimed (running) by a worker that crashed: one long ago, one a moment ago (maybe still at work).
        Review.objects.filter(memory_id=stale).update(state="running", updated_at=timezone.now() - stale_run() * 1.1)
        Review.objects.filter(memory_id=fresh).update(state="running", updated_at=timezone.now() - timedelta(minutes=1))
    assert flush() == "queued 1 review(s)"
    work()
    assert reviews(acme) == {stale: "done", fresh: "running"}
    assert flush() == "queued 0 review(s)"  # nothing left to queue; the fresh one is not yet stale
