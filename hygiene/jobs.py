"""RQ jobs: load by id, call a service, nothing else."""
import logging

from memory.models import Memory
from tenants.rls import tenant_job

logger = logging.getLogger(__name__)


@tenant_job
def review_memory(memory_id: str) -> str:
    """Review one undeclared write. Until the judge lands (hygiene issue) it only confirms the memory is there."""
    memory = Memory.objects.filter(pk=memory_id).only("id", "status").first()
    if memory is None:
        logger.warning("hygiene review: %s is not visible to the writer any more", memory_id)
        return "missing"
    logger.info("hygiene review of %s: no judge configured yet", memory_id)
    return "pending_judge"
