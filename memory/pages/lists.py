"""Open loops (GET /loops) and sources (GET /sources/<id>/versions, and the list of sources)."""
from django.http import HttpRequest, HttpResponse

from memory import selectors, sources
from memory.pages.feed import member_projects
from memory.pages.forms import LoopsForm
from tenants.pages import TenantPage


class LoopsPage(TenantPage):
    template_name = "memory/loops.html"
    nav = "loops"

    def get(self, request: HttpRequest) -> HttpResponse:
        form = LoopsForm(request.GET)
        projects = member_projects(self)
        form.set_projects(projects)
        if not form.is_valid():
            return self.page({"form": form}, status=400)
        state, project = form.cleaned_data["state"], form.cleaned_data["project"] or None
        loops = selectors.loop_list(user=self.principal.user, state=state, project_slug=project)
        flags = selectors.memory_flags(loops)
        # Per project, as a team reads them: each of the caller's projects, then personal ones.
        groups: dict[str, list] = {}
        for memory in loops:
            groups.setdefault(memory.project.slug if memory.project else "", []).append((memory, flags[memory.id]))
        ordered = [(slug, groups[slug]) for slug in [*projects, ""] if slug in groups]
        return self.page({"form": form, "groups": ordered, "state": state, "count": len(loops)})


class SourcesPage(TenantPage):
    template_name = "memory/sources.html"
    nav = "sources"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page({"sources": sources.source_list(), "limit": sources.SOURCE_LIST_LIMIT})


class SourcePage(TenantPage):
    template_name = "memory/source.html"
    nav = "sources"

    def get(self, request: HttpRequest, source_id: str) -> HttpResponse:
        versions = sources.source_versions(source_id=source_id)  # 404 when none is visible
        derived = sources.source_derived(versions=versions)
        flags = selectors.memory_flags(versions)
        return self.page({
            "source_id": source_id,
            "versions": [(m, flags[m.id], derived.get(m.id, [])) for m in versions],
            "current": versions[-1],
        })
