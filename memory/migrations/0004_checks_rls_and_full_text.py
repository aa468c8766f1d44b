"""Row-level security for checks, and the full-text channel of recall (a generated tsvector with a GIN index)."""
from django.db import migrations

from tenants.migrations import _rls

CHECK_POLICY = _rls.follows_memories("check_visible", "memory_check", "memory_id")

# 'english' stems words ("deploys" ~ "deploy") and drops stop words; numbers and identifiers stay as tokens.
FULL_TEXT = """
ALTER TABLE memory_memory
  ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED;
CREATE INDEX memory_search_gin ON memory_memory USING gin (search);
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_check")]

    operations = [
        migrations.RunSQL(_rls.enable_rls(["memory_check"])),
        migrations.RunSQL(CHECK_POLICY),
        migrations.RunSQL(FULL_TEXT, reverse_sql="ALTER TABLE memory_memory DROP COLUMN search"),
    ]
