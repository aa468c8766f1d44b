"""A pg_dump / pg_restore round trip (embedded_stack/backup.py) keeps what isolation and recall depend on.

Compared between the test database and its restored copy: RLS enabled and forced on every table, the policies, the
app role's grants, the zm_* functions (body, SECURITY DEFINER, search_path, who may execute them), the indexes and
every vector. Then, as the app role in the copy, two tenants still see only their own memories.
"""
import uuid
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connections

from embedded_stack.backup import backup, restore
from tests.support.tenants import build_tenant

CATALOG = {
    "rls": "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class"
           " WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY 1",
    "policies": "SELECT tablename, policyname, permissive, roles::text, cmd, qual, with_check FROM pg_policies"
                " ORDER BY 1, 2",
    "grants": "SELECT table_name, grantee, privilege_type FROM information_schema.role_table_grants"
              " WHERE grantee = %(app)s ORDER BY 1, 3",
    "sequences": "SELECT relname, relacl::text FROM pg_class WHERE relkind = 'S' ORDER BY 1",
    "functions": "SELECT proname, pg_get_functiondef(oid), prosecdef, proconfig::text, proacl::text FROM pg_proc"
                 " WHERE proname LIKE 'zm\\_%%' ORDER BY 1",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2",
    "vectors": "SELECT id, org_id, embedding::text FROM memory_memory ORDER BY id",
}


def _connect(db: dict, name: str, *, as_app: bool = False) -> psycopg.Connection:
    role = settings.DATABASES["default"] if as_app else db
    return psycopg.connect(host=db["HOST"], port=db["PORT"], user=role["USER"], password=role["PASSWORD"],
                           dbname=name, autocommit=not as_app)


def _catalog(db: dict, name: str) -> dict[str, list[tuple]]:
    with _connect(db, name) as conn:
        return {key: conn.execute(query, {"app": settings.DATABASES["default"]["USER"]}).fetchall()
                for key, query in CATALOG.items()}


def _visible_memories(conn: psycopg.Connection, tenant) -> list[str]:
    """Memory ids the app role sees as the tenant's admin (set the way tenants/rls.py sets it)."""
    with conn.transaction():
        conn.execute("SELECT set_config('app.org_id', %s, true), set_config('app.user_id', %s, true)",
                     [str(tenant.org.id), str(tenant.admin.id)])
        return [row[0] for row in conn.execute("SELECT id FROM memory_memory ORDER BY id").fetchall()]


@pytest.fixture
def restored_databases(django_db_blocker):
    """Names of databases a test restores into; each is dropped afterwards."""
    names: list[str] = []
    yield names
    db = connections["owner"].settings_dict
    with django_db_blocker.unblock(), _connect(db, "postgres") as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


@pytest.mark.slow
def test_a_restored_backup_keeps_isolation_grants_functions_and_vectors(committed, remember, tmp_path: Path,
                                                                       restored_databases):
    acme, globex = build_tenant("acme"), build_tenant("globex")
    for tenant in (acme, globex):
        remember(tenant.member_token, f"{tenant.org.slug} deploys on Fridays", project="web", namespace=["ops"],
                 key="deploy-day")  # a keyed memory: its unique index of live holders restores with the rest
        remember(tenant.admin_token, f"{tenant.org.slug} admin's private note", scope="personal")
    db = connections["owner"].settings_dict
    source = _catalog(db, db["NAME"])
    definers = [acl for _, _, definer, _, acl in source["functions"] if definer]
    assert definers and not any(item.startswith("=") for acl in definers for item in acl.strip("{}").split(","))
    assert len(source["vectors"]) == 4 and source["functions"] and source["policies"] and source["grants"]
    # django-oauth-toolkit's tables are the authorization server's, read before any identity exists (the token
    # endpoint), with no tenant data: clients, and codes and tokens by their hashes (tenants migration 0003).
    assert all(enabled and forced for table, enabled, forced in source["rls"]
               if not table.startswith(("django_", "auth_", "oauth2_provider_")))

    copy = f"{db['NAME']}_copy_{uuid.uuid4().hex[:8]}"
    restored_databases.append(copy)
    path = backup(db=db, path=tmp_path / "zero_memory.dump")
    assert "new database" in restore(db=db, path=path, database=copy)

    assert _catalog(db, copy) == source  # the vectors too, value for value
    with _connect(db, copy, as_app=True) as conn:
        bypass = conn.execute("SELECT rolbypassrls OR rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
        assert bypass == (False,)
        assert conn.execute("SELECT count(*) FROM memory_memory").fetchone() == (0,)  # no identity, no rows
        conn.rollback()
        seen = {tenant.org.slug: _visible_memories(conn, tenant) for tenant in (acme, globex)}
    by_org = {str(tenant.org.id): tenant.org.slug for tenant in (acme, globex)}
    expected = {slug: sorted(mid for mid, org, _ in source["vectors"] if by_org[str(org)] == slug) for slug in seen}
    assert seen == expected and all(len(ids) == 2 for ids in seen.values())


@pytest.mark.slow
def test_restoring_over_an_existing_database_keeps_the_old_one(committed, remember, tmp_path: Path,
                                                             restored_databases):
    acme = build_tenant("acme")
    remember(acme.member_token, "acme deploys on Fridays", project="web")
    db = connections["owner"].settings_dict
    path = backup(db=db, path=tmp_path / "zero_memory.dump")
    copy = f"{db['NAME']}_copy_{uuid.uuid4().hex[:8]}"
    restored_databases.append(copy)
    restore(db=db, path=path, database=copy)
    with _connect(db, copy) as conn:
        conn.execute("UPDATE memory_memory SET content = 'changed after the backup'")

    message = restore(db=db, path=path, database=copy)
    kept = message.rsplit(" ", 1)[-1]
    restored_databases.append(kept)
    assert kept.startswith(f"{copy}_pre_restore_")
    with _connect(db, copy) as conn:
        assert conn.execute("SELECT content FROM memory_memory").fetchall() == [("acme deploys on Fridays",)]
    with _connect(db, kept) as conn:
        assert conn.execute("SELECT content FROM memory_memory").fetchall() == [("changed after the backup",)]
