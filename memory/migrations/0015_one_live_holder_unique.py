"""One live holder per key as a partial unique index instead of 0013's deferred exclusion constraint.

pg_restore could not rebuild the exclusion constraint on the partitioned table ("cannot attach index … as a
partition of index …: the index definitions do not match"), so a backup of a store with an organization's partition
did not restore. A unique index restores like the table's other indexes. It is checked at once, so a keyed write now
gives its new version the key's hash after retiring the version it replaces (memory/keys.py ``take``).
"""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0014_key_since"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_memory DROP CONSTRAINT IF EXISTS memory_one_live_holder_per_key;",
            migrations.RunSQL.noop,
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.UniqueConstraint(
                condition=models.Q(("key_hash__isnull", False), ("status", "live")),
                fields=("org", "key_hash"),
                name="memory_one_live_holder_per_key",
            ),
        ),
    ]
