"""RQ jobs, the entry points of background work: they open the scopes (tenants/rls.py) and call services."""
import logging
import time
from enum import StrEnum
from uuid import UUID

from django.conf import settings
from rq import get_current_job

from hygiene import services
from hygiene.judge import JudgeUnavailable, get_judge
from memory.models import Review
from telemetry import metrics
from tenants.rls import Scope, tenant_scope

logger = logging.getLogger(__name__)


class ReviewOutcome(StrEnum):
    NOTHING_TO_DO = "nothing_to_do"  # claimed or finished by someone else, or no candidates
    JUDGE_UNAVAILABLE = "judge_unavailable"


def review_memory(review_id: int, *, org_id: str, user_id: str | None) -> str:
    """Review one undeclared write under the identity of its writer (RLS applies in the worker too)."""
    job = get_current_job()
    # RQ retries a failing job with backoff; only the last attempt marks the review unavailable.
    final_attempt = job is None or not job.retries_left
    scope = Scope(org_id=UUID(org_id), user_id=UUID(user_id) if user_id else None)
    return review_run(review_id=review_id, scope=scope, final_attempt=final_attempt)


def review_run(*, review_id: int, scope: Scope, final_attempt: bool = True) -> str:
    """Claim and read, call the judge outside any transaction, then decide: what happened, for the job's result."""
    with tenant_scope(scope):
        work = services.review_claim(review_id=review_id)
    if work is None:
        return ReviewOutcome.NOTHING_TO_DO
    judge = get_judge()
    started = time.perf_counter()
    try:
        verdicts = judge.judge(work.pairs)  # never hold a transaction while a model thinks
    except JudgeUnavailable as error:
        judge_measured(started, "unavailable", [])
        with tenant_scope(scope):
            services.review_finish(
                review_id=review_id, state=Review.State.UNAVAILABLE if final_attempt else Review.State.PENDING,
                error=str(error),
            )
        if not final_attempt:
            raise
        logger.error("review %s: judge unavailable after every retry: %s", review_id, error)
        return ReviewOutcome.JUDGE_UNAVAILABLE
    latency_ms = (time.perf_counter() - started) * 1000 / len(work.pairs)
    judge_measured(started, "ok", verdicts)
    with tenant_scope(scope):
        decisions = services.review_decide(work=work, verdicts=verdicts, judge=judge, latency_ms=latency_ms,
                                           scope=scope)
    return ",".join(decisions)


def judge_measured(started: float, outcome: str, verdicts) -> None:
    backend = settings.JUDGE_BACKEND
    metrics.judge_calls.labels(backend, outcome).inc()
    metrics.judge_duration.labels(backend).observe(time.perf_counter() - started)
    for verdict in verdicts:
        metrics.judge_verdicts.labels(judged_by(verdict.judge), verdict.relation).inc()


def judged_by(judge_name: str) -> str:
    """local, vllm or fallback: a verdict's judge name carries its model, which is not a label."""
    if "(fallback for" in judge_name:
        return "fallback"
    return "vllm" if judge_name.startswith("vllm:") else "local"
