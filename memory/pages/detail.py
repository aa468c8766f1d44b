"""A memory's page /memories/<id>: what GET /memories/<id> answers, laid out for a person, and the actions of
POST /memories/<id>/forget, /restore, /checks and a correction through remember (POST /memories with a supersedes
link). Every action is a POST form; success redirects with a message; a refusal re-renders the page with it (4xx)."""
import json

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from memory import selectors, services
from memory.models import Link, Memory
from memory.pages.forms import CheckForm, CorrectionForm, ForgetForm
from memory.services import LinkSpec, MemoryDraft
from plumbing.errors import Code, DomainError, Invalid, StateConflict
from tenants.pages import TenantPage
from tenants.selectors import api_token_list

ACTIONS = {"forget", "restore", "check", "correct"}
# Which field of the correction form a refusal of remember is about (the rest show as a message).
CORRECTION_FIELDS = {Code.REASON_REQUIRED: "reason", Code.CONTENT_TOO_LARGE: "content"}
# A check's refusals that are about the correction it names (the checked memory itself was found before).
CHECK_FIELDS = {Code.NOT_FOUND: "corrected_by", Code.SUCCESSOR_NOT_LIVE: "corrected_by",
                Code.SUCCESSOR_LESS_VISIBLE: "corrected_by", Code.INVALID: "corrected_by"}


class SeeOther(HttpResponseRedirect):
    status_code = 303  # after a POST: GET the page


class MemoryPage(TenantPage):
    template_name = "memory/detail.html"
    nav = "feed"

    def get(self, request: HttpRequest, memory_id: str) -> HttpResponse:
        return self.memory_page(memory_id)

    def prepare_post(self, request: HttpRequest, memory_id: str) -> dict:
        """Outside the transaction: a valid correction is embedded, as POST /memories embeds a write."""
        action = request.POST.get("action", "")
        if action not in ACTIONS:
            raise Invalid(Code.INVALID, "Unknown action.")
        if action != "correct":
            return {"action": action}
        form = CorrectionForm(request.POST)
        embedded = services.memory_embedding(form.cleaned_data["content"]) if form.is_valid() else None
        return {"action": action, "form": form, "embedded": embedded}

    def post(self, request: HttpRequest, memory_id: str) -> HttpResponse:
        memory = selectors.memory_get(memory_id=memory_id)  # 404 before any form is looked at
        action = self.prepared["action"]
        form = self.prepared.get("form") or {"forget": ForgetForm, "check": CheckForm}.get(action, forms.Form)(
            request.POST)
        if not form.is_valid():
            return self.memory_page(memory_id, {action: form}, status=400)
        data = form.cleaned_data
        try:
            with transaction.atomic():  # a refusal leaves nothing behind, even what a service wrote before refusing
                if action == "forget":
                    services.memory_forget(principal=self.principal, memory_id=memory_id,
                                           reason=data["reason"] or None)
                    done, target = "Forgotten. Restore brings it back.", memory_id
                elif action == "restore":
                    services.memory_restore(principal=self.principal, memory_id=memory_id)
                    done, target = "Restored: live again.", memory_id
                elif action == "check":
                    check = services.memory_check_record(
                        principal=self.principal, memory_id=memory_id, outcome=data["outcome"],
                        detail=data["detail"], corrected_by=data["corrected_by"] or None)
                    done, target = f"Check recorded ({check.outcome}).", memory_id
                else:
                    target = self.correct(memory, data)
                    done = f"Correction stored; it replaces {memory_id}."
        except DomainError as error:
            field = {"correct": CORRECTION_FIELDS, "check": CHECK_FIELDS}.get(action, {}).get(error.code)
            if field:
                form.add_error(field, error.message)
            else:
                messages.error(request, error.message)
            # An unknown correction is a mistake in the form, beside its field: 400, not "this page is missing".
            status = 400 if field and error.code == Code.NOT_FOUND else error.status
            return self.memory_page(memory_id, {action: form}, status=status)
        messages.success(request, done)
        return SeeOther(f"/memories/{target}")

    def correct(self, memory: Memory, data: dict) -> str:
        """Remember the correction with a supersedes link to ``memory``: the API's declared supersede, nothing else."""
        draft = MemoryDraft(
            content=data["content"], kind=memory.kind, scope=memory.scope,
            project=memory.project.slug if memory.project else None,
            links=(LinkSpec(type=Link.Type.SUPERSEDES, dst=memory.id, reason=data["reason"] or None),),
            namespace=memory.namespace, key=memory.key,  # a keyed memory's correction is the key's new value
        )
        result = services.memory_remember(principal=self.principal, draft=draft, embedded=self.prepared["embedded"])
        if memory.id not in result.superseded:
            # remember skips a supersede it cannot apply; a correction that replaces nothing is not one: undo it.
            why = next((s["reason"] for s in result.skipped if s["dst"] == memory.id), "missing")
            raise StateConflict(Code.NOT_LIVE, {
                "dead": f"This memory is {memory.status}: only a live memory can be corrected; nothing was stored.",
                "self": "The correction says what this memory already says; nothing was stored.",
            }.get(why, "This memory could not be corrected; nothing was stored."))
        return result.memory.id

    def memory_page(self, memory_id: str, bound: dict | None = None, *, status: int = 200) -> HttpResponse:
        memory = selectors.memory_get(memory_id=memory_id)
        chain = selectors.memory_chain(memory=memory)
        retirements = selectors.chain_retirements(chain=chain)
        token = (api_token_list(principal=self.principal).filter(pk=memory.token_id).first()
                 if memory.token_id else None)  # a token is visible to its user and admins; others see its id
        bound = bound or {}
        events = selectors.memory_events(memory=memory)
        return self.page({
            "memory": memory,
            "label": _label(memory),
            "flags": selectors.memory_flags([memory])[memory.id],
            "token": token,
            "chain": [(version, retirements.get(version.id)) for version in chain],
            "links": selectors.memory_links(memory=memory),
            "checks": selectors.memory_checks(memory=memory),
            "conflicts": selectors.memory_conflicts(memory=memory),
            "events": [(event, json.dumps(event.payload, default=str)) for event in events],
            "forget_form": bound.get("forget") or ForgetForm(),
            "check_form": bound.get("check") or CheckForm(),
            "correction_form": bound.get("correct") or CorrectionForm(),
        }, status=status)


def _label(memory: Memory, chars: int = 60) -> str:
    first_line = memory.content.strip().splitlines()[0] if memory.content.strip() else memory.id
    return first_line if len(first_line) <= chars else first_line[: chars - 1] + "…"
