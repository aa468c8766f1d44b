"""LangGraph's long-term memory store on zero-memory: `ZeroMemoryStore`, a `langgraph.store.base.BaseStore`.

Swap `InMemoryStore()` for `ZeroMemoryStore(url, token)` and a graph's `store.put/get/search/delete` become keyed
memories on the server (`pip install 'zero-memory-client[langgraph]'`). What maps to what:

- `put(namespace, key, value)`: `POST /memories` with `namespace`, `key`, `metadata={"value": value}` and, as the
  text the server embeds, the value's JSON (or the texts at the `index` paths). Over an existing key the server
  supersedes the live holder (a declared supersede, link origin `key`): the old value stays in the version chain
  (`client.memory_history(id)`). The same value again is absorbed (`created: false`): nothing changes. An
  organization that requires supersede reasons refuses a put over a held key (`400 reason_required`): a put carries
  no reason, and the store does not invent one.
- `delete` (and `put(value=None)`): the live holder is forgotten (`POST /memories/{id}/forget`); it stays readable
  in the history and can be restored. Nothing there: nothing happens.
- `get`: the live memory of (namespace, key), one request; `created_at` is when the first version of its current
  chain was written (the memory's `key_since`), `updated_at` when this version was.
- `search` with a query: recall (meaning and words) within `namespace_prefix`; `SearchItem.score` is recall's fused
  score (higher is better, not a cosine similarity). Recall returns at most 50 memories, so with a query only the
  best 50 are filtered, offset and limited: a `filter` may match fewer than `limit` items although more exist.
  Without a query: the feed within the prefix, newest version first, paged until `offset + limit` items match.
  `filter` applies to the value on this side, with LangGraph's operators (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`,
  `$lte`; a bare value means `$eq`; numbers compare as numbers, strings as strings, a dict equals a dict).
  A search result is dated like `get`'s item.
- `list_namespaces`: `GET /namespaces` ("*" matches any one label).

A batch's reads (get, search, list_namespaces) see the store as it was before the batch's writes; the writes then
apply in the order given, so the last put of a (namespace, key) wins, as in LangGraph's InMemoryStore. `abatch` runs
the reads concurrently, then the writes (concurrently across keys, in order for one key).

TTL is not supported (`supports_ttl = False`): the memory's `valid_until` is not an expiry. A memory past it stays
readable and is only flagged `expired` in recall, while a LangGraph TTL makes the item disappear; a `ttl` raises
NotImplementedError rather than silently keeping what the caller asked to drop.

`project`, `scope` and `kind` say where this store's writes go; reads see every keyed memory the token can see, since
a key is unique among the organization's live memories (a holder the token cannot see makes a put `403
target_invisible`). Server errors are raised as the client's exceptions (`.status`, `.code`).
"""
from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

try:
    from langgraph.store.base import (
        NOT_PROVIDED,
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        NotProvided,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        get_text_at_path,
    )
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError("ZeroMemoryStore needs LangGraph: pip install 'zero-memory-client[langgraph]'") from exc

try:
    from langgraph.store.base import validate_op_namespace
except ImportError:  # pragma: no cover - LangGraph before 1.2 checks labels in its methods only
    def validate_op_namespace(op: Op) -> None:
        return None

from . import _core as core
from . import models
from ._core import UNSET, Call
from .aio import AsyncZeroMemory
from .client import ZeroMemory
from .errors import ConflictError, NotFound, ZeroMemoryError
from .filters import matches

if TYPE_CHECKING:
    from typing import Self  # Python 3.11; only read by type checkers here

T = TypeVar("T")
# One store operation, written once for both clients: it yields the Calls to send and receives their answers (or
# has their error thrown in), so the sync and the async batch cannot drift apart.
Steps = Generator[Call[Any], Any, T]

FORGET_REASON = "deleted through the LangGraph store"
RECALL_MAX = 50  # the server's largest k
FEED_PAGE = 200  # the feed's largest page
NAMESPACES_PAGE = 1000  # the namespaces listing's largest page


