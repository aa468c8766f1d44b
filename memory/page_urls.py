from django.urls import path

from memory import pages

urlpatterns = [
    path("", pages.FeedPage.as_view()),
    path("memories/<str:memory_id>", pages.MemoryPage.as_view()),
    path("loops", pages.LoopsPage.as_view()),
    path("sources", pages.SourcesPage.as_view()),
    # A source_id is free text (often a path such as docs/deploy.md): the rest of the URL, decoded.
    path("sources/<path:source_id>", pages.SourcePage.as_view()),
]
