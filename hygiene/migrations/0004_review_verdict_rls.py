"""Row-level security for reviews and verdicts: they follow the visibility of their memories."""
from django.db import migrations

from tenants.migrations import _rls

POLICIES = "\n".join([
    _rls.follows_memories("review_visible", "hygiene_review", "memory_id"),
    _rls.follows_memories("verdict_visible", "hygiene_verdict", "memory_id", "other_id"),
])


class Migration(migrations.Migration):
    dependencies = [("hygiene", "0003_review_verdict")]

    operations = [
        migrations.RunSQL(_rls.enable_rls(["hygiene_review", "hygiene_verdict"])),
        migrations.RunSQL(POLICIES),
    ]
