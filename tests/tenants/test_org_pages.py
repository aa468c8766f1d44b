"""The org admin pages under /org/ (tenants/org_pages.py): every view as member and admin, every permission rule,
form errors next to their field, and the role-change service they brought (tenants/services.py)."""
import re

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from plumbing.errors import Code, Forbidden, StateConflict
from tenants import rls
from tenants.auth import SESSION_ORG_KEY, load_principal
from tenants.models import ApiToken, Membership, Project, User
from tenants.services import membership_role_change
from tests.support.oauth import granted
from tests.support.pages import signed_in
from tests.support.tenants import issue_token
from tests.support.watchers import mint_watcher

PASSWORD = "correct horse battery staple"
ORG_PAGES = ["/org/", "/org/users", "/org/projects", "/org/projects/web", "/org/tokens", "/org/settings"]



def field_errors(page, field: str) -> list[str]:
    """The errors Django renders right after the field's label, inside the field's own group."""
    match = re.search(rf'<ul class="errorlist" id="id_{field}_error">(.*?)</ul>', page.content.decode(), re.DOTALL)
    return re.findall(r"<li>(.*?)</li>", match.group(1)) if match else []


def secret_of(page) -> str:
    found = re.findall(r'<p class="secret">([^<]+)</p>', page.content.decode())
    assert len(found) == 1, page.content
    return found[0].strip()


def users(api, tenant, token: str | None = None) -> dict[str, str]:
    response = api(token or tenant.admin_token).get("/api/v1/users")
    return {u["email"]: u["role"] for u in response.json()["results"]}


def projects_of(api, token: str) -> list[str]:
    return api(token).get("/api/v1/me").json()["projects"]


def setting(api, tenant) -> bool:
    return api(tenant.admin_token).get("/api/v1/org/settings").json()["require_supersede_reason"]


# Every page, as member and admin


@pytest.mark.parametrize("path", ORG_PAGES)
def test_every_org_page_needs_a_sign_in(acme, path):
    answer = Client().get(path)
    assert answer.status_code == 302 and answer["Location"].startswith("/sign-in?next=")


@pytest.mark.parametrize("path", ORG_PAGES)
def test_an_admin_opens_every_org_page(acme, path):
    page = signed_in(acme, acme.admin).get(path)
    assert page.status_code == 200
    assert page.content.decode().count("<h1>") == 1 and b'aria-current="page">Organization</a>' in page.content


@pytest.mark.parametrize("path, status", [("/org/", 200), ("/org/users", 403), ("/org/projects", 200),
                                          ("/org/projects/web", 200), ("/org/tokens", 200), ("/org/settings", 200)])
def test_a_member_opens_what_the_api_shows_members(acme, path, status):
    page = signed_in(acme, acme.member).get(path)
    assert page.status_code == status
    assert page.content.decode().count("<h1>") == 1
    assert b'href="/org/users"' not in page.content  # no user admin to point at


def test_the_overview_counts_what_the_user_may_see(acme):
    admin = signed_in(acme, acme.admin).get("/org/").context
    assert (admin["users"], admin["projects"], admin["tokens"]) == (2, 2, 2)
    member = signed_in(acme, acme.member).get("/org/").context
    assert (member["users"], member["projects"], member["tokens"]) == (None, 1, 1)


# Users


def test_a_member_may_not_list_add_or_change_users(api, acme):
    client = signed_in(acme, acme.member)
    page = client.get("/org/users")
    assert page.status_code == 403 and b"Only organization admins" in page.content
    assert client.post("/org/users", {"email": "new@acme.test", "role": "admin"}).status_code == 403
    assert client.post(f"/org/users/{acme.member.id}/role", {f"{acme.member.id}-role": "admin"}).status_code == 403
    assert users(api, acme) == {"admin@acme.test": "admin", "member@acme.test": "member"}


