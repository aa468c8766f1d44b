"""Memories partitioned by organization (memory migration 0010): own partition, own indexes, no way around RLS."""
import os
import subprocess
import sys
import threading
import time
import uuid

import psycopg
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import IntegrityError, ProgrammingError, connection, connections, transaction

from memory.models import Memory
from memory.normalize import content_hash
from tenants import rls
from tenants import services
from tenants.services import org_bootstrap
from tests.support.tenants import build_tenant

ZERO = "[" + ",".join(["0.1"] * 384) + "]"


def _owner_rows(sql: str, params=None) -> list[tuple]:
    with connections["owner"].cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall() if cursor.description else []


def _owner_connection() -> dict:
    """A connection of its own as the owner role, to the test database: another session, holding its own locks."""
    owner = connections["owner"].settings_dict
    return {"host": owner["HOST"], "port": owner["PORT"], "dbname": owner["NAME"], "user": owner["USER"],
            "password": owner["PASSWORD"]}


def _partition(org_id: uuid.UUID) -> str:
    return "memory_memory_" + org_id.hex


def _store(tenant, text: str) -> Memory:
    with rls.tenant_scope(tenant.scope):
        return Memory.objects.create(
            org_id=tenant.org.id, scope="personal", owner=tenant.admin, kind="fact", content=text,
            content_hash=content_hash(text), embedding=[0.1] * 384, writer="agent",
        )


def test_each_organization_gets_a_partition_with_its_own_indexes_and_forced_rls(committed):
    acme = build_tenant("acme")
    memory = _store(acme, "The billing service deploys on Fridays.")
    partition = _partition(acme.org.id)
    [(kind, partitioned, enabled, forced)] = _owner_rows(
        "SELECT relkind, relispartition, relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = %s",
        [partition],
    )
    assert (kind, partitioned, enabled, forced) == ("r", True, True, True)
    assert _owner_rows(f"SELECT id FROM {partition}") == [(memory.id,)]
    indexes = {name: definition for name, definition in _owner_rows(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [partition])}
    assert "USING hnsw (embedding vector_cosine_ops)" in indexes[f"{partition}_embedding_idx"]
    assert f"{partition}_pkey" in indexes and "(org_id, id)" in indexes[f"{partition}_pkey"]
    # The parent keeps RLS enabled and forced, with its policy; the app role has privileges on the parent only.
    assert _owner_rows("SELECT relkind, relrowsecurity, relforcerowsecurity FROM pg_class"
                       " WHERE relname = 'memory_memory'") == [("p", True, True)]
    app = settings.DATABASES["default"]["USER"]
    assert _owner_rows("SELECT has_table_privilege(%s, 'memory_memory', 'SELECT'),"
                       " has_table_privilege(%s, %s, 'SELECT'), has_table_privilege(%s, 'memory_memory_default',"
                       " 'SELECT')", [app, app, partition, app]) == [(True, False, False)]


def test_the_app_role_cannot_read_or_write_a_partition_directly(acme):
    _store(acme, "The billing service deploys on Fridays.")
    partition = _partition(acme.org.id)
    for sql in (f"SELECT count(*) FROM {partition}", f"UPDATE {partition} SET kind = 'note'",
                "SELECT count(*) FROM memory_memory_default"):
        with pytest.raises(ProgrammingError, match="permission denied"):
            with rls.tenant_scope(acme.scope), connection.cursor() as cursor:
                cursor.execute(sql)
    with rls.tenant_scope(acme.scope), connection.cursor() as cursor:  # through the parent, as always
        cursor.execute("SELECT count(*) FROM memory_memory")
        assert cursor.fetchone()[0] == 1


