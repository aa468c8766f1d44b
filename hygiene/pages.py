"""The conflict review queue as a web page (the same selectors and resolve service as hygiene/api.py), and the
org's daily stats as charts for its admins."""
from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.functional import cached_property
from django.utils.http import url_has_allowed_host_and_scheme

from hygiene import charts, selectors, services
from memory.models import Conflict
from memory.vocabulary import Resolution
from plumbing.errors import DomainError, NotFound
from tenants.org_pages import OrgPage
from tenants.pages import TenantPage

PAGE_SIZE = 20  # open conflicts per page: a long queue is read a page at a time


class _CountedPaginator(Paginator):
    """Pages whose total is already known: /stats counted the open conflicts, and every query on the conflict table
    pays for its row-level security (it follows the memories), so the list does not count them a second time."""

    def __init__(self, object_list, per_page: int, count: int) -> None:
        super().__init__(object_list, per_page)
        self.known_count = count

    @cached_property
    def count(self) -> int:
        return self.known_count


class ResolveForm(forms.Form):
    # The three buttons of a conflict: left (a) replaces right (b), right replaces left, or keep both.
    decision = forms.ChoiceField(choices=[("a", "Left replaces right"), ("b", "Right replaces left"),
                                          ("keep_both", "Keep both")])


class ConflictsPage(TenantPage):
    template_name = "hygiene/conflicts.html"
    nav = "conflicts"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.queue(request)

    def queue(self, request: HttpRequest, *, error: str = "", status: int = 200) -> HttpResponse:
        conflicts = selectors.conflict_list(status=Conflict.Status.OPEN).select_related(
            "a__owner", "a__project", "b__owner", "b__project"
        )
        stats = selectors.stats()
        page = _CountedPaginator(conflicts, PAGE_SIZE, stats["conflicts"]["open"]).get_page(request.GET.get("page"))
        shown = selectors.conflict_list(status=Conflict.Status.SHOWN).count()
        return self.page({"title": "Conflicts", "stats": stats, "page": page, "shown": shown, "error": error},
                         status=status)


class ConflictResolvePage(ConflictsPage):
    http_method_names = ("post",)

    def post(self, request: HttpRequest, conflict_id: str) -> HttpResponse:
        form = ResolveForm(request.POST)
        if not form.is_valid():
            return self.queue(request, error="Choose one of the three decisions.", status=400)
        choice = form.cleaned_data["decision"]
        conflict = selectors.conflict_get(conflict_id=conflict_id)
        winner = {"a": conflict.a_id, "b": conflict.b_id}.get(choice)
        try:
            services.conflict_resolve(principal=self.principal, conflict_id=conflict_id,
                                      decision=Resolution.KEEP_BOTH if winner is None else Resolution.SUPERSEDE, winner=winner)
        except NotFound:
            raise
        except DomainError as error:
            # Already resolved, or the winner is no longer live: say so on the queue; the rollback keeps everything.
            return self.queue(request, error=error.message, status=error.status)
        done = "kept both memories" if winner is None else f"{winner} replaces the other"
        messages.success(request, f"Conflict {conflict_id} resolved: {done}.")
        return redirect("/conflicts")


class SettleForm(forms.Form):
    # The two answers a disagreement shown on a search result offers, the conflict queue's own.
    memory = forms.CharField(max_length=30)
    other = forms.CharField(max_length=30)
    decision = forms.ChoiceField(choices=[(Resolution.SUPERSEDE, "The newer replaces it"),
                                          (Resolution.KEEP_BOTH, "Both hold")])
    next = forms.CharField(required=False, max_length=2000)


class DisagreementSettlePage(TenantPage):
    """POST from a search result's card: a person settles a disagreement where they see it, then goes back there."""
    http_method_names = ("post",)

    def post(self, request: HttpRequest) -> HttpResponse:
        form = SettleForm(request.POST)
        back = request.POST.get("next") or "/"
        if not url_has_allowed_host_and_scheme(back, allowed_hosts=None):
            back = "/"  # only a path of this site
        if not form.is_valid():
            messages.error(request, "Choose “The newer replaces it” or “Both hold”.")
            return redirect(back)
        data = form.cleaned_data
        try:
            with transaction.atomic():  # a refusal half way changes nothing
                services.disagreement_settle(principal=self.principal, memory_id=data["memory"],
                                             other_id=data["other"], decision=data["decision"])
        except DomainError as error:
            messages.error(request, error.message)
            return redirect(back)
        done = "the newer replaces the older" if data["decision"] == Resolution.SUPERSEDE else "both hold"
        messages.success(request, f"Settled: {done}. Recorded as your review.")
        return redirect(back)


# The org's stats, day by day (admins only, like the user list): /org/stats

SUPERSEDE_LABELS = {  # who retired the older memory (Link.Origin)
    "declared": "Declared by the writer", "judge": "By the judge", "review": "By a human review",
    "check": "By a failed check", "source": "By a new source version", "key": "By a keyed write",
}
VERDICT_LABELS = {  # what was done with the judge's verdict (Verdict.Decision)
    "auto_retired": "Retired the older one", "conflict": "Opened a conflict",
    "shown": "Shown beside an open conflict", "recorded": "Recorded only",
}


class StatsPage(OrgPage):
    template_name = "hygiene/stats.html"
    admin_only = True

    def get(self, request: HttpRequest) -> HttpResponse:
        daily = selectors.stats_daily()
        return self.page({"title": "Stats", "daily": daily, "charts": stats_charts(daily),
                          "decisions": VERDICT_LABELS})


def stats_charts(daily: dict) -> list[charts.Chart]:
    days = daily["days"]
    conflicts = daily["conflicts"]
    return [
        charts.bar_chart(id="written", title="Memories written", days=days,
                         series=[charts.Series("written", "Written", daily["written"])]),
        charts.bar_chart(id="supersedes", title="Memories superseded, by who retired them", days=days,
                         series=[charts.Series(k, SUPERSEDE_LABELS[k], v) for k, v in daily["supersedes"].items()]),
        charts.bar_chart(id="conflicts", title="Conflicts opened and resolved", days=days, stacked=False,
                         series=[charts.Series("opened", "Opened", conflicts["opened"]),
                                 charts.Series("resolved", "Resolved", conflicts["resolved"])]),
        charts.bar_chart(id="verdicts", title="The judge's verdicts, by what was done", days=days,
                         series=[charts.Series(k, VERDICT_LABELS[k], v) for k, v in daily["verdicts"].items()]),
    ]
