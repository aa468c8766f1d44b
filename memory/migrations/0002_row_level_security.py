"""Row-level security for memories, links and events (identity functions: tenants migration 0002).

A memory is visible inside its organization only: a personal one to its owner, a project one to the project's
members. Links and events follow the visibility of the memories they touch.
"""
from django.db import migrations

from tenants.migrations import _rls

MEMORY_VISIBLE = """
  org_id = zm_current_org() AND (
    (scope = 'personal' AND owner_id = zm_current_user())
    OR (scope = 'project' AND project_id IN (
          SELECT project_id FROM tenants_projectmember WHERE user_id = zm_current_user())))
"""

POLICIES = f"""
CREATE POLICY memory_visible ON memory_memory USING ({MEMORY_VISIBLE}) WITH CHECK ({MEMORY_VISIBLE});

{_rls.follows_memories("link_visible", "memory_link", "src_id", "dst_id")}
{_rls.follows_memories("event_visible", "memory_event", "memory_id")}
"""

# Declared supersedes must tell "someone else's memory" (403, nothing stored) from "no such memory" (skipped).
# RLS hides the difference, so this function looks past it. It is safe because it answers one bit for one exact
# id: no content, owner, org or project. Memory ids carry 80 random bits, so the bit cannot be used to enumerate.
EXISTS_FUNCTION = """
CREATE FUNCTION zm_memory_exists(p_id text) RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT EXISTS (SELECT 1 FROM public.memory_memory WHERE id = p_id) $$;
REVOKE ALL ON FUNCTION zm_memory_exists(text) FROM PUBLIC;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial"), ("tenants", "0002_row_level_security")]

    operations = [
        migrations.RunSQL(_rls.enable_rls(["memory_memory", "memory_link", "memory_event"])),
        migrations.RunSQL(POLICIES),
        migrations.RunSQL(EXISTS_FUNCTION),
    ]