def test_a_reference_to_another_organizations_memory_is_refused_by_the_database(committed):
    """Even past RLS (the owner role): every reference to a memory carries its organization."""
    acme, globex = build_tenant("acme"), build_tenant("globex")
    mine, theirs = _store(acme, "Acme deploys on Fridays."), _store(globex, "Globex deploys on Mondays.")
    statements = [
        ("INSERT INTO memory_link (id, org_id, src_id, dst_id, type, retired_dst, created_at)"
         " VALUES ('lnk_cross', %s, %s, %s, 'relates_to', false, now())", [acme.org.id, mine.id, theirs.id]),
        ("UPDATE memory_memory SET superseded_by_id = %s WHERE id = %s", [theirs.id, mine.id]),
        ("INSERT INTO memory_check (id, org_id, memory_id, outcome, detail, created_at)"
         " VALUES ('chk_cross', %s, %s, 'fail', '', now())", [acme.org.id, theirs.id]),
        ("INSERT INTO hygiene_verdict (org_id, memory_id, other_id, relation, confidence, rationale, judge,"
         " prompt_version, latency_ms, decision, same_token, created_at)"
         " VALUES (%s, %s, %s, 'contradicts', 0.9, '', 'j', 'v1', 1, 'recorded', false, now())",
         [acme.org.id, mine.id, theirs.id]),
    ]
    for sql, params in statements:
        with pytest.raises(IntegrityError, match="foreign key"):
            with transaction.atomic(using="owner"), connections["owner"].cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                cursor.execute(sql, params)
    # The same link inside one organization is accepted.
    other = _store(acme, "Acme deploys on Thursdays now.")
    with transaction.atomic(using="owner"), connections["owner"].cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(statements[0][0].replace("lnk_cross", "lnk_same"), [acme.org.id, mine.id, other.id])


def test_rows_of_an_organization_without_a_partition_are_kept_in_the_default_one(committed):
    """An organization made without org_bootstrap loses nothing: its rows go to the default partition, and stay there
    (referenced rows cannot move between partitions); a new organization gets its own."""
    acme = build_tenant("acme")
    org_id = uuid.uuid4()
    _owner_rows("INSERT INTO tenants_organization (id, slug, name, require_supersede_reason, created_at)"
                " VALUES (%s, 'late', 'late', false, now())", [org_id])
    for memory_id in ("mem_late_1", "mem_late_2"):
        _owner_rows(
            "INSERT INTO memory_memory (id, org_id, scope, owner_id, kind, content, content_hash, embedding, status,"
            " writer, authoritative, metadata, created_at) VALUES (%s, %s, 'personal', %s, 'fact', 'x', 'h', %s,"
            " 'live', 'agent', true, '{}', now())", [memory_id, org_id, acme.admin.id, ZERO])
    _owner_rows("INSERT INTO memory_link (id, org_id, src_id, dst_id, type, retired_dst, created_at)"
                " VALUES ('lnk_late', %s, 'mem_late_2', 'mem_late_1', 'relates_to', false, now())", [org_id])
    assert _owner_rows("SELECT zm_memory_partition(%s)", [org_id]) == [("memory_memory_default",)]
    assert _owner_rows("SELECT id, search::text FROM memory_memory_default ORDER BY id") == [
        ("mem_late_1", "'x':1"), ("mem_late_2", "'x':1")]
    assert not _owner_rows("SELECT 1 FROM pg_class WHERE relname = %s", [_partition(org_id)])
    assert _owner_rows("SELECT zm_memory_partition(%s)", [acme.org.id]) == [(_partition(acme.org.id),)]  # idempotent


def test_a_new_organization_does_not_deadlock_with_a_recall_under_way(committed):
    """Making a partition locks its parent table. A recall reads memories and then passages. The function must take
    the two tables in that order too (migration 0018): in the other order each waited for the other, and Postgres
    failed one after a second."""
    acme = build_tenant("acme")
    _store(acme, "The billing service deploys on Fridays.")
    failed = []

    def bootstrap() -> None:
        try:
            org_bootstrap(org_slug="globex", admin_email="admin@globex.test", project_slugs=[])
        except Exception as error:  # noqa: BLE001 - the test reports it
            failed.append(error)
        finally:
            connections.close_all()

    maker = threading.Thread(target=bootstrap)
    with rls.tenant_scope(acme.scope), connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_memory")  # the recall has read its memories
        maker.start()
        waited = time.monotonic()
        while not _owner_rows("SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'memory_memory'::regclass"):
            assert time.monotonic() - waited < 10, "the new organization never waited for the recall"
            time.sleep(0.02)
        cursor.execute("SELECT count(*) FROM memory_passage")  # and now its passages
    maker.join(timeout=30)
    assert failed == []
    [(org_id,)] = _owner_rows("SELECT id FROM tenants_organization WHERE slug = 'globex'")
    assert _owner_rows("SELECT zm_memory_partition(%s)", [org_id]) == [(_partition(org_id),)]