def test_an_admin_lists_users_with_their_roles(acme):
    page = signed_in(acme, acme.admin).get("/org/users")
    html = page.content.decode()
    assert "admin@acme.test" in html and "member@acme.test" in html
    assert html.count(">Change role</button>") == 2 and ">Add user</button>" in html
    member_select = re.search(rf'<select name="{acme.member.id}-role".*?</select>', html, re.DOTALL).group(0)
    assert '<option value="member" selected>' in member_select


def test_an_added_user_gets_a_one_time_link_that_signs_them_in(api, acme):
    added = signed_in(acme, acme.admin).post("/org/users", {"email": "New.Person@Acme.test", "role": "member"})
    assert added.status_code == 200
    link = secret_of(added)
    assert users(api, acme)["new.person@acme.test"] == "member"
    assert link.startswith(settings.PUBLIC_URL + "/sign-in/")
    path = link.removeprefix(settings.PUBLIC_URL)
    newcomer = Client()
    assert b"new.person@acme.test" in newcomer.get(path).content
    signed = newcomer.post(path, {"password1": PASSWORD, "password2": PASSWORD})
    assert signed.status_code == 302 and newcomer.session[SESSION_ORG_KEY] == str(acme.org.id)
    assert newcomer.get("/org/").context["principal"].user.email == "new.person@acme.test"
    assert newcomer.get("/org/users").status_code == 403  # a member
    assert Client().post(path, {"password1": PASSWORD, "password2": PASSWORD}).status_code == 410  # spent
    # The link is not kept anywhere the page shows again.
    assert link not in signed_in(acme, acme.admin).get("/org/users").content.decode()


@pytest.mark.parametrize("body, field, message", [
    ({"email": "not an email", "role": "member"}, "email", "Enter a valid email address."),
    ({"email": "member@acme.test", "role": "member"}, "email", "already a member"),
    ({"email": "x@acme.test", "role": "owner"}, "role", "Select a valid choice."),
])
def test_add_user_errors_sit_next_to_their_field_and_change_nothing(api, acme, body, field, message):
    before = users(api, acme)
    answer = signed_in(acme, acme.admin).post("/org/users", body)
    assert answer.status_code == 400
    assert any(message in error for error in field_errors(answer, field)), answer.content
    assert b'class="secret"' not in answer.content
    assert users(api, acme) == before


def test_an_admin_changes_a_role_and_the_api_sees_it(api, acme):
    client = signed_in(acme, acme.admin)
    answer = client.post(f"/org/users/{acme.member.id}/role", {f"{acme.member.id}-role": "admin"})
    assert answer.status_code == 302 and answer["Location"] == "/org/users"
    assert users(api, acme)["member@acme.test"] == "admin"
    assert b"member@acme.test is now admin." in client.get("/org/users").content
    assert api(acme.member_token).get("/api/v1/users").status_code == 200  # the promoted member is an admin now


def test_the_last_admin_cannot_be_demoted(api, acme):
    client = signed_in(acme, acme.admin)
    answer = client.post(f"/org/users/{acme.admin.id}/role", {f"{acme.admin.id}-role": "member"})
    assert answer.status_code == 409
    errors = field_errors(answer, f"{acme.admin.id}-role")
    assert errors and "last admin" in errors[0]
    assert users(api, acme)["admin@acme.test"] == "admin"


def test_an_admin_who_demotes_themselves_loses_the_admin_pages(api, acme):
    client = signed_in(acme, acme.admin)
    client.post(f"/org/users/{acme.member.id}/role", {f"{acme.member.id}-role": "admin"})
    answer = client.post(f"/org/users/{acme.admin.id}/role", {f"{acme.admin.id}-role": "member"})
    assert answer.status_code == 302 and answer["Location"] == "/org/"
    assert client.get("/org/users").status_code == 403
    assert users(api, acme, acme.member_token) == {"admin@acme.test": "member", "member@acme.test": "admin"}


