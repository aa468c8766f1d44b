"""Memories partitioned by organization: a tenant's queries read its own rows and its own HNSW graph only.

With one table every tenant shared one HNSW graph, and a filtered query walked other tenants' rows: at 1.07M
memories recall took 120 ms with kinds=[fact] in a 100k tenant and 83 ms unfiltered in a 10k one.

- ``memory_memory`` becomes ``PARTITION BY LIST (org_id)``: one partition per organization, named
  ``memory_memory_<org uuid without dashes>``, made by ``zm_memory_partition(org)`` when the organization is created
  (tenants/services.py org_bootstrap), and ``memory_memory_default`` for the rows of an organization that has none
  (one made some other way): nothing is lost, and such an organization stays in the default partition, since rows
  that other rows reference cannot move between partitions (Postgres checks a reference against the partition). Every index is declared on the parent, so each
  partition gets its own (its own HNSW graph among them).
- Postgres needs the partition key in every unique constraint: the primary key is ``(org_id, id)``, and every
  reference to a memory is a composite ``(org_id, x_id) REFERENCES memory_memory (org_id, id)``, so a row can only
  point at a memory of its own organization. Django keeps its ForeignKeys with ``db_constraint=False`` (it joins on
  ``id``, which is still unique in practice: 80 random bits).
- Row-level security stays on the parent (ENABLE + FORCE, the same ``memory_visible`` policy). The policies of the
  tables that follow memories (links, events, checks, conflicts, reviews, verdicts) are recreated: they ask
  ``zm_memory_visible(org_id, x_id)`` (the memory_visible predicate for one memory, its organization a parameter so
  that Postgres plans one partition) instead of an EXISTS over the partitioned table, which planned every partition
  for every statement on them. The app role gets privileges on the parent
  only (tenants/db_roles.py skips partitions), so a partition cannot be read around the policies; each partition also
  has RLS enabled and forced without a policy, which refuses every role but one with BYPASSRLS (the owner).
- The function runs as the owner (SECURITY DEFINER, pinned search_path): the app role has no DDL rights.

An existing store is converted in place: the old table is renamed, a partitioned one created with the same columns
and index names, the rows copied, the references re-pointed, the old table dropped. Irreversible.
"""
from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

from tenants.migrations import _rls

MEMORY_VISIBLE = import_module("memory.migrations.0002_row_level_security").MEMORY_VISIBLE

COLUMNS = """
    id varchar(30) NOT NULL, scope varchar(16) NOT NULL, kind varchar(16) NOT NULL, content text NOT NULL,
    content_hash varchar(64) NOT NULL, embedding vector(384) NOT NULL, status varchar(16) NOT NULL,
    invalidated_at timestamptz, invalidated_reason text, writer varchar(16) NOT NULL, authoritative boolean NOT NULL,
    session_id varchar(200), valid_from timestamptz, valid_until timestamptz, loop varchar(8), source jsonb,
    metadata jsonb NOT NULL, created_at timestamptz NOT NULL, closed_by_id varchar(30), invalidated_by_id uuid,
    org_id uuid NOT NULL, owner_id uuid NOT NULL, project_id uuid, superseded_by_id varchar(30),
    token_id varchar(40)
"""
COPIED = (
    "id, scope, kind, content, content_hash, embedding, status, invalidated_at, invalidated_reason, writer,"
    " authoritative, session_id, valid_from, valid_until, loop, source, metadata, created_at, closed_by_id,"
    " invalidated_by_id, org_id, owner_id, project_id, superseded_by_id, token_id"
)

# (table, constraint, column) of every reference to a memory; the constraint names are Django's.
REFERENCES = [
    ("memory_memory", "memory_memory_closed_by_id_55b8c839_fk_memory_memory_id", "closed_by_id"),
    ("memory_memory", "memory_memory_superseded_by_id_24bf332f_fk_memory_memory_id", "superseded_by_id"),
    ("memory_link", "memory_link_dst_id_693ce03e_fk_memory_memory_id", "dst_id"),
    ("memory_link", "memory_link_src_id_a59b8ff0_fk_memory_memory_id", "src_id"),
    ("memory_check", "memory_check_corrected_by_id_a40cf257_fk_memory_memory_id", "corrected_by_id"),
    ("memory_check", "memory_check_memory_id_95016cda_fk_memory_memory_id", "memory_id"),
    ("hygiene_conflict", "hygiene_conflict_a_id_8dc55e39_fk_memory_memory_id", "a_id"),
    ("hygiene_conflict", "hygiene_conflict_b_id_2fba0fc2_fk_memory_memory_id", "b_id"),
    ("hygiene_review", "hygiene_review_memory_id_82a81249_fk_memory_memory_id", "memory_id"),
    ("hygiene_verdict", "hygiene_verdict_memory_id_ac8c4e3c_fk_memory_memory_id", "memory_id"),
    ("hygiene_verdict", "hygiene_verdict_other_id_e1b4dc4d_fk_memory_memory_id", "other_id"),
]

