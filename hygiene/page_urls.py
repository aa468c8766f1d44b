from django.urls import path

from hygiene import pages

urlpatterns = [
    path("conflicts", pages.ConflictsPage.as_view()),
    path("conflicts/<str:conflict_id>/resolve", pages.ConflictResolvePage.as_view()),
    path("disagreements/settle", pages.DisagreementSettlePage.as_view()),
    path("org/stats", pages.StatsPage.as_view()),  # beside the org pages of tenants/page_urls.py
]
