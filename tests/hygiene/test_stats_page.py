"""The org's stats page (/org/stats, hygiene/pages.py): real writes, supersedes, judge verdicts and conflicts through
the services and the worker, and the numbers the page shows for them, day by day (UTC) over the last 30 days."""
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from hygiene import charts, services
from memory.models import Conflict
from tenants import rls
from tenants.auth import load_principal
from tests.support.memories import remember_id, supersedes
from tests.support.pages import signed_in
from tests.support.tenants import build_tenant


def utc_today():
    """Taken when a test looks, not when the module is collected: a run that crosses midnight UTC moves the axis."""
    return datetime.now(UTC).date()


def figure(html: str, chart_id: str) -> str:
    return re.search(rf'<figure class="chart" aria-labelledby="{chart_id}-caption">.*?</figure>', html, re.DOTALL).group(0)


def shown(html: str, chart_id: str) -> dict[str, int]:
    """The totals a chart states in text: its total and each legend entry."""
    part = figure(html, chart_id)
    legend = {label: int(n) for label, n in re.findall(r'</span>([^<:]+): <strong>(\d+)</strong>', part)}
    total = re.search(r"Total: <strong>(\d+)</strong>", part)  # stacked charts only: grouped bars do not add up
    return {"total": int(total.group(1)), **legend} if total else legend


def table_row(html: str, chart_id: str, day) -> list[int]:
    row = re.search(rf'<th scope="row">{day:%Y-%m-%d}</th>(.*?)</tr>', figure(html, chart_id), re.DOTALL).group(1)
    return [int(n) for n in re.findall(r"<td>(\d+)</td>", row)]


def backdate(memory_id: str, days: int) -> None:
    """Move a memory back in time (as the owner role: the app may not rewrite history)."""
    with connections["owner"].cursor() as cursor:
        cursor.execute("UPDATE memory_memory SET created_at = created_at - %s WHERE id = %s",
                       [timedelta(days=days), memory_id])


@pytest.mark.slow
def test_the_page_shows_what_was_written_retired_judged_and_resolved(api, work, fake_vllm):
    acme, globex = build_tenant("acme"), build_tenant("globex")
    token = acme.member_token
    # The judge retires a clear replacement on its own (auto_retired, origin judge).
    old = remember_id(api, token, "Production deploys for web happen Mondays at 10:00 UTC.", kind="fact")
    remember_id(api, token, "Web production deploys moved to Thursdays at 15:00 UTC.", kind="fact")
    work()
    # An unsure verdict opens a conflict; a person resolves it with a winner (origin review).
    fake_vllm.verdict = {"relation": "supersedes", "confidence": 0.87, "rationale": "maybe newer"}
    remember_id(api, token, "Checkout is owned by Dana.")
    ivan = remember_id(api, token, "Ivan owns checkout.")
    work()
    with rls.tenant_scope(acme.scope):
        conflict = Conflict.objects.get()
        services.conflict_resolve(principal=load_principal(acme.scope, token_id=None), conflict_id=conflict.id,
                                  decision="supersede", winner=ivan)
    # A declared supersede and a keyed rewrite.
    retention = remember_id(api, token, "Retention is 30 days.", project="web")
    remember_id(api, token, "Retention is 90 days.", project="web", links=supersedes(retention, reason="audit"))
    remember_id(api, token, "Prefers dark mode.", namespace=["prefs"], key="theme")
    remember_id(api, token, "Prefers light mode.", namespace=["prefs"], key="theme")
    work()
    backdate(old, 2)  # written two days ago: its own day in the table
    stale = remember_id(api, token, "Written long ago.")
    backdate(stale, 40)  # outside the window
    # Another org's writes, supersedes and verdicts never count here.
    other = remember_id(api, globex.member_token, "Globex retention is 7 days.", project="web")
    remember_id(api, globex.member_token, "Globex retention is 14 days.", project="web", links=supersedes(other))
    work()

    page = signed_in(acme, acme.admin).get("/org/stats")
    assert page.status_code == 200
    today = utc_today()
    html, daily = page.content.decode(), page.context["daily"]
    assert daily["days"][0] == today - timedelta(days=29) and daily["days"][-1] == today and len(daily["days"]) == 30
    assert shown(html, "written") == {"total": 8, "Written": 8}  # the stale one is 40 days old
    assert table_row(html, "written", today - timedelta(days=2)) == [1]
    assert table_row(html, "written", today) == [7]
    assert table_row(html, "written", today - timedelta(days=1)) == [0]  # an empty day is a zero, not a gap
    assert daily["supersedes"]["declared"][-1] == 1 and daily["supersedes"]["key"][-1] == 1
    assert shown(html, "supersedes") == {
        "total": 4, "Declared by the writer": 1, "By the judge": 1, "By a human review": 1,
        "By a failed check": 0, "By a new source version": 0, "By a keyed write": 1}
    assert shown(html, "conflicts") == {"Opened": 1, "Resolved": 1}
    verdicts = shown(html, "verdicts")
    assert verdicts["Retired the older one"] == 1 and verdicts["Opened a conflict"] == 1
    assert daily["relations"]["supersedes"]["auto_retired"] == 1 and daily["relations"]["supersedes"]["conflict"] == 1
    assert verdicts["total"] == sum(sum(counts.values()) for counts in daily["relations"].values())

    # The other org sees its own numbers only.
    theirs = signed_in(globex, globex.admin).get("/org/stats").content.decode()
    assert shown(theirs, "written")["total"] == 2 and shown(theirs, "supersedes")["Declared by the writer"] == 1
    assert shown(theirs, "conflicts")["Opened"] == 0 and shown(theirs, "verdicts")["Opened a conflict"] == 0