def test_a_role_change_of_another_orgs_user_or_a_bad_role_changes_nothing(api, acme, globex):
    client = signed_in(acme, acme.admin)
    outsider = client.post(f"/org/users/{globex.member.id}/role", {f"{globex.member.id}-role": "admin"})
    assert outsider.status_code == 404
    bad = client.post(f"/org/users/{acme.member.id}/role", {f"{acme.member.id}-role": "owner"})
    assert bad.status_code == 400 and field_errors(bad, f"{acme.member.id}-role")
    assert users(api, acme)["member@acme.test"] == "member"
    assert users(api, globex)["member@globex.test"] == "member"


# The role-change service itself (no REST endpoint has it; the users page calls it)


def principal_of(tenant, user, token_id=None):
    return load_principal(rls.Scope(org_id=tenant.org.id, user_id=user.id), token_id=token_id)


def role_of(user) -> str:
    return Membership.objects.get(user_id=user.id).role


def test_membership_role_change_is_for_admins_and_keeps_one_admin(api, acme):
    _, watcher_id = mint_watcher(api, acme.admin_token, project=None)
    with rls.tenant_scope(rls.Scope(org_id=acme.org.id, user_id=acme.member.id)):
        with pytest.raises(Forbidden) as refused:
            membership_role_change(principal=principal_of(acme, acme.member), user_id=acme.member.id, role="admin")
        assert refused.value.code == Code.ADMIN_ONLY and role_of(acme.member) == "member"
    with rls.tenant_scope(acme.scope):
        watcher = principal_of(acme, acme.admin, token_id=watcher_id)
        with pytest.raises(Forbidden) as refused:
            membership_role_change(principal=watcher, user_id=acme.member.id, role="admin")
        assert refused.value.code == Code.WATCHER_FORBIDDEN
        admin = principal_of(acme, acme.admin)
        with pytest.raises(StateConflict) as last:
            membership_role_change(principal=admin, user_id=acme.admin.id, role="member")
        assert last.value.code == Code.LAST_ADMIN and role_of(acme.admin) == "admin"
        assert membership_role_change(principal=admin, user_id=acme.member.id, role="admin").role == "admin"
        assert membership_role_change(principal=admin, user_id=acme.admin.id, role="member").role == "member"
        assert (role_of(acme.admin), role_of(acme.member)) == ("member", "admin")


# Projects and their members


def test_members_list_their_projects_and_admins_all(acme):
    member = signed_in(acme, acme.member).get("/org/projects")
    assert [p.slug for p in member.context["projects"]] == ["web"]
    assert b">Create project</button>" not in member.content
    admin = signed_in(acme, acme.admin).get("/org/projects")
    assert [p.slug for p in admin.context["projects"]] == ["ops", "web"]
    assert b">Create project</button>" in admin.content


def test_an_admin_creates_a_project(api, acme):
    answer = signed_in(acme, acme.admin).post("/org/projects", {"slug": "payments", "name": "Payments"})
    assert answer.status_code == 302 and answer["Location"] == "/org/projects/payments"
    listed = api(acme.admin_token).get("/api/v1/projects").json()["results"]
    assert {"slug": "payments", "name": "Payments"} in listed
    assert "payments" in projects_of(api, acme.admin_token)  # its creator is in it


@pytest.mark.parametrize("body, field, message", [
    ({"slug": "web", "name": "Again"}, "slug", "already exists"),
    ({"slug": "not a slug!", "name": "x"}, "slug", "Enter a valid"),
    ({"slug": "", "name": "x"}, "slug", "This field is required."),
    ({"slug": "long", "name": "n" * 201}, "name", "at most 200 characters"),
])
def test_create_project_errors_sit_next_to_their_field_and_change_nothing(api, acme, body, field, message):
    answer = signed_in(acme, acme.admin).post("/org/projects", body)
    assert answer.status_code == 400
    assert any(message in error for error in field_errors(answer, field)), answer.content
    slugs = [p["slug"] for p in api(acme.admin_token).get("/api/v1/projects").json()["results"]]
    assert slugs == ["ops", "web"]


