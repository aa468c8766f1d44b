"""A LangGraph agent whose long-term memory is a zero-memory server (no LLM: plain function nodes).

The graph writes a user's preference, overwrites it, and reads it back, through the store LangGraph hands each node
(`runtime.store`). On zero-memory the overwrite is a declared supersede: the old value is not lost, it is the previous
version in the key's history, which the script prints at the end.

    pip install -e 'clients/python[langgraph]'
    ZERO_MEMORY_URL=http://127.0.0.1:8000 ZERO_MEMORY_TOKEN=$(cat .data/demo-token) \\
        python clients/python/examples/langgraph_agent.py

ZERO_MEMORY_USER (default `demo-user`) names the user whose preference it writes.
"""
from __future__ import annotations

import operator
import os
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from zero_memory_client.langgraph import ZeroMemoryStore

KEY = "answer_style"


@dataclass
class Context:
    user_id: str


class State(TypedDict, total=False):
    steps: Annotated[list[str], operator.add]  # what each node did, in order
    preference: dict[str, Any]


def namespace(runtime: Runtime[Context]) -> tuple[str, ...]:
    return ("users", runtime.context.user_id, "preferences")


def store_of(runtime: Runtime[Context]) -> Any:
    if runtime.store is None:
        raise RuntimeError("compile the graph with a store")
    return runtime.store


def learn_preference(state: State, runtime: Runtime[Context]) -> State:
    value = {"style": "short answers", "language": "English"}
    store_of(runtime).put(namespace(runtime), KEY, value)
    return {"steps": [f"wrote {KEY} = {value}"]}


def user_changes_mind(state: State, runtime: Runtime[Context]) -> State:
    value = {"style": "detailed answers with examples", "language": "English"}
    store_of(runtime).put(namespace(runtime), KEY, value)  # the same key: supersedes the first value
    return {"steps": [f"overwrote {KEY} = {value}"]}


def recall_preference(state: State, runtime: Runtime[Context]) -> State:
    item = store_of(runtime).get(namespace(runtime), KEY)
    if item is None:
        return {"steps": [f"found no {KEY}"]}
    return {"steps": [f"read back {KEY} = {item.value}"], "preference": item.value}


def build_graph(store: ZeroMemoryStore) -> Any:
    graph = StateGraph(State, context_schema=Context)
    graph.add_node("learn_preference", learn_preference)
    graph.add_node("user_changes_mind", user_changes_mind)
    graph.add_node("recall_preference", recall_preference)
    graph.add_edge(START, "learn_preference")
    graph.add_edge("learn_preference", "user_changes_mind")
    graph.add_edge("user_changes_mind", "recall_preference")
    graph.add_edge("recall_preference", END)
    return graph.compile(store=store)


def main() -> dict[str, Any]:
    """Runs the graph; returns what it read back and the key's history (oldest value first)."""
    user_id = os.environ.get("ZERO_MEMORY_USER", "demo-user")
    with ZeroMemoryStore(os.environ["ZERO_MEMORY_URL"], os.environ["ZERO_MEMORY_TOKEN"]) as store:
        final = build_graph(store).invoke({"steps": []}, context=Context(user_id=user_id))
        for step in final["steps"]:
            print(step)
        # What the store does not show, the client does: every version of the key, oldest first.
        (live,) = store.client.feed(namespace=["users", user_id, "preferences"], key=KEY).results
        history = [(version.status, version.metadata.get("value")) for version in store.client.memory_history(live.id)]
    print("history, oldest first:")
    for status, value in history:
        print(f"  {status:10} {value}")
    print(f"in the web admin: {os.environ['ZERO_MEMORY_URL'].rstrip('/')}/memories/{live.id}")
    return {"preference": final.get("preference"), "history": history, "memory_id": live.id}


if __name__ == "__main__":
    main()
