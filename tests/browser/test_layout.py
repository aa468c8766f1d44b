"""Every page, wide and at phone width, with long content and a long chain: a screenshot of each into screenshots/,
and at 375 px no page scrolls sideways (document.scrollingElement.scrollWidth <= innerWidth)."""
import urllib.parse

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import PHONE, WIDE, Stack, shoot, sign_in

pytestmark = pytest.mark.slow

LONG_WORD = "https://example.test/" + "a-very-long-path-segment-without-spaces/" * 12  # nothing to break it at


def long_content() -> str:
    paragraph = ("The release checklist: freeze the branch, run the migrations on staging, compare the query plans, "
                 "and write down every surprise so that the next release is calmer. ")
    text = f"A very long runbook. {LONG_WORD}\n\n"
    while len(text) < 10_000:
        text += paragraph
    return text[:10_000]


def no_sideways_scroll(page: Page) -> tuple[int, int]:
    return page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")


def test_every_page_wide_and_at_phone_width(page: Page, stack: Stack):
    long = stack.remember(long_content(), kind="lesson")
    assert len(long["content"]) == 10_000
    chain = [stack.remember("The build cache lives on runner 1.", kind="fact")]
    for step in range(2, 21):
        chain.append(stack.supersede(f"The build cache lives on runner {step}.", chain[-1]["id"],
                                     f"moved the cache to runner {step} ({LONG_WORD[:80]})", kind="fact"))
    task = stack.remember("Rotate the staging TLS certificate before it expires next month.", kind="task")
    status, body = stack.api(stack.tenant.admin_token, "POST", "/api/v1/sources",
                             {"source_id": "docs/deploy.md", "content": "Deploys run from the main branch.",
                              "version": "v1", "project": "web"})
    assert status == 201, body
    status, body = stack.api(stack.tenant.admin_token, "POST", "/api/v1/sources",
                             {"source_id": "docs/deploy.md", "content": "Deploys run from release branches.",
                              "version": "v2", "project": "web"})
    assert status == 201, body
    other = stack.remember("The build cache is cleared every Sunday night. " + LONG_WORD)
    stack.conflict(long["id"], other["id"], "The judge is unsure: " + LONG_WORD)

    pages = {
        "feed": "/",
        "search": "/?" + urllib.parse.urlencode({"q": "where does the build cache live", "lifecycle": "all"}),
        "memory-long": f"/memories/{long['id']}",
        "memory-chain-20": f"/memories/{chain[-1]['id']}",
        "memory-chain-middle": f"/memories/{chain[9]['id']}",
        "conflicts": "/conflicts",
        "loops": "/loops",
        "sources": "/sources",
        "source": "/sources/docs/deploy.md",
        "org": "/org/",
        "org-users": "/org/users",
        "org-projects": "/org/projects",
        "org-project": "/org/projects/web",
        "org-tokens": "/org/tokens",
        "org-settings": "/org/settings",
        "org-stats": "/org/stats",
        "not-found": "/memories/mem_00000000000000000000000000",
    }
    sign_in(page, stack, stack.tenant.admin)
    wide_overflow, phone_overflow = {}, {}
    for size, overflow in (("wide", wide_overflow), ("phone", phone_overflow)):
        page.set_viewport_size(WIDE if size == "wide" else PHONE)
        for name, path in pages.items():
            answer = page.goto(stack.url + path)
            assert answer is not None and answer.status == (404 if name == "not-found" else 200), (name, answer)
            expect(page.locator("h1")).to_have_count(1)
            scroll_width, inner_width = no_sideways_scroll(page)
            if scroll_width > inner_width:
                overflow[name] = (scroll_width, inner_width)
            shoot(page, f"{name}-{size}")
    expect(page.locator("ol.timeline > li")).to_have_count(0)  # the last page was the 404 page

    page.goto(f"{stack.url}/memories/{chain[9]['id']}")
    expect(page.locator("ol.timeline > li")).to_have_count(20)
    page.goto(f"{stack.url}/loops")
    expect(page.locator("ul.cards")).to_contain_text(task["content"])

    # Signed out: the sign-in form and a one-time link's page.
    signed_out = page.context.browser.new_context(viewport=PHONE)
    try:
        phone = signed_out.new_page()
        for name, path in (("sign-in", "/sign-in"), ("sign-in-link", stack.link_path(stack.tenant.member))):
            phone.goto(stack.url + path)
            scroll_width, inner_width = no_sideways_scroll(phone)
            if scroll_width > inner_width:
                phone_overflow[name] = (scroll_width, inner_width)
            shoot(phone, f"{name}-phone")
    finally:
        signed_out.close()
    assert phone_overflow == {}, f"pages that scroll sideways at 375 px: {phone_overflow}"
    assert wide_overflow == {}, f"pages that scroll sideways at 1280 px: {wide_overflow}"
