"""Tenants as the tests build them (tests/conftest.py's fixtures use them), and the clean-up of committed tests."""
from dataclasses import dataclass

from django.apps import apps
from django.db import connections

from tenants import rls
from tenants.auth import load_principal
from tenants.models import ApiToken, Organization, Project, User
from tenants.services import api_token_issue, org_bootstrap, project_member_add, user_add


@dataclass
class Tenant:
    """One organization as the tests see it: an admin, a member, two projects and tokens for each."""

    org: Organization
    admin: User
    member: User
    web: Project
    ops: Project
    admin_token: str
    member_token: str

    @property
    def scope(self) -> rls.Scope:
        return rls.Scope(org_id=self.org.id, user_id=self.admin.id)


def build_tenant(slug: str) -> Tenant:
    boot = org_bootstrap(org_slug=slug, admin_email=f"admin@{slug}.test", project_slugs=["web", "ops"])
    scope = rls.Scope(org_id=boot.org.id, user_id=boot.user.id)
    with rls.tenant_scope(scope):
        principal = load_principal(scope, token_id=None)
        member = user_add(principal=principal, email=f"member@{slug}.test", role="member").user
        project_member_add(principal=principal, project_slug="web", user_id=member.id)
        _, member_secret = api_token_issue(
            principal=principal, name="member agent", writer=ApiToken.Writer.AGENT, project_slug="web",
            user_id=member.id,
        )
        web, ops = Project.objects.get(slug="web"), Project.objects.get(slug="ops")
    return Tenant(boot.org, boot.user, member, web, ops, boot.secret, member_secret)


def issue_token(tenant: Tenant, user: User, name: str, writer: str, project: Project | None = None):
    """A token for ``user`` issued by the tenant's admin (tenants.services.api_token_issue): (token, secret).

    Call it inside the tenant's scope."""
    admin = load_principal(rls.Scope(org_id=tenant.org.id, user_id=tenant.admin.id), token_id=None)
    return api_token_issue(principal=admin, name=name, writer=writer, project_slug=project.slug if project else None,
                           user_id=user.id)


def truncate_all_tables() -> None:
    """Empty every table as the owner role: the app role may not (and RLS would hide rows from it anyway)."""
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            "SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables WHERE schemaname = 'public'"
            " AND tablename NOT IN ('django_migrations', 'django_content_type', 'auth_permission')"
        )
        cursor.execute(f"TRUNCATE {cursor.fetchone()[0]} CASCADE")


def tenant_tables() -> list[str]:
    """Every table of our apps: each one is tenant data (users included: visible only to fellow members)."""
    return sorted(
        model._meta.db_table
        for app in ("tenants", "memory", "hygiene")
        for model in apps.get_app_config(app).get_models()
    )
