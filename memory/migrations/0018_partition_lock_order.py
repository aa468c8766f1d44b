"""``zm_memory_partition`` takes the memories' table before the passages' table, as every query does.

It used to make the passage partition first. ``CREATE TABLE ... PARTITION OF`` locks its parent for the whole
transaction. So it held ``memory_passage`` and waited for ``memory_memory``. Meanwhile a recall or a write in another
organization held ``memory_memory`` and waited for ``memory_passage``: a deadlock. Postgres broke it after a second by
failing one of the two, usually the new organization's bootstrap. Now, when something is missing, the function first
locks the parent ``memory_memory`` (ONLY: its partitions stay free). CREATE TABLE would take that lock anyway, so
nothing waits longer than before; a query that already holds it finishes first.
"""
from importlib import import_module

from django.db import migrations

BEFORE = import_module("memory.migrations.0011_passages").MEMORY_PARTITION_FUNCTION

FUNCTION = """
CREATE OR REPLACE FUNCTION zm_memory_partition(p_org uuid) RETURNS text
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
  v_name text := 'memory_memory_' || replace(p_org::text, '-', '');
BEGIN
  IF p_org IS NULL THEN
    RAISE EXCEPTION 'zm_memory_partition: an organization is required' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF to_regclass('public.' || v_name) IS NULL
     OR to_regclass('public.memory_passage_' || replace(p_org::text, '-', '')) IS NULL THEN
    LOCK TABLE ONLY public.memory_memory IN ACCESS EXCLUSIVE MODE;  -- memories before passages, as every query
  END IF;
  PERFORM zm_passage_partition(p_org);
  IF to_regclass('public.' || v_name) IS NOT NULL THEN
    RETURN v_name;
  END IF;
  LOCK TABLE public.memory_memory_default IN SHARE ROW EXCLUSIVE MODE;  -- no row of it arrives meanwhile
  IF EXISTS (SELECT 1 FROM public.memory_memory_default WHERE org_id = p_org) THEN
    RETURN 'memory_memory_default';
  END IF;
  EXECUTE format('CREATE TABLE public.%I PARTITION OF public.memory_memory FOR VALUES IN (%L)', v_name, p_org);
  -- As migration 0006 had it for the one table: fresh planner statistics for a tenant that grows.
  EXECUTE format('ALTER TABLE public.%I SET (autovacuum_analyze_scale_factor = 0.01,'
                 ' autovacuum_analyze_threshold = 1000)', v_name);
  EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', v_name);
  RETURN v_name;
END $$;
REVOKE ALL ON FUNCTION zm_memory_partition(uuid) FROM PUBLIC;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0017_kind_indexes")]

    operations = [migrations.RunSQL(FUNCTION, BEFORE)]
