"""The Citus migration (hygiene 0007, tenants/migrations/_citus.py) without a Citus cluster, which this machine
cannot run: its SQL against stand-ins for Citus's two functions that apply Citus's documented rules, and its
rewritten policies compared with the originals on real data, identity by identity.
"""
import pytest
from django.db import DatabaseError, connection, connections, transaction

from memory.models import Check, Conflict, Link, Memory, Verdict
from tenants import rls
from tenants.migrations import _citus
from tests.support.tenants import build_tenant
from tests.support.tenants import tenant_tables

# What create_distributed_table and create_reference_table refuse (Citus documentation, "Creating and Modifying
# Distributed Objects", and policy.c): a unique index without the distribution column, a foreign key to a table
# that is neither co-located on the same column nor a reference table, a policy with a subquery. A key's clones that
# Postgres keeps for each partition of a partitioned table (conparentid set) follow their parent's key.
CITUS_STAND_INS = """
CREATE TEMP TABLE citus_tables (rel regclass PRIMARY KEY, kind text, col text);

CREATE FUNCTION pg_temp.refuse_subquery_policies(t regclass) RETURNS void LANGUAGE plpgsql AS $$
DECLARE bad text;
BEGIN
  SELECT string_agg(polname, ', ') INTO bad FROM pg_policy
  WHERE polrelid = t AND (polqual::text LIKE '%{SUBLINK%' OR coalesce(polwithcheck::text, '') LIKE '%{SUBLINK%');
  IF bad IS NOT NULL THEN RAISE EXCEPTION 'cannot create policy on %: subqueries (%)', t, bad; END IF;
END $$;

CREATE FUNCTION create_reference_table(t regclass) RETURNS void LANGUAGE plpgsql AS $$
DECLARE bad text;
BEGIN
  PERFORM pg_temp.refuse_subquery_policies(t);
  SELECT string_agg(conname, ', ') INTO bad FROM pg_constraint c
  WHERE conrelid = t AND contype = 'f'
    AND NOT EXISTS (SELECT 1 FROM citus_tables WHERE rel = c.confrelid AND kind = 'reference');
  IF bad IS NOT NULL THEN RAISE EXCEPTION 'reference table % has keys to other tables: %', t, bad; END IF;
  INSERT INTO citus_tables VALUES (t, 'reference', NULL);
END $$;

CREATE FUNCTION create_distributed_table(t regclass, col text, colocate_with text DEFAULT 'default')
RETURNS void LANGUAGE plpgsql AS $$
DECLARE bad text; dist smallint;
BEGIN
  SELECT attnum INTO dist FROM pg_attribute WHERE attrelid = t AND attname = col;
  PERFORM pg_temp.refuse_subquery_policies(t);
  SELECT string_agg(indexrelid::regclass::text, ', ') INTO bad FROM pg_index
  WHERE indrelid = t AND indisunique AND NOT dist = ANY (indkey);
  IF bad IS NOT NULL THEN RAISE EXCEPTION 'unique index without %: %', col, bad; END IF;
  IF colocate_with <> 'default' AND NOT EXISTS (
      SELECT 1 FROM citus_tables WHERE rel = colocate_with::regclass AND kind = 'distributed' AND citus_tables.col = $2)
  THEN RAISE EXCEPTION 'cannot colocate % with %', t, colocate_with; END IF;
  SELECT string_agg(conname, ', ') INTO bad FROM pg_constraint c
  WHERE conrelid = t AND contype = 'f' AND c.conparentid = 0 AND c.confrelid <> t AND NOT EXISTS (
      SELECT 1 FROM citus_tables WHERE rel = c.confrelid AND kind = 'reference')
    AND NOT (EXISTS (SELECT 1 FROM citus_tables WHERE rel = c.confrelid AND kind = 'distributed')
             AND dist = ANY (c.conkey)
             AND (SELECT attnum FROM pg_attribute WHERE attrelid = c.confrelid AND attname = col) = ANY (c.confkey));
  IF bad IS NOT NULL THEN RAISE EXCEPTION 'keys of % not on the distribution column: %', t, bad; END IF;
  SELECT string_agg(conname, ', ') INTO bad FROM pg_constraint c  -- a self-reference must carry the column too
  WHERE conrelid = t AND contype = 'f' AND c.conparentid = 0 AND c.confrelid = t AND NOT (dist = ANY (c.conkey) AND dist = ANY (c.confkey));
  IF bad IS NOT NULL THEN RAISE EXCEPTION 'keys of % not on the distribution column: %', t, bad; END IF;
  INSERT INTO citus_tables VALUES (t, 'distributed', col);
END $$;
"""


def _run_with_stand_ins(sql: str) -> list[tuple]:
    """`sql` after the stand-ins, as the owner, rolled back; returns what was distributed."""
    owner = connections[rls.UNSAFE_ALL_TENANTS]
    with transaction.atomic(using=owner.alias), owner.cursor() as cursor:
        cursor.execute("CREATE SCHEMA citus_stand_ins; SET LOCAL search_path = public, citus_stand_ins, pg_temp")
        cursor.execute(CITUS_STAND_INS.replace("CREATE FUNCTION create_", "CREATE FUNCTION citus_stand_ins.create_"))
        cursor.execute(sql)
        cursor.execute("SELECT rel::text, kind, col FROM citus_tables ORDER BY kind, rel::text")
        distributed = cursor.fetchall()
        transaction.set_rollback(True, using=owner.alias)
    return distributed


