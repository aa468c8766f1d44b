"""Sign in (password or one-time link), choose a password, sign out. The rules live in tenants/sign_in.py."""
from django import forms
from django.contrib.auth import logout
from django.contrib.auth.password_validation import password_validators_help_text_html, validate_password
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import View
from django.views.decorators.debug import sensitive_post_parameters
from django.utils.decorators import method_decorator

from plumbing.errors import PageMethods, error_page
from plumbing.parsers import text_problem
from tenants import rls, sign_in


def _safe_next(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or "/"
    allowed = url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                              require_https=request.is_secure())
    return target if allowed and not text_problem(target) else "/"


def _clean_text(value: str) -> str:
    if problem := text_problem(value):
        raise ValidationError(problem)
    return value


class SignInForm(forms.Form):
    org = forms.SlugField(label="Organization", max_length=64, widget=forms.TextInput(attrs={"autocomplete": "organization"}))
    email = forms.EmailField(max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "username"}))
    password = forms.CharField(max_length=4096, strip=False,
                               widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
                               validators=[_clean_text])


@method_decorator(sensitive_post_parameters("password"), name="dispatch")
class SignInView(PageMethods, View):
    template_name = "zm/sign_in.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        form = SignInForm(initial={"org": request.GET.get("org", "")[:64]})
        return render(request, self.template_name, {"form": form, "next": _safe_next(request), "title": "Sign in"})

    def post(self, request: HttpRequest) -> HttpResponse:
        form = SignInForm(request.POST)
        context = {"form": form, "next": _safe_next(request), "title": "Sign in"}
        if not form.is_valid():
            return render(request, self.template_name, context, status=400)
        org, email, password = form.cleaned_data["org"], form.cleaned_data["email"], form.cleaned_data["password"]
        address = request.META.get("REMOTE_ADDR", "")
        try:
            sign_in.failures_check(email, address)
        except sign_in.SignInRefused as refused:
            form.add_error(None, refused.message)
            return render(request, self.template_name, context, status=429)
        claim = sign_in.password_claim(org, email)
        if claim is None:
            user = sign_in.password_user(None, password)  # no such account: the same hashing time, then refuse
        else:
            with rls.tenant_scope(claim.scope):
                user = sign_in.password_user(claim, password)
                if user is not None:
                    sign_in.session_start(request, user, claim.scope.org_id)
        if user is None:
            sign_in.failure_record(email, address)
            form.add_error(None, "That organization, email and password do not match an account.")
            return render(request, self.template_name, context, status=400)
        return redirect(context["next"])


class ChoosePasswordForm(forms.Form):
    password1 = forms.CharField(label="New password", strip=False, max_length=4096, validators=[_clean_text],
                                widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
                                help_text=password_validators_help_text_html())
    password2 = forms.CharField(label="New password again", strip=False, max_length=4096,
                                widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))

    def __init__(self, *args, user, optional: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        for field in self.fields.values():
            field.required = not optional

    def clean(self) -> dict:
        data = super().clean()
        first, second = data.get("password1"), data.get("password2")
        if first and first != second:
            self.add_error("password2", "The two passwords differ.")
        elif first:
            try:
                validate_password(first, self.user)
            except ValidationError as error:
                self.add_error("password1", error)
        return data


@method_decorator(sensitive_post_parameters("password1", "password2"), name="dispatch")
class SignInLinkView(PageMethods, View):
    """GET shows who the link signs in and asks for a password; only the POST spends the link, so a link preview
    (a chat client fetching the URL) does not."""

    template_name = "zm/sign_in_link.html"
    spent = ("This sign-in link is not valid any more: it was used, it expired, or it was changed. "
             "Ask an organization admin for a new one.")
    has_password = ("You already have a password: sign in with it at /sign-in. This link was made for someone who "
                    "has none; a forgotten password is reset by an operator (manage.py sign_in_link).")

    def get(self, request: HttpRequest, token: str) -> HttpResponse:
        return self._answer(request, token, submitted=False)

    def post(self, request: HttpRequest, token: str) -> HttpResponse:
        return self._answer(request, token, submitted=True)

    def _answer(self, request: HttpRequest, token: str, *, submitted: bool) -> HttpResponse:
        claimed = sign_in.link_claim(token)
        if claimed is None:
            return error_page(request, 410, self.spent)
        claim, state, may_reset = claimed
        with rls.tenant_scope(claim.scope):
            user = sign_in.link_user(state)
            if user is None:
                return error_page(request, 410, self.spent)
            has_password = user.has_usable_password()
            if has_password and not may_reset:
                return error_page(request, 409, self.has_password)
            form = ChoosePasswordForm(request.POST if submitted else None, user=user, optional=has_password)
            context = {"form": form, "email": user.email, "has_password": has_password, "title": "Sign in"}
            if not submitted or not form.is_valid():
                return render(request, self.template_name, context, status=400 if submitted else 200)
            if password := form.cleaned_data.get("password1"):
                user.set_password(password)
                user.save(update_fields=["password"])
            sign_in.session_start(request, user, claim.scope.org_id)
        return redirect("/")


class SignOutView(PageMethods, View):
    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        logout(request)
        return redirect("/sign-in")
