"""Conflicts, reviews and verdicts moved to the memory app (memory/migrations/0012): in Django's model state only.
The tables, their rows, row-level security policies and indexes stay exactly where they are."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('hygiene', '0007_citus_distribution'),
        ('memory', '0012_conflict_review_verdict'),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=[
        migrations.RemoveField(
            model_name='review',
            name='memory',
        ),
        migrations.RemoveField(
            model_name='review',
            name='org',
        ),
        migrations.RemoveField(
            model_name='verdict',
            name='memory',
        ),
        migrations.RemoveField(
            model_name='verdict',
            name='org',
        ),
        migrations.RemoveField(
            model_name='verdict',
            name='other',
        ),
        migrations.DeleteModel(
            name='Conflict',
        ),
        migrations.DeleteModel(
            name='Review',
        ),
        migrations.DeleteModel(
            name='Verdict',
        ),
    ])]