def test_a_new_organization_waits_a_bounded_time_for_a_table_held_by_a_backup(committed, monkeypatch):
    """While a new organization waits for the memories' table, every query of every organization queues behind it:
    the wait is bounded, and the command says why nothing was created."""
    monkeypatch.setattr(services, "PARTITION_LOCK_TIMEOUT", "200ms")
    with psycopg.connect(**_owner_connection()) as backup:
        backup.execute("SELECT count(*) FROM memory_memory")  # what pg_dump holds until it has read everything
        with pytest.raises(CommandError, match="held the memories' table for over 200ms: organization 'initech'"):
            call_command("bootstrap", "--org", "initech", "--admin", "boss@initech.test")
    assert _owner_rows("SELECT count(*) FROM tenants_organization WHERE slug = 'initech'") == [(0,)]
    call_command("bootstrap", "--org", "initech", "--admin", "boss@initech.test")
    [(org_id,)] = _owner_rows("SELECT id FROM tenants_organization WHERE slug = 'initech'")
    assert _owner_rows("SELECT zm_memory_partition(%s)", [org_id]) == [(_partition(org_id),)]


def test_the_app_role_may_make_a_partition_only_through_the_function(acme):
    with pytest.raises(ProgrammingError, match="permission denied|must be owner"):
        with rls.tenant_scope(acme.scope), connection.cursor() as cursor:
            cursor.execute(f"CREATE TABLE memory_memory_x PARTITION OF memory_memory FOR VALUES IN ('{uuid.uuid4()}')")
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosecdef, proconfig::text FROM pg_proc WHERE proname = 'zm_memory_partition'")
        [(definer, config)] = cursor.fetchall()
    assert definer and config == "{\"search_path=pg_catalog, public\"}"


# The conversion of a populated store, in a scratch database migrated by manage.py as the owner.
SEED = """
INSERT INTO tenants_organization (id, slug, name, require_supersede_reason, created_at) VALUES
  (%(a)s, 'a', 'a', false, now()), (%(b)s, 'b', 'b', false, now());
INSERT INTO tenants_user (id, email, password, is_active, date_joined) VALUES (%(u)s, 'u@x.test', '', true, now());
INSERT INTO memory_memory (id, org_id, scope, owner_id, kind, content, content_hash, embedding, status, writer,
  authoritative, metadata, created_at, superseded_by_id) VALUES
  ('mem_a1', %(a)s, 'personal', %(u)s, 'fact', 'deploys on Monday', 'h1', %(v)s, 'superseded', 'agent', true, '{}',
   now(), 'mem_a2'),
  ('mem_a2', %(a)s, 'personal', %(u)s, 'fact', 'deploys on Thursday', 'h2', %(v)s, 'live', 'agent', true, '{}',
   now(), NULL),
  ('mem_b1', %(b)s, 'personal', %(u)s, 'note', 'b note', 'h3', %(v)s, 'live', 'agent', true, '{}', now(), NULL);
INSERT INTO memory_link (id, org_id, src_id, dst_id, type, retired_dst, created_at) VALUES
  ('lnk_1', %(a)s, 'mem_a2', 'mem_a1', 'supersedes', true, now());
INSERT INTO memory_check (id, org_id, memory_id, corrected_by_id, outcome, detail, created_at) VALUES
  ('chk_1', %(a)s, 'mem_a1', 'mem_a2', 'fail', '', now());
INSERT INTO hygiene_review (org_id, memory_id, state, attempts, last_error, created_at, updated_at) VALUES
  (%(b)s, 'mem_b1', 'done', 1, '', now(), now());
"""


def _migrate(env: dict, *target: str) -> None:
    subprocess.run([sys.executable, "manage.py", "migrate", "--database", "owner", "--no-input", "-v", "0", *target],
                   check=True, env=env, cwd=settings.BASE_DIR, capture_output=True)


