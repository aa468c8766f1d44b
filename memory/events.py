"""The append-only event log: every state change of a memory is one row (DESIGN idea 5)."""
from memory.models import Event, Memory
from tenants.auth import Principal


def event_record(memory: Memory, action: Event.Action, principal: Principal, payload: dict | None = None) -> None:
    Event.objects.create(
        org_id=memory.org_id, memory=memory, action=action, actor=principal.user, token=principal.token,
        payload=payload or {},
    )
