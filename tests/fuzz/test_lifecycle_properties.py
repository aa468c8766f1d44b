"""Property tests of the lifecycle through the API: any sequence of remember (with and without supersedes), forget,
restore, link and check (with and without corrected_by) by one tenant leaves the store sound.

After every step: no 5xx (and every answer in the document, through the validating client); `superseded` exactly when
`superseded_by` is set; successor pointers and the active retiring links form no cycle, so each chain has at most one
live head; every history lists distinct memories with at most one live; the feed (lifecycle=live) returns exactly the
live memories. A restore gives back the state the memory had before its last retirement (status, superseded_by,
loop, closed_by, invalidated_*).

ZM_PROPERTY_EXAMPLES sets the number of sequences (default 30; `make fuzz` runs more).
"""
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.models import Link
from tenants import rls
from tests.support.tenants import build_tenant

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("ZM_PROPERTY_EXAMPLES", "30"))
STEPS: Counter = Counter()  # "action status" -> times run, and "sequences"; reported by tests/fuzz/conftest.py
RESTORED_STATE = ("status", "superseded_by", "loop", "closed_by", "invalidated_at", "invalidated_reason")
MISSING = "mem_00000000000000000000000000"

# A step: (action, index of a known memory, another index, a flag, kind or outcome). Indexes wrap around the known ids.
STEP = st.tuples(
    st.sampled_from(["remember", "supersede", "supersede", "forget", "restore", "restore", "link", "check", "correct"]),
    st.integers(0, 20), st.integers(0, 20), st.booleans(), st.sampled_from(["fact", "task", "open-question"]),
)


class Store:
    """One tenant's memories as the API shows them, and the checks that must hold after every step."""

    def __init__(self, api, tenant) -> None:
        self.client, self.tenant = api(tenant.admin_token), tenant
        self.ids: list[str] = []
        self.before_retirement: dict[str, dict] = {}  # id -> its state just before it was last retired
        self.written = 0

    def pick(self, index: int) -> str:
        return self.ids[index % len(self.ids)] if self.ids else MISSING

    def pick_other(self, index: int, other: int) -> str:
        """A memory other than pick(index) when there are two or more."""
        if len(self.ids) < 2:
            return self.pick(other)
        return self.ids[(index + 1 + other % (len(self.ids) - 1)) % len(self.ids)]

    def memories(self) -> dict[str, dict]:
        page = self.client.get("/api/v1/memories?lifecycle=all&limit=200")
        assert page.status_code == 200 and page.json()["next_cursor"] is None
        return {memory["id"]: memory for memory in page.json()["results"]}

    def step(self, action: str, i: int, j: int, flag: bool, kind: str) -> None:
        before = self.memories()
        target, other = self.pick(i), self.pick_other(i, j)
        if action in ("remember", "supersede"):
            self.written += 1
            body = {"content": f"Step {self.written}: service {self.written} runs on host {i}-{j}.", "kind": kind,
                    "scope": "personal" if flag and action == "remember" else "project", "project": "web"}
            if action == "supersede":
                body["links"] = [{"type": "supersedes", "dst": target, "reason": "newer"}] + (
                    [{"type": "supersedes", "dst": other}] if flag else [])
            response = self.client.post("/api/v1/memories", body, format="json")
            if response.status_code in (200, 201):
                self.ids.append(response.json()["memory"]["id"])
        elif action == "forget":
            response = self.client.post(f"/api/v1/memories/{target}/forget", {"reason": "wrong"}, format="json")
        elif action == "restore":
            retired = [memory_id for memory_id, memory in before.items() if memory["status"] != "live"]
            if retired and flag:  # mostly a retired one, sometimes any (already live: 409)
                target = retired[i % len(retired)]
            response = self.client.post(f"/api/v1/memories/{target}/restore")
        elif action == "link":
            link_type = "supersedes" if flag else "relates_to"  # a graph edge only: retires nothing
            response = self.client.post("/api/v1/links", {"src": target, "dst": other, "type": link_type},
                                        format="json")
        else:
            body = {"outcome": "fail" if flag or action == "correct" else "pass", "detail": "checked by hand"}
            if action == "correct":
                body["corrected_by"] = other
            response = self.client.post(f"/api/v1/memories/{target}/checks", body, format="json")
        code = response.json()["error"]["code"] if response.status_code >= 400 else ""
        STEPS[f"{action} {response.status_code} {code}".strip()] += 1
        assert response.status_code < 500, response.content
        after = self.memories()
        for memory_id, state in before.items():
            if state["status"] == "live" and after[memory_id]["status"] != "live":
                self.before_retirement[memory_id] = state
        if action == "restore" and response.status_code == 200:
            restored, expected = after[target], self.before_retirement[target]
            assert {k: restored[k] for k in RESTORED_STATE} == {k: expected[k] for k in RESTORED_STATE}
        self.check(after)

    def check(self, memories: dict[str, dict]) -> None:
        for memory in memories.values():
            assert (memory["status"] == "superseded") == (memory["superseded_by"] is not None), memory
            assert memory["superseded_by"] is None or memory["superseded_by"] in memories
        for start in memories:  # successor pointers: every walk ends, so each chain has one head
            seen, current = set(), start
            while current is not None:
                assert current not in seen, f"a supersede cycle through {current}"
                seen.add(current)
                current = memories[current]["superseded_by"]
        with rls.tenant_scope(self.tenant.scope):
            retiring = dict(Link.objects.filter(retired_dst=True, undone_at__isnull=True).values_list("dst", "src"))
        for start in retiring:  # the active retiring links form no cycle either
            seen, current = set(), start
            while current in retiring:
                assert current not in seen, f"a cycle of retiring links through {current}"
                seen.add(current)
                current = retiring[current]
        feed = self.client.get("/api/v1/memories?limit=200").json()["results"]
        assert sorted(memory["id"] for memory in feed) == sorted(
            memory_id for memory_id, memory in memories.items() if memory["status"] == "live")

    def check_histories(self) -> None:
        """Every history lists distinct memories, the one asked for among them, with at most one live."""
        for memory_id in self.memories():
            chain = self.client.get(f"/api/v1/memories/{memory_id}/history").json()["chain"]
            ids = [version["id"] for version in chain]
            assert len(ids) == len(set(ids)) and memory_id in ids
            assert sum(version["status"] == "live" for version in chain) <= 1, chain


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])
@given(steps=st.lists(STEP, min_size=4, max_size=16))
def test_any_sequence_of_lifecycle_steps_keeps_chains_sound_and_restores_exactly(steps, api, db):
    # Each sequence starts from an empty store: a fresh tenant (requests open durable transactions, so no savepoint
    # can roll a sequence back; the test's own transaction drops them all at the end).
    STEPS["sequences"] += 1
    store = Store(api, build_tenant(f"prop{STEPS['sequences']}"))
    for step in [("remember", 0, 0, False, "fact"), ("remember", 0, 0, False, "task"), *steps]:
        store.step(*step)
    store.check_histories()
