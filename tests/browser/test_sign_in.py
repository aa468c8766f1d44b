"""Signing in with a one-time link in Chromium: the link asks for a password, signs in, is spent; the password then
works on the sign-in form, and signing out ends the session."""
import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import PASSWORD, Stack, shoot

pytestmark = pytest.mark.slow


def test_a_one_time_link_sets_a_password_and_signs_in(page: Page, stack: Stack):
    member = stack.tenant.member
    link = stack.url + stack.link_path(member)

    page.goto(stack.url + "/")  # not signed in: the sign-in form, and back to / afterwards
    expect(page).to_have_url(f"{stack.url}/sign-in?next=/")
    expect(page.locator("h1")).to_have_text("Sign in")
    shoot(page, "flow-sign-in-wide")

    page.goto(link)
    expect(page.locator("h1")).to_have_text(f"Welcome, {member.email}")
    shoot(page, "flow-sign-in-link-wide")
    page.locator("#id_password1").fill("12345678")  # too weak: refused next to its field, nothing spent
    page.locator("#id_password2").fill("12345678")
    page.get_by_role("button", name="Set password and sign in").click()
    expect(page.locator(".errorlist")).to_contain_text("too short")
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Set password and sign in").click()
    expect(page).to_have_url(stack.url + "/")
    expect(page.locator("header .who")).to_contain_text(f"{member.email} · acme")

    # Spent: the same link no longer signs anyone in.
    other = page.context.browser.new_context()
    try:
        spent = other.new_page()
        answer = spent.goto(link)
        assert answer is not None and answer.status == 410
        expect(spent.locator("body")).to_contain_text("not valid any more")
    finally:
        other.close()

    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(stack.url + "/sign-in")
    page.goto(stack.url + "/")
    expect(page).to_have_url(f"{stack.url}/sign-in?next=/")

    # The chosen password works on the sign-in form.
    page.get_by_label("Organization").fill("acme")
    page.get_by_label("Email").fill(member.email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(stack.url + "/")
    expect(page.locator("header .who")).to_contain_text(member.email)
