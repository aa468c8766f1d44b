"""Browser tests: Playwright for Python drives Debian's Chromium (headless, never a downloaded browser) against the
server of `make run` (tests/support/stack.py) on the committed test database and the test Redis.

One server and one tenant serve the whole package (starting uvicorn and warming the model takes seconds); each test
makes its own memories and signs in with its own one-time link, and every table is emptied at the end. Without
/usr/bin/chromium the tests fail with a message naming the Debian package (`make test` installs it as root).
Screenshots go to screenshots/ at the repository root, which git ignores.
"""
import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from embedded_stack.launcher import CHROMIUM, chromium_missing_message
from tests.support.browser import WIDE, Stack, orm, sign_in
from tests.support.stack import served, stack_env
from tests.support.tenants import build_tenant, truncate_all_tables


@pytest.fixture(scope="package")
def stack(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Stack]:
    with django_db_blocker.unblock():
        try:
            tenant = orm(build_tenant, "acme")
            with served(stack_env(), tmp_path_factory.mktemp("browser") / "server.log") as port:
                yield Stack(f"http://127.0.0.1:{port}", tenant)
        finally:
            orm(truncate_all_tables)


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(chromium_missing_message(), pytrace=False)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context (no cookies) at wide-screen size."""
    context = browser.new_context(viewport=WIDE)
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def admin_page(page: Page, stack: Stack) -> Page:
    sign_in(page, stack, stack.tenant.admin)
    return page
