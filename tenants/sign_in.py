"""Signing in to the web pages: passwords, one-time links, and the throttle on failed attempts.

A sign-in ends in a Django session that holds the user and the organization chosen at sign-in; from then on the
session resolves to an ``Identity`` like a token does (tenants/auth.py) and every page runs as that identity.

One-time links need no table: a link is a signed, timestamped value naming the organization, the user and a digest
of the user's password hash and last sign-in. Using the link signs the user in (which sets ``last_login``) and may
set a password, so the digest no longer matches and the link is spent; it also ends after SIGN_IN_LINK_HOURS.
"""
from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.hashers import make_password
from django.core import signing
from django.utils.crypto import constant_time_compare, salted_hmac

from plumbing.errors import Code, DomainError
from telemetry import metrics
from tenants import rls
from tenants.auth import SESSION_ORG_KEY
from tenants.models import Membership, User
from tenants.ratelimit import limiter_for
from tenants.services import id_lookup

LINK_SALT = "zero-memory.sign-in-link"


class SignInRefused(DomainError):
    status = 429


@dataclass(frozen=True)
class Claim:
    """Who a sign-in link or a password form says the person is, before anything was read as them."""

    scope: rls.Scope


def _link_state(user: User) -> str:
    return salted_hmac(LINK_SALT, f"{user.password}|{user.last_login}", algorithm="sha256").hexdigest()[:32]


def sign_in_link(user_id: UUID, org_id: UUID, *, may_reset: bool = False) -> str:
    """An absolute one-time sign-in URL for a member of the current scope's organization.

    A person has one password for every organization they belong to, so only an operator's link (``may_reset``:
    manage.py sign_in_link and bootstrap, run on the server) may replace an existing one. An organization admin's
    link (adding a user on /org/users) sets a password only for someone who has none: otherwise the admin of one
    organization could take over a user's account in every other."""
    user = User.objects.get(pk=user_id, memberships__org_id=org_id)
    payload = {"o": str(org_id), "u": str(user.pk), "s": _link_state(user), "r": may_reset}
    token = signing.dumps(payload, salt=LINK_SALT)
    return f"{settings.PUBLIC_URL}/sign-in/{token}"


def link_claim(token: str) -> tuple[Claim, str, bool] | None:
    """The claim of a link that is genuine and not expired (whether it is spent is known only as the user), its
    state, and whether it may replace an existing password."""
    try:
        payload = signing.loads(token, salt=LINK_SALT, max_age=timedelta(hours=settings.SIGN_IN_LINK_HOURS))
        claim = Claim(rls.Scope(org_id=UUID(payload["o"]), user_id=UUID(payload["u"])))
        return claim, str(payload["s"]), payload.get("r") is True
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None


def link_user(state: str) -> User | None:
    """In the claim's scope: the member the link was made for, if the link is not spent yet."""
    scope = rls.require_scope()
    user = _member(scope)
    if user is None or not constant_time_compare(state, _link_state(user)):
        return None
    return user


def _member(scope: rls.Scope) -> User | None:
    user = User.objects.filter(pk=scope.user_id, is_active=True).first()
    if user is None or not Membership.objects.filter(user_id=user.pk).exists():
        return None
    return user


def password_claim(org_slug: str, email: str) -> Claim | None:
    org_id = id_lookup("zm_org_id_for_slug", org_slug.strip())
    user_id = id_lookup("zm_user_id_for_email", email.strip().lower())
    if org_id is None or user_id is None:
        return None
    return Claim(rls.Scope(org_id=org_id, user_id=user_id))


def password_user(claim: Claim | None, password: str) -> User | None:
    """In the claim's scope (or none): the member whose password this is. Costs one password hash either way, so
    the time taken does not tell whether the account exists."""
    user = _member(claim.scope) if claim else None
    if user is None or not user.has_usable_password():
        make_password(password)
        return None
    return user if user.check_password(password) else None


def session_start(request, user: User, org_id: UUID) -> None:
    """Sign the user in (inside the claim's scope: login records last_login) and remember the organization."""
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    request.session[SESSION_ORG_KEY] = str(org_id)


# Failed password sign-ins, counted in Redis per account and per client address (tenants/ratelimit.py's windows).


def _failure_keys(email: str, address: str) -> list[tuple[str, int]]:
    limit = settings.SIGN_IN_FAILURES
    # An address may try several accounts (a shared office), but not spray many.
    return [(f"zm:sign-in:account:{email.strip().lower()}", limit), (f"zm:sign-in:address:{address}", limit * 4)]


def failures_check(email: str, address: str) -> None:
    """Refuse a password sign-in while the account or the address is over its failure limit."""
    limiter = limiter_for(settings.REDIS_URL)
    for key, limit in _failure_keys(email, address):
        count = limiter.peek(key)
        if count is not None and count >= limit:
            minutes = settings.SIGN_IN_FAILURE_MINUTES
            metrics.rate_limited.labels("sign_in").inc()
            raise SignInRefused(
                Code.RATE_LIMITED,
                f"Too many failed sign-ins. Wait up to {minutes} minutes, or ask an admin for a sign-in link.",
            )


def failure_record(email: str, address: str) -> None:
    window_ms = settings.SIGN_IN_FAILURE_MINUTES * 60 * 1000
    for key, _ in _failure_keys(email, address):
        limiter_for(settings.REDIS_URL).count(key, window_ms)
