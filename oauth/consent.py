"""The authorize endpoint (RFC 6749 section 4.1.1): a signed-in person approves or denies a client.

Behind the web sign-in (a person who is not signed in is sent there and back). Every OAuth parameter is read from the
query string and checked by oauthlib on the page and again on the approval, which posts to the same address, so a
hidden field cannot be swapped; the form itself carries only the person's choices and Django's CSRF token. The rules
beyond oauthlib's: PKCE with S256 (plain refused), and a ``resource`` (RFC 8707) that is this server or its MCP
endpoint.

The person picks one of their organizations, optionally a project of theirs (the token's default project), and read
or read-and-write access (never more than the client asked for; never admin powers: tenants/auth.py's Principal
of an OAuth grant is never admin-capable). Approval writes the grant (tenants.services.oauth_grant_create) and the
authorization code in one transaction as that person in that organization; denial sends the client
``error=access_denied``.
"""
import re
from urllib.parse import urlsplit
from uuid import UUID

from django import forms
from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import View
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.http import OAuth2ResponseRedirect
from oauth2_provider.models import Application
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views.mixins import OAuthLibMixin
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error, InvalidRequestError
from rest_framework.exceptions import AuthenticationFailed

from oauth import throttle
from oauth.validator import FAMILY_CLAIM
from plumbing.errors import PageMethods, error_page
from plumbing.parsers import text_problem
from plumbing.security import POLICY
from tenants import rls, selectors, services
from tenants.auth import Principal, load_principal, principal_for, resource_url, session_identity

READ, WRITE = "memory:read", "memory:write"


def allowed_resources() -> set[str]:
    return {resource_url(), resource_url("/mcp")}


