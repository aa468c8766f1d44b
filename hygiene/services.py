"""Entry point of the background review of undeclared writes (the judge and conflicts come with the hygiene issue)."""
import logging
from uuid import UUID

import django_rq
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)


def review_enqueue(*, memory_id: str, org_id: UUID, user_id: UUID | None) -> None:
    """Queue the review of a freshly committed memory. A queue outage never fails the write that triggered it."""
    from hygiene import jobs

    try:
        django_rq.get_queue("default").enqueue(
            jobs.review_memory, memory_id, org_id=str(org_id), user_id=str(user_id) if user_id else None
        )
    except RedisError as error:
        logger.warning("hygiene review of %s not queued (queue unavailable: %s)", memory_id, error)
