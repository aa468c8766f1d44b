"""Row-level security for the tenancy tables.

Identity comes from two transaction-local settings written only by tenants/rls.py. A missing or empty setting
makes zm_current_org()/zm_current_user() NULL, and NULL never equals anything: no identity, no rows.
"""
from django.db import migrations

from tenants.migrations import _rls

IDENTITY_FUNCTIONS = """
DO $$ BEGIN
  IF NOT (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user) THEN
    RAISE EXCEPTION 'Run migrations as the owner role, which needs BYPASSRLS for the lookup functions (README).';
  END IF;
END $$;

CREATE FUNCTION zm_current_org() RETURNS uuid LANGUAGE sql STABLE
  AS $$ SELECT NULLIF(current_setting('app.org_id', true), '')::uuid $$;
CREATE FUNCTION zm_current_user() RETURNS uuid LANGUAGE sql STABLE
  AS $$ SELECT NULLIF(current_setting('app.user_id', true), '')::uuid $$;
-- Runs as the caller, so it sees only memberships of the caller's own organization.
CREATE FUNCTION zm_is_org_admin() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM tenants_membership
                 WHERE org_id = zm_current_org() AND user_id = zm_current_user() AND role = 'admin') $$;
"""

# Lookups that must happen before an identity exists. Each is SECURITY DEFINER (runs as the owner, past RLS), so
# each answers one narrow question by an exact key and returns ids only: no rows, no lists, no content.
# search_path is pinned so that a caller cannot shadow the tables, and only the app role may call them.
LOOKUP_FUNCTIONS = """
CREATE FUNCTION zm_token_identity(p_secret_hash text)
  RETURNS TABLE (token_id varchar, org_id uuid, user_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT id, org_id, user_id FROM public.tenants_apitoken
  WHERE secret_hash = p_secret_hash AND revoked_at IS NULL $$;
CREATE FUNCTION zm_org_id_for_slug(p_slug text) RETURNS uuid
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT id FROM public.tenants_organization WHERE slug = p_slug $$;
CREATE FUNCTION zm_user_id_for_email(p_email text) RETURNS uuid
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT id FROM public.tenants_user WHERE email = lower(p_email) $$;
REVOKE ALL ON FUNCTION zm_token_identity(text), zm_org_id_for_slug(text), zm_user_id_for_email(text) FROM PUBLIC;
"""

TENANT_TABLES = [
    "tenants_organization",
    "tenants_user",
    "tenants_membership",
    "tenants_project",
    "tenants_projectmember",
    "tenants_apitoken",
]

POLICIES = """
CREATE POLICY org_self ON tenants_organization
  USING (id = zm_current_org()) WITH CHECK (id = zm_current_org());

-- Users are global identities: a caller sees itself and the members of its own organization.
CREATE POLICY user_visible ON tenants_user FOR SELECT
  USING (id = zm_current_user() OR id IN (SELECT user_id FROM tenants_membership WHERE org_id = zm_current_org()));
CREATE POLICY user_insert ON tenants_user FOR INSERT WITH CHECK (zm_current_org() IS NOT NULL);
CREATE POLICY user_update ON tenants_user FOR UPDATE
  USING (id = zm_current_user() OR id IN (SELECT user_id FROM tenants_membership WHERE org_id = zm_current_org()));

CREATE POLICY membership_org ON tenants_membership
  USING (org_id = zm_current_org()) WITH CHECK (org_id = zm_current_org());

-- Members see the projects they belong to; org admins see every project of the org and alone may change them.
CREATE POLICY project_visible ON tenants_project FOR SELECT
  USING (org_id = zm_current_org() AND (
    zm_is_org_admin()
    OR id IN (SELECT project_id FROM tenants_projectmember WHERE user_id = zm_current_user())));
CREATE POLICY project_admin_write ON tenants_project
  USING (org_id = zm_current_org() AND zm_is_org_admin())
  WITH CHECK (org_id = zm_current_org() AND zm_is_org_admin());

CREATE POLICY project_member_org ON tenants_projectmember
  USING (org_id = zm_current_org()) WITH CHECK (org_id = zm_current_org());

-- A token is visible to its user and to the org's admins.
CREATE POLICY token_owner_or_admin ON tenants_apitoken
  USING (org_id = zm_current_org() AND (user_id = zm_current_user() OR zm_is_org_admin()))
  WITH CHECK (org_id = zm_current_org() AND (user_id = zm_current_user() OR zm_is_org_admin()));
"""


class Migration(migrations.Migration):
    dependencies = [("tenants", "0001_initial")]

    operations = [
        migrations.RunSQL(IDENTITY_FUNCTIONS),
        migrations.RunSQL(LOOKUP_FUNCTIONS),
        migrations.RunSQL(_rls.enable_rls(TENANT_TABLES)),
        migrations.RunSQL(POLICIES),
    ]