class ConsentForm(forms.Form):
    target = forms.ChoiceField(label="Organization and project")
    access = forms.ChoiceField(widget=forms.RadioSelect)

    def __init__(self, *args, targets: list[tuple[str, str]], scopes: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["target"].choices = targets
        access = [("read", "Read only: recall and read memories (memory:read)")]
        if WRITE in scopes:
            access.append(("write", "Read and write: also remember, forget, link and check (memory:read memory:write)"))
        self.fields["access"].choices = access
        self.fields["access"].initial = access[-1][0]


class AuthorizeView(PageMethods, OAuthLibMixin, View):
    http_method_names = ("get", "post")
    template_name = "zm/oauth/consent.html"

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if (seconds := throttle.endpoint_retry_after(request, "authorize")) is not None:
            return error_page(request, 429, f"Too many sign-in requests from this address; try again in {seconds} s.",
                              headers={"Retry-After": str(seconds)})
        identity = session_identity(request.session)
        if identity is None:
            return redirect_to_login(request.get_full_path())
        try:
            with rls.tenant_scope(identity.scope):
                self.person: Principal = principal_for(identity)
        except AuthenticationFailed:  # left the organization or changed password since signing in
            logout(request)
            return redirect_to_login(request.get_full_path())
        if any(text_problem(value) for key, values in request.GET.lists() for value in [key, *values]):
            return error_page(request, 400, "This authorization request contains characters that are not allowed.")
        return super().dispatch(request, *args, **kwargs)

    def get(self, request: HttpRequest) -> HttpResponse:
        checked = self.checked_request(request)
        if isinstance(checked, HttpResponse):
            return checked
        application, scopes, _ = checked
        return self.consent(application, scopes, ConsentForm(targets=self.targets(), scopes=scopes))

    def post(self, request: HttpRequest) -> HttpResponse:
        checked = self.checked_request(request)
        if isinstance(checked, HttpResponse):
            return checked
        application, scopes, credentials = checked
        if request.POST.get("decision") != "allow":
            try:
                self.create_authorization_response(request, " ".join(scopes), credentials, allow=False)
            except OAuthToolkitError as error:  # access_denied, sent back to the client
                return self.refuse(error)
        form = ConsentForm(request.POST, targets=self.targets(), scopes=scopes)
        if not form.is_valid():
            return self.consent(application, scopes, form, status=400)
        org_id, _, project_slug = form.cleaned_data["target"].partition("/")
        read_only = form.cleaned_data["access"] == "read"
        granted = [READ] if read_only else scopes
        scope = rls.Scope(org_id=UUID(org_id), user_id=self.person.user.id)
        try:
            return self.approve(request, scope, application, credentials, granted, project_slug, read_only)
        except AuthenticationFailed:  # left that organization since the page was shown
            return error_page(request, 400, "You are no longer a member of that organization.", principal=self.person)

    def approve(self, request: HttpRequest, scope: rls.Scope, application: Application, credentials: dict,
                granted: list[str], project_slug: str, read_only: bool) -> HttpResponse:
        """The grant and its code, in one transaction as the person in the chosen organization."""
        with rls.tenant_scope(scope):
            principal = load_principal(scope, None)
            grant = services.oauth_grant_create(principal=principal, application_id=application.id,
                                                name=application.name or "OAuth client",
                                                project_slug=project_slug or None, read_only=read_only)
            request.user = principal.user  # the toolkit stores the code as request.user's
            try:
                uri, _, _, _ = self.create_authorization_response(
                    request, " ".join(granted), {**credentials, FAMILY_CLAIM: str(grant.oauth_family)}, allow=True)
            except OAuthToolkitError as error:
                transaction.set_rollback(True)  # no grant without its code
                return self.refuse(error)
        return OAuth2ResponseRedirect(uri, oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES)

    def checked_request(self, request: HttpRequest):
        """(client, requested scopes, credentials for oauthlib), or the refusal to answer with."""
        try:
            scopes, credentials = self.validate_authorization_request(request)
        except OAuthToolkitError as error:
            return self.refuse(error)
        state, redirect_uri = credentials.get("state"), credentials["redirect_uri"]
        if credentials.get("code_challenge_method") != "S256":
            return self.refuse(OAuthToolkitError(InvalidRequestError(
                description="PKCE with code_challenge_method=S256 is required (plain is not accepted).",
                state=state), redirect_uri=redirect_uri))
        resources = request.GET.getlist("resource")
        if not resources or any(uri.rstrip("/") not in allowed_resources() for uri in resources):
            return self.refuse(OAuthToolkitError(CustomOAuth2Error(
                error="invalid_target", state=state,
                description=f"resource must be {resource_url('/mcp')} or {resource_url()} (RFC 8707)."),
                redirect_uri=redirect_uri))
        kept = {key: credentials[key] for key in ("client_id", "redirect_uri", "response_type", "state",
                                                   "code_challenge", "code_challenge_method") if credentials.get(key)}
        kept["resource"] = resources
        return Application.objects.get(client_id=credentials["client_id"]), scopes, kept

    def refuse(self, error: OAuthToolkitError) -> HttpResponse:
        """Back to the client with the error when its redirect URI is known to be its own; otherwise a page here."""
        redirect, answer = self.error_response(error)
        if redirect and answer["error"].redirect_uri:
            return OAuth2ResponseRedirect(answer["url"], oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES)
        description = answer["error"].description or answer["error"].error
        return error_page(self.request, 400, f"This authorization request cannot be used: {description}",
                          principal=self.person)

    def targets(self) -> list[tuple[str, str]]:
        """What the person may grant: each of their organizations, alone or with one of their projects there."""
        user_id = self.person.user.id
        with connection.cursor() as cursor:
            cursor.execute("SELECT org_id, slug FROM zm_user_orgs(%s)", [user_id])
            orgs = cursor.fetchall()
        choices = []
        for org_id, slug in orgs:
            scope = rls.Scope(org_id=org_id, user_id=user_id)
            try:
                with rls.tenant_scope(scope):
                    principal = load_principal(scope, None)
                    projects = list(selectors.project_list(principal=principal).filter(members__user_id=user_id)
                                    .values_list("slug", flat=True))
            except AuthenticationFailed:  # a deactivated account
                continue
            choices.append((str(org_id), f"{slug} (no default project)"))
            choices.extend((f"{org_id}/{project}", f"{slug} · project {project}") for project in projects)
        return choices

    def consent(self, application: Application, scopes: list[str], form: ConsentForm, *,
                status: int = 200) -> HttpResponse:
        redirect_host = urlsplit(self.request.GET.get("redirect_uri", "")).netloc
        context = {"title": "Allow access", "principal": self.person, "application": application,
                   "redirect_host": redirect_host, "scopes": scopes, "form": form,
                   "public_url": settings.PUBLIC_URL}
        answer = render(self.request, self.template_name, context, status=status)
        answer["Cache-Control"] = "no-store"
        # The answer to this form is a redirect to the client, which a browser lets through only if form-action
        # names its origin: the redirect URI's, registered by the client and matched by oauthlib above.
        parts = urlsplit(self.request.GET.get("redirect_uri", ""))
        origin = f"{parts.scheme}://{parts.netloc}"
        if re.fullmatch(r"https?://[A-Za-z0-9.\-\[\]:]+", origin):
            answer["Content-Security-Policy"] = POLICY.replace("form-action 'self'", f"form-action 'self' {origin}")
        return answer
