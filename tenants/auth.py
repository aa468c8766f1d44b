"""Who is asking: bearer tokens for agents, Django sessions for the web pages. Both end in one Principal.

A bearer token is either a minted secret (``zm_...``, its SHA-256 in tenants_apitoken) or an OAuth access token
issued by the authorization server (oauth/; its SHA-256 in django-oauth-toolkit's table, tied to a grant row in
tenants_apitoken). Both resolve through a narrow lookup function to the same ids, and from there to the same
Principal: the same row-level security, rate limit and services. An OAuth token also has an audience (RFC 8707): it
is refused on a resource it was not issued for.
"""
import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from uuid import UUID

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.db import connection
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from rest_framework import authentication, exceptions

from plumbing import rows
from plumbing.errors import Code, DomainError, Forbidden
from tenants import rls
from tenants.models import ApiToken, Membership, Organization, Project, User

SESSION_ORG_KEY = "zm_org_id"
LAST_USED_RESOLUTION = timedelta(minutes=1)  # bounds the writes that last_used_at costs on busy tokens
MINTED_PREFIX = "zm_"  # every minted secret starts so; anything else presented as a bearer token is an OAuth one
WRITE_SCOPE = "memory:write"
REALM = "zero-memory"


def resource_url(path: str = "") -> str:
    """This server as an OAuth protected resource (RFC 8707, RFC 9728): PUBLIC_URL, or PUBLIC_URL + path."""
    return settings.PUBLIC_URL + path


def metadata_url(path: str = "") -> str:
    """Where the protected-resource metadata of ``resource_url(path)`` is (RFC 9728 section 3.1)."""
    return settings.PUBLIC_URL + "/.well-known/oauth-protected-resource" + path


def audience_allows(bound: list[str], resource: str) -> bool:
    """Whether a token bound to ``bound`` may be used at ``resource``: one of them is the resource or a parent of it
    by whole path segments (a token for the server serves /mcp and /api/v1; one for /mcp serves only /mcp)."""
    for uri in bound:
        uri = uri.rstrip("/")
        if resource == uri or resource.startswith(uri + "/"):
            return True
    return False


def challenge(resource_path: str, error: str | None = None, scope: str | None = None) -> str:
    """The WWW-Authenticate value of a refusal (RFC 6750 section 3, RFC 9728 section 5.1)."""
    parts = [f'realm="{REALM}"']
    if error:
        parts.append(f'error="{error}"')
    if scope:
        parts.append(f'scope="{scope}"')
    parts.append(f'resource_metadata="{metadata_url(resource_path)}"')
    return "Bearer " + ", ".join(parts)


class InsufficientScope(DomainError):
    """A read-only OAuth grant asked to write: 403, with the challenge that tells an OAuth client what to ask for."""

    status = 403

    def __init__(self, action: str, resource_path: str = "") -> None:
        super().__init__(Code.INSUFFICIENT_SCOPE,
                         f"This token was granted memory:read only; {action} needs memory:write.",
                         {"required_scope": WRITE_SCOPE})
        self.headers = {"WWW-Authenticate": challenge(resource_path, "insufficient_scope",
                                                      f"memory:read {WRITE_SCOPE}")}


@dataclass(frozen=True)
class Principal:
    scope: rls.Scope
    user: User
    membership: Membership
    token: ApiToken | None

    @property
    def org(self):
        return self.membership.org

    @property
    def is_admin(self) -> bool:
        # An OAuth grant is never admin-capable, whoever approved it: a client reached by its URL gets memory tools.
        return self.membership.role == Membership.Role.ADMIN and not self.is_oauth

    @property
    def is_oauth(self) -> bool:
        return self.token is not None and self.token.is_oauth

    @property
    def read_only(self) -> bool:
        return self.token is not None and self.token.read_only

    @property
    def writer(self) -> str:
        return self.token.writer if self.token else ApiToken.Writer.HUMAN

    @property
    def is_watcher(self) -> bool:
        return self.writer == ApiToken.Writer.WATCHER


def require_authoritative(principal: Principal, action: str) -> None:
    """Refuse what a watcher token may not do: it adds provisional memories, it never takes away or elevates.

    Services call it before they read or write anything, so a refusal leaks nothing and stores nothing.
    """
    if principal.is_watcher:
        raise Forbidden(Code.WATCHER_FORBIDDEN, f"A watcher token cannot {action}; use an agent or human token.")


def require_write(principal: Principal, action: str, resource_path: str = "") -> None:
    """Refuse a write to a read-only OAuth grant (403 insufficient_scope), before anything is written."""
    if principal.read_only:
        raise InsufficientScope(action, resource_path)


def require_not_oauth(principal: Principal, action: str) -> None:
    """Refuse to an OAuth grant what would let it outgrow itself: minting tokens, revoking others' tokens."""
    if principal.is_oauth:
        raise Forbidden(Code.OAUTH_FORBIDDEN, f"An OAuth grant cannot {action}; sign in to the web admin to do it.")


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_identity(secret: str, resource: str | None = None) -> tuple[str, UUID, UUID] | None:
    """Resolve a secret before any identity exists, through the narrow lookup functions (migrations 0002, 0003).

    A minted secret is looked up by its hash; any other is an OAuth access token, which also has to be bound to
    ``resource`` (this server's REST API or MCP endpoint) to count.
    """
    with connection.cursor() as cursor:
        if secret.startswith(MINTED_PREFIX):
            cursor.execute("SELECT token_id, org_id, user_id FROM zm_token_identity(%s)", [hash_secret(secret)])
            return cursor.fetchone()
        cursor.execute("SELECT token_id, org_id, user_id, resource FROM zm_oauth_identity(%s)", [hash_secret(secret)])
        row = cursor.fetchone()
    if row is None:
        return None
    bound = row[3] if isinstance(row[3], list) else json.loads(row[3] or "[]")
    if resource is None or not audience_allows(bound, resource):
        return None  # issued for another resource (RFC 8707): refused like an unknown token
    return row[0], row[1], row[2]


