"""Who is asking: bearer tokens for agents, Django sessions for the web pages. Both end in one Principal."""
import hashlib
from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.db import connection
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from rest_framework import authentication, exceptions

from plumbing.errors import Code, Forbidden
from tenants import rls
from tenants.models import ApiToken, Membership, User

SESSION_ORG_KEY = "zm_org_id"
LAST_USED_RESOLUTION = timedelta(minutes=1)  # bounds the writes that last_used_at costs on busy tokens


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
        return self.membership.role == Membership.Role.ADMIN

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


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_identity(secret: str) -> tuple[str, UUID, UUID] | None:
    """Resolve a secret before any identity exists, through the narrow lookup function (see migration 0002)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT token_id, org_id, user_id FROM zm_token_identity(%s)", [hash_secret(secret)])
        return cursor.fetchone()


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
        # The token with its org, user and project, and the user's role in the org (RLS keeps it to this org).
        role = Membership.objects.filter(user_id=OuterRef("user_id")).values("role")[:1]
        token = ApiToken.objects.select_related("org", "user", "project").annotate(role=Subquery(role)).get(pk=token_id)
        membership = Membership(org=token.org, user=token.user, role=token.role) if token.role else None
        _touch(token)
    if membership is None or not membership.user.is_active:
        raise exceptions.AuthenticationFailed("This user is no longer a member of the organization.")
    return Principal(scope=scope, user=membership.user, membership=membership, token=token)


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
    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise exceptions.AuthenticationFailed("Send the token as 'Authorization: Bearer <token>'.")
        identity = token_identity(secret.strip())
        if identity is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        token_id, org_id, user_id = identity
        identity = Identity(scope=rls.Scope(org_id=org_id, user_id=user_id), token_id=token_id)
        return identity, identity

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="zero-memory"'


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
