from django.urls import path

from memory import api

urlpatterns = [
    path("memories", api.MemoriesView.as_view()),
    path("memories/<str:memory_id>", api.MemoryDetailView.as_view()),
    path("memories/<str:memory_id>/history", api.MemoryHistoryView.as_view()),
    path("memories/<str:memory_id>/forget", api.ForgetView.as_view()),
    path("memories/<str:memory_id>/restore", api.RestoreView.as_view()),
    path("memories/<str:memory_id>/purge", api.PurgeView.as_view()),
    path("namespaces", api.NamespacesView.as_view()),
    path("links", api.LinksView.as_view()),
    path("recall", api.RecallView.as_view()),
    path("memories/<str:memory_id>/checks", api.ChecksView.as_view()),
    path("sources", api.SourcesView.as_view()),
    path("sources/<path:source_id>/versions", api.SourceVersionsView.as_view()),  # ids such as docs/a.md
    path("loops", api.LoopsView.as_view()),
]
