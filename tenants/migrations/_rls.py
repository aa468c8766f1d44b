"""Helpers shared by the migrations that write row-level security."""


def enable_rls(tables: list[str]) -> str:
    # FORCE: the policies apply to the table owner too, not only to the app role.
    return "\n".join(
        f"ALTER TABLE {t} ENABLE ROW LEVEL SECURITY; ALTER TABLE {t} FORCE ROW LEVEL SECURITY;" for t in tables
    )


def follows_memories(policy: str, table: str, *columns: str) -> str:
    """A policy for rows that belong to memories: visible (and writable) when every one of them is visible."""
    return _follower_policy(policy, table, [f"EXISTS (SELECT 1 FROM memory_memory m WHERE m.id = {c})" for c in columns])


def follows_memories_by_function(policy: str, table: str, *columns: str) -> str:
    """``follows_memories`` for a memory table partitioned by organization (memory migration 0010).

    An EXISTS subquery on the partitioned table made Postgres plan every partition for each statement on ``table``
    (26 ms of planning for one lookup of checks at 101 organizations): the organization in it is zm_current_org(),
    known only when the query runs. zm_memory_visible(org, id) reads the one partition of the organization.
    """
    return _follower_policy(policy, table, [f"zm_memory_visible(org_id, {c})" for c in columns])


def _follower_policy(policy: str, table: str, memories_visible: list[str]) -> str:
    condition = " AND ".join(["org_id = zm_current_org()", *memories_visible])
    return f"CREATE POLICY {policy} ON {table} USING ({condition}) WITH CHECK ({condition});"
