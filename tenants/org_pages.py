"""Org admin pages under /org/: users, projects and their members, tokens, settings.

Every read is a tenants/selectors.py function and every write a tenants/services.py one, as tenants/api.py does, so
a member sees and changes exactly what the API lets a member see and change: the user list and role changes are for
admins (403 page), projects and tokens of others are invisible (RLS: 404), settings are read-only for members.
"""
import secrets
from uuid import UUID

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from plumbing.errors import Code, DomainError, Forbidden, NotFound, StateConflict
from tenants import selectors, services
from tenants.models import ApiToken, Membership, Project, User
from tenants.pages import TenantPage
from tenants.sign_in import sign_in_link


def service_error_on(form: forms.Form, field: str, error: DomainError) -> None:
    """A service's refusal (duplicate slug, already a member, no such project) shown next to the field it is about."""
    form.add_error(field, error.message)


def user_choices(principal) -> list[tuple[str, str]]:
    return [(str(m.user.id), m.user.email) for m in selectors.user_list(principal=principal)]


class OrgPage(TenantPage):
    nav = "org"

    def require_admin(self) -> None:
        if not self.principal.is_admin:
            raise Forbidden(Code.ADMIN_ONLY, "Only organization admins may do this.")


class OverviewPage(OrgPage):
    template_name = "zm/org/overview.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        principal = self.principal
        return self.page({
            "title": "Organization",
            "org": principal.org,
            "projects": selectors.project_list(principal=principal).count(),
            "tokens": selectors.api_token_list(principal=principal).filter(revoked_at__isnull=True).count(),
            "users": selectors.user_list(principal=principal).count() if principal.is_admin else None,
        })


# Users (admins only, like GET/POST /api/v1/users)


class AddUserForm(forms.Form):
    email = forms.EmailField(max_length=User._meta.get_field("email").max_length)
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.Role.choices)