@dataclass(frozen=True)
class Identity:
    """Who a request says it is, before anything has been read as that identity (DRF's ``request.auth``).

    Authentication only resolves the token (or session) to ids; the principal is loaded inside the request's one
    transaction, after the view's slow preparation (tenants/rls.py, the rule).
    """

    scope: rls.Scope
    token_id: str | None = None
    session_hash: str | None = None  # a session login: must still match the user's password hash

    is_authenticated = True  # what DRF's IsAuthenticated asks of request.user


def load_principal(scope: rls.Scope, token_id: str | None) -> Principal:
    """The caller as the services see it. Runs inside the caller's scope, on every request: one query."""
    if token_id is None:
        membership = Membership.objects.select_related("org", "user").filter(user_id=scope.user_id).first()
        token = None
    else:
        token = _token_with_relations(token_id)
        membership = Membership(org=token.org, user=token.user, role=token.role) if token.role else None
        _touch(token)
    if membership is None or not membership.user.is_active:
        raise exceptions.AuthenticationFailed("This user is no longer a member of the organization.")
    return Principal(scope=scope, user=membership.user, membership=membership, token=token)


@cache
def _token_read() -> tuple[str, list]:
    """The token with its org, user and project, and the user's role in the org (RLS keeps the membership to this
    org, and hides a project the user has left), with the columns read of each. Written out (plumbing/rows.py): the
    queryset's compilation cost more than the query."""
    parts = [(alias, model, rows.fields(model))
             for alias, model in (("t", ApiToken), ("o", Organization), ("u", User), ("p", Project))]
    columns = ", ".join(rows.select_list(alias, fields) for alias, _, fields in parts)
    table = {alias: model._meta.db_table for alias, model, _ in parts}
    sql = (f"SELECT {columns}, (SELECT role FROM {Membership._meta.db_table} WHERE user_id = t.user_id LIMIT 1)"
           f" FROM {table['t']} t JOIN {table['o']} o ON o.id = t.org_id JOIN {table['u']} u ON u.id = t.user_id"
           f" LEFT JOIN {table['p']} p ON p.id = t.project_id WHERE t.id = %s")
    return sql, [(model, fields) for _, model, fields in parts]


def _token_with_relations(token_id: str) -> ApiToken:
    sql, parts = _token_read()
    with connection.cursor() as cursor:
        cursor.execute(sql, [token_id])
        row = cursor.fetchone()
    if row is None:
        raise ApiToken.DoesNotExist(token_id)
    values = list(row)
    token, org, user, project = (rows.take(values, model, fields) for model, fields in parts)
    rows.attach(token, org=org, user=user, project=project)
    token.role = values[0]
    return token


def _touch(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def principal_for(identity: Identity) -> Principal:
    principal = load_principal(identity.scope, identity.token_id)
    if identity.session_hash is not None and not constant_time_compare(
        identity.session_hash, principal.user.get_session_auth_hash()
    ):
        raise exceptions.AuthenticationFailed("Your session has ended; sign in again.")
    return principal


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>``, for the REST API (``resource_path`` /api/v1) or MCP (/mcp)."""

    resource_path = "/api/v1"
    metadata_path = ""  # the REST API's 401 points at the server's protected-resource metadata

    def __init__(self, resource_path: str | None = None, metadata_path: str | None = None) -> None:
        if resource_path is not None:
            self.resource_path = resource_path
        if metadata_path is not None:
            self.metadata_path = metadata_path

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise exceptions.AuthenticationFailed("Send the token as 'Authorization: Bearer <token>'.")
        identity = token_identity(secret.strip(), resource_url(self.resource_path))
        if identity is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        token_id, org_id, user_id = identity
        identity = Identity(scope=rls.Scope(org_id=org_id, user_id=user_id), token_id=token_id)
        return identity, identity

    def authenticate_header(self, request) -> str:
        # RFC 6750 section 3.1: a request without a token gets no error code; a bad, revoked, expired or
        # wrong-audience token gets invalid_token. Either way the client learns where to start OAuth (RFC 9728).
        presented = bool(authentication.get_authorization_header(request))
        return challenge(self.metadata_path, "invalid_token" if presented else None)


def session_identity(session) -> Identity | None:
    """A signed-in web user acting in the organization chosen at sign-in (tenants/sign_in.py stores both)."""
    user_id, org_id = session.get(SESSION_KEY), session.get(SESSION_ORG_KEY)
    if not user_id or not org_id:
        return None
    return Identity(
        scope=rls.Scope(org_id=UUID(org_id), user_id=UUID(user_id)), session_hash=session.get(HASH_SESSION_KEY, "")
    )


class OrgSessionAuthentication(authentication.SessionAuthentication):
    """The web pages' session, for API calls made from a signed-in browser (CSRF enforced)."""

    def authenticate(self, request):
        identity = session_identity(request._request.session)
        if identity is None:
            return None
        self.enforce_csrf(request)
        return identity, identity
