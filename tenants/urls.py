from django.urls import path

from tenants import api

urlpatterns = [
    path("me", api.MeView.as_view()),
    path("users", api.UsersView.as_view()),
    path("projects", api.ProjectsView.as_view()),
    path("projects/<slug:slug>/members", api.ProjectMembersView.as_view()),
    path("projects/<slug:slug>/members/<uuid:user_id>", api.ProjectMemberView.as_view()),
    path("tokens", api.TokensView.as_view()),
    path("tokens/<str:token_id>", api.TokenView.as_view()),
    path("org/settings", api.OrgSettingsView.as_view()),
]
