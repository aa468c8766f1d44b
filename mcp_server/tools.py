"""The MCP tools (mcp_server/): the names agents know for the REST operations, the descriptions that teach its workflow, and for
each, what runs before the caller's transaction (validation by the REST serializers, embedding) and what runs in it
(the REST view's service or selector and output serializer)."""
from collections.abc import Callable
from dataclasses import dataclass

from rest_framework import exceptions

from plumbing.timing import StepTimer
from hygiene import services as hygiene_services
from hygiene.api import ConflictOutput, ConflictResolveView, ConflictsView
from memory import selectors, services
from memory.api import ChecksView, ForgetView, LinksView, LoopsView, MemoriesView, MemoryDetailView, RecallView
from memory.api.objects import CheckOutput, LinkOutput, MemoryOutput
from tenants.auth import Principal
from tenants.views import validated

# What an agent reads once per session (clients put it into the model's context): the workflow.
INSTRUCTIONS = (
    "zero-memory keeps memories for you and your team, and knows which version of a fact is current. "
    "Recall before you write. When a new memory replaces a stored one, say so: remember it with "
    '{"type": "supersedes", "dst": "<old id>", "reason": "<what changed>"} in links; the old version is retired '
    "at once, stays readable as history, and restore_memory undoes it. When you declare no supersedes, remember "
    "answers with similar_existing: if one of them is the fact you just replaced, send the same remember again with a "
    "supersedes link to its id. Do not forget and re-remember to update a fact: that loses the version chain."
)

Work = Callable[[Principal, StepTimer], dict]  # runs inside the caller's one transaction; returns the REST body


@dataclass(frozen=True)
class ToolSpec:
    name: str
    operation: str  # the operationId of the REST operation whose schemas (and code) the tool shares
    description: str
    prepare: Callable[[dict], Work]  # outside any transaction: validation and slow work; returns what runs inside
    read_only: bool = False
    arguments: dict[str, str] | None = None  # descriptions of arguments, added to the operation's schema


def _id(arguments: dict, name: str) -> str:
    """An id that REST takes in the path (an unknown one answers 404 there, as here)."""
    value = arguments.get(name)
    if value is None:
        raise exceptions.ValidationError({name: ["This field is required."]})
    if not isinstance(value, str):
        raise exceptions.ValidationError({name: ["Not a valid string."]})
    return value


def _remember(arguments: dict) -> Work:
    prepared = MemoriesView.prepare(arguments)
    return lambda principal, steps: MemoriesView.remember(principal, prepared, steps)[0]


def _recall(arguments: dict) -> Work:
    prepared = RecallView.prepare(arguments)
    return lambda principal, steps: RecallView.recall(principal, prepared, steps)


