"""The round trips of the hot paths, pinned: a new query on remember or recall must be a decision, not an accident.

Counted over HTTP through the test client, inside the test's own transaction, so each count includes the two
statements that transaction adds around the request's (SAVEPOINT, RELEASE) and the identity cleared after it.
"""
import pytest


@pytest.fixture
def store(acme, remember):
    """A dozen memories, so that similar_existing finds ten by the index and needs no exact fallback."""
    return [remember(acme.member_token, f"The {name} service deploys on Tuesdays.", kind="fact")["memory"]["id"]
            for name in ("api", "web", "db", "cache", "queue", "search", "auth", "mail", "billing", "docs", "cdn")]


def test_remember_undeclared(api, acme, store, django_assert_num_queries):
    # token lookup | savepoint, identity, caller (token, org, user, role) | project, advisory lock, exact dedup |
    # insert memory, event | similar_existing | review | release, identity cleared
    with django_assert_num_queries(13):
        api(acme.member_token).post("/api/v1/memories", {"content": "The api service deploys on Fridays."},
                                    format="json")


def test_remember_declared(api, acme, store, django_assert_num_queries):
    # as above, with the target locked and retired (update, link, event) instead of similar_existing and review
    with django_assert_num_queries(15):
        api(acme.member_token).post("/api/v1/memories", {
            "content": "The api service deploys on Fridays.",
            "links": [{"type": "supersedes", "dst": store[0], "reason": "moved"}],
        }, format="json")


def test_recall(api, acme, store, django_assert_num_queries):
    # token lookup | savepoint, identity, caller (token, org, user, role) | vector channel (index scan, the exact sort
    # that a store under 50 memories gets, nearest passages and the distances they leave out, in one statement),
    # text channel with its terms, current versions | hydration | conflicts, checks, statement vectors of the
    # memories that give a value | release, identity cleared
    with django_assert_num_queries(13):
        api(acme.member_token).post("/api/v1/recall", {"query": "when does the api service deploy"}, format="json")