def test_a_handful_of_grouped_queries_not_one_per_day(acme):
    client = signed_in(acme, acme.admin)
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/org/stats").status_code == 200
    grouped = [q["sql"] for q in queries.captured_queries if "DATE_TRUNC" in q["sql"].upper()]
    assert len(grouped) == 5, grouped  # memories, supersedes, conflicts opened, resolved, verdicts
    assert len(queries.captured_queries) < 20


def test_members_get_the_admin_only_refusal_and_no_link(acme):
    client = signed_in(acme, acme.member)
    page = client.get("/org/stats")
    assert page.status_code == 403 and b"Only organization admins" in page.content
    assert b'href="/org/stats"' not in client.get("/org/").content
    assert b'href="/org/stats"' in signed_in(acme, acme.admin).get("/org/").content


def test_an_empty_org_shows_thirty_zero_days_with_text_alternatives(acme):
    today = utc_today()
    html = signed_in(acme, acme.admin).get("/org/stats").content.decode()
    for chart_id in ("written", "supersedes", "conflicts", "verdicts"):
        part = figure(html, chart_id)
        assert f'aria-labelledby="{chart_id}-title {chart_id}-desc"' in part and 'role="img"' in part
        assert "<details>" in part and part.count('<th scope="row">') == 30
        assert set(shown(html, chart_id).values()) == {0} and "<rect" not in part
    assert f"Nothing from {today - timedelta(days=29)} to {today} (UTC)." in html
    assert "style=" not in html  # the CSP allows no inline style


def test_bars_stack_or_stand_side_by_side_within_the_plot():
    today = utc_today()
    days = [today - timedelta(days=n) for n in (2, 1, 0)]
    stacked = charts.bar_chart(id="s", title="S", days=days, series=[charts.Series("a", "A", [0, 3, 1]),
                                                                     charts.Series("b", "B", [0, 4, 0])])
    assert [t.label for t in stacked.y_ticks] == ["0", "5", "10"] and stacked.total == 8
    a, b, _ = stacked.bars
    assert a.y + a.height == charts.BOTTOM and b.y + b.height == a.y and a.x == b.x  # b sits on a
    grouped = charts.bar_chart(id="g", title="G", days=days, stacked=False,
                               series=[charts.Series("a", "A", [0, 3, 1]), charts.Series("b", "B", [0, 4, 0])])
    a, b, _ = grouped.bars
    assert a.y + a.height == b.y + b.height == charts.BOTTOM and b.x > a.x
    assert all(charts.LEFT <= bar.x and bar.x + bar.width <= charts.WIDTH - charts.RIGHT for bar in grouped.bars)
    assert [charts.nice_top(n) for n in (0, 1, 3, 7, 11, 120)] == [1, 1, 5, 10, 20, 200]
