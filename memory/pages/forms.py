"""The forms of the memory pages: the same limits as the REST serializers in memory/api/."""
from django import forms
from django.http import QueryDict

from memory.api.objects import MAX_CONTENT_CHARS, MEMORY_ID
from memory.models import Check, Memory

FEED_PAGE_SIZE = 25
MAX_PAGE_SIZE = 100  # the API's feed allows up to 200; a page of cards stays readable at 100
SEARCH_RESULTS = 20  # recall's k for a search from the feed


class PageForm(forms.Form):
    """Labels without Django's trailing colon: "Search", not "Search:"."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class SearchInput(forms.TextInput):
    input_type = "search"


def _any(label: str, choices) -> list[tuple[str, str]]:
    return [("", label), *choices]


class ProjectChoiceMixin:
    """A project select whose choices are the caller's projects (read inside the transaction)."""

    def set_projects(self, slugs: list[str]) -> None:
        self.fields["project"].choices = _any("Any project", [(slug, slug) for slug in slugs])


class FeedForm(ProjectChoiceMixin, PageForm):
    LIFECYCLES = [("live", "Live"), ("superseded", "Superseded"), ("forgotten", "Forgotten"), ("all", "All")]

    q = forms.CharField(label="Search", required=False, max_length=MAX_CONTENT_CHARS, widget=SearchInput,
                        help_text="Recall: by meaning and by words. Empty: the newest memories.")
    lifecycle = forms.ChoiceField(label="Lifecycle", choices=LIFECYCLES, required=False)
    kind = forms.ChoiceField(label="Kind", choices=_any("Any kind", Memory.Kind.choices), required=False)
    project = forms.ChoiceField(label="Project", choices=[("", "Any project")], required=False)
    scope = forms.ChoiceField(label="Scope", choices=_any("Any scope", Memory.Scope.choices), required=False)
    # Not shown as fields: the pager carries them from page to page.
    cursor = forms.CharField(label="Page", required=False, max_length=500, widget=forms.HiddenInput)
    limit = forms.IntegerField(label="Page size", required=False, min_value=1, max_value=MAX_PAGE_SIZE,
                               widget=forms.HiddenInput)

    def clean_lifecycle(self) -> str:
        return self.cleaned_data["lifecycle"] or "live"  # the default hides retired versions

    def clean_limit(self) -> int:
        return self.cleaned_data["limit"] or FEED_PAGE_SIZE

    def clean(self) -> dict:
        data = super().clean()
        if data.get("q", "").strip() and data.get("lifecycle") == "forgotten":
            self.add_error("lifecycle", "Search covers live and superseded memories; forgotten ones only show "
                                        "in the list (clear the search).")
        return data

    @classmethod
    def query_of(cls, params: QueryDict) -> str | None:
        """The search query when it is valid (for embedding before the transaction), else None."""
        try:
            query = cls.base_fields["q"].clean(params.get("q", ""))
        except forms.ValidationError:
            return None
        return query.strip() or None


class LoopsForm(ProjectChoiceMixin, PageForm):
    project = forms.ChoiceField(label="Project", choices=[("", "Any project")], required=False)
    state = forms.ChoiceField(label="State", choices=[("open", "Open"), ("closed", "Closed")], required=False)

    def clean_state(self) -> str:
        return self.cleaned_data["state"] or "open"


class ForgetForm(PageForm):
    prefix = "forget"
    reason = forms.CharField(label="Reason for forgetting (optional)", required=False, max_length=2000)


class CheckForm(PageForm):
    prefix = "check"
    outcome = forms.ChoiceField(label="Outcome", choices=Check.Outcome.choices)
    detail = forms.CharField(label="What was tried", max_length=2000, widget=forms.Textarea(attrs={"rows": 3}))
    corrected_by = forms.RegexField(
        label="Corrected by (optional memory id; a failed check retires this memory in its favour)", regex=MEMORY_ID,
        required=False, error_messages={"invalid": "Not a memory id (mem_ + 26-char ULID)."})


class CorrectionForm(PageForm):
    """A new memory that supersedes the one shown (no prefix: the contract names the fields content and reason)."""

    content = forms.CharField(label="Corrected content", max_length=MAX_CONTENT_CHARS, strip=False,
                              widget=forms.Textarea(attrs={"rows": 5}))
    reason = forms.CharField(label="Why it replaces this one", required=False, max_length=2000)

    def clean_content(self) -> str:
        content = self.cleaned_data["content"]
        if not content.strip():
            raise forms.ValidationError("Write the corrected content.")
        return content
