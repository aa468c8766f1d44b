"""Row-level security for reviews and verdicts: they follow the visibility of their memories."""
from django.db import migrations

from tenants.migrations import _rls

POLICIES = """
CREATE POLICY review_visible ON hygiene_review
  USING (org_id = zm_current_org() AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = memory_id))
  WITH CHECK (org_id = zm_current_org() AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = memory_id));
CREATE POLICY verdict_visible ON hygiene_verdict
  USING (org_id = zm_current_org()
         AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = memory_id)
         AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = other_id))
  WITH CHECK (org_id = zm_current_org()
         AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = memory_id)
         AND EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = other_id));
"""


class Migration(migrations.Migration):
    dependencies = [("hygiene", "0003_review_verdict")]

    operations = [
        migrations.RunSQL(_rls.enable_rls(["hygiene_review", "hygiene_verdict"])),
        migrations.RunSQL(POLICIES),
    ]
