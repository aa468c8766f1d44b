from django.urls import path

from tenants import org_pages, sign_in_pages

urlpatterns = [
    path("sign-in", sign_in_pages.SignInView.as_view()),
    path("sign-in/<str:token>", sign_in_pages.SignInLinkView.as_view()),
    path("sign-out", sign_in_pages.SignOutView.as_view()),
    # Org admin (tenants/org_pages.py)
    path("org/", org_pages.OverviewPage.as_view()),
    path("org/users", org_pages.UsersPage.as_view()),
    path("org/users/<uuid:user_id>/role", org_pages.UserRolePage.as_view()),
    path("org/projects", org_pages.ProjectsPage.as_view()),
    path("org/projects/<str:slug>", org_pages.ProjectPage.as_view()),
    path("org/projects/<str:slug>/members/<uuid:user_id>/remove", org_pages.ProjectMemberRemovePage.as_view()),
    path("org/tokens", org_pages.TokensPage.as_view()),
    path("org/tokens/<str:token_id>/revoke", org_pages.TokenRevokePage.as_view()),
    path("org/settings", org_pages.SettingsPage.as_view()),
]
