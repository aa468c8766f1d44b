"""Keep the planner's picture of each tenant fresh, and drop indexes the composite ones already cover.

Row estimates for a tenant come from the org_id statistics (the planner evaluates app.org_id when it plans). A tenant
that grew by 10k memories since the last ANALYZE was estimated at one row, and the exact-dedup lookup then walked the
whole tenant through a bare org_id index (1.6 ms and growing) instead of the dedup index (0.09 ms); similar_existing
joined before sorting (79 ms). Postgres re-analyzes after 10% of the table changes by default: 100k writes at 1M
memories. Here after 1%, plus 1000: ANALYZE samples a fixed 30k rows, so it stays cheap as the table grows.
The bare org_id and superseded_by indexes duplicate the leading columns of composite indexes; the foreign keys stay.
"""
import django.db.models.deletion
from django.db import migrations, models

STATISTICS = "ALTER TABLE memory_memory SET (autovacuum_analyze_scale_factor = 0.01, autovacuum_analyze_threshold = 1000)"
STATISTICS_DEFAULT = "ALTER TABLE memory_memory RESET (autovacuum_analyze_scale_factor, autovacuum_analyze_threshold)"
DROP = """
DROP INDEX IF EXISTS memory_memory_org_id_39a6d626;
DROP INDEX IF EXISTS memory_memory_superseded_by_id_24bf332f;
DROP INDEX IF EXISTS memory_memory_superseded_by_id_24bf332f_like;
"""
RECREATE = """
CREATE INDEX memory_memory_org_id_39a6d626 ON memory_memory (org_id);
CREATE INDEX memory_memory_superseded_by_id_24bf332f ON memory_memory (superseded_by_id);
CREATE INDEX memory_memory_superseded_by_id_24bf332f_like ON memory_memory (superseded_by_id varchar_pattern_ops);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0005_embedding_inline"),
        ("tenants", "0002_row_level_security"),
    ]

    operations = [
        migrations.RunSQL(STATISTICS, reverse_sql=STATISTICS_DEFAULT),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(DROP, reverse_sql=RECREATE)],
            state_operations=[
                migrations.AlterField(
                    model_name="memory",
                    name="org",
                    field=models.ForeignKey(
                        db_index=False, on_delete=django.db.models.deletion.PROTECT, to="tenants.organization"
                    ),
                ),
                migrations.AlterField(
                    model_name="memory",
                    name="superseded_by",
                    field=models.ForeignKey(
                        blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT,
                        related_name="+", to="memory.memory",
                    ),
                ),
            ],
        ),
        migrations.AlterField(  # choices only, nothing in the database
            model_name="event",
            name="action",
            field=models.CharField(
                choices=[
                    ("remembered", "Remembered"), ("absorbed", "Absorbed"), ("superseded", "Superseded"),
                    ("forgot", "Forgot"), ("restored", "Restored"), ("linked", "Linked"),
                    ("loop_closed", "Loop Closed"), ("loop_reopened", "Loop Reopened"), ("checked", "Checked"),
                    ("source_version", "Source Version"),
                ],
                max_length=32,
            ),
        ),
    ]