def test_a_member_may_not_create_a_project(api, acme):
    assert signed_in(acme, acme.member).post("/org/projects", {"slug": "mine"}).status_code == 403
    with rls.tenant_scope(acme.scope):
        assert not Project.objects.filter(slug="mine").exists()


def test_an_admin_adds_and_removes_project_members(api, acme):
    client = signed_in(acme, acme.admin)
    page = client.get("/org/projects/ops")
    assert [m.user.email for m in page.context["members"]] == ["admin@acme.test"]
    add_choices = re.search(r'<select name="user_id".*?</select>', page.content.decode(), re.DOTALL).group(0)
    assert str(acme.member.id) in add_choices and str(acme.admin.id) not in add_choices  # only those not in it
    added = client.post("/org/projects/ops", {"user_id": str(acme.member.id)})
    assert added.status_code == 302 and added["Location"] == "/org/projects/ops"
    assert projects_of(api, acme.member_token) == ["ops", "web"]
    page = client.get("/org/projects/ops")
    assert b"member@acme.test added to ops." in page.content and page.content.count(b">Remove</button>") == 2
    removed = client.post(f"/org/projects/ops/members/{acme.member.id}/remove")
    assert removed.status_code == 302
    assert projects_of(api, acme.member_token) == ["web"]
    # Removing someone who is not in it any more is 404, nothing changes.
    assert client.post(f"/org/projects/ops/members/{acme.member.id}/remove").status_code == 404


def test_add_member_errors_sit_next_to_the_field_and_change_nothing(api, acme, globex):
    client = signed_in(acme, acme.admin)
    for user_id, message in [(acme.member.id, "already a member of project"),
                             (globex.member.id, "No such user in this organization."),
                             ("nonsense", "Enter a valid UUID.")]:
        answer = client.post("/org/projects/web", {"user_id": str(user_id)})
        assert answer.status_code == 400
        assert any(message in error for error in field_errors(answer, "user_id")), answer.content
    assert projects_of(api, acme.member_token) == ["web"]
    assert projects_of(api, globex.member_token) == ["web"]


def test_a_member_sees_their_project_but_not_its_members_and_changes_nothing(api, acme):
    client = signed_in(acme, acme.member)
    page = client.get("/org/projects/web")
    assert page.status_code == 200 and "members" not in page.context and b">Remove</button>" not in page.content
    assert client.post("/org/projects/web", {"user_id": str(acme.admin.id)}).status_code == 403
    assert client.post(f"/org/projects/web/members/{acme.member.id}/remove").status_code == 403
    assert projects_of(api, acme.member_token) == ["web"]


def test_a_project_the_user_is_not_in_or_of_another_org_is_not_found(api, acme, globex):
    member = signed_in(acme, acme.member)
    assert member.get("/org/projects/ops").status_code == 404  # exists, but the member is not in it
    assert member.post("/org/projects/ops", {"user_id": str(acme.member.id)}).status_code == 404
    assert member.post(f"/org/projects/ops/members/{acme.admin.id}/remove").status_code == 404
    signed_in(acme, acme.admin).post("/org/projects", {"slug": "payments"})
    outsider = signed_in(globex, globex.admin)
    assert outsider.get("/org/projects/payments").status_code == 404
    assert outsider.post("/org/projects/payments", {"user_id": str(globex.member.id)}).status_code == 404
    assert outsider.post(f"/org/projects/payments/members/{acme.admin.id}/remove").status_code == 404
    assert outsider.get("/org/projects/no-such").status_code == 404
    assert projects_of(api, acme.member_token) == ["web"]


# Tokens


def test_members_see_their_own_tokens_and_admins_all(acme):
    member = signed_in(acme, acme.member).get("/org/tokens")
    assert [t.name for t in member.context["tokens"]] == ["member agent"]
    assert "user_id" not in member.context["form"].fields  # members mint for themselves only
    admin = signed_in(acme, acme.admin).get("/org/tokens")
    assert [t.name for t in admin.context["tokens"]] == ["bootstrap admin", "member agent"]
    assert admin.content.count(b">Revoke</button>") == 2


