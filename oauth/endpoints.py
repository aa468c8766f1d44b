"""The token and revocation endpoints: django-oauth-toolkit's, behind a check of what they are sent.

The toolkit's token view also serves grant types this server does not offer (it would answer a device-code request
without a device_code with a 500); here only the authorization code and refresh token grants reach it, anything else
is ``unsupported_grant_type``, and a body that is not a small form is ``invalid_request``.
"""
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.views import RevokeTokenView, TokenView

from oauth import throttle
from plumbing.parsers import text_problem

GRANT_TYPES = {"authorization_code", "refresh_token"}
MAX_BODY = 8 * 1024


def _refusal(error: str, description: str) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=400,
                        headers={"Cache-Control": "no-store"})


def _form_problem(request: HttpRequest) -> JsonResponse | None:
    if request.content_type != "application/x-www-form-urlencoded":
        return _refusal("invalid_request", "Send the parameters as application/x-www-form-urlencoded.")
    if len(request.body) > MAX_BODY:
        return _refusal("invalid_request", f"The request body may be at most {MAX_BODY} bytes.")
    if any(text_problem(value) for key, values in request.POST.lists() for value in [key, *values]):
        return _refusal("invalid_request", "A parameter contains characters that are not allowed.")
    return None


@method_decorator(csrf_exempt, name="dispatch")
class Token(TokenView):
    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if (seconds := throttle.endpoint_retry_after(request, "token")) is not None:
            return throttle.too_many(seconds)
        if problem := _form_problem(request):
            return problem
        if request.POST.get("grant_type") not in GRANT_TYPES:
            return JsonResponse({"error": "unsupported_grant_type",
                                 "error_description": "Only authorization_code and refresh_token are offered."},
                                status=400, headers={"Cache-Control": "no-store"})
        response = super().post(request, *args, **kwargs)
        # Some of the toolkit's refusals (RFC 8707's invalid_target) come without a content type: JSON, always.
        response["Content-Type"] = "application/json"
        response["Cache-Control"] = "no-store"
        return response


@method_decorator(csrf_exempt, name="dispatch")
class Revoke(RevokeTokenView):
    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if (seconds := throttle.endpoint_retry_after(request, "revoke")) is not None:
            return throttle.too_many(seconds)
        if problem := _form_problem(request):
            return problem
        return super().post(request, *args, **kwargs)
