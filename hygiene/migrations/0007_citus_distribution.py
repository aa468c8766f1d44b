"""On Citus only: distribute the tenant data by organization (tenants/migrations/_citus.py, docs/scaling.md).

Everywhere else this does nothing, so one migration history serves a single Postgres node and a Citus cluster.
"""
from django.db import migrations

from tenants.migrations import _citus


def distribute(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
        if cursor.fetchone() is None:
            return
        cursor.execute(_citus.SQL)


class Migration(migrations.Migration):
    dependencies = [("hygiene", "0006_memory_references_composite")]

    operations = [migrations.RunPython(distribute, migrations.RunPython.noop)]
