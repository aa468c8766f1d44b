"""Memories under row-level security, at the SQL level as the app role."""
import pytest
from django.db import connection
from django.db.utils import ProgrammingError

from tenants import rls


def _rows(sql: str, params=None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall()


@pytest.fixture
def world(acme, globex, remember):
    return {
        "acme_web": remember(acme.member_token, "acme web fact")["memory"]["id"],
        "acme_ops": remember(acme.admin_token, "acme ops fact", project="ops")["memory"]["id"],
        "acme_admin_private": remember(acme.admin_token, "acme admin private", scope="personal")["memory"]["id"],
        "acme_member_private": remember(acme.member_token, "acme member private", scope="personal")["memory"]["id"],
        "globex_web": remember(globex.member_token, "globex web fact")["memory"]["id"],
    }


def visible_ids(scope: rls.Scope) -> set[str]:
    with rls.tenant_scope(scope):
        return {row[0] for row in _rows("SELECT id FROM memory_memory")}


def test_personal_memories_are_their_owners_and_project_ones_their_members(world, acme, globex):
    member = rls.Scope(org_id=acme.org.id, user_id=acme.member.id)
    assert visible_ids(member) == {world["acme_web"], world["acme_member_private"]}
    assert visible_ids(acme.scope) == {world["acme_web"], world["acme_ops"], world["acme_admin_private"]}
    assert visible_ids(globex.scope) == {world["globex_web"]}  # globex's admin is in globex/web too
    globex_member = rls.Scope(org_id=globex.org.id, user_id=globex.member.id)
    assert visible_ids(globex_member) == {world["globex_web"]}


def test_removing_a_project_member_hides_the_projects_memories_at_once(world, api, acme):
    api(acme.admin_token).delete(f"/api/v1/projects/web/members/{acme.member.id}")
    assert visible_ids(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)) == {world["acme_member_private"]}


def test_a_memory_cannot_be_moved_into_a_project_the_caller_is_not_in(world, acme):
    with pytest.raises(ProgrammingError, match="row-level security"):
        with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):
            _rows("UPDATE memory_memory SET project_id = %s WHERE id = %s", [acme.ops.id, world["acme_web"]])


@pytest.mark.parametrize("statement", [
    "UPDATE memory_event SET action = 'forgot'",
    "DELETE FROM memory_event",
    "DELETE FROM memory_memory",
    "DELETE FROM memory_link",
    "TRUNCATE memory_memory",
])
def test_the_app_role_can_never_rewrite_history(world, acme, statement):
    with pytest.raises(ProgrammingError, match="permission denied"):
        with rls.tenant_scope(acme.scope):
            _rows(statement)


def test_the_exists_function_answers_one_bit_and_only_to_the_app(world, globex):
    with rls.tenant_scope(globex.scope):
        assert _rows("SELECT zm_memory_exists(%s)", [world["acme_web"]]) == [(True,)]
        assert _rows("SELECT zm_memory_exists(%s)", ["mem_01ARZ3NDEKTSV4RRFFQ69G5FAV"]) == [(False,)]
    granted = _rows(
        "SELECT grantee FROM information_schema.routine_privileges WHERE routine_name = 'zm_memory_exists'"
        " AND privilege_type = 'EXECUTE'"
    )
    assert {row[0] for row in granted} <= {"zm_app", "zm_owner"} and "PUBLIC" not in {row[0] for row in granted}