class UsersPage(OrgPage):
    template_name = "zm/org/users.html"
    admin_only = True

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.users(AddUserForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = AddUserForm(request.POST)
        if not form.is_valid():
            return self.users(form, status=400)
        try:
            membership = services.user_add(principal=self.principal, **form.cleaned_data)
        except StateConflict as error:  # already a member
            service_error_on(form, "email", error)
            return self.users(form, status=400)
        # The link is shown on this answer only: it is a credential, not something to keep in a notice cookie.
        link = sign_in_link(membership.user.id, self.principal.org.id)
        return self.users(AddUserForm(), added=membership, link=link)

    def users(self, add_form: AddUserForm, *, status: int = 200, role_forms: dict | None = None,
              **extra) -> HttpResponse:
        memberships = selectors.user_list(principal=self.principal)
        role_forms = role_forms or {}
        rows = [(m, role_forms.get(m.user_id) or RoleForm(initial={"role": m.role}, prefix=str(m.user_id)))
                for m in memberships]
        return self.page({"title": "Users", "rows": rows, "add_form": add_form, **extra}, status=status)


class UserRolePage(UsersPage):
    http_method_names = ("post",)

    def post(self, request: HttpRequest, user_id: UUID) -> HttpResponse:
        form = RoleForm(request.POST, prefix=str(user_id))
        if not form.is_valid():
            return self.users(AddUserForm(), status=400, role_forms={user_id: form})
        try:
            membership = services.membership_role_change(principal=self.principal, user_id=user_id,
                                                         role=form.cleaned_data["role"])
        except StateConflict as error:  # the last admin
            service_error_on(form, "role", error)
            return self.users(AddUserForm(), status=409, role_forms={user_id: form})
        messages.success(request, f"{membership.user.email} is now {membership.role}.")
        # Who demoted themselves is a member now: the user list is no longer theirs to see.
        demoted_self = user_id == self.principal.user.id and membership.role != Membership.Role.ADMIN
        return redirect("/org/" if demoted_self else "/org/users")


# Projects


class CreateProjectForm(forms.Form):
    slug = forms.SlugField(max_length=64)
    name = forms.CharField(max_length=200, required=False)


class ProjectsPage(OrgPage):
    template_name = "zm/org/projects.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.projects(CreateProjectForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        self.require_admin()  # like POST /api/v1/projects: members list, admins create
        form = CreateProjectForm(request.POST)
        if not form.is_valid():
            return self.projects(form, status=400)
        try:
            project = services.project_create(principal=self.principal, **form.cleaned_data)
        except StateConflict as error:  # duplicate slug
            service_error_on(form, "slug", error)
            return self.projects(form, status=400)
        messages.success(request, f"Project {project.slug} created.")
        return redirect(f"/org/projects/{project.slug}")

    def projects(self, form: CreateProjectForm, *, status: int = 200) -> HttpResponse:
        projects = selectors.project_list(principal=self.principal)
        return self.page({"title": "Projects", "projects": projects, "form": form}, status=status)


class AddMemberForm(forms.Form):
    # Any id is accepted here; the service says whether it is a user of the org and not yet in the project.
    user_id = forms.UUIDField(label="User", widget=forms.Select)


class ProjectPage(OrgPage):
    template_name = "zm/org/project.html"

    def project(self, slug: str) -> Project:
        # Through the same selector as the list: a project the member is not in does not exist for them.
        project = selectors.project_list(principal=self.principal).filter(slug=slug).first()
        if project is None:
            raise NotFound(Code.NOT_FOUND, "No such project.")
        return project

    def get(self, request: HttpRequest, slug: str) -> HttpResponse:
        return self.members(self.project(slug), AddMemberForm())

    def post(self, request: HttpRequest, slug: str) -> HttpResponse:
        project = self.project(slug)
        self.require_admin()  # like POST /api/v1/projects/{slug}/members
        form = AddMemberForm(request.POST)
        if form.is_valid():
            try:
                services.project_member_add(principal=self.principal, project_slug=project.slug,
                                            user_id=form.cleaned_data["user_id"])
            except (StateConflict, NotFound) as error:  # already a member; not a user of this org
                service_error_on(form, "user_id", error)
        if not form.is_valid():
            return self.members(project, form, status=400)
        user = next(email for uid, email in user_choices(self.principal) if uid == str(form.cleaned_data["user_id"]))
        messages.success(request, f"{user} added to {project.slug}.")
        return redirect(f"/org/projects/{project.slug}")

    def members(self, project: Project, form: AddMemberForm, *, status: int = 200) -> HttpResponse:
        context = {"title": f"Project {project.slug}", "project": project, "form": form}
        if self.principal.is_admin:  # the API shows project members to nobody but the admins who manage them
            members = list(selectors.project_member_list(project=project))
            inside = {str(m.user_id) for m in members}
            form.fields["user_id"].widget.choices = [
                (uid, email) for uid, email in user_choices(self.principal) if uid not in inside]
            context["members"] = members
        return self.page(context, status=status)


class ProjectMemberRemovePage(ProjectPage):
    http_method_names = ("post",)

    def post(self, request: HttpRequest, slug: str, user_id: UUID) -> HttpResponse:
        project = self.project(slug)
        self.require_admin()
        services.project_member_remove(principal=self.principal, project_slug=project.slug, user_id=user_id)
        messages.success(request, f"Removed from {project.slug}.")
        return redirect(f"/org/projects/{project.slug}")


# Tokens: members mint and revoke their own, admins anyone's (tenants/services.py decides)


class MintTokenForm(forms.Form):
    name = forms.CharField(max_length=200)
    writer = forms.ChoiceField(choices=ApiToken.Writer.choices, initial=ApiToken.Writer.AGENT)
    project = forms.ChoiceField(required=False, help_text="The token's default project (its user must be in it).")
    user_id = forms.UUIDField(label="For user", required=False, widget=forms.Select)
    # One mint per form: a reload of the answer (which sends the POST again) must not mint a second token.
    once = forms.CharField(widget=forms.HiddenInput, max_length=64)

    def __init__(self, *args, principal, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["once"].initial = secrets.token_urlsafe(16)
        projects = selectors.project_list(principal=principal).values_list("slug", flat=True)
        self.fields["project"].choices = [("", "(none)"), *((slug, slug) for slug in projects)]
        if principal.is_admin:
            self.fields["user_id"].widget.choices = user_choices(principal)
            self.fields["user_id"].initial = str(principal.user.id)
        else:
            del self.fields["user_id"]  # a member mints for themselves only


SPENT_MINT_FORMS = "zm_spent_mint_forms"  # the session's last few mint forms already used


class TokensPage(OrgPage):
    template_name = "zm/org/tokens.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.tokens(MintTokenForm(principal=self.principal))

    def post(self, request: HttpRequest) -> HttpResponse:
        form = MintTokenForm(request.POST, principal=self.principal)
        if not form.is_valid():
            return self.tokens(form, status=400)
        data = form.cleaned_data
        spent = request.session.get(SPENT_MINT_FORMS, [])
        if data["once"] in spent:
            messages.error(request, "This form was sent already (a reload?): that token was minted and its secret "
                                    "shown once. Revoke it below if the secret is lost, and mint a new one.")
            return redirect("/org/tokens")
        try:
            token, secret = services.api_token_issue(
                principal=self.principal, name=data["name"], writer=data["writer"],
                project_slug=data["project"] or None, user_id=data.get("user_id"),
            )
        except NotFound as error:  # the token's user is not in that project, or not in the org
            service_error_on(form, "project" if "project" in error.details else "user_id", error)
            return self.tokens(form, status=400)
        request.session[SPENT_MINT_FORMS] = [*spent[-19:], data["once"]]
        # The secret is on this answer only (never cached); it is stored hashed and never shown again.
        answer = self.tokens(MintTokenForm(principal=self.principal), minted=token, secret=secret)
        answer["Cache-Control"] = "no-store"
        return answer

    def tokens(self, form: MintTokenForm, *, status: int = 200, **extra) -> HttpResponse:
        tokens = selectors.api_token_list(principal=self.principal)
        return self.page({"title": "Tokens", "tokens": tokens, "form": form, **extra}, status=status)


class TokenRevokePage(TokensPage):
    http_method_names = ("post",)

    def post(self, request: HttpRequest, token_id: str) -> HttpResponse:
        services.api_token_revoke(principal=self.principal, token_id=token_id)
        messages.success(request, f"Token {token_id} revoked: it stops working at once.")
        return redirect("/org/tokens")


# Settings: everyone reads them (GET /api/v1/org/settings), admins change them


class SettingsForm(forms.Form):
    require_supersede_reason = forms.BooleanField(
        required=False, label="Require a reason on every supersede",
        help_text="A write that supersedes a memory without a reason is refused.")


class SettingsPage(OrgPage):
    template_name = "zm/org/settings.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        form = SettingsForm(initial={"require_supersede_reason": self.principal.org.require_supersede_reason})
        if not self.principal.is_admin:
            form.fields["require_supersede_reason"].disabled = True
        return self.page({"title": "Settings", "form": form})

    def post(self, request: HttpRequest) -> HttpResponse:
        self.require_admin()
        form = SettingsForm(request.POST)
        form.is_valid()  # a checkbox: absent is False, anything else True
        org = services.org_settings_update(principal=self.principal, **form.cleaned_data)
        state = "required" if org.require_supersede_reason else "optional"
        messages.success(request, f"Saved: a supersede reason is {state}.")
        return redirect("/org/settings")
