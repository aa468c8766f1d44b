from django.urls import path

from hygiene import api

urlpatterns = [
    path("conflicts", api.ConflictsView.as_view()),
    path("conflicts/<str:conflict_id>/resolve", api.ConflictResolveView.as_view()),
    path("stats", api.StatsView.as_view()),
]