class ZeroMemoryStore(BaseStore):
    """A LangGraph store whose items are keyed memories of a zero-memory server (see the module's docstring).

    >>> store = ZeroMemoryStore("http://127.0.0.1:8000", token, project="web")
    >>> store.put(("users", "u1"), "preferences", {"theme": "dark"})
    >>> store.get(("users", "u1"), "preferences").value
    {'theme': 'dark'}

    `timeout` and `retries` configure the underlying clients; `client` is the sync `ZeroMemory`, for what the store
    does not show (a key's history: `store.client.memory_history(memory_id)`). Close it with `close()` (`aclose()`
    for the asyncio client of the running loop) or use it as a context manager.
    """

    supports_ttl = False

    def __init__(self, base_url: str, token: str, *, project: str | None = None, scope: str | None = None,
                 kind: str = "note", timeout: float = 10.0, retries: int = 3) -> None:
        self.client = ZeroMemory(base_url, token, timeout=timeout, retries=retries)
        self._connect = (base_url, token, timeout, retries)
        self._write_fields: dict[str, Any] = {"kind": kind}
        if project is not None:
            self._write_fields["project"] = project
        if scope is not None:
            self._write_fields["scope"] = scope
        # httpx's AsyncClient belongs to the event loop it first ran on: one per loop.
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncZeroMemory] = (
            weakref.WeakKeyDictionary())

    # --- LangGraph's two entry points --------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        reads, writes, results = _plan(ops)
        for index, op in reads:
            results[index] = _drive(self.client.send, self._read(op))
        for op in writes:
            _drive(self.client.send, self._put(op))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        reads, writes, results = _plan(ops)
        send = self._async_client().send
        found = await asyncio.gather(*(_adrive(send, self._read(op)) for _, op in reads))
        for (index, _), value in zip(reads, found):
            results[index] = value
        by_item: dict[tuple[tuple[str, ...], str], list[PutOp]] = {}
        for op in writes:
            by_item.setdefault((tuple(op.namespace), op.key), []).append(op)
        await asyncio.gather(*(self._aput_in_order(send, puts) for puts in by_item.values()))
        return results

    def put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any],
            index: Literal[False] | list[str] | None = None, *, ttl: float | None | NotProvided = NOT_PROVIDED) -> None:
        _refuse_ttl(ttl)  # before BaseStore's own refusal, to say why
        super().put(namespace, key, value, index, ttl=ttl)

    async def aput(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any],
                   index: Literal[False] | list[str] | None = None, *,
                   ttl: float | None | NotProvided = NOT_PROVIDED) -> None:
        _refuse_ttl(ttl)
        await super().aput(namespace, key, value, index, ttl=ttl)

    # --- lifetime ----------------------------------------------------------------------------------------------

    def close(self) -> None:
        self.client.close()

    async def aclose(self) -> None:
        client = self._async_clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
        self.close()

    def _async_client(self) -> AsyncZeroMemory:
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            base_url, token, timeout, retries = self._connect
            client = self._async_clients[loop] = AsyncZeroMemory(base_url, token, timeout=timeout, retries=retries)
        return client

    async def _aput_in_order(self, send: Callable[[Call[Any]], Awaitable[Any]], puts: list[PutOp]) -> None:
        for op in puts:
            await _adrive(send, self._put(op))

    # --- the operations, as Steps ------------------------------------------------------------------------------

    def _read(self, op: GetOp | SearchOp | ListNamespacesOp) -> Steps[Any]:
        if isinstance(op, GetOp):
            # LangGraph puts nothing in the empty namespace, and the feed reads `key` without `namespace` as the
            # key in any namespace: asking would find other namespaces' items.
            return _get(op.namespace, op.key) if op.namespace else _nothing()
        if isinstance(op, SearchOp):
            if op.query and op.query.strip():
                return _search_by_query(op)
            return _search_feed(op)
        return _list_namespaces(op)

    def _put(self, op: PutOp) -> Steps[None]:
        if op.value is None:
            return _delete(op.namespace, op.key) if op.namespace else _nothing()
        value = core.encode(dict(op.value))  # datetimes as ISO-8601, as the server will keep them
        fields = {**self._write_fields, "namespace": list(op.namespace), "key": op.key, "metadata": {"value": value}}
        return _remember(content_of(value, op.index), fields)


def _plan(ops: Iterable[Op]) -> tuple[list[tuple[int, Any]], list[PutOp], list[Result]]:
    """The batch's reads with their places, its writes in order, and the results list to fill; every op checked
    before anything is sent."""
    reads: list[tuple[int, Any]] = []
    writes: list[PutOp] = []
    listed = list(ops)
    for index, op in enumerate(listed):
        if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
            raise TypeError(f"Unknown operation type: {type(op)}")
        validate_op_namespace(op)
        if isinstance(op, PutOp):
            _refuse_ttl(op.ttl)
            writes.append(op)
        else:
            reads.append((index, op))
    return reads, writes, [None] * len(listed)


def _refuse_ttl(ttl: Any) -> None:
    if ttl is not None and ttl is not NOT_PROVIDED:
        raise NotImplementedError(
            "ZeroMemoryStore does not support TTL: a memory's valid_until keeps it readable (flagged expired in "
            "recall) instead of removing it. Put without ttl, and delete the item when it should go.")


def _drive(send: Callable[[Call[Any]], Any], steps: Steps[T]) -> T:
    answer: Any = None
    error: ZeroMemoryError | None = None
    while True:
        try:
            call = steps.throw(error) if error is not None else steps.send(answer)
        except StopIteration as done:
            return done.value
        try:
            answer, error = send(call), None
        except ZeroMemoryError as exc:
            answer, error = None, exc


async def _adrive(send: Callable[[Call[Any]], Awaitable[Any]], steps: Steps[T]) -> T:
    answer: Any = None
    error: ZeroMemoryError | None = None
    while True:
        try:
            call = steps.throw(error) if error is not None else steps.send(answer)
        except StopIteration as done:
            return done.value
        try:
            answer, error = await send(call), None
        except ZeroMemoryError as exc:
            answer, error = None, exc


