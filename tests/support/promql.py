"""A small PromQL checker for the alerts and the dashboard of k8s/monitoring (no PromQL parser is packaged for Python
in the index this project installs from). It is no full grammar: it tokenizes the expression and checks what goes
wrong in practice: brackets that do not balance, an unknown function, a label matcher or a range that does not
parse, a selector without a metric name. It returns the selectors and the grouping labels, so that a test can check
the names against the metrics the server exports."""
import re
from dataclasses import dataclass, field

FUNCTIONS = {
    "abs", "absent", "avg_over_time", "ceil", "changes", "clamp_max", "clamp_min", "count_over_time", "delta",
    "deriv", "floor", "histogram_quantile", "increase", "irate", "label_replace", "max_over_time", "min_over_time",
    "predict_linear", "rate", "resets", "round", "scalar", "sort", "sort_desc", "sum_over_time", "time", "vector",
    # aggregations
    "avg", "bottomk", "count", "count_values", "group", "max", "min", "quantile", "stddev", "stdvar", "sum", "topk",
}
LABEL_LISTS = {"by", "without", "on", "ignoring", "group_left", "group_right"}  # followed by (label, ...)
OPERATORS = {"and", "or", "unless", "bool"}
TOKEN = re.compile(r"""
    (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<range>\[[^\]]*\])
  | (?P<number>\d+(?:\.\d+)?(?:e[+-]?\d+)?)
  | (?P<name>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>==|!=|>=|<=|=~|!~|[-+*/%^<>=,(){}])
  | (?P<space>\s+)
""", re.VERBOSE)
RANGE = re.compile(r"\[(\d+[smhdwy]|\$__\w+)(:(\d+[smhdwy])?)?\]")  # [5m], [$__rate_interval], [1h:5m]
MATCH_OPERATORS = {"=", "!=", "=~", "!~"}


class PromQLError(ValueError):
    pass


@dataclass
class Parsed:
    selectors: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # (metric, {label: matched value})
    grouping: set[str] = field(default_factory=set)  # the labels of by (...), on (...), ...


def tokens_of(expr: str) -> list[tuple[str, str]]:
    found, position = [], 0
    while position < len(expr):
        match = TOKEN.match(expr, position)
        if match is None:
            raise PromQLError(f"unexpected {expr[position:position + 12]!r}")
        if match.lastgroup != "space":
            found.append((match.lastgroup, match.group()))
        position = match.end()
    return found


def _matchers(tokens: list[tuple[str, str]], start: int) -> tuple[int, dict[str, str]]:
    """The matchers of a selector from just after its ``{``: the index of its ``}`` and {label: value}."""
    labels, i = {}, start
    while tokens[i][1] != "}":
        try:
            (kind, label), (_, operator), (value_kind, value) = tokens[i:i + 3]
        except ValueError:
            raise PromQLError("a label matcher is cut short") from None
        if kind != "name" or operator not in MATCH_OPERATORS or value_kind != "string":
            raise PromQLError(f"not a label matcher: {label} {operator} {value}")
        labels[label] = value[1:-1]
        i += 3
        if i < len(tokens) and tokens[i][1] == ",":
            i += 1
        if i >= len(tokens):
            raise PromQLError("a selector's { is not closed")
    return i, labels


def parse(expr: str) -> Parsed:
    tokens, parsed, depth, i = tokens_of(expr), Parsed(), 0, 0
    while i < len(tokens):
        kind, text = tokens[i]
        following = tokens[i + 1][1] if i + 1 < len(tokens) else None
        if kind == "range" and not RANGE.fullmatch(text.replace(" ", "")):
            raise PromQLError(f"not a range: {text}")
        if kind == "name" and text in LABEL_LISTS:
            if following != "(":
                raise PromQLError(f"{text} needs a list of labels")
            end = next((j for j in range(i + 2, len(tokens)) if tokens[j][1] == ")"), None)
            if end is None or any(k != "name" and t != "," for k, t in tokens[i + 2:end]):
                raise PromQLError(f"{text} (...) holds label names only")
            parsed.grouping |= {t for k, t in tokens[i + 2:end] if k == "name"}
            i = end + 1
            continue
        if kind == "name" and text not in OPERATORS:
            if following == "(" or following in LABEL_LISTS:  # a call, or an aggregation: sum by (x) (...)
                if text not in FUNCTIONS:
                    raise PromQLError(f"unknown function {text}")
            else:
                labels: dict[str, str] = {}
                if following == "{":
                    i, labels = _matchers(tokens, i + 2)
                parsed.selectors.append((text, labels))
        elif text == "{":
            raise PromQLError("a selector without a metric name")
        elif text == "}":
            raise PromQLError("an unopened }")
        elif text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
            if depth < 0:
                raise PromQLError("an unopened )")
        i += 1
    if depth:
        raise PromQLError("a ( is not closed")
    if not parsed.selectors:
        raise PromQLError("no metric")
    return parsed
