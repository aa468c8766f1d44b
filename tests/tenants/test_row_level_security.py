"""Row-level security at the SQL level, as the app role: the policies alone keep tenants apart."""

import django_rq
import pytest
from django.apps import apps
from django.db import connection, transaction

from telemetry.worker import Worker
from tenants import rls
from tests.support.tenants import build_tenant, tenant_tables


def _rows(sql: str, params=None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall()


def test_tests_run_as_an_unprivileged_app_role_that_owns_nothing(db):
    user, superuser, bypass = _rows(
        "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
    )[0]
    assert user == "zm_app" and not superuser and not bypass
    assert _rows("SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tableowner = current_user") == []


def test_every_tenant_table_has_rls_enabled_forced_and_a_policy(db):
    tables = tenant_tables()
    assert "tenants_apitoken" in tables
    for table in tables:
        enabled, forced = _rows("SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = %s", [table])[0]
        policies = _rows("SELECT count(*) FROM pg_policies WHERE tablename = %s", [table])[0][0]
        assert (enabled, forced, policies > 0) == (True, True, True), table


def test_without_identity_the_app_role_sees_no_tenant_rows(acme, globex, remember):
    _fill_every_table(acme, remember)
    for table in tenant_tables():
        assert _rows(f"SELECT count(*) FROM {table}") == [(0,)], table


def _fill_every_table(tenant, remember) -> None:
    from memory.models import Check, Conflict, Verdict

    first = remember(tenant.member_token, f"{tenant.org.slug} deploys on Monday")["memory"]["id"]
    second = remember(tenant.member_token, f"{tenant.org.slug} deploys on Friday", links=[
        {"type": "supersedes", "dst": first, "reason": "moved"}])["memory"]["id"]
    # Several sentences each: passages too (memory/passages.py)
    third = remember(tenant.member_token, f"{tenant.org.slug} deploys on Sunday. The window opens at noon.")["memory"]["id"]
    remember(tenant.admin_token, f"{tenant.org.slug} admin's private note. Nobody else reads it.", scope="personal")
    with rls.tenant_scope(tenant.scope):
        Check.objects.create(org=tenant.org, memory_id=second, outcome="fail", detail="no deploy happened")
        Conflict.objects.create(org=tenant.org, a_id=second, b_id=third, relation="contradicts")
        Verdict.objects.create(org=tenant.org, memory_id=third, other_id=second, relation="contradicts",
                               confidence=0.6, judge="local", prompt_version="judge-v2", latency_ms=1, decision="conflict")


def test_with_identity_a_raw_queries_never_return_bs_rows(acme, globex, remember):
    _fill_every_table(acme, remember)
    _fill_every_table(globex, remember)
    with rls.tenant_scope(acme.scope):
        for table in tenant_tables():
            column = "id" if table == "tenants_organization" else "org_id"
            if table == "tenants_user":
                emails = {row[0] for row in _rows("SELECT email FROM tenants_user")}
                assert emails == {"admin@acme.test", "member@acme.test"}
                continue
            orgs = {row[0] for row in _rows(f"SELECT DISTINCT {column} FROM {table}")}
            assert orgs == {acme.org.id}, table
            assert _rows(f"SELECT count(*) FROM {table} WHERE {column} = %s", [globex.org.id]) == [(0,)]


def test_members_see_only_their_projects_and_their_own_tokens_at_sql_level(acme):
    with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):
        assert _rows("SELECT slug FROM tenants_project ORDER BY slug") == [("web",)]
        assert {row[0] for row in _rows("SELECT user_id FROM tenants_apitoken")} == {acme.member.id}
    with rls.tenant_scope(acme.scope):
        assert _rows("SELECT slug FROM tenants_project ORDER BY slug") == [("ops",), ("web",)]


def test_writing_a_row_into_another_org_is_refused(acme, globex):
    from django.db.utils import ProgrammingError

    with pytest.raises(ProgrammingError, match="row-level security"):
        with rls.tenant_scope(acme.scope):
            _rows(
                "INSERT INTO tenants_project (id, org_id, slug, name, created_at)"
                " VALUES (gen_random_uuid(), %s, 'stolen', 'x', now())",
                [globex.org.id],
            )


def test_a_member_cannot_create_projects_even_with_raw_sql(acme):
    from django.db.utils import ProgrammingError

    with pytest.raises(ProgrammingError, match="row-level security"):
        with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):
            _rows(
                "INSERT INTO tenants_project (id, org_id, slug, name, created_at)"
                " VALUES (gen_random_uuid(), %s, 'sneaky', 'x', now())",
                [acme.org.id],
            )


def test_a_second_identity_cannot_hide_inside_a_scope(acme, globex):
    with rls.tenant_scope(acme.scope):
        with pytest.raises(RuntimeError, match="durable"):
            with rls.tenant_scope(globex.scope):
                pass
        assert _rows("SELECT slug FROM tenants_organization") == [("acme",)]
    assert rls.current_scope() is None
    assert _rows("SELECT current_setting('app.org_id', true)") == [("",)]


