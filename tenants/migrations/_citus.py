"""Distribution by organization on Citus (docs/scaling.md): the SQL of hygiene migration 0007, run only where the
`citus` extension is installed.

Citus's rules, and what each asks of this schema:
- A distributed table's unique constraints must include the distribution column: the tenant data tables get
  primary keys that lead with org_id (memory_memory has had one since it was partitioned by organization).
- A foreign key between distributed tables must include the distribution column on both sides: the keys to
  memory_memory are (org_id, x_id) already. Keys to the control-plane tables (reference tables, copied to every node)
  are allowed as they are.
- A policy on a Citus table must not contain a subquery (Citus's policy.c: "Subqueries are not supported in
  policies on distributed tables"). The four policies below that had one are rewritten to call a function that
  does the same lookup, with the same meaning: tests/tenants/test_citus.py compares what every identity sees under both.
  The policies of the tables that follow memories call zm_memory_visible(org_id, x_id) already (memory migration
  0010), which has no subquery in the policy itself.

Not verified here (no Citus on this machine; docs/scaling.md says so): Citus runs a policy on the worker that holds
the shard, and zm_memory_visible reads memory_memory from there, which Citus may refuse as a distributed query from
a query on a shard; the lookups of zm_member_projects and zm_org_has_user read reference tables, local on every node.
"""
from importlib import import_module

# Small, read on every request, looked up across organizations (tokens by hash, users by email): every table of the
# tenants app is copied to every node.
REFERENCE_TABLES = import_module("tenants.migrations.0002_row_level_security").TENANT_TABLES
# The tenant data, sharded by org_id and co-located, so a tenant's joins stay on one node. memory_memory first: the
# others are co-located with it. Its partitions (one per organization) are distributed with it.
DISTRIBUTED_TABLES = [
    "memory_memory",
    "memory_link",
    "memory_event",
    "memory_check",
    "hygiene_conflict",
    "hygiene_review",
    "hygiene_verdict",
]

PRIMARY_KEYS = "\n".join(
    f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, ADD PRIMARY KEY (org_id, id);"
    for table in DISTRIBUTED_TABLES[1:]
)

# Each function runs as the caller (SECURITY INVOKER), so its lookup is itself under row-level security, exactly as
# the subquery it replaces was; both read reference tables.
FUNCTIONS = """
CREATE FUNCTION zm_member_projects() RETURNS uuid[] LANGUAGE sql STABLE AS $$
  SELECT coalesce(array_agg(project_id), '{}') FROM tenants_projectmember
  WHERE org_id = zm_current_org() AND user_id = zm_current_user() $$;
CREATE FUNCTION zm_org_has_user(p_user uuid) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM tenants_membership WHERE org_id = zm_current_org() AND user_id = p_user) $$;
"""

_MEMORY_VISIBLE = """org_id = zm_current_org() AND (
    (scope = 'personal' AND owner_id = zm_current_user())
    OR (scope = 'project' AND project_id = ANY (zm_member_projects())))"""
_USER_VISIBLE = "id = zm_current_user() OR zm_org_has_user(id)"

POLICIES = f"""
ALTER POLICY memory_visible ON memory_memory USING ({_MEMORY_VISIBLE}) WITH CHECK ({_MEMORY_VISIBLE});
ALTER POLICY user_visible ON tenants_user USING ({_USER_VISIBLE});
ALTER POLICY user_update ON tenants_user USING ({_USER_VISIBLE});
ALTER POLICY project_visible ON tenants_project
  USING (org_id = zm_current_org() AND (zm_is_org_admin() OR id = ANY (zm_member_projects())));
"""

DISTRIBUTE = "\n".join(
    [f"SELECT create_reference_table('{table}');" for table in REFERENCE_TABLES]
    + [f"SELECT create_distributed_table('{DISTRIBUTED_TABLES[0]}', 'org_id');"]
    + [f"SELECT create_distributed_table('{table}', 'org_id', colocate_with => '{DISTRIBUTED_TABLES[0]}');"
       for table in DISTRIBUTED_TABLES[1:]]
)

SQL = "\n".join([PRIMARY_KEYS, FUNCTIONS, POLICIES, DISTRIBUTE])

# Passages came later (memory migration 0011, which runs this on Citus): their primary key leads with org_id already,
# their reference to memory_memory is (org_id, memory_id), and their policy is memory_visible's.
PASSAGE_SQL = f"""
ALTER POLICY passage_visible ON memory_passage USING ({_MEMORY_VISIBLE}) WITH CHECK ({_MEMORY_VISIBLE});
SELECT create_distributed_table('memory_passage', 'org_id', colocate_with => 'memory_memory');
"""