@pytest.mark.slow
def test_the_migration_converts_a_populated_store_and_keeps_rows_references_and_rls(db, django_db_blocker):
    owner = connections["owner"].settings_dict
    app = settings.DATABASES["default"]
    name = f"zm_partition_{uuid.uuid4().hex[:8]}"
    url = "postgres://{}:{}@{}:{}/" + name
    env = {**os.environ, "DATABASE_URL": url.format(app["USER"], app["PASSWORD"], owner["HOST"], owner["PORT"]),
           "DATABASE_OWNER_URL": url.format(owner["USER"], owner["PASSWORD"], owner["HOST"], owner["PORT"])}
    ids = {"a": uuid.uuid4(), "b": uuid.uuid4(), "u": uuid.uuid4(), "v": ZERO}
    connect = dict(host=owner["HOST"], port=owner["PORT"], dbname=name)
    with django_db_blocker.unblock():
        with psycopg.connect(**connect | {"dbname": "postgres"}, user=owner["USER"], password=owner["PASSWORD"],
                             autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            _migrate(env, "memory", "0009")
            with psycopg.connect(**connect, user=owner["USER"], password=owner["PASSWORD"]) as conn:
                for statement in SEED.split(";")[:-1]:
                    conn.execute(statement, {k: v for k, v in ids.items() if f"%({k})s" in statement})
            _migrate(env)
            with psycopg.connect(**connect, user=owner["USER"], password=owner["PASSWORD"]) as conn:
                placed = conn.execute("SELECT tableoid::regclass::text, id FROM memory_memory ORDER BY id").fetchall()
                assert placed == [(_partition(ids["a"]), "mem_a1"), (_partition(ids["a"]), "mem_a2"),
                                  (_partition(ids["b"]), "mem_b1")]
                assert conn.execute("SELECT search::text FROM memory_memory WHERE id = 'mem_a2'").fetchone() == (
                    "'deploy':1 'thursday':3",)
                assert conn.execute("SELECT count(*) FROM memory_link JOIN memory_check USING (org_id)").fetchone() \
                    == (1,)
                assert not conn.execute("SELECT 1 FROM pg_class WHERE relname = 'memory_memory_unpartitioned'"
                                        ).fetchall()
                with pytest.raises(psycopg.errors.ForeignKeyViolation):  # references carry the organization now
                    conn.execute("SET CONSTRAINTS ALL IMMEDIATE")
                    conn.execute("UPDATE hygiene_review SET org_id = %s", [ids["a"]])
            with psycopg.connect(**connect, user=app["USER"], password=app["PASSWORD"]) as conn:
                conn.execute("SELECT set_config('app.org_id', %s, false), set_config('app.user_id', %s, false)",
                             [str(ids["a"]), str(ids["u"])])
                assert conn.execute("SELECT id FROM memory_memory ORDER BY id").fetchall() == [("mem_a1",), ("mem_a2",)]
                assert conn.execute("SELECT id FROM memory_link").fetchall() == [("lnk_1",)]
                assert conn.execute("SELECT id FROM memory_check").fetchall() == [("chk_1",)]
                assert conn.execute("SELECT count(*) FROM hygiene_review").fetchone() == (0,)  # b's
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(f"SELECT * FROM {_partition(ids['a'])}")
        finally:
            with psycopg.connect(**connect | {"dbname": "postgres"}, user=owner["USER"], password=owner["PASSWORD"],
                                 autocommit=True) as admin:
                _drop(admin, name)


def _drop(admin: psycopg.Connection, name: str) -> None:
    """Drop the scratch database. The app role's backend may still be closing when its client has left, and the
    owner may not terminate another role's process (a fresh-clone run on a loaded machine failed here): wait for it."""
    for _ in range(50):
        try:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        except psycopg.errors.InsufficientPrivilege:
            time.sleep(0.1)
    admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_tenants_queries_are_planned_on_its_own_partition_only(acme, globex):
    """Postgres plans one partition, not one per organization: the memory manager names the organization (also for
    save()), and the tables that follow memories ask zm_memory_visible instead of a subquery over every partition."""
    from memory.models import Check

    memory = _store(acme, "The billing service deploys on Fridays.")
    _store(globex, "Globex deploys on Mondays.")
    mine, theirs = _partition(acme.org.id), _partition(globex.org.id)
    with rls.tenant_scope(acme.scope):
        plan = Memory.objects.filter(pk__in=[memory.id]).explain()
        assert mine in plan and theirs not in plan and "memory_memory_default" not in plan
        assert "memory_memory" not in Check.objects.filter(memory_id__in=[memory.id]).explain()
        with connection.cursor() as cursor:  # what save() runs: the base manager is the memory manager
            cursor.execute("EXPLAIN " + Memory._base_manager.filter(pk=memory.id).query.sql_with_params()[0],
                           Memory._base_manager.filter(pk=memory.id).query.sql_with_params()[1])
            assert theirs not in "\n".join(row[0] for row in cursor.fetchall())
        memory.kind = "note"
        memory.save(update_fields=["kind"])
        memory.refresh_from_db()
        assert memory.kind == "note"
