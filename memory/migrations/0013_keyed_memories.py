"""Keyed memories: ``namespace`` and ``key`` on a memory, and one live holder per key (memory/keys.py).

- ``key_hash`` (sha256 of the namespace and key) is what the index and the constraint hold: ten labels of 200
  characters and a key of 512 can be longer than a btree entry may be.
- The constraint is an exclusion constraint because it must be deferred: a keyed write inserts its new version
  before it retires the old one, in one transaction, and Postgres checks a unique index at once. It includes the
  partition key (org), as Postgres asks of a constraint on a partitioned table.
- ``zm_key_holder`` answers which live memory of the caller's organization holds a key, past row-level security: a
  write whose key is held by a memory the caller cannot see must be refused (403 target_invisible), not stored
  beside it. It answers an id only, and only within the caller's organization.
"""
import django.contrib.postgres.fields
from django.conf import settings
from django.db import migrations, models

# Written in SQL: Django's ExclusionConstraint builds GiST indexes only, and GiST has no operator class for uuid
# without an extension; btree checks equality, which is all this constraint asks.
ONE_LIVE_HOLDER = """
ALTER TABLE memory_memory ADD CONSTRAINT memory_one_live_holder_per_key
  EXCLUDE USING btree (org_id WITH =, key_hash WITH =) WHERE (status = 'live' AND key_hash IS NOT NULL)
  DEFERRABLE INITIALLY DEFERRED;
"""

KEY_HOLDER_FUNCTION = """
CREATE FUNCTION zm_key_holder(p_key_hash text) RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT id FROM public.memory_memory
  WHERE org_id = zm_current_org() AND key_hash = p_key_hash AND status = 'live' LIMIT 1 $$;
REVOKE ALL ON FUNCTION zm_key_holder(text) FROM PUBLIC;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0012_conflict_review_verdict'),
        ('tenants', '0002_row_level_security'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='key',
            field=models.TextField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='memory',
            name='key_hash',
            field=models.CharField(blank=True, editable=False, max_length=64, null=True),
        ),
        migrations.AddField(
            model_name='memory',
            name='namespace',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), blank=True, null=True, size=None),
        ),
        migrations.AlterField(
            model_name='link',
            name='origin',
            field=models.CharField(blank=True, choices=[('declared', 'Declared'), ('judge', 'Judge'), ('review', 'Review'), ('check', 'Check'), ('source', 'Source'), ('key', 'Key')], max_length=16, null=True),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=models.Index(condition=models.Q(('key_hash__isnull', False)), fields=['org', 'key_hash'], name='memory_key_idx'),
        ),
        migrations.RunSQL(ONE_LIVE_HOLDER, "ALTER TABLE memory_memory DROP CONSTRAINT memory_one_live_holder_per_key;"),
        migrations.RunSQL(KEY_HOLDER_FUNCTION, "DROP FUNCTION zm_key_holder(text);"),
    ]
