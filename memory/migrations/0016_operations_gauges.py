"""What /metrics reads about the whole store at scrape time (hygiene/gauges.py): the age of the oldest review
still waiting for the judge, and the number of open conflicts, over every organization.

``zm_operations_gauges`` is SECURITY DEFINER because the web role sees one organization at a time (row-level
security) and the web pods do not hold the owner's credentials; it answers two numbers, nothing about any tenant.
Two partial indexes keep it cheap however large the store: they hold only the waiting reviews and open conflicts.
"""
from django.db import migrations

GAUGES_FUNCTION = """
CREATE FUNCTION zm_operations_gauges(OUT review_lag_seconds double precision, OUT conflicts_open bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT coalesce(extract(epoch FROM now() - (SELECT min(created_at) FROM public.hygiene_review
                                               WHERE state::text = ANY ('{pending,running}'::text[]))), 0)
           ::double precision,
         (SELECT count(*) FROM public.hygiene_conflict WHERE status = 'open') $$;
REVOKE ALL ON FUNCTION zm_operations_gauges() FROM PUBLIC;
"""


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0015_one_live_holder_unique"),
    ]

    operations = [
        migrations.RunSQL(
            # The predicate as Postgres prints it, so that a restore (pg_dump, embedded_stack/backup.py) rebuilds the
            # very same index: `state IN ('pending', 'running')` comes back from a dump as a different expression.
            "CREATE INDEX review_waiting_idx ON hygiene_review (created_at)"
            " WHERE (state)::text = ANY ('{pending,running}'::text[]);",
            "DROP INDEX review_waiting_idx;",
        ),
        migrations.RunSQL(
            "CREATE INDEX conflict_open_idx ON hygiene_conflict (created_at) WHERE status = 'open';",
            "DROP INDEX conflict_open_idx;",
        ),
        migrations.RunSQL(GAUGES_FUNCTION, "DROP FUNCTION zm_operations_gauges();"),
    ]
