"""Passages: the statement sentences of a memory of several, each with its own vector (memory/passages.py).

- ``memory_passage`` is partitioned by organization as memories are (migration 0010): one partition per
  organization, ``memory_passage_<org uuid without dashes>``, each with its own HNSW graph, and a default one.
  ``zm_memory_partition(org)`` now makes the organization's passage partition too, then its memory partition as
  before (same answer). Existing organizations get theirs here.
- A passage is written once with its memory and deleted with it: the reference ``(org_id, memory_id)`` cascades
  from the purge's DELETE (the app role has no DELETE on passages, tenants/db_roles.py).
- Row-level security: the memory_visible predicate over the passage's own copies of the memory's scope, owner and
  project (never changed after a write), so the nearest-neighbour scan reads no other table to filter.
"""
from importlib import import_module

import django.db.models.deletion
import pgvector.django
from django.db import migrations, models

from tenants.migrations import _citus, _rls

MEMORY_VISIBLE = import_module("memory.migrations.0002_row_level_security").MEMORY_VISIBLE
PARTITION_FUNCTION = import_module("memory.migrations.0010_partition_by_org").PARTITION_FUNCTION

PASSAGE_PARTITION_FUNCTION = """
CREATE FUNCTION zm_passage_partition(p_org uuid) RETURNS text
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
  v_name text := 'memory_passage_' || replace(p_org::text, '-', '');
BEGIN
  IF p_org IS NULL THEN
    RAISE EXCEPTION 'zm_passage_partition: an organization is required' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF to_regclass('public.' || v_name) IS NOT NULL THEN
    RETURN v_name;
  END IF;
  LOCK TABLE public.memory_passage_default IN SHARE ROW EXCLUSIVE MODE;
  IF EXISTS (SELECT 1 FROM public.memory_passage_default WHERE org_id = p_org) THEN
    RETURN 'memory_passage_default';
  END IF;
  EXECUTE format('CREATE TABLE public.%I PARTITION OF public.memory_passage FOR VALUES IN (%L)', v_name, p_org);
  EXECUTE format('ALTER TABLE public.%I SET (autovacuum_analyze_scale_factor = 0.01,'
                 ' autovacuum_analyze_threshold = 1000)', v_name);
  EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', v_name);
  RETURN v_name;
END $$;
REVOKE ALL ON FUNCTION zm_passage_partition(uuid) FROM PUBLIC;
"""

# The memory partition function of migration 0010, with the passage partition made first.
MEMORY_PARTITION_FUNCTION = PARTITION_FUNCTION.replace(
    "CREATE FUNCTION zm_memory_partition", "CREATE OR REPLACE FUNCTION zm_memory_partition"
).replace(
    "  IF to_regclass('public.' || v_name) IS NOT NULL THEN",
    "  PERFORM zm_passage_partition(p_org);\n  IF to_regclass('public.' || v_name) IS NOT NULL THEN",
    1,
)

FORWARD = f"""
CREATE TABLE memory_passage (
    org_id uuid NOT NULL REFERENCES tenants_organization (id) DEFERRABLE INITIALLY DEFERRED,
    memory_id varchar(30) NOT NULL,
    position smallint NOT NULL CHECK (position >= 0),
    scope varchar(16) NOT NULL,
    owner_id uuid NOT NULL,
    project_id uuid,
    embedding vector(384) NOT NULL,
    CONSTRAINT memory_passage_pkey PRIMARY KEY (org_id, memory_id, position),
    CONSTRAINT memory_passage_memory_fk FOREIGN KEY (org_id, memory_id) REFERENCES memory_memory (org_id, id)
        ON DELETE CASCADE
) PARTITION BY LIST (org_id);
ALTER TABLE memory_passage ALTER COLUMN embedding SET STORAGE PLAIN;
CREATE INDEX memory_passage_embedding_hnsw ON memory_passage USING hnsw (embedding vector_cosine_ops)
  WITH (m = 16, ef_construction = 64);
CREATE TABLE memory_passage_default PARTITION OF memory_passage DEFAULT;
ALTER TABLE memory_passage_default ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
{PASSAGE_PARTITION_FUNCTION}
{MEMORY_PARTITION_FUNCTION}
SELECT zm_passage_partition(id) FROM tenants_organization ORDER BY id;
{_rls.enable_rls(["memory_passage"])}
CREATE POLICY passage_visible ON memory_passage USING ({MEMORY_VISIBLE}) WITH CHECK ({MEMORY_VISIBLE});
"""


def distribute_on_citus(apps, schema_editor) -> None:
    """As hygiene migration 0007 did for the other tenant tables: only where Citus is installed."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
        if cursor.fetchone() is not None:
            cursor.execute(_citus.PASSAGE_SQL)


class Migration(migrations.Migration):
    dependencies = [("memory", "0010_partition_by_org"), ("hygiene", "0007_citus_distribution")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD)],
            state_operations=[
                migrations.CreateModel(
                    name="Passage",
                    fields=[
                        ("pk", models.CompositePrimaryKey("org", "memory", "position", blank=True, editable=False,
                                                          primary_key=True, serialize=False)),
                        ("position", models.PositiveSmallIntegerField()),
                        ("scope", models.CharField(max_length=16)),
                        ("embedding", pgvector.django.VectorField(dimensions=384)),
                        ("org", models.ForeignKey(db_constraint=False, db_index=False,
                                                  on_delete=django.db.models.deletion.PROTECT,
                                                  to="tenants.organization")),
                        ("memory", models.ForeignKey(db_constraint=False, db_index=False,
                                                     on_delete=django.db.models.deletion.CASCADE,
                                                     related_name="passages", to="memory.memory")),
                        ("owner", models.ForeignKey(db_constraint=False, db_index=False,
                                                    on_delete=django.db.models.deletion.PROTECT, related_name="+",
                                                    to="tenants.user")),
                        ("project", models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True,
                                                      on_delete=django.db.models.deletion.PROTECT,
                                                      related_name="+", to="tenants.project")),
                    ],
                    options={"base_manager_name": "objects"},
                ),
            ],
        ),
        migrations.RunPython(distribute_on_citus, migrations.RunPython.noop),
    ]