def test_the_migration_distributes_every_tenant_table_within_citus_rules(committed):
    distributed = _run_with_stand_ins(_citus.SQL + _citus.PASSAGE_SQL)  # hygiene migration 0007, then memory 0011
    tables = [*_citus.DISTRIBUTED_TABLES, "memory_passage"]
    assert distributed == sorted(
        [(t, "distributed", "org_id") for t in tables] + [(t, "reference", None) for t in _citus.REFERENCE_TABLES],
        key=lambda row: (row[1], row[0]),
    )
    assert set(tables + _citus.REFERENCE_TABLES) == set(tenant_tables())


@pytest.mark.parametrize("left_out, refusal", [
    ("PRIMARY_KEYS", "unique index without org_id"),
    ("POLICIES", "subqueries"),
])
def test_the_stand_ins_refuse_what_citus_refuses(committed, left_out, refusal):
    parts = {"PRIMARY_KEYS": _citus.PRIMARY_KEYS, "FUNCTIONS": _citus.FUNCTIONS, "POLICIES": _citus.POLICIES}
    del parts[left_out]
    with pytest.raises(DatabaseError, match=refusal):
        _run_with_stand_ins("\n".join([*parts.values(), _citus.DISTRIBUTE]))


def test_without_citus_the_migration_changes_nothing(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_extension WHERE extname = 'citus'")
        assert cursor.fetchone() == (0,)
        cursor.execute("SELECT count(*) FROM pg_proc WHERE proname = 'zm_member_projects'")
        assert cursor.fetchone() == (0,)


VECTOR = [0.05] * 384


def _fill(tenant) -> None:
    """Rows each identity sees differently: personal memories of two users, a project the member is not in, and
    links, checks, conflicts and verdicts that touch them."""
    with rls.tenant_scope(tenant.scope):
        def memory(content, **fields):
            return Memory.objects.create(org=tenant.org, owner=fields.pop("owner", tenant.admin), content=content,
                                         content_hash=content, embedding=VECTOR, writer="agent", **fields)
        web = memory("web deploys on Monday", scope="project", project=tenant.web, owner=tenant.member)
        ops = memory("ops pages at night", scope="project", project=tenant.ops)
        private = memory("admin's own note", scope="personal")
        Link.objects.create(org=tenant.org, src=ops, dst=web, type="relates_to")
        Link.objects.create(org=tenant.org, src=web, dst=web, type="relates_to")
        Check.objects.create(org=tenant.org, memory=ops, outcome="fail", detail="x")
        Check.objects.create(org=tenant.org, memory=web, outcome="pass", detail="y")
        Conflict.objects.create(org=tenant.org, a=web, b=private, relation="contradicts")
        Verdict.objects.create(org=tenant.org, memory=ops, other=web, relation="contradicts", confidence=0.6,
                               judge="local", prompt_version="v1", latency_ms=1, decision="conflict")
    with rls.tenant_scope(rls.Scope(org_id=tenant.org.id, user_id=tenant.member.id)):
        Memory.objects.create(org=tenant.org, owner=tenant.member, content="member's own note", content_hash="m",
                              embedding=VECTOR, writer="agent", scope="personal")


def _seen(identities: dict) -> dict:
    """Every tenant table's rows, as each identity sees them through the app role."""
    seen = {}
    for name, scope in identities.items():
        with transaction.atomic(), connection.cursor() as cursor:
            if scope:
                cursor.execute("SELECT set_config('app.org_id', %s, true), set_config('app.user_id', %s, true)",
                               [str(scope.org_id), str(scope.user_id) if scope.user_id else ""])
            for table in tenant_tables():
                cursor.execute(f"SELECT * FROM {table}")
                seen[name, table] = sorted(map(str, cursor.fetchall()))
    return seen


def test_the_rewritten_policies_show_every_identity_what_the_originals_do(committed):
    acme, globex = build_tenant("acme"), build_tenant("globex")
    _fill(acme)
    _fill(globex)
    identities = {
        "acme admin": acme.scope,
        "acme member": rls.Scope(org_id=acme.org.id, user_id=acme.member.id),
        "acme, no user": rls.Scope(org_id=acme.org.id, user_id=None),
        "globex member": rls.Scope(org_id=globex.org.id, user_id=globex.member.id),
        "nobody": None,
    }
    before = _seen(identities)
    owner = connections[rls.UNSAFE_ALL_TENANTS]
    with owner.cursor() as cursor:
        cursor.execute(
            "SELECT format('ALTER POLICY %I ON %I', polname, polrelid::regclass)"
            " || coalesce(' USING (' || pg_get_expr(polqual, polrelid) || ')', '')"
            " || coalesce(' WITH CHECK (' || pg_get_expr(polwithcheck, polrelid) || ')', '')"
            " FROM pg_policy"
        )
        originals = [row[0] for row in cursor.fetchall()]
        cursor.execute(_citus.FUNCTIONS + _citus.POLICIES)
    try:
        after = _seen(identities)
    finally:
        with owner.cursor() as cursor:
            cursor.execute(";".join(originals))
            cursor.execute("DROP FUNCTION zm_member_projects(), zm_org_has_user(uuid)")
    assert after == before
    # Not a comparison of empty sets: the identities see different rows, the member less than the admin.
    member, admin = (before[who, "memory_memory"] for who in ("acme member", "acme admin"))
    assert len(member) == 2 and len(admin) == 3 and member != admin[:2]
    assert len(before["acme member", "hygiene_verdict"]) == 0 and len(before["acme admin", "hygiene_verdict"]) == 1
    assert len(before["acme member", "memory_link"]) == 1 and before["nobody", "memory_memory"] == []
