"""Grants to OAuth clients (oauth/): an ApiToken row without a secret, tied to a django-oauth-toolkit client and to
the family of refresh tokens issued under it, and the lookups that resolve an OAuth access token before an identity
exists (SECURITY DEFINER, narrow, by exact key, ids only: the rule of migration 0002)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# An access token counts while it has not expired, its refresh token's family is a grant's, and the grant is not
# revoked: revoking the grant (the tokens page, DELETE /api/v1/tokens/{id}) ends every token of the family at once.
# A live access token always has exactly one refresh token pointing at it (every grant here issues refresh tokens;
# a rotation clears the old one's pointer).
LOOKUP_FUNCTIONS = """
CREATE FUNCTION zm_oauth_identity(p_checksum text)
  RETURNS TABLE (token_id varchar, org_id uuid, user_id uuid, resource jsonb, scope text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT t.id, t.org_id, t.user_id, a.resource, a.scope
  FROM public.oauth2_provider_accesstoken a
  JOIN public.oauth2_provider_refreshtoken r ON r.access_token_id = a.id AND r.revoked IS NULL
  JOIN public.tenants_apitoken t ON t.oauth_family = r.token_family
  WHERE a.token_checksum = p_checksum AND a.expires > now() AND t.revoked_at IS NULL $$;
-- The organization of the live grant of a token family: a revoked grant redeems no code and refreshes nothing.
CREATE FUNCTION zm_oauth_family_org(p_family uuid) RETURNS TABLE (org_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT org_id FROM public.tenants_apitoken WHERE oauth_family = p_family AND revoked_at IS NULL $$;
-- The organizations a signed-in person may grant a client access to: their own memberships, by their own id.
CREATE FUNCTION zm_user_orgs(p_user_id uuid) RETURNS TABLE (org_id uuid, slug varchar)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT o.id, o.slug FROM public.tenants_membership m JOIN public.tenants_organization o ON o.id = m.org_id
  WHERE m.user_id = p_user_id ORDER BY o.slug $$;
REVOKE ALL ON FUNCTION zm_oauth_identity(text), zm_oauth_family_org(uuid), zm_user_orgs(uuid) FROM PUBLIC;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('tenants', '0002_row_level_security'),
        migrations.swappable_dependency(settings.OAUTH2_PROVIDER_APPLICATION_MODEL),
        # The lookups below read the toolkit's token tables as they are from this migration on.
        ("oauth2_provider", "0022_refreshtoken_token_family_index"),
    ]

    operations = [
        migrations.AddField(
            model_name='apitoken',
            name='application',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.OAUTH2_PROVIDER_APPLICATION_MODEL, db_constraint=False),
        ),
        migrations.AddField(
            model_name='apitoken',
            name='oauth_family',
            field=models.UUIDField(blank=True, null=True, unique=True),
        ),
        migrations.AddField(
            model_name='apitoken',
            name='read_only',
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name='apitoken',
            name='secret_hash',
            field=models.CharField(blank=True, max_length=64, null=True, unique=True),
        ),
        migrations.RunSQL(LOOKUP_FUNCTIONS, "DROP FUNCTION zm_oauth_identity(text); DROP FUNCTION zm_oauth_family_org(uuid);"
                                            " DROP FUNCTION zm_user_orgs(uuid);"),
    ]
