"""State only: the references to memories are composite foreign keys now, written by memory migration 0010."""
import django.db.models.deletion
from django.db import migrations, models


def _no_constraint() -> models.ForeignKey:
    return models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, related_name="+",
                             to="memory.memory")


class Migration(migrations.Migration):
    dependencies = [("hygiene", "0005_conflict_prompt_version"), ("memory", "0010_partition_by_org")]

    operations = [
        migrations.AlterField("conflict", "a", _no_constraint()),
        migrations.AlterField("conflict", "b", _no_constraint()),
        migrations.AlterField("review", "memory", _no_constraint()),
        migrations.AlterField("verdict", "memory", _no_constraint()),
        migrations.AlterField("verdict", "other", _no_constraint()),
    ]