# The policies that name memory_memory in a subquery (they hold the old table's oid): (policy, table, columns).
FOLLOWERS = [
    ("link_visible", "memory_link", ("src_id", "dst_id")),
    ("event_visible", "memory_event", ("memory_id",)),
    ("check_visible", "memory_check", ("memory_id",)),
    ("conflict_visible", "hygiene_conflict", ("a_id", "b_id")),
    ("review_visible", "hygiene_review", ("memory_id",)),
    ("verdict_visible", "hygiene_verdict", ("memory_id", "other_id")),
]

INDEXES = """
CREATE INDEX memory_dedup_idx ON memory_memory (org_id, owner_id, scope, project_id, content_hash);
CREATE INDEX memory_feed_idx ON memory_memory (org_id, status, created_at DESC, id DESC);
CREATE INDEX memory_superseded_by_idx ON memory_memory (org_id, superseded_by_id);
CREATE INDEX memory_search_gin ON memory_memory USING gin (search);
CREATE INDEX memory_embedding_hnsw ON memory_memory USING hnsw (embedding vector_cosine_ops)
  WITH (m = 16, ef_construction = 64);
CREATE INDEX memory_memory_closed_by_id_55b8c839 ON memory_memory (closed_by_id);
CREATE INDEX memory_memory_closed_by_id_55b8c839_like ON memory_memory (closed_by_id varchar_pattern_ops);
CREATE INDEX memory_memory_id_f80b7899_like ON memory_memory (id varchar_pattern_ops);
CREATE INDEX memory_memory_invalidated_by_id_9d48a8ef ON memory_memory (invalidated_by_id);
CREATE INDEX memory_memory_owner_id_1e5128d6 ON memory_memory (owner_id);
CREATE INDEX memory_memory_project_id_f26cda43 ON memory_memory (project_id);
CREATE INDEX memory_memory_token_id_c70295ee ON memory_memory (token_id);
CREATE INDEX memory_memory_token_id_c70295ee_like ON memory_memory (token_id varchar_pattern_ops);
"""

OUTGOING = """
ALTER TABLE memory_memory
  ADD CONSTRAINT memory_memory_invalidated_by_id_9d48a8ef_fk_tenants_user_id FOREIGN KEY (invalidated_by_id)
    REFERENCES tenants_user (id) DEFERRABLE INITIALLY DEFERRED,
  ADD CONSTRAINT memory_memory_org_id_39a6d626_fk_tenants_organization_id FOREIGN KEY (org_id)
    REFERENCES tenants_organization (id) DEFERRABLE INITIALLY DEFERRED,
  ADD CONSTRAINT memory_memory_owner_id_1e5128d6_fk_tenants_user_id FOREIGN KEY (owner_id)
    REFERENCES tenants_user (id) DEFERRABLE INITIALLY DEFERRED,
  ADD CONSTRAINT memory_memory_project_id_f26cda43_fk_tenants_project_id FOREIGN KEY (project_id)
    REFERENCES tenants_project (id) DEFERRABLE INITIALLY DEFERRED,
  ADD CONSTRAINT memory_memory_token_id_c70295ee_fk_tenants_apitoken_id FOREIGN KEY (token_id)
    REFERENCES tenants_apitoken (id) DEFERRABLE INITIALLY DEFERRED;
"""

# The one way a partition comes to exist at run time. An organization whose rows already wait in the default
# partition stays there (see the docstring): the function answers which partition holds the organization.
PARTITION_FUNCTION = f"""
CREATE FUNCTION zm_memory_partition(p_org uuid) RETURNS text
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
  v_name text := 'memory_memory_' || replace(p_org::text, '-', '');
BEGIN
  IF p_org IS NULL THEN
    RAISE EXCEPTION 'zm_memory_partition: an organization is required' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF to_regclass('public.' || v_name) IS NOT NULL THEN
    RETURN v_name;
  END IF;
  LOCK TABLE public.memory_memory_default IN SHARE ROW EXCLUSIVE MODE;  -- no row of it arrives meanwhile
  IF EXISTS (SELECT 1 FROM public.memory_memory_default WHERE org_id = p_org) THEN
    RETURN 'memory_memory_default';
  END IF;
  EXECUTE format('CREATE TABLE public.%I PARTITION OF public.memory_memory FOR VALUES IN (%L)', v_name, p_org);
  -- As migration 0006 had it for the one table: fresh planner statistics for a tenant that grows.
  EXECUTE format('ALTER TABLE public.%I SET (autovacuum_analyze_scale_factor = 0.01,'
                 ' autovacuum_analyze_threshold = 1000)', v_name);
  EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', v_name);
  RETURN v_name;
END $$;
REVOKE ALL ON FUNCTION zm_memory_partition(uuid) FROM PUBLIC;
"""


