"""The feed at /: the newest memories with filters and keyset pages (GET /memories), or a search (POST /recall)."""
import json

from django.http import HttpRequest, HttpResponse, QueryDict

from plumbing.errors import Invalid
from plumbing.timing import StepTimer
from memory import recall, selectors
from memory.api.recall import _why
from memory.embeddings import embed_one
from memory.pages.forms import SEARCH_RESULTS, FeedForm
from tenants.pages import TenantPage
from tenants.selectors import project_list


def member_projects(page: TenantPage) -> list[str]:
    """The slugs a project filter may name: the caller's own projects (the API answers 404 for any other, even to an
    admin, who sees every project of the org in /projects)."""
    principal = page.principal
    return list(project_list(principal=principal).filter(members__user_id=principal.user.id)
                .values_list("slug", flat=True))


class FeedPage(TenantPage):
    template_name = "memory/feed.html"
    nav = "feed"

    def prepare_get(self, request: HttpRequest) -> tuple[object, StepTimer] | None:
        """Outside the transaction: embed a valid search query, as POST /recall does."""
        steps = StepTimer()
        query = FeedForm.query_of(request.GET)
        if query is None:
            return None
        vector = embed_one(query)
        steps.lap("embed")
        return vector, steps

    def get(self, request: HttpRequest) -> HttpResponse:
        form = FeedForm(request.GET)  # always bound: no parameters at all is the default feed
        form.set_projects(member_projects(self))
        if not form.is_valid():
            return self.page({"form": form}, status=400)
        params = form.cleaned_data
        if params["q"].strip():
            return self.search(form, params)
        return self.feed(form, params)

    def feed(self, form: FeedForm, params: dict) -> HttpResponse:
        try:
            memories, next_cursor = selectors.memory_feed(
                user=self.principal.user, lifecycle=params["lifecycle"], kind=params["kind"] or None,
                project_slug=params["project"] or None, scope=params["scope"] or None, limit=params["limit"],
                cursor=params["cursor"] or None,
            )
        except Invalid as error:  # a cursor this page did not write
            form.add_error(None, error.message)
            return self.page({"form": form}, status=400)
        flags = selectors.memory_flags(memories)
        older = None
        if next_cursor:
            query = self.request.GET.copy() if self.request.GET else QueryDict(mutable=True)
            query["cursor"] = next_cursor
            older = f"?{query.urlencode()}"
        return self.page({
            "form": form, "items": [(m, flags[m.id]) for m in memories], "older": older,
            "newest": bool(params["cursor"]), "newest_url": _without_cursor(self.request.GET),
            "lifecycle": params["lifecycle"],
        })

    def search(self, form: FeedForm, params: dict) -> HttpResponse:
        vector, steps = self.prepared
        include_history = params["lifecycle"] in {"superseded", "all"}
        result = recall.memory_recall(principal=self.principal, vector=vector, steps=steps, q=recall.RecallQuery(
            query=params["q"].strip(), k=SEARCH_RESULTS, project=params["project"] or None,
            scope=params["scope"] or "all", kinds=[params["kind"]] if params["kind"] else None,
            include_history=include_history,
        ))
        # A disagreement is settled on the older one's card, against each newer one it disagrees with.
        hits = [(hit, _why(hit)["note"], [other for other in hit.disagrees_with
                                         if (other.created_at, other.id) > (hit.memory.created_at, hit.memory.id)])
                for hit in result.hits]
        return self.page({
            "form": form, "hits": hits, "warnings": result.warnings, "searched": True,
            "trace": json.dumps(result.trace, indent=2, default=str), "include_history": include_history,
        })


def _without_cursor(params: QueryDict) -> str:
    query = params.copy()
    query.pop("cursor", None)
    return f"?{query.urlencode()}" if query else "/"