def test_a_minted_secret_is_shown_once_works_and_stops_after_revoke(api, acme):
    client = signed_in(acme, acme.member)
    minted = client.post("/org/tokens", {"name": "laptop agent", "writer": "agent", "project": "web", "once": "f1"})
    assert minted.status_code == 200
    secret = secret_of(minted)
    me = api(secret).get("/api/v1/me").json()
    assert (me["user"]["email"], me["token"]["name"], me["token"]["project"]) == (
        "member@acme.test", "laptop agent", "web")
    listed = client.get("/org/tokens")
    assert secret not in listed.content.decode() and b'class="secret"' not in listed.content
    token_id = me["token"]["id"]
    assert token_id in listed.content.decode()
    revoked = client.post(f"/org/tokens/{token_id}/revoke")
    assert revoked.status_code == 302 and revoked["Location"] == "/org/tokens"
    assert api(secret).get("/api/v1/me").status_code == 401
    after = client.get("/org/tokens")
    assert f"Token {token_id} revoked" in after.content.decode()
    assert after.content.count(b">Revoke</button>") == 1  # only the fixture's token is still revocable


def test_a_mint_form_sent_twice_mints_once(acme):
    client = signed_in(acme, acme.member)
    form = {"name": "reloaded", "writer": "agent", "project": "web", "once": "same-form"}
    first = client.post("/org/tokens", form)
    assert first.status_code == 200 and first["Cache-Control"] == "no-store" and secret_of(first)
    again = client.post("/org/tokens", form, follow=True)  # the browser's reload of the answer
    assert b"This form was sent already" in again.content and b'class="secret"' not in again.content
    assert token_names(acme).count("reloaded") == 1
    assert b'name="once"' in client.get("/org/tokens").content


def test_an_admin_mints_for_another_user(api, acme):
    answer = signed_in(acme, acme.admin).post("/org/tokens", {"once": "f2", "name": "for dana", "writer": "human", "project": "",
                                                              "user_id": str(acme.member.id)})
    assert answer.status_code == 200
    me = api(secret_of(answer)).get("/api/v1/me").json()
    assert (me["user"]["email"], me["token"]["writer"], me["token"]["project"]) == ("member@acme.test", "human", None)


def token_names(tenant) -> list[str]:
    with rls.tenant_scope(tenant.scope):
        return sorted(ApiToken.objects.values_list("name", flat=True))


@pytest.mark.parametrize("who, body, field, message", [
    ("member", {"name": "", "writer": "agent"}, "name", "This field is required."),
    ("member", {"name": "x", "writer": "root"}, "writer", "Select a valid choice."),
    ("member", {"name": "x", "writer": "agent", "project": "ops"}, "project", "Select a valid choice."),
    ("admin", {"name": "x", "writer": "agent", "project": "ops", "user_id": "MEMBER"}, "project", "No such project."),
    ("admin", {"name": "x", "writer": "agent", "user_id": "OUTSIDER"}, "user_id", "No such user"),
])
def test_mint_errors_sit_next_to_their_field_and_mint_nothing(acme, globex, who, body, field, message):
    ids = {"MEMBER": str(acme.member.id), "OUTSIDER": str(globex.member.id)}
    body = {"once": "f3", **{key: ids.get(value, value) for key, value in body.items()}}
    before = token_names(acme)
    answer = signed_in(acme, getattr(acme, who)).post("/org/tokens", body)
    assert answer.status_code == 400
    assert any(message in error for error in field_errors(answer, field)), answer.content
    assert b'class="secret"' not in answer.content
    assert token_names(acme) == before


