"""Passages (memory/passages.py): a memory of several statements is found by the one that answers, under RLS."""
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connections

from memory import passages, recall
from memory.embeddings import embed_one
from tenants import rls
from tests.support.tenants import build_tenant

TURN = ("Can you help me tighten the error handling in the release script? It swallows exceptions and the logs are"
        " useless. Side note, the launch is on June 14.")
ABOUT_THE_LAUNCH = [  # nearer to the question than the turn's whole text is, by meaning alone
    "Marketing wants the launch video to be under two minutes.",
    "The launch checklist lives in the ops wiki.",
    "We should invite the beta users to the launch webinar.",
]


def _rows(sql: str, params=None, using: str = "default") -> list[tuple]:
    with connections[using].cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall() if cursor.description else []


def test_each_statement_of_a_memory_of_several_gets_a_passage_and_a_single_sentence_none(remember, acme):
    turn = remember(acme.member_token, TURN)["memory"]["id"]
    single = remember(acme.member_token, ABOUT_THE_LAUNCH[0])["memory"]["id"]
    with rls.tenant_scope(acme.scope):
        positions = _rows("SELECT memory_id, position, scope, project_id FROM memory_passage ORDER BY 1, 2")
    # The question states nothing: two passages, with the memory's scope and project (what RLS reads).
    assert positions == [(turn, 0, "project", acme.web.id), (turn, 1, "project", acme.web.id)]
    assert single not in {memory_id for memory_id, *_ in positions}


def test_a_source_version_of_several_statements_gets_passages_too(api, acme):
    response = api(acme.member_token).post("/api/v1/sources", {
        "source_id": "runbook", "content": "Deploys run from release branches. The freeze starts on Fridays at noon."},
        format="json")
    assert response.status_code == 201, response.content
    with rls.tenant_scope(acme.scope):
        assert _rows("SELECT memory_id, position FROM memory_passage ORDER BY 2") == [
            (response.json()["memory"]["id"], 0), (response.json()["memory"]["id"], 1)]


def test_recall_finds_the_sentence_that_answers_inside_a_turn_about_something_else(remember, recall, acme):
    """By the whole text the turn came third (its vector is mostly about the release script)."""
    for text in ABOUT_THE_LAUNCH:
        remember(acme.member_token, text)
    turn = remember(acme.member_token, TURN)["memory"]["id"]
    results = recall(acme.member_token, "What date is the product launch?")["results"]
    assert results[0]["memory"]["id"] == turn
    assert results[0]["why"]["vector_rank"] == 1


def test_the_vector_channel_puts_each_memory_at_the_mean_of_its_whole_text_and_its_nearest_statement(remember, acme):
    """The one statement of the vector channel against its rule, computed here plainly: on a store this small every
    memory and every passage is a candidate, so each memory that passes the filters is ranked."""
    for text in [*ABOUT_THE_LAUNCH, TURN, "The launch moved to June 21. The press release waits for legal."]:
        remember(acme.member_token, text)
    remember(acme.member_token, "The launch budget is 40k. Ads take half.", kind="decision")  # filtered out
    vector = embed_one("What date is the product launch?")
    literal = passages.vector_literal(vector)
    with rls.tenant_scope(acme.scope):
        where, params = recall.channels.filters(recall.RecallQuery(query="launch", kinds=["note"]), None,
                                                statuses=["live"])
        ranked, by_passage = recall.channels.vector_channel(vector, where, params, ["note"])
        rows = _rows(f"SELECT id, embedding <=> %s::vector, (SELECT min(p.embedding <=> %s::vector) FROM memory_passage"
                     f" p WHERE p.memory_id = memory_memory.id) FROM memory_memory WHERE {where}",
                     [literal, literal, *params])
    expected = sorted(((memory_id, whole if statement is None else (whole + statement) / 2)
                       for memory_id, whole, statement in rows), key=lambda row: row[1])
    assert len(expected) == 5 and sum(statement is not None for *_, statement in rows) == 2
    assert [memory_id for memory_id, _ in ranked] == [memory_id for memory_id, _ in expected]
    assert [distance for _, distance in ranked] == pytest.approx([distance for _, distance in expected])
    assert by_passage == 0  # nothing here is found by a statement alone: the exact sort reads every memory


def test_passages_are_visible_exactly_where_their_memory_is(committed, api, remember):
    acme, globex = build_tenant("acme"), build_tenant("globex")
    project = remember(acme.member_token, TURN)["memory"]["id"]
    private = remember(acme.admin_token, "My own plan. Nobody else reads it.", scope="personal")["memory"]["id"]
    remember(globex.member_token, TURN)
    member = rls.Scope(org_id=acme.org.id, user_id=acme.member.id)
    seen = {}
    for name, scope in {"admin": acme.scope, "member": member, "globex": globex.scope}.items():
        with rls.tenant_scope(scope):
            seen[name] = {memory_id for (memory_id,) in _rows("SELECT DISTINCT memory_id FROM memory_passage")}
    assert seen["admin"] == {project, private}
    assert seen["member"] == {project}  # not the admin's personal memory
    assert project not in seen["globex"] and private not in seen["globex"] and len(seen["globex"]) == 1
    assert _rows("SELECT count(*) FROM memory_passage") == [(0,)]  # no identity, no rows


def test_each_organization_gets_its_own_passage_partition_that_the_app_role_cannot_read(committed):
    acme = build_tenant("acme")
    partition = "memory_passage_" + acme.org.id.hex
    assert _rows("SELECT relispartition, relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = %s",
                 [partition], using="owner") == [(True, True, True)]
    indexes = dict(_rows("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [partition],
                         using="owner"))
    assert "USING hnsw (embedding vector_cosine_ops)" in indexes[f"{partition}_embedding_idx"]
    app = settings.DATABASES["default"]["USER"]
    assert _rows("SELECT has_table_privilege(%s, 'memory_passage', 'SELECT'), has_table_privilege(%s, %s, 'SELECT')",
                 [app, app, partition], using="owner") == [(True, False)]


def test_the_backfill_gives_older_memories_their_passages_and_is_resumable(committed, remember):
    acme = build_tenant("acme")
    turn = remember(acme.member_token, TURN)["memory"]["id"]
    single = remember(acme.member_token, ABOUT_THE_LAUNCH[0])["memory"]["id"]
    _rows("DELETE FROM memory_passage", using="owner")  # as a store written before migration 0011 has none
    out = StringIO()
    call_command("passages_backfill", stdout=out)
    assert _rows("SELECT memory_id, position FROM memory_passage ORDER BY 2", using="owner") == [(turn, 0), (turn, 1)]
    assert "done: 2 passages for 1 memories (2 scanned)" in out.getvalue()
    call_command("passages_backfill", stdout=out)  # again: the turn has its passages, only the single is read
    assert "done: 0 passages for 0 memories (1 scanned)" in out.getvalue()
    assert single not in {memory_id for (memory_id, _) in _rows("SELECT memory_id, position FROM memory_passage",
                                                                  using="owner")}
