"""zm_purge_memories: the privacy purge, the one deletion path (API.md, "Privacy purge").

The app role has no DELETE on memories (tenants/db_roles.py) and may only append events. A purge goes through this
owner-defined function, which refuses unless the caller is an admin of the current organization and can see every
memory it is asked to purge (the memory_visible predicate of migration 0002). For those memories it removes:

- the memory rows (content, embedding, metadata, source) and their links (both ends), checks, conflicts, verdicts and
  review rows;
- the text of their events: each payload becomes {"redacted": true}; the rows stay, and one ``purged`` event per
  memory records who purged it and why (actor, token, reason; no content). Events of *other* memories whose payload
  names a purged id (a predecessor's ``superseded`` event with the supersede reason, a ``linked`` event) are
  redacted too;
- pointers from the memories that stay: a predecessor's ``superseded_by`` and ``closed_by`` are cleared (it stays
  retired: a purge brings nothing back to life) and its ``invalidated_reason``, the purged successor's supersede
  reason, is replaced; a check that named a purged memory as ``corrected_by`` keeps its outcome and detail.

The events' foreign key to the memory goes (the audit rows outlive it); every other reference is removed above, so the
deferred constraints hold at commit. tests/memory/test_purge.py checks that no other table references memories.
"""
from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

MEMORY_VISIBLE = import_module("memory.migrations.0002_row_level_security").MEMORY_VISIBLE

PURGE_FUNCTION = f"""
CREATE FUNCTION zm_purge_memories(p_ids text[], p_reason text, p_token_id text) RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
  v_org uuid := zm_current_org();
  v_user uuid := zm_current_user();
  v_ids text[];
  v_others text[];
  v_token varchar;
BEGIN
  IF v_org IS NULL OR v_user IS NULL OR NOT zm_is_org_admin() THEN
    RAISE EXCEPTION 'zm_purge_memories: only an admin of the organization may purge memories'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF p_reason IS NULL OR btrim(p_reason) = '' THEN
    RAISE EXCEPTION 'zm_purge_memories: a reason is required' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  -- Exactly the requested memories, each one visible to the caller; locked until the transaction ends.
  SELECT coalesce(array_agg(id ORDER BY id), '{{}}') INTO v_ids FROM (
    SELECT id FROM public.memory_memory WHERE id = ANY(p_ids) AND {MEMORY_VISIBLE} ORDER BY id FOR UPDATE
  ) visible;
  IF cardinality(v_ids) = 0
     OR cardinality(v_ids) <> (SELECT count(DISTINCT requested) FROM unnest(p_ids) requested) THEN
    RAISE EXCEPTION 'zm_purge_memories: no such memory' USING ERRCODE = 'no_data_found';
  END IF;

  -- The memories that stay but point at a purged one (their events may name it).
  SELECT coalesce(array_agg(DISTINCT other), '{{}}') INTO v_others FROM (
    SELECT CASE WHEN src_id = ANY(v_ids) THEN dst_id ELSE src_id END AS other FROM public.memory_link
      WHERE org_id = v_org AND (src_id = ANY(v_ids) OR dst_id = ANY(v_ids))
    UNION SELECT id FROM public.memory_memory
      WHERE org_id = v_org AND (superseded_by_id = ANY(v_ids) OR closed_by_id = ANY(v_ids))
    UNION SELECT memory_id FROM public.memory_check WHERE org_id = v_org AND corrected_by_id = ANY(v_ids)
  ) touching WHERE other <> ALL(v_ids);

  UPDATE public.memory_event SET payload = '{{"redacted": true}}'::jsonb
    WHERE org_id = v_org AND memory_id = ANY(v_ids);
  UPDATE public.memory_event SET payload = '{{"redacted": true}}'::jsonb
    WHERE org_id = v_org AND memory_id = ANY(v_others)
      AND EXISTS (SELECT 1 FROM jsonb_each_text(payload) kv WHERE kv.value = ANY(v_ids));
  -- The audit row: who (the token only if it is the caller's own) and why.
  SELECT id INTO v_token FROM public.tenants_apitoken WHERE id = p_token_id AND org_id = v_org AND user_id = v_user;
  INSERT INTO public.memory_event (org_id, memory_id, action, actor_id, token_id, payload, created_at)
    SELECT v_org, purged, 'purged', v_user, v_token, jsonb_build_object('reason', p_reason), now()
    FROM unnest(v_ids) purged;

  DELETE FROM public.memory_link WHERE org_id = v_org AND (src_id = ANY(v_ids) OR dst_id = ANY(v_ids));
  DELETE FROM public.memory_check WHERE org_id = v_org AND memory_id = ANY(v_ids);
  UPDATE public.memory_check SET corrected_by_id = NULL WHERE org_id = v_org AND corrected_by_id = ANY(v_ids);
  DELETE FROM public.hygiene_conflict WHERE org_id = v_org AND (a_id = ANY(v_ids) OR b_id = ANY(v_ids));
  DELETE FROM public.hygiene_verdict WHERE org_id = v_org AND (memory_id = ANY(v_ids) OR other_id = ANY(v_ids));
  DELETE FROM public.hygiene_review WHERE org_id = v_org AND memory_id = ANY(v_ids);
  UPDATE public.memory_memory SET superseded_by_id = NULL, invalidated_reason = 'Its successor was purged.'
    WHERE org_id = v_org AND superseded_by_id = ANY(v_ids) AND id <> ALL(v_ids);
  UPDATE public.memory_memory SET closed_by_id = NULL
    WHERE org_id = v_org AND closed_by_id = ANY(v_ids) AND id <> ALL(v_ids);
  DELETE FROM public.memory_memory WHERE id = ANY(v_ids);
  RETURN cardinality(v_ids);
END $$;
REVOKE ALL ON FUNCTION zm_purge_memories(text[], text, text) FROM PUBLIC;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_undo_retirement"), ("hygiene", "0004_review_verdict_rls")]

    operations = [
        migrations.AlterField(
            model_name="event",
            name="action",
            field=models.CharField(choices=[
                ("remembered", "Remembered"), ("absorbed", "Absorbed"), ("superseded", "Superseded"),
                ("forgot", "Forgot"), ("restored", "Restored"), ("linked", "Linked"),
                ("loop_closed", "Loop Closed"), ("loop_reopened", "Loop Reopened"), ("checked", "Checked"),
                ("source_version", "Source Version"), ("purged", "Purged"),
            ], max_length=32),
        ),
        migrations.AlterField(
            model_name="event",
            name="memory",
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING,
                                    related_name="events", to="memory.memory"),
        ),
        migrations.RunSQL(PURGE_FUNCTION, reverse_sql="DROP FUNCTION zm_purge_memories(text[], text, text);"),
    ]
