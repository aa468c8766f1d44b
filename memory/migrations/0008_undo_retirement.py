"""zm_undo_retirement: restore undoes the link that retired a memory, even one the restorer cannot see.

A link is visible only when both of its memories are (migration 0002). A member who restores their personal note
after leaving the project whose memory replaced it cannot see that link, so an UPDATE under RLS touched nothing and
the supersede stayed active in history and /stats. This function looks past RLS for exactly one
thing: the active supersedes link from a memory's ``superseded_by`` to the memory itself, and only when the caller
can see that memory and it is superseded. It answers how many links it marked undone (0 or 1), nothing else.
"""
from importlib import import_module

from django.db import migrations

# The very predicate of the memory_visible policy: "the caller can see it" means what RLS means by it.
MEMORY_VISIBLE = import_module("memory.migrations.0002_row_level_security").MEMORY_VISIBLE

UNDO_FUNCTION = f"""
CREATE FUNCTION zm_undo_retirement(p_memory_id text) RETURNS integer
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  WITH target AS (
    SELECT id, superseded_by_id FROM public.memory_memory
    WHERE id = p_memory_id AND status = 'superseded' AND {MEMORY_VISIBLE}
  ), undone AS (
    UPDATE public.memory_link l SET undone_at = now()
    FROM target t
    WHERE l.org_id = zm_current_org() AND l.dst_id = t.id AND l.src_id = t.superseded_by_id
      AND l.type = 'supersedes' AND l.retired_dst AND l.undone_at IS NULL
    RETURNING l.id
  )
  SELECT count(*)::integer FROM undone $$;
REVOKE ALL ON FUNCTION zm_undo_retirement(text) FROM PUBLIC;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0007_link_origin_choices")]

    operations = [
        migrations.RunSQL(UNDO_FUNCTION, reverse_sql="DROP FUNCTION zm_undo_retirement(text);"),
    ]