def content_of(value: Mapping[str, Any], index: Any) -> str:
    """The text the server embeds for a value: its JSON, or with `index` a list of paths the texts found there, one
    a line (the JSON again when none is found). `index=False` still needs a text: the JSON."""
    whole = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if not isinstance(index, (list, tuple)):
        return whole
    texts = [text for path in index for text in get_text_at_path(value, path) if text.strip()]
    return "\n".join(texts) or whole


def _nothing() -> Steps[None]:
    yield from ()  # sends nothing


def _remember(content: str, fields: dict[str, Any]) -> Steps[None]:
    yield core.remember(content, fields)


def _item_filter(namespace: Sequence[str], key: str, **more: Any) -> dict[str, Any]:
    return {"namespace": list(namespace), "key": key, **more}


def _delete(namespace: Sequence[str], key: str) -> Steps[None]:
    page: models.FeedPage = yield core.feed(None, _item_filter(namespace, key, limit=1))
    for memory in page.results:
        try:
            yield core.memory_forget(memory.id, FORGET_REASON)
        except ConflictError as exc:  # forgotten or replaced meanwhile: no longer live, which is what was asked
            if exc.code != "not_live":
                raise
        except NotFound:  # purged meanwhile
            pass


def _get(namespace: Sequence[str], key: str) -> Steps[Item | None]:
    page: models.FeedPage = yield core.feed(None, _item_filter(namespace, key, limit=1))
    if not page.results:
        return None
    live = page.results[0]
    return Item(value=value_of(live), key=key, namespace=tuple(namespace), created_at=_created(live),
                updated_at=live.created_at)


def _created(memory: models.Memory) -> Any:
    """When the item began: the first version of the memory's chain (a server before key_since: this version)."""
    return memory.key_since or memory.created_at


def value_of(memory: models.Memory) -> dict[str, Any]:
    """The stored value; a keyed memory written without one (through the API) reads as its content."""
    value = (memory.metadata or {}).get("value")
    return value if isinstance(value, dict) else {"content": memory.content}


def _search_item(memory: models.Memory, score: float | None = None) -> SearchItem:
    return SearchItem(namespace=tuple(memory.namespace or ()), key=memory.key or "", value=value_of(memory),
                      created_at=_created(memory), updated_at=memory.created_at, score=score)


def _prefix_fields(prefix: Sequence[str]) -> dict[str, Any]:
    return {"namespace_prefix": list(prefix)} if prefix else {}


def _search_by_query(op: SearchOp) -> Steps[list[SearchItem]]:
    wanted = op.offset + op.limit
    if op.limit <= 0 or op.offset >= RECALL_MAX:
        return []
    # Unkeyed memories are not items; without a prefix they take places in recall's answer, so ask for them all.
    k = RECALL_MAX if op.filter or not op.namespace_prefix else min(RECALL_MAX, wanted)
    found: models.RecallResult = yield core.recall(op.query or "", {"k": k, **_prefix_fields(op.namespace_prefix)})
    items = [_search_item(hit.memory, hit.score) for hit in found.results
             if hit.memory.key is not None and matches(value_of(hit.memory), op.filter)]
    return items[op.offset:wanted]


def _search_feed(op: SearchOp) -> Steps[list[SearchItem]]:
    wanted = op.offset + op.limit
    if op.limit <= 0:
        return []
    fields = {"limit": FEED_PAGE if op.filter else max(1, min(FEED_PAGE, wanted)),
              **_prefix_fields(op.namespace_prefix)}
    items: list[SearchItem] = []
    cursor: str | None = None
    while True:
        page: models.FeedPage = yield core.feed(cursor, fields)
        for memory in page.results:
            if memory.key is not None and matches(value_of(memory), op.filter):
                items.append(_search_item(memory))
                if len(items) >= wanted:
                    return items[op.offset:wanted]
        if page.next_cursor is None:
            return items[op.offset:wanted]
        cursor = page.next_cursor


def _list_namespaces(op: ListNamespacesOp) -> Steps[list[tuple[str, ...]]]:
    paths: dict[str, Any] = {"prefix": UNSET, "suffix": UNSET}
    for condition in op.match_conditions or ():
        if condition.match_type not in paths:
            raise ValueError(f"Unsupported match type: {condition.match_type}")
        if paths[condition.match_type] is not UNSET:
            raise NotImplementedError(f"The server takes one {condition.match_type} condition at most.")
        paths[condition.match_type] = list(condition.path)
    depth = UNSET if op.max_depth is None else op.max_depth
    listed: list[tuple[str, ...]] = []
    offset = op.offset
    while len(listed) < op.limit:
        size = min(NAMESPACES_PAGE, op.limit - len(listed))
        page = yield core.namespaces(paths["prefix"], paths["suffix"], depth, size, offset)
        listed.extend(page)
        if len(page) < size:
            break
        offset += size
    return listed


__all__ = ["ZeroMemoryStore", "content_of", "matches", "value_of"]