def _forget(arguments: dict) -> Work:
    memory_id, data = _id(arguments, "memory_id"), validated(ForgetView.Input, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        memory = services.memory_forget(principal=principal, memory_id=memory_id, reason=data.get("reason"))
        return {"memory": MemoryOutput(memory).data}

    return work


def _restore(arguments: dict) -> Work:
    memory_id = _id(arguments, "memory_id")

    def work(principal: Principal, _steps: StepTimer) -> dict:
        return {"memory": MemoryOutput(services.memory_restore(principal=principal, memory_id=memory_id)).data}

    return work


def _link(arguments: dict) -> Work:
    data = validated(LinksView.Input, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        return {"link": LinkOutput(services.memory_link(principal=principal, **data)).data}

    return work


def _get_memory(arguments: dict) -> Work:
    memory_id = _id(arguments, "memory_id")
    return lambda _principal, _steps: MemoryDetailView.detail(memory_id)


def _list_conflicts(arguments: dict) -> Work:
    status = validated(ConflictsView.Query, arguments).get("status")
    return lambda _principal, _steps: ConflictsView.results(status)


def _resolve_conflict(arguments: dict) -> Work:
    conflict_id, data = _id(arguments, "conflict_id"), validated(ConflictResolveView.Input, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        conflict = hygiene_services.conflict_resolve(
            principal=principal, conflict_id=conflict_id, decision=data["decision"], winner=data.get("winner")
        )
        return {"conflict": ConflictOutput(conflict).data}

    return work


def _list_loops(arguments: dict) -> Work:
    query = validated(LoopsView.Query, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        loops = selectors.loop_list(user=principal.user, state=query["state"], project_slug=query.get("project"))
        return {"results": MemoryOutput(loops, many=True).data}

    return work


def _add_check(arguments: dict) -> Work:
    memory_id, data = _id(arguments, "memory_id"), validated(ChecksView.Input, arguments)

    def work(principal: Principal, _steps: StepTimer) -> dict:
        check = services.memory_check_record(principal=principal, memory_id=memory_id, **data)
        return {"check": CheckOutput(check).data}

    return work


TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in [
    ToolSpec(
        "remember", "remember",
        "Store a memory for yourself (scope personal) or your project's team (scope project). Recall the topic "
        "first. If this memory replaces one that is stored, declare it in links as "
        '{"type": "supersedes", "dst": "<old id>", "reason": "<what changed>"}: the old version is retired in the '
        "same write and stays readable as history (restore_memory undoes it). When you declared no supersedes, the "
        "answer lists similar_existing, your nearest live memories, with a hint: if one of them is the fact you just "
        "replaced, call remember again with the same content and a supersedes link to its id (the repeat is "
        "absorbed, the declaration still applies). A watcher token cannot declare supersedes.",
        _remember,
        arguments={
            "content": "The memory, one self-contained statement (1 to 16000 characters).",
            "kind": "What it is; task and open-question are loops that stay open until superseded.",
            "scope": "personal: only you, across your projects; project: the project's members. Default: project "
                     "when a project is given or the token has one.",
            "project": "The project's slug; default the token's project.",
            "links": 'Relations to stored memories. {"type": "supersedes", "dst": "mem_...", "reason": "..."} '
                     "retires the memory this one replaces (at most 10).",
            "session_id": "Your conversation's id: a near-verbatim repeat in the same session is absorbed.",
            "valid_from": "When the fact starts to hold (ISO-8601).",
            "valid_until": "When the fact stops holding (ISO-8601); after it, recall flags the memory expired.",
            "metadata": "Any JSON object, up to 8 KB.",
            "namespace": 'Labels that group keyed memories, outermost first, e.g. ["users", "u-1", "prefs"].',
            "key": "A name for this fact in its namespace: remembering the same namespace and key again replaces the "
                   "memory that holds it (a declared supersede, kept as history).",
        },
    ),
    ToolSpec(
        "recall", "recall",
        "Search the memories you can see, by meaning and by words. Call it before remember, to find the memory a "
        "new one replaces. Results are current versions, best first, each with flags (expired, superseded, "
        "in_conflict, disagrees, provisional, open_loop, failed_check) and why it was found; read warnings first: a "
        "failed check there says a memory may be wrong. Two memories in an open conflict come back together; two "
        "that give different values for the same thing are flagged disagrees and name each other (disagrees_with, "
        "with when each was written): decide which is current, and remember it with a supersedes link. "
        "include_history adds superseded versions, each ranked below its successor; as_of shows the store as it "
        "stood at that time.",
        _recall, read_only=True,
        arguments={
            "query": "What you want to know, in your own words.",
            "project": "Only this project's memories (and your personal ones).",
            "k": "How many results (1 to 50, default 10).",
            "include_history": "Also return superseded versions, flagged, each with its successor and the reason.",
            "as_of": "A past time (ISO-8601): each memory as it stood then.",
            "namespace_prefix": "Only memories whose namespace starts with these labels.",
        },
    ),
    ToolSpec(
        "forget", "memory_forget",
        "Retire a live memory that is wrong or no longer wanted (status forgotten; restore_memory undoes it). To "
        "replace a fact with a newer version, do not forget it: remember the new one with a supersedes link, which "
        "keeps the version chain.",
        _forget,
        arguments={"memory_id": "The memory's id (mem_...).", "reason": "Why it is forgotten."},
    ),
    ToolSpec(
        "restore_memory", "memory_restore",
        "Undo a forget or a supersede exactly: the memory is live again, its successor stays live, and a task or "
        "question closed by the supersede reopens.",
        _restore,
        arguments={"memory_id": "The retired memory's id (mem_...)."},
    ),
    ToolSpec(
        "link", "link_create",
        "Record a relation between two stored memories: relates_to, derived_from, contradicts, depends_on or "
        "supersedes. A link is a graph edge only: even supersedes retires nothing and closes no loop. To replace a "
        "memory, remember the newer one with a supersedes link instead.",
        _link,
        arguments={"src": "The memory the relation starts from (mem_...).", "dst": "The memory it points to."},
    ),
    ToolSpec(
        "get_memory", "memory_detail",
        "Read one memory with its version chain (oldest to newest, through supersedes links), its links, events, "
        "checks and conflicts.",
        _get_memory, read_only=True,
        arguments={"memory_id": "The memory's id (mem_...)."},
    ),
    ToolSpec(
        "list_conflicts", "conflicts_list",
        "List conflicts that the hygiene judge found between memories you can see (status open: the review queue), "
        "with the judge's relation, confidence and rationale. Decide one with resolve_conflict.",
        _list_conflicts, read_only=True,
    ),
    ToolSpec(
        "resolve_conflict", "conflicts_resolve",
        'Decide an open conflict: {"decision": "supersede", "winner": "<id>"} retires the other memory of the pair; '
        '{"decision": "keep_both"} records that both hold. A watcher token cannot resolve.',
        _resolve_conflict,
        arguments={"conflict_id": "The conflict's id (cfl_...).", "winner": "With supersede: the memory that stays."},
    ),
    ToolSpec(
        "list_loops", "loops",
        "List open tasks and open questions (or, with state closed, the closed ones). A loop closes when a newer "
        "memory supersedes it: remember the outcome with a supersedes link to the task or question.",
        _list_loops, read_only=True,
    ),
    ToolSpec(
        "add_check", "memory_check",
        "Record that you verified a memory: outcome pass or fail, with detail. A failed check naming corrected_by "
        "(a memory that states the right fact) retires the checked memory in favour of the correction; without it, "
        "recall shows the failure as a warning.",
        _add_check,
        arguments={"memory_id": "The checked memory's id (mem_...).",
                   "corrected_by": "With fail: the id of a memory that states the right fact."},
    ),
]}
