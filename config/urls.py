from django.urls import include, path, re_path
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiYamlRenderer
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny

from hygiene.gauges import StoreGauges
from plumbing import errors
from plumbing.health import healthz, livez, readyz
from telemetry.exposition import metrics_view

api_v1 = [
    path("", include("tenants.urls")),
    path("", include("memory.urls")),
    path("", include("hygiene.urls")),
    # Anything else under /api/v1/ answers in the error envelope, like every other error.
    re_path(r"^.*$", errors.not_found),
]

urlpatterns = [
    path("healthz", healthz),
    path("livez", livez),
    path("readyz", readyz),
    path("metrics", metrics_view(StoreGauges())),  # behind METRICS_TOKEN (telemetry/exposition.py)
    path(
        "api/schema/",
        SpectacularAPIView.as_view(
            permission_classes=[AllowAny],
            authentication_classes=[],
            renderer_classes=[OpenApiJsonRenderer, OpenApiYamlRenderer],
        ),
        name="schema",
    ),
    path("api/v1/", include(api_v1)),
    # The OAuth 2.1 authorization server and its discovery documents (oauth/): MCP clients connect by URL.
    path("", include("oauth.urls")),
    # The web pages (tenants/pages.py): sign-in, the feed at /, memories, conflicts, loops, sources, /org/.
    path("", include("tenants.page_urls")),
    path("", include("memory.page_urls")),
    path("", include("hygiene.page_urls")),
]

handler400 = errors.bad_request
handler404 = errors.not_found
handler500 = errors.server_error
