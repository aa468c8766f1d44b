"""Row-level security for conflicts: visible to whoever can see both of its memories."""
from django.db import migrations

from tenants.migrations import _rls

POLICY = """
CREATE POLICY conflict_visible ON hygiene_conflict
  USING (org_id = zm_current_org()
         AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = a_id)
         AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = b_id))
  WITH CHECK (org_id = zm_current_org()
         AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = a_id)
         AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = b_id));
"""


class Migration(migrations.Migration):
    dependencies = [("hygiene", "0001_initial"), ("memory", "0004_checks_rls_and_full_text")]

    operations = [
        migrations.RunSQL(_rls.enable_rls(["hygiene_conflict"])),
        migrations.RunSQL(POLICY),
    ]
