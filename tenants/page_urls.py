from django.urls import path

from tenants import sign_in_pages

urlpatterns = [
    path("sign-in", sign_in_pages.SignInView.as_view()),
    path("sign-in/<str:token>", sign_in_pages.SignInLinkView.as_view()),
    path("sign-out", sign_in_pages.SignOutView.as_view()),
]
