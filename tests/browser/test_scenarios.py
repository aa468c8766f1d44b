"""What people do in the web pages, in Chromium against the served stack: search and open a result, walk a version
chain, resolve conflicts, mint and revoke a token, and all of it from the keyboard alone."""
import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import Stack, shoot

pytestmark = pytest.mark.slow


def test_search_shows_recall_with_flags_and_trace_and_opens_a_result(admin_page: Page, stack: Stack):
    page = admin_page
    deploys = stack.remember("Deploys go out on Tuesdays after the standup, never on Fridays.", kind="decision")
    stack.remember("Fix the deploy script so that it stops on the first failing migration.", kind="task")
    stack.remember("The office plants are watered on Mondays by whoever arrives first.")
    page.goto(stack.url + "/")
    expect(page.locator("h1")).to_have_text("Memories")
    expect(page.locator("ul.cards > li.card").first).to_be_visible()
    shoot(page, "flow-feed-wide")

    page.get_by_role("searchbox", name="Search").fill("when do deploys go out")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"/\?q=when\+do\+deploys\+go\+out"))
    expect(page.locator("h1")).to_have_text("Search results")
    cards = page.locator("ul.cards > li.card")
    expect(cards.first).to_contain_text("Deploys go out on Tuesdays")
    task = cards.filter(has_text="Fix the deploy script")
    expect(task.locator(".badge.open_loop")).to_have_text("open_loop")  # recall's flags, as badges
    shoot(page, "readme-feed", full_page=False)  # docs/screenshots/feed.png in the README
    trace = page.locator("details", has=page.locator("summary", has_text="Recall trace"))
    expect(trace.locator("pre")).to_be_hidden()
    trace.locator("summary").click()
    expect(trace.locator("pre")).to_be_visible()
    shoot(page, "flow-search-wide")

    cards.first.locator("a.content").click()
    expect(page).to_have_url(f"{stack.url}/memories/{deploys['id']}")
    expect(page.locator("h1")).to_have_text(re.compile(r"^Decision: Deploys go out on Tuesdays"))
    expect(page.locator(".content.card")).to_have_text(deploys["content"])
    expect(page.locator("dl.facts")).to_contain_text("admin@acme.test")


def test_walking_a_declared_chain_through_the_timeline(admin_page: Page, stack: Stack):
    page = admin_page
    v1 = stack.remember("The staging database runs Postgres 15.", kind="fact")
    v2 = stack.supersede("The staging database runs Postgres 16.", v1["id"], "upgraded in March", kind="fact")
    v3 = stack.supersede("The staging database runs Postgres 17.", v2["id"], "upgraded again in October", kind="fact")
    ids = [v1["id"], v2["id"], v3["id"]]

    page.goto(f"{stack.url}/memories/{v3['id']}")
    timeline = page.locator("ol.timeline > li")
    expect(timeline).to_have_count(3)
    for step, memory_id in zip(timeline.all(), ids):  # oldest first
        expect(step.locator("a.id").first).to_have_text(memory_id)
    expect(timeline.nth(2)).to_have_class(re.compile(r"\bcurrent\b.*\bthis\b"))
    shoot(page, "flow-memory-chain-wide")

    # From the current version back to the first, then forward along "Replaced by" to the current one again.
    timeline.nth(0).locator("a.id").first.click()
    expect(page).to_have_url(f"{stack.url}/memories/{v1['id']}")
    expect(page.locator("h1")).to_contain_text("Postgres 15")
    expect(timeline.nth(0)).to_have_class(re.compile(r"\bthis\b"))
    retired = timeline.nth(0).locator("p.hint")
    expect(retired).to_contain_text(f"Replaced by {v2['id']}, declared by its writer")
    expect(retired).to_contain_text("upgraded in March")
    retired.get_by_role("link", name=v2["id"]).click()
    expect(page).to_have_url(f"{stack.url}/memories/{v2['id']}")
    expect(page.locator("dl.facts")).to_contain_text("superseded")
    retired = timeline.nth(1).locator("p.hint")
    expect(retired).to_contain_text("upgraded again in October")
    retired.get_by_role("link", name=v3["id"]).click()
    expect(page).to_have_url(f"{stack.url}/memories/{v3['id']}")

    # A correction written in the page becomes the fourth version.
    page.get_by_label("Corrected content").fill("The staging database runs Postgres 18.")
    page.get_by_label("Why it replaces this one").fill("upgraded for the new release")
    page.get_by_role("button", name="Write correction").click()
    expect(page).not_to_have_url(f"{stack.url}/memories/{v3['id']}")
    expect(page.locator("h1")).to_contain_text("Postgres 18")
    expect(timeline).to_have_count(4)
    expect(timeline.nth(2).locator("p.hint")).to_contain_text("upgraded for the new release")
    assert stack.memory(v3["id"])["status"] == "superseded"


