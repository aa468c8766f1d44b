"""The numbers of the gauntlet: how many cases the fuzzer and the property tests ran, printed after the tests."""
import sys

import pytest


def pytest_terminal_summary(terminalreporter):
    test_fuzz_api = sys.modules.get("tests.fuzz.test_fuzz_api")
    if test_fuzz_api is not None and test_fuzz_api.CASES:
        cases = test_fuzz_api.CASES
        by_kind = {kind: sum(n for (_, k), n in cases.items() if k == kind) for kind in ("valid", "invalid", "other")}
        operations = len({operation for operation, _ in cases})
        terminalreporter.write_line(
            f"fuzz: {sum(cases.values())} cases over {operations} operations"
            f" ({', '.join(f'{kind} token {n}' for kind, n in by_kind.items())});"
            f" answers by status: {dict(sorted(test_fuzz_api.STATUSES.items()))}")
    properties = sys.modules.get("tests.fuzz.test_lifecycle_properties")
    if properties is not None and properties.STEPS:
        steps = dict(properties.STEPS)
        sequences = steps.pop("sequences", 0)
        terminalreporter.write_line(
            f"lifecycle properties: {sequences} sequences, {sum(steps.values())} steps, invariants checked after each;"
            f" steps by answer: {dict(sorted(steps.items()))}")


@pytest.fixture(autouse=True)
def no_rate_limit(settings):
    """Thousands of requests a minute on a few tokens: the fuzzing and the properties test the API, not its rate
    limit (tests/tenants/test_rate_limits.py does)."""
    settings.RATE_LIMIT_PER_MINUTE = 0
