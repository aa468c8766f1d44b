"""Every write of the tenancy domain. Callers pass a Principal; RLS is already active for it."""
import secrets
import uuid
from dataclasses import dataclass

from django.db import IntegrityError, OperationalError, connection, transaction
from psycopg.errors import LockNotAvailable
from django.utils import timezone

from plumbing.errors import Code, Forbidden, Invalid, NotFound, StateConflict
from tenants import rls
from tenants.auth import Principal, hash_secret, require_authoritative, require_not_oauth
from tenants.models import ApiToken, Membership, Organization, Project, ProjectMember, User


def id_lookup(function: str, key: str) -> uuid.UUID | None:
    # The narrow SECURITY DEFINER lookups of migration 0002: an id for an exact key, nothing more.
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s)", [key])
        return cursor.fetchone()[0]


def _user_for_email(email: str) -> User:
    """The global user with this email, created if nobody has it yet (it may belong to another organization)."""
    email = email.strip().lower()
    user_id = id_lookup("zm_user_id_for_email", email)
    if user_id is None:
        return User.objects.create_user(email=email)
    return User(id=user_id, email=email)


# Making a new organization's partitions locks the memories' table, and every query of every organization queues
# behind that lock while it waits: whatever holds the table (a backup reads it for minutes) must not stop them all.
# Shorter than the statement timeout (STATEMENT_TIMEOUT_MS), so that the error says what happened.
PARTITION_LOCK_TIMEOUT = "2s"


class StorageBusy(Exception):
    """A new organization's partitions could not be made within PARTITION_LOCK_TIMEOUT; nothing was created."""


@dataclass(frozen=True)
class Bootstrap:
    org: Organization
    user: User
    projects: list[Project]
    token: ApiToken
    secret: str


def org_bootstrap(*, org_slug: str, admin_email: str, project_slugs: list[str]) -> Bootstrap:
    """Create whatever is missing of org, admin and projects, and always issue a new admin token."""
    with transaction.atomic():
        org_id = id_lookup("zm_org_id_for_slug", org_slug) or uuid.uuid4()
        user_id = id_lookup("zm_user_id_for_email", admin_email.strip().lower()) or uuid.uuid4()
    with rls.tenant_scope(rls.Scope(org_id=org_id, user_id=user_id)):
        org, _ = Organization.objects.get_or_create(id=org_id, defaults={"slug": org_slug, "name": org_slug})
        with connection.cursor() as cursor:  # its memories' partition (memory migration 0010), made by the owner
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [PARTITION_LOCK_TIMEOUT])
            try:
                cursor.execute("SELECT zm_memory_partition(%s)", [org.id])
            except OperationalError as error:
                if isinstance(error.__cause__, LockNotAvailable):
                    raise StorageBusy(
                        f"another transaction (a backup?) held the memories' table for over {PARTITION_LOCK_TIMEOUT}:"
                        f" organization {org_slug!r} was not created. Try again when it has finished.") from error
                raise
            cursor.execute("SET LOCAL lock_timeout TO DEFAULT")
        user = User.objects.filter(pk=user_id).first() or User.objects.create_user(id=user_id, email=admin_email)
        Membership.objects.update_or_create(org=org, user=user, defaults={"role": Membership.Role.ADMIN})
        projects = []
        for slug in project_slugs:
            project, _ = Project.objects.get_or_create(org=org, slug=slug, defaults={"name": slug})
            ProjectMember.objects.get_or_create(org=org, project=project, user=user)
            projects.append(project)
        token, secret = _token_create(org=org, user=user, name="bootstrap admin", writer="human", project=None)
    return Bootstrap(org=org, user=user, projects=projects, token=token, secret=secret)


def user_add(*, principal: Principal, email: str, role: str) -> Membership:
    require_authoritative(principal, "add users")
    user = _user_for_email(email)
    if Membership.objects.filter(user_id=user.id).exists():
        raise StateConflict(Code.ALREADY_MEMBER, f"{user.email} is already a member of this organization.")
    return Membership.objects.create(org=principal.org, user=user, role=role)


def membership_role_change(*, principal: Principal, user_id: uuid.UUID, role: str) -> Membership:
    """An admin sets a member's role. The organization keeps at least one admin, so nobody locks it out of itself.

    RLS lets any member of the org write memberships; the admin check here is what guards roles (there is no REST
    endpoint for it: the web page /org/users calls this).
    """
    require_authoritative(principal, "change roles")
    if not principal.is_admin:
        raise Forbidden(Code.ADMIN_ONLY, "Only organization admins may change roles.")
    if role not in Membership.Role.values:
        raise Invalid(Code.INVALID, f"role must be one of {', '.join(Membership.Role.values)}.",
                      {"fields": {"role": ["Invalid."]}})
    # Lock every admin row first: two admins demoting each other at once must not both succeed.
    admins = list(Membership.objects.select_for_update().filter(role=Membership.Role.ADMIN).values_list("user_id",
                                                                                                       flat=True))
    membership = Membership.objects.select_for_update().select_related("user").filter(user_id=user_id).first()
    if membership is None:
        raise NotFound(Code.NOT_FOUND, "No such user in this organization.")
    if membership.role == Membership.Role.ADMIN and role != Membership.Role.ADMIN and admins == [membership.user_id]:
        raise StateConflict(Code.LAST_ADMIN, f"{membership.user.email} is the organization's last admin: make another "
                       "user an admin first.")
    if membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


