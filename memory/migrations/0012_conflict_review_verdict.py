"""Conflicts, reviews and verdicts belong to memory (a conflict is a relation between two memories): their models move
here from the hygiene app in Django's model state only. The tables keep their names (db_table), rows, row-level
security and indexes; nothing runs in the database."""
import django.db.models.deletion
import django.utils.timezone
import memory.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0011_passages'),
        ('hygiene', '0007_citus_distribution'),
        ('tenants', '0002_row_level_security'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=[
        migrations.CreateModel(
            name='Conflict',
            fields=[
                ('id', models.CharField(default=memory.models.new_conflict_id, editable=False, max_length=30, primary_key=True, serialize=False)),
                ('relation', models.CharField(max_length=16)),
                ('confidence', models.FloatField(blank=True, null=True)),
                ('judge', models.CharField(blank=True, default='', max_length=200)),
                ('prompt_version', models.CharField(blank=True, default='', max_length=32)),
                ('rationale', models.TextField(blank=True, default='')),
                ('status', models.CharField(choices=[('open', 'Open'), ('resolved', 'Resolved')], default='open', max_length=16)),
                ('resolution', models.CharField(blank=True, max_length=16, null=True)),
                ('resolved_at', models.DateTimeField(blank=True, null=True)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('a', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.memory')),
                ('b', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.memory')),
                ('org', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, to='tenants.organization')),
                ('resolved_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'db_table': 'hygiene_conflict',
                'indexes': [models.Index(fields=['org', 'status', 'created_at'], name='conflict_status_idx'), models.Index(fields=['org', 'a'], name='conflict_a_idx'), models.Index(fields=['org', 'b'], name='conflict_b_idx')],
            },
        ),
        migrations.CreateModel(
            name='Review',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('state', models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('done', 'Done'), ('unavailable', 'Unavailable')], default='pending', max_length=16)),
                ('attempts', models.PositiveIntegerField(default=0)),
                ('last_error', models.TextField(blank=True, default='')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('updated_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('memory', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.memory')),
                ('org', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, to='tenants.organization')),
            ],
            options={
                'db_table': 'hygiene_review',
                'indexes': [models.Index(fields=['org', 'state', 'created_at'], name='review_state_idx')],
                'constraints': [models.UniqueConstraint(fields=('org', 'memory'), name='review_org_memory_uniq')],
            },
        ),
        migrations.CreateModel(
            name='Verdict',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('relation', models.CharField(max_length=16)),
                ('confidence', models.FloatField()),
                ('rationale', models.TextField(blank=True, default='')),
                ('judge', models.CharField(max_length=200)),
                ('prompt_version', models.CharField(max_length=32)),
                ('latency_ms', models.FloatField()),
                ('decision', models.CharField(choices=[('auto_retired', 'Auto Retired'), ('conflict', 'Conflict'), ('recorded', 'Recorded')], max_length=16)),
                ('same_token', models.BooleanField(default=False)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('memory', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.memory')),
                ('org', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, to='tenants.organization')),
                ('other', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.memory')),
            ],
            options={
                'db_table': 'hygiene_verdict',
                'constraints': [models.UniqueConstraint(fields=('org', 'memory', 'other'), name='verdict_org_pair_uniq')],
            },
        ),
    ])]
