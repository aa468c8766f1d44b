"""Keep each embedding in its row instead of in the TOAST table.

A 384-dimension vector is 1.5 kB, which pushed most rows past the TOAST threshold, and pgvector's default storage
moved the vector out of line: every exact distance (small tenants, similar_existing, filtered recall) then cost a
TOAST lookup, about three times the work of the distance itself. PLAIN keeps it inline; long contents still go to
TOAST. Existing rows move inline when they are next rewritten.
"""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory", "0004_checks_rls_and_full_text")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_memory ALTER COLUMN embedding SET STORAGE PLAIN",
            reverse_sql="ALTER TABLE memory_memory ALTER COLUMN embedding SET STORAGE EXTERNAL",
        ),
    ]