def test_identity_never_survives_into_the_next_transaction_on_a_reused_connection(committed):
    acme = build_tenant("acme")
    with rls.tenant_scope(acme.scope):
        backend_pid = _rows("SELECT pg_backend_pid()")[0][0]
        assert _rows("SELECT count(*) FROM tenants_project") == [(2,)]
    with transaction.atomic():
        assert _rows("SELECT pg_backend_pid()")[0][0] == backend_pid  # the very same server connection
        assert _rows("SELECT current_setting('app.org_id', true), current_setting('app.user_id', true)") == [("", "")]
        assert _rows("SELECT count(*) FROM tenants_project") == [(0,)]


def test_a_pooled_connection_is_borrowed_again_without_the_identity_of_its_last_user(committed):
    """With the pool of settings.DATABASES (what the server runs with): close() hands the connection back open."""
    assert connection.pool is not None
    acme = build_tenant("acme")
    # tenant_scope commits with the identity still set (it clears nothing at the top level): only its being
    # transaction-local ends it.
    with rls.tenant_scope(acme.scope):
        used_pid = _rows("SELECT pg_backend_pid()")[0][0]
        assert _rows("SELECT current_setting('app.org_id', true)") == [(str(acme.org.id),)]
    connection.close()
    borrowed = []
    # The pool hands out its idle connections oldest first, so ours comes back within max_size borrows.
    for _ in range(connection.pool.max_size):
        with transaction.atomic():
            borrowed.append(_rows("SELECT pg_backend_pid()")[0][0])
            # NULL on a connection that never had an identity, '' on one whose identity ended with its transaction.
            assert _rows(
                "SELECT coalesce(current_setting('app.org_id', true), ''), coalesce(current_setting('app.user_id', true), '')"
            ) == [("", "")]
            assert _rows("SELECT count(*) FROM tenants_project") == [(0,)]
        connection.close()
        if borrowed[-1] == used_pid:
            break
    assert borrowed[-1] == used_pid, borrowed  # the very connection that carried acme's identity


def test_identity_is_gone_after_a_failed_transaction_too(committed):
    acme = build_tenant("acme")
    with pytest.raises(ZeroDivisionError):
        with rls.tenant_scope(acme.scope):
            _rows("SELECT count(*) FROM tenants_project")
            1 / 0
    assert rls.current_scope() is None
    assert _rows("SELECT count(*) FROM tenants_project") == [(0,)]


def test_identity_of_an_http_request_does_not_leak_into_the_next_query(committed, api):
    acme = build_tenant("acme")
    assert api(acme.admin_token).get("/api/v1/projects").status_code == 200
    assert rls.current_scope() is None
    assert _rows("SELECT current_setting('app.org_id', true)") == [("",)]
    assert _rows("SELECT count(*) FROM tenants_project") == [(0,)]


def test_tenant_data_outside_a_scope_raises_instead_of_reading_nothing(acme):
    """Fail closed: every tenant-owned manager and the raw-SQL services refuse to run without an identity."""
    from memory import recall, services
    from memory.models import Memory

    for model in [m for app in ("tenants", "memory", "hygiene") for m in apps.get_app_config(app).get_models()]:
        if model._meta.db_table == "tenants_user":
            continue  # global identities: Django's auth reads them by primary key
        with pytest.raises(rls.TenantScopeMissing):
            model.objects.count()
    with rls.tenant_scope(acme.scope):
        from tenants.auth import load_principal

        principal = load_principal(acme.scope, token_id=None)
        assert Memory.objects.count() == 0  # the control: inside a scope the same query runs
    with pytest.raises(rls.TenantScopeMissing):
        services.memory_forget(principal=principal, memory_id="mem_01ARZ3NDEKTSV4RRFFQ69G5FAV")
    with pytest.raises(rls.TenantScopeMissing):
        recall.memory_recall(principal=principal, q=recall.RecallQuery(query="x"),
                             vector=services.memory_embedding("x").vector)


@rls.tenant_job
def visible_project_slugs() -> list[str]:
    return [row[0] for row in _rows("SELECT slug FROM tenants_project ORDER BY slug")]


@pytest.mark.slow
def test_rq_jobs_run_under_the_identity_they_were_enqueued_with(committed):
    acme, globex = build_tenant("acme"), build_tenant("globex")
    queue = django_rq.get_queue("default")
    queue.empty()
    as_member = queue.enqueue(visible_project_slugs, org_id=str(acme.org.id), user_id=str(acme.member.id))
    as_globex_admin = queue.enqueue(visible_project_slugs, org_id=str(globex.org.id), user_id=str(globex.admin.id))
    django_rq.get_worker("default", worker_class=Worker).work(burst=True)
    assert as_member.latest_result().return_value == ["web"]
    assert as_globex_admin.latest_result().return_value == ["ops", "web"]
    assert _rows("SELECT count(*) FROM tenants_project") == [(0,)]  # and the worker's identity did not stay
