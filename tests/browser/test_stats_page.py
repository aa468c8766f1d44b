"""The org's stats page in Chromium at phone width: no sideways scroll, the charts' data tables reached and opened
from the keyboard, and not one CSP violation or console error (the charts are inline SVG, no script, no style=)."""
import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import PHONE, Stack, shoot

pytestmark = pytest.mark.slow

# Playwright's init scripts are exempt from the page's CSP: this one records every violation the page causes.
WATCH_CSP = ("window.cspViolations = [];"
             "document.addEventListener('securitypolicyviolation',"
             " e => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));")


def written_total(page: Page) -> int:
    caption = page.locator("#written-caption .chart-total").inner_text()
    found = re.search(r"\d+", caption)
    assert found, repr(caption)
    return int(found.group(0))


def test_stats_at_phone_width_by_keyboard_without_csp_violations(admin_page: Page, stack: Stack):
    page = admin_page
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(WATCH_CSP)
    page.set_viewport_size(PHONE)
    page.goto(stack.url + "/org/stats")
    before = written_total(page)
    old = stack.remember("The nightly backup runs at 02:00 UTC.", kind="fact")
    stack.supersede("The nightly backup runs at 03:00 UTC.", old["id"], "moved after the batch jobs", kind="fact")
    stack.remember("Prefers tabs.", namespace=["prefs"], key="indent")
    stack.remember("Prefers spaces.", namespace=["prefs"], key="indent")

    answer = page.goto(stack.url + "/org/stats")
    assert answer is not None and answer.status == 200
    expect(page.locator("h1")).to_have_text("Stats")
    assert written_total(page) == before + 4
    expect(page.locator("figure.chart svg[role=img]")).to_have_count(4)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    svg_width = page.locator("#written-caption + svg").bounding_box()["width"]
    assert 300 <= svg_width <= PHONE["width"]  # the chart fills the phone's width, no more

    # From the top of the page, Tab alone reaches the first chart's data table toggle; Enter opens it.
    page.locator("body").focus()
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('figure.chart summary')"):
            break
    else:
        pytest.fail("Tab never reached a chart's data table")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused == "Memories written: data table"
    page.keyboard.press("Enter")
    table = page.locator("figure.chart").first.locator("table")
    expect(table).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(30)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # open, the table scrolls alone
    shoot(page, "stats-phone")

    assert page.evaluate("window.cspViolations") == []
    assert errors == []
