"""The one JSON parser of the API: it refuses, at parse time and for every body, what Postgres could not store.

Postgres refuses a NUL character in text and jsonb, a lone surrogate cannot be encoded as UTF-8, and jsonb has no
infinity (`1e400` parses as one); deep nesting breaks Python's recursive decoder. Checked once here, each is a 400 in
the envelope that names the field, instead of a 500 from wherever the value would first reach the database.
"""
import math
import re
from collections.abc import Callable

from rest_framework.parsers import JSONParser

from plumbing.errors import Code, Invalid, NotFound

MAX_DEPTH = 32  # API.md "Limits": nesting deeper than 32 levels -> 400
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _too_deep() -> Invalid:
    return Invalid(Code.NESTING_TOO_DEEP, f"The body is nested deeper than {MAX_DEPTH} levels.", {"limit": MAX_DEPTH})


def _unstorable(path: str, problem: str) -> Invalid:
    field = path or "body"
    return Invalid(Code.INVALID, f"{field}: {problem}", {"fields": {field: [problem]}})


def text_problem(text: str) -> str | None:
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    return "Contains a NUL character." if found.group() == "\x00" else "Contains a lone surrogate (not valid UTF-8)."


def check_path_and_query(path_params: dict, query: dict[str, list[str]], missing: Callable[[str], str]) -> None:
    """No NUL or lone surrogate of a path or query string reaches Postgres: in a path it is an unknown id, 404 with
    ``missing(name)``, the message of any unknown id (API.md: missing things answer identically); in a query, 400."""
    for name, value in path_params.items():
        if isinstance(value, str) and text_problem(value):
            raise NotFound(Code.NOT_FOUND, missing(name))
    for name, values in query.items():
        for value in [name, *values]:
            if problem := text_problem(value):
                raise Invalid(Code.INVALID, f"{name}: {problem}", {"fields": {name: [problem]}})


def check_storable(value: object) -> None:
    """Walk the parsed body once, without recursion: depth, text and numbers. Paths read like `metadata.tags[2]`."""
    stack: list[tuple[object, str, int]] = [(value, "", 1)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, dict | list) and depth > MAX_DEPTH:
            raise _too_deep()
        if isinstance(node, dict):
            for key, child in node.items():
                if problem := text_problem(key):
                    raise _unstorable(path, f"A key {problem[0].lower()}{problem[1:]}")
                stack.append((child, f"{path}.{key}" if path else key, depth + 1))
        elif isinstance(node, list):
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(node))
        elif isinstance(node, str):
            if problem := text_problem(node):
                raise _unstorable(path, problem)
        elif isinstance(node, float) and not math.isfinite(node):
            raise _unstorable(path, "A number out of range (Postgres stores no infinity).")


class StrictJSONParser(JSONParser):
    """DRF's JSON parser (NaN and Infinity are already malformed JSON there), plus `check_storable`."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:  # json's C decoder recurses once per level: thousands of levels exhaust the stack
            raise _too_deep() from None
        check_storable(data)
        return data
