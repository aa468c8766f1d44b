"""Helpers shared by the migrations that write row-level security."""


def enable_rls(tables: list[str]) -> str:
    # FORCE: the policies apply to the table owner too, not only to the app role.
    return "\n".join(
        f"ALTER TABLE {t} ENABLE ROW LEVEL SECURITY; ALTER TABLE {t} FORCE ROW LEVEL SECURITY;" for t in tables
    )
