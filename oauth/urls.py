from django.urls import path

from oauth import consent, endpoints, metadata, registration

urlpatterns = [
    path(".well-known/oauth-protected-resource", metadata.protected_resource),
    path(".well-known/oauth-protected-resource/mcp", metadata.protected_resource, {"path": "/mcp"}),
    path(".well-known/oauth-authorization-server", metadata.authorization_server),
    path("oauth/authorize", consent.AuthorizeView.as_view()),
    path("oauth/token", endpoints.Token.as_view()),
    path("oauth/revoke", endpoints.Revoke.as_view()),
    path("oauth/register", registration.register),
]
