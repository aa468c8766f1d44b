"""The review outbox: every undeclared write gets a Review row in its own transaction, queued after commit.

A queue outage never fails the write and loses nothing: the row stays `pending`, and `manage.py hygiene_flush`
(run every 30 s by `make run`, a CronJob in k8s) queues whatever is still pending once Redis is back. A worker that
dies mid-review leaves its row `running`: once that is older than stale_run() the same flush queues it again too.
"""
import logging
from datetime import timedelta
from functools import lru_cache
from uuid import UUID

import django_rq
from django.conf import settings
from django.db import connection, connections, transaction
from django.utils import timezone
from redis.exceptions import RedisError
from rq import Queue, Retry

from memory.models import Memory, Review
from plumbing import rows
from telemetry import metrics
from telemetry.worker import job_meta
from tenants import rls

logger = logging.getLogger(__name__)


def stale_run() -> timedelta:
    """How long a review may stay `running` before its worker is taken for dead and it may be claimed again."""
    return timedelta(seconds=settings.HYGIENE_STALE_RUN_SECONDS)


@lru_cache(maxsize=1)
def review_queue() -> Queue:
    # One client per process: building it per write cost 1.3 ms of the 1.7 ms an enqueue took.
    return django_rq.get_queue("default")


def review_record(*, memory: Memory, scope: rls.Scope) -> Review:
    """Inside the write's transaction: record the review, and queue it once the write has committed."""
    review = Review(org_id=memory.org_id, memory=memory)
    with connection.cursor() as cursor:  # written out (plumbing/rows.py): one on every undeclared write
        cursor.execute(*rows.insert([review]))
        review.id = cursor.fetchone()[0]
    rows.saved(review)
    transaction.on_commit(lambda: review_enqueue(review_id=review.id, org_id=scope.org_id, user_id=scope.user_id))
    return review


# By dotted path: the write path (memory.services) records reviews, and must not import the pipeline it feeds.
REVIEW_JOB = "hygiene.jobs.review_memory"


def review_enqueue(*, review_id: int, org_id: UUID, user_id: UUID | None) -> bool:
    retry = Retry(max=len(settings.JUDGE_RETRY_INTERVALS), interval=settings.JUDGE_RETRY_INTERVALS)
    try:
        review_queue().enqueue(
            REVIEW_JOB, review_id, org_id=str(org_id), user_id=str(user_id) if user_id else None,
            retry=retry, job_id=f"review-{review_id}",  # one job per review, however often it is flushed
            meta=job_meta(),  # the write's request id and trace context, for the review's logs and span
        )
        return True
    except RedisError as error:
        logger.warning("review %s not queued (queue unavailable: %s); hygiene_flush will retry", review_id, error)
        return False


def unsafe_pending_reviews(*, older_than: timedelta, states: tuple[str, ...] = (Review.State.PENDING,)):
    """Reviews waiting in every organization: in `states` for longer than `older_than`, or running for longer than
    stale_run() (their worker died; the claim takes them again). Cross-tenant, so it reads through the owner alias
    (BYPASSRLS): ids only, for re-queueing; each job then runs under its own tenant's identity."""
    now = timezone.now()
    with connections[rls.UNSAFE_ALL_TENANTS].cursor() as cursor:
        cursor.execute(
            "SELECT r.id, r.org_id, m.owner_id FROM hygiene_review r JOIN memory_memory m ON m.org_id = r.org_id AND m.id = r.memory_id"
            " WHERE (r.state = ANY(%s) AND r.updated_at < %s) OR (r.state = %s AND r.updated_at < %s)"
            " ORDER BY r.id LIMIT 1000",
            [list(states), now - older_than, Review.State.RUNNING, now - stale_run()],
        )
        return cursor.fetchall()


def flush(*, older_than: timedelta = timedelta(seconds=30), states=(Review.State.PENDING,)) -> int:
    """Queue the reviews in `states` older than `older_than`, and the stale running ones, again."""
    queued = 0
    for review_id, org_id, user_id in unsafe_pending_reviews(older_than=older_than, states=states):
        if review_enqueue(review_id=review_id, org_id=org_id, user_id=user_id):
            queued += 1
        else:
            break  # the queue is still down
    metrics.outbox_requeued.inc(queued)
    return queued