def test_resolving_conflicts_in_the_queue(admin_page: Page, stack: Stack):
    page = admin_page
    dana = stack.remember("Dana owns the checkout service.")
    ivan = stack.remember("Ivan owns the checkout service.")
    mira = stack.remember("The on-call rotation changes every Monday.")
    olek = stack.remember("The on-call rotation changes every Thursday.")
    first = stack.conflict(dana["id"], ivan["id"], "two owners of one service")
    second = stack.conflict(mira["id"], olek["id"], "two different weekdays")

    page.goto(stack.url + "/conflicts")
    expect(page.locator("h1")).to_have_text("Conflicts")
    expect(page.locator("dl.stats")).to_contain_text("Open conflicts")
    article = page.locator(f"article.conflict#{first}")
    expect(article.locator(".side-by-side section")).to_have_count(2)
    expect(article).to_contain_text("contradicts")
    expect(article).to_contain_text("0.62")
    expect(article).to_contain_text("two owners of one service")
    shoot(page, "flow-conflicts-wide")

    article.get_by_role("button", name="Left replaces right").click()
    expect(page).to_have_url(stack.url + "/conflicts")
    expect(page.locator(f"article.conflict#{first}")).to_have_count(0)
    loser = stack.memory(ivan["id"])
    assert loser["status"] == "superseded" and loser["superseded_by"] == dana["id"]

    page.locator(f"article.conflict#{second}").get_by_role("button", name="Keep both").click()
    expect(page.locator(f"article.conflict#{second}")).to_have_count(0)
    assert stack.memory(mira["id"])["status"] == stack.memory(olek["id"])["status"] == "live"


def test_a_minted_token_works_once_shown_and_stops_when_revoked(admin_page: Page, stack: Stack):
    page = admin_page
    page.goto(stack.url + "/org/tokens")
    expect(page.locator("h1")).to_have_text("Tokens")
    page.locator("#id_name").fill("browser agent")
    page.locator("#id_writer").select_option("agent")
    page.locator("#id_project").select_option("web")
    page.get_by_role("button", name="Mint token").click()
    secret = page.locator(".secret").inner_text().strip()
    assert secret.startswith("zm_")
    shoot(page, "flow-tokens-minted-wide")

    status, me = stack.api(secret, "GET", "/api/v1/me")
    assert status == 200 and me["user"]["email"] == "admin@acme.test", me
    status, written = stack.api(secret, "POST", "/api/v1/memories", {"content": "Written with the browser's token."})
    assert status == 201 and written["memory"]["project"] == "web", written

    page.goto(stack.url + "/org/tokens")  # the secret is shown once: not on the next visit
    expect(page.locator(".secret")).to_have_count(0)
    row = page.locator("tr", has_text="browser agent")
    expect(row).to_contain_text("agent")
    row.get_by_role("button", name="Revoke browser agent").click()
    expect(page.locator(".messages")).to_contain_text("revoked")
    revoke = page.locator("tr", has_text="browser agent").get_by_role("button", name="Revoke browser agent")
    expect(revoke).to_have_count(0)
    status, refused = stack.api(secret, "GET", "/api/v1/me")
    assert status == 401, refused


def test_keyboard_only_skip_link_search_and_open(admin_page: Page, stack: Stack):
    page = admin_page
    backups = stack.remember("Nightly backups of the orders database are kept for thirty days.")
    page.goto(stack.url + "/")
    page.keyboard.press("Tab")  # the first stop is the skip link
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()
    page.keyboard.press("Tab")  # from the main content the next stop is the search box
    search = page.get_by_role("searchbox", name="Search")
    expect(search).to_be_focused()
    page.keyboard.type("how long are backups kept")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Search results")
    result = page.locator("ul.cards > li.card a.content").first
    expect(result).to_contain_text("Nightly backups")
    for _ in range(60):  # Tab on to the first result, then open it with Enter
        page.keyboard.press("Tab")
        if result.evaluate("element => element === document.activeElement"):
            break
    expect(result).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{stack.url}/memories/{backups['id']}")