# The visibility of one memory for the policies of the tables that follow memories: the memory_visible predicate of
# migration 0002 for one row, read from the organization's own partition by its primary key. SECURITY DEFINER: it
# reads past RLS (the app role has no privilege on partitions) and applies the predicate itself, as
# zm_purge_memories does. Dynamic SQL on the partition, planned at each call (about 0.1 ms), because a query on the
# parent is planned over every partition: a plan per call cost 1 ms, and one generic plan per connection (25 us a
# call) was planned again, 50-70 ms at 101 organizations, whenever any partition changed (autovacuum after a load
# made each remember at 1M memories take 160 ms).
VISIBLE_FUNCTION = """
CREATE FUNCTION zm_memory_visible(p_org uuid, p_id text) RETURNS boolean
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
  v_table regclass;
  v_scope text;
  v_owner uuid;
  v_project uuid;
BEGIN
  IF p_org IS NULL OR p_org IS DISTINCT FROM zm_current_org() THEN
    RETURN false;
  END IF;
  v_table := coalesce(to_regclass('public.memory_memory_' || replace(p_org::text, '-', '')),
                      'public.memory_memory_default'::regclass);
  EXECUTE format('SELECT scope, owner_id, project_id FROM %s WHERE org_id = $1 AND id = $2', v_table)
    INTO v_scope, v_owner, v_project USING p_org, p_id;
  RETURN (v_scope = 'personal' AND v_owner = zm_current_user())
    OR (v_scope = 'project' AND EXISTS (SELECT 1 FROM public.tenants_projectmember
                                        WHERE user_id = zm_current_user() AND project_id = v_project));
END $$;
REVOKE ALL ON FUNCTION zm_memory_visible(uuid, text) FROM PUBLIC;
"""


def _forward() -> str:
    drop_references = "\n".join(f"ALTER TABLE {t} DROP CONSTRAINT {c};" for t, c, _ in REFERENCES)
    drop_policies = "\n".join(f"DROP POLICY {p} ON {t};" for p, t, _ in FOLLOWERS)
    drop_policies += "\nDROP POLICY memory_visible ON memory_memory_unpartitioned;"
    recreate_policies = "\n".join(_rls.follows_memories_by_function(p, t, *cols) for p, t, cols in FOLLOWERS)
    add_references = "\n".join(
        f"ALTER TABLE {t} ADD CONSTRAINT {c} FOREIGN KEY (org_id, {col})"
        f" REFERENCES memory_memory (org_id, id) DEFERRABLE INITIALLY DEFERRED;"
        for t, c, col in REFERENCES
    )
    return f"""
{drop_references}
ALTER TABLE memory_memory RENAME TO memory_memory_unpartitioned;
-- Free the index and constraint names for the new table.
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT indexrelid::regclass::text AS name FROM pg_index
           WHERE indrelid = 'memory_memory_unpartitioned'::regclass LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', r.name, left('old_' || r.name, 63));
  END LOOP;
  FOR r IN SELECT conname FROM pg_constraint
           WHERE conrelid = 'memory_memory_unpartitioned'::regclass AND contype = 'f' LOOP
    EXECUTE format('ALTER TABLE memory_memory_unpartitioned DROP CONSTRAINT %I', r.conname);
  END LOOP;
END $$;

CREATE TABLE memory_memory ({COLUMNS},
    search tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED,
    CONSTRAINT memory_memory_pkey PRIMARY KEY (org_id, id)
) PARTITION BY LIST (org_id);
ALTER TABLE memory_memory ALTER COLUMN embedding SET STORAGE PLAIN;
CREATE TABLE memory_memory_default PARTITION OF memory_memory DEFAULT;
ALTER TABLE memory_memory_default ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
{PARTITION_FUNCTION}
{VISIBLE_FUNCTION}
SELECT zm_memory_partition(id) FROM tenants_organization ORDER BY id;
INSERT INTO memory_memory ({COPIED}) SELECT {COPIED} FROM memory_memory_unpartitioned;
{INDEXES}
{OUTGOING}
{drop_policies}
DROP TABLE memory_memory_unpartitioned;
{add_references}
{_rls.enable_rls(["memory_memory"])}
CREATE POLICY memory_visible ON memory_memory USING ({MEMORY_VISIBLE}) WITH CHECK ({MEMORY_VISIBLE});
{recreate_policies}
ANALYZE memory_memory;
"""


def _no_constraint(**kwargs) -> models.ForeignKey:
    return models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, **kwargs)


class Migration(migrations.Migration):
    dependencies = [("memory", "0009_purge"), ("hygiene", "0004_review_verdict_rls")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(_forward())],
            state_operations=[
                migrations.AlterModelOptions(name="memory", options={"base_manager_name": "objects"}),
                migrations.AlterField("memory", "superseded_by", _no_constraint(
                    blank=True, db_index=False, null=True, related_name="+", to="memory.memory")),
                migrations.AlterField("memory", "closed_by", _no_constraint(
                    blank=True, null=True, related_name="+", to="memory.memory")),
                migrations.AlterField("link", "src", _no_constraint(related_name="links_out", to="memory.memory")),
                migrations.AlterField("link", "dst", _no_constraint(related_name="links_in", to="memory.memory")),
                migrations.AlterField("check", "memory", _no_constraint(related_name="checks", to="memory.memory")),
                migrations.AlterField("check", "corrected_by", _no_constraint(
                    blank=True, null=True, related_name="+", to="memory.memory")),
            ],
        ),
    ]
