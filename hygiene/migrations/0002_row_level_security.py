"""Row-level security for conflicts: visible to whoever can see both of its memories."""
from django.db import migrations

from tenants.migrations import _rls

POLICY = _rls.follows_memories("conflict_visible", "hygiene_conflict", "a_id", "b_id")


class Migration(migrations.Migration):
    dependencies = [("hygiene", "0001_initial"), ("memory", "0004_checks_rls_and_full_text")]

    operations = [
        migrations.RunSQL(_rls.enable_rls(["hygiene_conflict"])),
        migrations.RunSQL(POLICY),
    ]
