"""oauthlib's validator for this server: django-oauth-toolkit's, with the two things our tables need.

1. Users are under row-level security, so the toolkit's ``grant.user`` and ``refresh_token.user`` read nothing
   without an identity. The code exchange and the refresh run inside the scope of the grant they belong to (its
   organization, its user), which is also where the grant is checked to be live: a revoked grant redeems no code and
   refreshes nothing (``invalid_grant``).
2. The grant row (tenants.ApiToken) is tied to the client's tokens through the refresh-token family: the consent page
   passes the family to the authorization code (in the grant's ``claims``, unused without OpenID Connect), the first
   refresh token takes it, and every rotation keeps it. tenants/auth.py joins an access token to its grant by it.
"""
import hashlib
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.db.models import F
from oauth2_provider.models import Grant, RefreshToken
from oauth2_provider.oauth2_validators import OAuth2Validator

from tenants import rls

FAMILY_CLAIM = "zm_family"


def _family_org(family: str | uuid.UUID | None) -> uuid.UUID | None:
    """The organization of the live grant of a token family (None: no such grant, or revoked)."""
    if not family:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT org_id FROM zm_oauth_family_org(%s)", [str(family)])
        row = cursor.fetchone()
    return row[0] if row else None


@contextmanager
def _as_grant(family, user_id) -> Iterator[bool]:
    """Inside the grant's scope, yielding whether the grant is live (outside any scope when it is not)."""
    org_id = _family_org(family)
    if org_id is None:
        yield False
        return
    with rls.tenant_scope(rls.Scope(org_id=org_id, user_id=user_id)):
        yield True


class Validator(OAuth2Validator):
    def _create_authorization_code(self, request, code, expires=None):
        family = getattr(request, FAMILY_CLAIM, None)
        if not family:  # only the consent page issues codes, and it always names the grant
            raise ValueError("An authorization code needs the grant's token family.")
        request.claims = {FAMILY_CLAIM: str(family)}
        return super()._create_authorization_code(request, code, expires)

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        grant = Grant.objects.filter(code=code, application=client).values("user_id", "claims").first()
        if grant is None:
            return False
        family = json.loads(grant["claims"] or "{}").get(FAMILY_CLAIM)
        with _as_grant(family, grant["user_id"]) as live:
            return live and super().validate_code(client_id, code, client, request, *args, **kwargs)

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        checksum = hashlib.sha256(refresh_token.encode()).hexdigest()
        # The row the toolkit will pick: the unrevoked one first (several may share a checksum once revoked).
        row = (RefreshToken.objects.filter(token_checksum=checksum).order_by(F("revoked").desc(nulls_first=True))
               .values("user_id", "token_family").first())
        if row is None:
            return False
        with _as_grant(row["token_family"], row["user_id"]) as live:
            return live and super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)

    def _create_refresh_token(self, request, refresh_token_code, access_token, previous_refresh_token):
        refresh_token = super()._create_refresh_token(request, refresh_token_code, access_token,
                                                      previous_refresh_token)
        if previous_refresh_token is None:  # the first of a family: the grant's, named by the consent page
            family = (getattr(request, "claims", None) or {}).get(FAMILY_CLAIM)
            RefreshToken.objects.filter(pk=refresh_token.pk).update(token_family=uuid.UUID(family))
            refresh_token.token_family = uuid.UUID(family)
        return refresh_token
