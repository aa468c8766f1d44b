"""The base class of every signed-in web page: the same identity, the same one transaction as the API.

A page is a Django view whose handler renders a template inside the caller's scope: the session resolves to an
``Identity`` (tenants/auth.py, the same function the API uses), then the call enters as every call does
(tenants/entry.py: rate limit, checks, ``prepare_<method>`` outside any transaction, one transaction as the caller)
and the handler runs the same services and selectors the API does. A domain error renders the error page with its
status; any answer of 400 or more rolls the transaction back.
"""
from urllib.parse import urlsplit

from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import View
from rest_framework.exceptions import AuthenticationFailed

from plumbing.errors import Code, DomainError, Forbidden, PageMethods, error_page
from plumbing.parsers import check_path_and_query
from tenants import entry
from tenants.auth import Principal, session_identity
from tenants.entry import roll_back_on_error


class TenantPage(PageMethods, View):
    """A page as the signed-in user. Subclasses set ``template_name`` and ``nav`` and write ``get``/``post`` that
    call ``self.page(context)``; members and admins see what the API shows them, nothing more."""

    template_name = ""
    nav = ""  # which item of the main navigation is this page's
    admin_only = False

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        identity = session_identity(request.session)
        if identity is None:
            return redirect_to_login(self.after_sign_in(request))
        handler = getattr(self, request.method.lower(), None)
        if request.method.lower() not in self.http_method_names or handler is None:
            return self.http_method_not_allowed(request, *args, **kwargs)
        self.principal: Principal | None = None
        prepare = getattr(self, f"prepare_{request.method.lower()}", None)
        try:
            with entry.enter(
                identity,
                check=lambda: check_path_and_query(kwargs, dict(request.GET.lists()), lambda name: "No such page."),
                prepare=(lambda: prepare(request, *args, **kwargs)) if prepare else None,
            ) as entered:
                self.principal, self.prepared = entered.principal, entered.prepared
                if self.admin_only and not self.principal.is_admin:
                    raise Forbidden(Code.ADMIN_ONLY, "Only organization admins may open this page.")
                response = handler(request, *args, **kwargs)
                roll_back_on_error(response.status_code)
            return response
        except AuthenticationFailed:  # the session's user left the organization or changed password
            logout(request)
            return redirect_to_login(self.after_sign_in(request))
        except DomainError as error:
            return error_page(request, error.status, error.message, principal=self.principal, headers=error.headers)
        except Http404:
            return error_page(request, 404, "No such page.", principal=self.principal)

    @staticmethod
    def after_sign_in(request: HttpRequest) -> str:
        """Where signing in leads back to: the page asked for; for a form sent after the session ended, the page the
        form was on (its target only takes the form's POST), else the start page."""
        if request.method == "GET":
            return request.get_full_path()
        referer = urlsplit(request.headers.get("Referer", ""))
        same_site = referer.netloc == request.get_host() and referer.path.startswith("/")
        return (referer.path + (f"?{referer.query}" if referer.query else "")) if same_site else "/"

    def page(self, context: dict | None = None, *, status: int = 200, template: str | None = None) -> HttpResponse:
        """Render now, inside the transaction: querysets in the context are read as the caller."""
        context = {"principal": self.principal, "nav": self.nav, **(context or {})}
        return render(self.request, template or self.template_name, context, status=status)
