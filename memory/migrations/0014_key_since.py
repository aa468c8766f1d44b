"""key_since: when the first version of a keyed memory's chain was written (memory/keys.py), carried from
version to version. Keyed memories written before it are dated by their own creation."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0013_keyed_memories'),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='key_since',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunSQL(
            "UPDATE memory_memory SET key_since = created_at WHERE key_hash IS NOT NULL AND key_since IS NULL",
            migrations.RunSQL.noop,
        ),
    ]
