"""Reads of the tenancy domain. RLS already limits every query to the caller's organization."""
from django.db.models import QuerySet

from tenants.auth import Principal
from tenants.models import ApiToken, Membership, Project, ProjectMember


def project_list(*, principal: Principal) -> QuerySet[Project]:
    # RLS shows members only their projects and admins all of them; the explicit filter says the same in code.
    projects = Project.objects.order_by("slug")
    if not principal.is_admin:
        projects = projects.filter(members__user_id=principal.user.id)
    return projects


def user_list(*, principal: Principal) -> QuerySet[Membership]:
    return Membership.objects.select_related("user").order_by("user__email")


def api_token_list(*, principal: Principal) -> QuerySet[ApiToken]:
    tokens = ApiToken.objects.select_related("user", "project").order_by("created_at")
    if not principal.is_admin:
        tokens = tokens.filter(user_id=principal.user.id)
    return tokens


def project_member_list(*, project: Project) -> QuerySet[ProjectMember]:
    """Who belongs to a project the caller can see (the caller resolved it through project_list)."""
    return ProjectMember.objects.filter(project=project).select_related("user").order_by("user__email")
