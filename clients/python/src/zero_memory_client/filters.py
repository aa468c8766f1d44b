"""LangGraph's search filters, applied to a value on the client side (the server does not index values).

`{"color": "red", "score": {"$gte": 4}}`: every field's condition must hold. A condition is a bare value (equality)
or a dict of operators: `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`. Numbers compare as numbers (9 < 10, and 1
equals 1.0 but not `true`), strings as strings; values of different JSON types never order; a dict or a list
equals only the same dict or list. A missing field reads as None (so `{"$ne": x}` holds for it).
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

_ORDER: dict[str, Callable[[Any, Any], bool]] = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt,
                                                  "$lte": operator.le}


def matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether a value passes a LangGraph filter: every field's condition holds. A condition is a bare value
    (equality) or a dict of operators; a missing field reads as None."""
    return all(_holds(value.get(name), condition) for name, condition in (filter or {}).items())


def _holds(actual: Any, condition: Any) -> bool:
    if isinstance(condition, dict) and any(str(name).startswith("$") for name in condition):
        return all(_operator(actual, name, expected) for name, expected in condition.items())
    return _same(actual, condition)


def _operator(actual: Any, name: str, expected: Any) -> bool:
    if name == "$eq":
        return _same(actual, expected)
    if name == "$ne":
        return not _same(actual, expected)
    if name not in _ORDER:
        raise ValueError(f"Unsupported filter operator: {name}")
    if (_is_number(actual) and _is_number(expected)) or (isinstance(actual, str) and isinstance(expected, str)):
        return _ORDER[name](actual, expected)
    return False  # JSON values of different types do not order


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(actual: Any, expected: Any) -> bool:
    """JSON equality: 1 equals 1.0 but not true, dicts and lists compare by their members."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and actual.keys() == expected.keys()
                and all(_same(actual[k], v) for k, v in expected.items()))
    if isinstance(expected, (list, tuple)):
        return (isinstance(actual, (list, tuple)) and len(actual) == len(expected)
                and all(_same(a, e) for a, e in zip(actual, expected)))
    return actual == expected