def test_nobody_revokes_a_token_they_cannot_see(api, acme, globex):
    with rls.tenant_scope(acme.scope):
        admin_token_id = ApiToken.objects.get(name="bootstrap admin").id
    assert signed_in(acme, acme.member).post(f"/org/tokens/{admin_token_id}/revoke").status_code == 404
    assert signed_in(globex, globex.admin).post(f"/org/tokens/{admin_token_id}/revoke").status_code == 404
    assert signed_in(globex, globex.admin).post("/org/tokens/tok_nosuch/revoke").status_code == 404
    assert api(acme.admin_token).get("/api/v1/me").status_code == 200


def test_an_admin_revokes_a_members_token(api, acme):
    with rls.tenant_scope(acme.scope):
        member_token_id = ApiToken.objects.get(name="member agent").id
    assert signed_in(acme, acme.admin).post(f"/org/tokens/{member_token_id}/revoke").status_code == 302
    assert api(acme.member_token).get("/api/v1/me").status_code == 401


def test_a_post_without_the_csrf_token_is_refused(api, acme):
    client = signed_in(acme, acme.member)
    client.handler.enforce_csrf_checks = True
    answer = client.post("/org/tokens", {"name": "sneaky", "writer": "agent", "once": "f4"})
    assert answer.status_code == 403
    assert token_names(acme) == ["bootstrap admin", "member agent"]


@pytest.mark.parametrize("path, make_rows", [
    ("/org/tokens", lambda tenant, n: [
        issue_token(tenant, tenant.member, f"agent {i}", "agent", tenant.web)
        for i in range(n)]),
    ("/org/users", lambda tenant, n: [
        Membership.objects.create(org=tenant.org, user=User.objects.create_user(email=f"user{i}@acme.test"),
                                  role="member")
        for i in range(n)]),
])
def test_a_list_page_costs_the_same_queries_for_two_rows_or_twenty(acme, path, make_rows):
    client = signed_in(acme, acme.admin)
    client.get(path)  # warm: the session and the like
    with CaptureQueriesContext(connection) as few:
        assert client.get(path).status_code == 200
    with rls.tenant_scope(acme.scope):
        make_rows(acme, 18)
    with CaptureQueriesContext(connection) as many:
        page = client.get(path)
    assert page.status_code == 200 and page.content.count(b"agent " if "tokens" in path else b"@acme.test") >= 18
    assert len(many) == len(few), [q["sql"] for q in many.captured_queries]


# Settings


def test_members_read_the_settings_and_only_admins_change_them(api, acme):
    member = signed_in(acme, acme.member)
    page = member.get("/org/settings")
    assert b'name="require_supersede_reason"' in page.content and b"disabled" in page.content
    assert b">Save</button>" not in page.content
    assert member.post("/org/settings", {"require_supersede_reason": "on"}).status_code == 403
    assert setting(api, acme) is False
    admin = signed_in(acme, acme.admin)
    assert b">Save</button>" in admin.get("/org/settings").content
    saved = admin.post("/org/settings", {"require_supersede_reason": "on"})
    assert saved.status_code == 302 and saved["Location"] == "/org/settings"
    assert setting(api, acme) is True
    assert b"checked" in admin.get("/org/settings").content
    assert admin.post("/org/settings", {}).status_code == 302  # an unticked box is absent from the form
    assert setting(api, acme) is False


def test_an_oauth_grant_is_listed_with_the_tokens_and_revoked_there(api, acme):
    _, tokens = granted(acme, acme.member, resource=settings.PUBLIC_URL, access="read")
    assert api(tokens["access_token"]).get("/api/v1/me").status_code == 200
    browser = signed_in(acme, acme.member)
    page = browser.get("/org/tokens").content.decode()
    assert "Test agent" in page and "OAuth client · read only" in page
    with rls.tenant_scope(acme.scope):
        grant = ApiToken.objects.get(application__isnull=False)
    assert grant.last_used_at is not None  # the call above
    assert browser.post(f"/org/tokens/{grant.id}/revoke").status_code == 302
    assert api(tokens["access_token"]).get("/api/v1/me").status_code == 401
