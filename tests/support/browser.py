"""The browser tests' view of the served stack (tests/browser/conftest.py serves it): REST calls beside the browser,
ORM work off Playwright's thread, signing in through a one-time link, and screenshots."""
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from django.conf import settings
from django.db import connections
from playwright.sync_api import Page, expect

from memory.models import Conflict
from tenants import rls
from tenants.models import User
from tenants.sign_in import sign_in_link
from tests.support.tenants import Tenant

T = TypeVar("T")
SCREENSHOTS = settings.BASE_DIR / "screenshots"
PASSWORD = "correct horse battery staple"
WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 740}


@dataclass
class Stack:
    url: str
    tenant: Tenant

    def api(self, token: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        """One REST call as a client outside the browser would make it (urllib)."""
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def remember(self, content: str, token: str | None = None, **body) -> dict:
        status, answer = self.api(token or self.tenant.admin_token, "POST", "/api/v1/memories",
                                  {"content": content, "project": "web", **body})
        assert status == 201, answer
        return answer["memory"]

    def supersede(self, content: str, old_id: str, reason: str, **body) -> dict:
        """A new version that declares it replaces old_id (a supersedes link with a reason)."""
        return self.remember(content, links=[{"type": "supersedes", "dst": old_id, "reason": reason}], **body)

    def memory(self, memory_id: str) -> dict:
        status, answer = self.api(self.tenant.admin_token, "GET", f"/api/v1/memories/{memory_id}")
        assert status == 200, answer
        return answer["memory"]

    def conflict(self, a_id: str, b_id: str, rationale: str) -> str:
        """An open conflict between two memories, as the judge would record it (tests/hygiene does the same)."""

        def create() -> str:
            with rls.tenant_scope(self.tenant.scope):
                return Conflict.objects.create(org=self.tenant.org, a_id=a_id, b_id=b_id, relation="contradicts",
                                               confidence=0.62, judge="local:test", rationale=rationale).id

        return orm(create)

    def link_path(self, user: User) -> str:
        """A fresh one-time sign-in link for the user (an operator's: it may reset a password), as a path on this server."""
        def link() -> str:
            with rls.tenant_scope(rls.Scope(org_id=self.tenant.org.id, user_id=user.id)):
                return sign_in_link(user.id, self.tenant.org.id, may_reset=True)  # as manage.py sign_in_link

        return orm(link).removeprefix(settings.PUBLIC_URL)


def orm(function: Callable[..., T], *args) -> T:
    """Run ORM work in a thread of its own, closing its connections after. Playwright's sync API keeps an event loop
    in the test's thread, where Django refuses ORM calls (and its context-local connections would escape
    close_all() and keep the test database open)."""

    def run() -> T:
        try:
            return function(*args)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def sign_in(page: Page, stack: Stack, user: User) -> None:
    """Sign in through a one-time link; the first time also sets the password."""
    page.goto(stack.url + stack.link_path(user))
    expect(page.locator("h1")).to_have_text(f"Welcome, {user.email}")
    if page.locator("#id_password1").get_attribute("required") is not None:  # no password yet
        page.locator("#id_password1").fill(PASSWORD)
        page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").or_(page.get_by_role("button", name="Set password and sign in")).click()
    expect(page).to_have_url(stack.url + "/")


def shoot(page: Page, name: str, *, full_page: bool = True) -> None:
    """A screenshot (of the whole page, or of what the window shows) into screenshots/<name>.png."""
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)
