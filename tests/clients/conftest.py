"""The served stack the client tests talk to: `make run`'s web server on the test database, one per test module."""
from collections.abc import Iterator

import pytest
from django.db import connections

from tenants import rls
from tenants.models import ApiToken
from tests.support.stack import served, stack_env
from tests.support.tenants import Tenant, build_tenant, issue_token, truncate_all_tables
from zero_memory_client import ZeroMemory


class Stack:
    """The served stack: `tenant` (acme) for the tests, `other` (globex) for what another organization sees."""

    def __init__(self, port: int, tenant: Tenant, other: Tenant, watcher: str) -> None:
        self.port, self.tenant, self.other, self.watcher = port, tenant, other, watcher
        self.url = f"http://127.0.0.1:{port}"

    def client(self, token: str | None = None, **options) -> ZeroMemory:
        return ZeroMemory(self.url, token or self.tenant.admin_token, timeout=60, **options)


@pytest.fixture(scope="module")
def stack(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Stack]:
    """One served stack for the module, without a rate limit (the overhead measures send hundreds of calls); acme
    with an admin, a member and a watcher token of the admin, and globex; every table emptied after."""
    with django_db_blocker.unblock():
        try:
            acme, globex = build_tenant("acme"), build_tenant("globex")
            with rls.tenant_scope(acme.scope):
                _, watcher = issue_token(acme, acme.admin, "watcher", ApiToken.Writer.WATCHER, acme.web)
            env = stack_env(WEB_THREADS="4", RATE_LIMIT_PER_MINUTE="0")
            with served(env, tmp_path_factory.mktemp("client") / "server.log") as port:
                yield Stack(port, acme, globex, watcher)
        finally:
            for alias in connections:
                connections[alias].close()
            truncate_all_tables()
