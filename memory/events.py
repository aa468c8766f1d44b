"""The append-only event log: every state change of a memory is one row (DESIGN idea 5)."""
from django.db import connection

from memory.models import Event, Memory
from plumbing import rows
from tenants.auth import Principal


def event_record(memory: Memory, action: Event.Action, principal: Principal, payload: dict | None = None) -> None:
    event = Event(org_id=memory.org_id, memory=memory, action=action, actor=principal.user, token=principal.token,
                  payload=payload or {})
    with connection.cursor() as cursor:  # written out (plumbing/rows.py): one on every write
        cursor.execute(*rows.insert([event]))
