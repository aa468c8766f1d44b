"""`manage.py passages_backfill`: passages for the memories written before they existed (memory migration 0011).

Until it has them, such a memory is found by its whole text only and its disagreements are read by words only.
Cross-tenant maintenance, as the owner role (rls.UNSAFE_ALL_TENANTS). Resumable: a memory that has passages is
skipped, so it is safe to stop and run again.
"""
from django.core.management.base import BaseCommand
from django.db import IntegrityError, connections, transaction

from memory.embeddings import embed
from memory.passages import statements, vector_literal
from tenants import rls

INSERT = ("INSERT INTO memory_passage (org_id, memory_id, position, scope, owner_id, project_id, embedding)"
          " VALUES (%s, %s, %s, %s, %s, %s, %s::vector) ON CONFLICT DO NOTHING")


class Command(BaseCommand):
    help = "Embed the statements of the memories written before passages existed (resumable)."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=500, help="memories read per transaction (default 500)")

    def handle(self, *args, batch: int, **options) -> None:
        owner = connections[rls.UNSAFE_ALL_TENANTS]
        after, scanned, memories, passages = ("00000000-0000-0000-0000-000000000000", ""), 0, 0, 0
        while True:
            with owner.cursor() as cursor:
                cursor.execute(
                    "SELECT org_id, id, scope, owner_id, project_id, content FROM memory_memory m"
                    " WHERE (org_id, id) > (%s::uuid, %s) AND NOT EXISTS (SELECT 1 FROM memory_passage p"
                    " WHERE p.org_id = m.org_id AND p.memory_id = m.id) ORDER BY org_id, id LIMIT %s",
                    [*after, batch],
                )
                rows = cursor.fetchall()
            if not rows:
                break
            after = (str(rows[-1][0]), rows[-1][1])
            parts = [(row, position, text) for row in rows for position, text in enumerate(statements(row[5]))]
            vectors = embed([text for _, _, text in parts]) if parts else []
            values = [(org, memory_id, position, scope, owner_id, project, vector_literal(vector))
                      for ((org, memory_id, scope, owner_id, project, _), position, _), vector in zip(parts, vectors)]
            try:
                with transaction.atomic(using=owner.alias), owner.cursor() as cursor:
                    cursor.executemany(INSERT, values)
            except IntegrityError:  # a memory purged since it was read: the next run finds the others again
                self.stderr.write(f"a memory of this batch was purged meanwhile; run again for the rest ({after})")
                continue
            scanned += len(rows)
            memories += len({memory_id for _, memory_id, *_ in values})
            passages += len(values)
            self.stdout.write(f"  scanned {scanned} memories: {passages} passages for {memories} of them")
        self.stdout.write(f"done: {passages} passages for {memories} memories ({scanned} scanned)")