def project_create(*, principal: Principal, slug: str, name: str) -> Project:
    require_authoritative(principal, "create projects")
    try:
        with transaction.atomic():
            project = Project.objects.create(org=principal.org, slug=slug, name=name or slug)
    except IntegrityError:
        raise StateConflict(Code.DUPLICATE_SLUG, f"A project with slug '{slug}' already exists.", {"slug": slug})
    ProjectMember.objects.create(org=principal.org, project=project, user=principal.user)
    return project


def _project_for_admin(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise NotFound(Code.NOT_FOUND, "No such project.")
    return project


def _member_user(user_id) -> User:
    membership = Membership.objects.select_related("user").filter(user_id=user_id).first()
    if membership is None:
        raise NotFound(Code.NOT_FOUND, "No such user in this organization.")
    return membership.user


def project_member_add(*, principal: Principal, project_slug: str, user_id: uuid.UUID) -> ProjectMember:
    require_authoritative(principal, "add project members")
    project = _project_for_admin(project_slug)
    user = _member_user(user_id)
    try:
        with transaction.atomic():
            return ProjectMember.objects.create(org=principal.org, project=project, user=user)
    except IntegrityError:
        raise StateConflict(Code.ALREADY_MEMBER, f"{user.email} is already a member of project '{project.slug}'.")


def project_member_remove(*, principal: Principal, project_slug: str, user_id: uuid.UUID) -> None:
    require_authoritative(principal, "remove project members")
    project = _project_for_admin(project_slug)
    deleted, _ = ProjectMember.objects.filter(project=project, user_id=user_id).delete()
    if not deleted:
        raise NotFound(Code.NOT_FOUND, "That user is not a member of this project.")


def _token_create(*, org: Organization, user: User, name: str, writer: str, project: Project | None):
    secret = "zm_" + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        org=org, user=user, name=name, writer=writer, project=project, secret_hash=hash_secret(secret)
    )
    return token, secret


def api_token_issue(
    *, principal: Principal, name: str, writer: str, project_slug: str | None, user_id: uuid.UUID | None
) -> tuple[ApiToken, str]:
    """Mint a token: members for themselves, admins for any user of the org. Returns the token and its secret."""
    require_not_oauth(principal, "mint tokens")  # a minted token of an admin would be admin-capable: an escalation
    if writer != ApiToken.Writer.WATCHER:
        require_authoritative(principal, f"mint {writer} tokens (only watcher tokens)")
    if user_id not in (None, principal.user.id):  # another user's token reaches that user's personal memories
        require_authoritative(principal, "mint tokens for another user")
    if user_id is None or user_id == principal.user.id:
        user = principal.user
    elif principal.is_admin:
        user = _member_user(user_id)
    else:
        raise Forbidden(Code.FORBIDDEN, "Members may mint tokens only for themselves.")
    project = None
    if project_slug:
        # The token's user must belong to its default project; otherwise the project "does not exist" for them.
        project = Project.objects.filter(slug=project_slug, members__user=user).first()
        if project is None:
            raise NotFound(Code.NOT_FOUND, "No such project.", {"project": project_slug})
    return _token_create(org=principal.org, user=user, name=name, writer=writer, project=project)


def oauth_grant_create(*, principal: Principal, application_id: int, name: str, project_slug: str | None,
                       read_only: bool) -> ApiToken:
    """A person's approval of an OAuth client (oauth/consent.py): an agent token of theirs without a secret, tied to
    the client and to the refresh-token family its tokens will carry. It lists and revokes like a minted token."""
    require_authoritative(principal, "approve OAuth clients")
    require_not_oauth(principal, "approve OAuth clients")
    project = None
    if project_slug:
        project = Project.objects.filter(slug=project_slug, members__user=principal.user).first()
        if project is None:
            raise NotFound(Code.NOT_FOUND, "No such project.", {"project": project_slug})
    return ApiToken.objects.create(
        org=principal.org, user=principal.user, name=name[:200], writer=ApiToken.Writer.AGENT, project=project,
        application_id=application_id, read_only=read_only, oauth_family=uuid.uuid4(),
    )


def api_token_revoke(*, principal: Principal, token_id: str) -> None:
    """Revoke at once: authentication checks revoked_at on every request. Revoking twice changes nothing."""
    if principal.token is None or token_id != principal.token.id:
        require_authoritative(principal, "revoke other tokens (only itself)")
        require_not_oauth(principal, "revoke other tokens (only itself)")
    token = ApiToken.objects.filter(pk=token_id).first()  # RLS: own tokens, or all of the org for admins
    if token is None:
        raise NotFound(Code.NOT_FOUND, "No such token.")
    if token.revoked_at is None:
        ApiToken.objects.filter(pk=token_id).update(revoked_at=timezone.now())


def org_settings_update(*, principal: Principal, require_supersede_reason: bool) -> Organization:
    require_authoritative(principal, "change the organization's settings")
    org = Organization.objects.select_for_update().get(pk=principal.org.pk)
    org.require_supersede_reason = require_supersede_reason
    org.save(update_fields=["require_supersede_reason"])
    return org
