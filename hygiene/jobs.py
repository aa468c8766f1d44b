"""RQ jobs: load by id, call a service, nothing else."""
from uuid import UUID

from rq import get_current_job

from hygiene.services import review_run
from tenants.rls import Scope


def review_memory(review_id: int, *, org_id: str, user_id: str | None) -> str:
    """Review one undeclared write under the identity of its writer (RLS applies in the worker too)."""
    job = get_current_job()
    # RQ retries a failing job with backoff; only the last attempt marks the review unavailable.
    final_attempt = job is None or not job.retries_left
    scope = Scope(org_id=UUID(org_id), user_id=UUID(user_id) if user_id else None)
    return review_run(review_id=review_id, scope=scope, final_attempt=final_attempt)
