"""Privileges of the runtime app role.

Migrations run as the owner role (``manage.py migrate --database owner``). After every migrate this grants the
app role (the user of DATABASE_URL) exactly what it needs on every table: read and write rows, nothing on the
schema. The app role is no superuser, has no BYPASSRLS and owns nothing, so every policy applies to it.
Tables listed in APPEND_ONLY / NO_DELETE get less: event logs and passages can only be inserted and read (a purge
deletes passages with their memory), memories never deleted. Partitions get nothing (memory_memory's and
memory_passage's, one per organization: memory migrations 0010, 0011).
"""
from django.conf import settings
from django.db import connections

APPEND_ONLY = {"memory_event", "memory_check", "hygiene_verdict", "memory_passage"}
NO_DELETE = {"memory_memory", "memory_link", "hygiene_conflict", "hygiene_review"}


def app_role_name() -> str:
    return settings.DATABASES["default"]["USER"]


def grant_app_role(using: str = "default", **kwargs) -> None:
    connection = connections[using]
    app_role = connection.ops.quote_name(app_role_name())
    if connection.settings_dict["USER"] == app_role_name():
        return  # migrations were run as the app role itself: nothing to grant (and nothing is safe; see README)
    with connection.cursor() as cursor:
        # Partitions (memory_memory_<org>) get nothing: the app role reaches rows through the parent only, where
        # the row-level security policies are.
        cursor.execute(
            "SELECT c.relname, c.relispartition FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace"
            " AND c.relkind IN ('r', 'p')"
        )
        for table, partition in cursor.fetchall():
            name = connection.ops.quote_name(table)
            cursor.execute(f"REVOKE ALL ON {name} FROM {app_role}")
            if partition:
                continue
            if table in APPEND_ONLY:
                privileges = "SELECT, INSERT"
            elif table in NO_DELETE:
                privileges = "SELECT, INSERT, UPDATE"
            else:
                privileges = "SELECT, INSERT, UPDATE, DELETE"
            cursor.execute(f"GRANT {privileges} ON {name} TO {app_role}")
        cursor.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {app_role}")
        cursor.execute(f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO {app_role}")
