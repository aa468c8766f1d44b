"""The vector channel on the HNSW index: a selective filter loses no rows (pgvector iterative scan), and a kind
filter searches that kind's own index."""
import re

import pytest
from django.db import connection
from pgvector.django import VectorField

from memory import recall
from memory.embeddings import embed, embed_one
from memory.models import Memory
from memory.normalize import content_hash
from tenants import rls

QUERY = "How do we roll out the checkout service?"
FACTS = 25


def _store(acme) -> None:
    """Many notes close to the query and a few facts far from it: the facts sit deep in the graph."""
    notes = [f"Checkout rollout note {i}: canary the checkout service, then widen the rollout." for i in range(300)]
    facts = [f"The office plant number {i} is watered on Fridays." for i in range(FACTS)]
    texts = notes + facts
    rows = [
        Memory(org_id=acme.org.id, scope="project", owner_id=acme.admin.id, project=acme.web,
               kind="note" if i < len(notes) else "fact", content=text, content_hash=content_hash(text),
               embedding=vector, writer="agent")
        for i, (text, vector) in enumerate(zip(texts, embed(texts)))
    ]
    with rls.tenant_scope(acme.scope):
        Memory.objects.bulk_create(rows)


def _index_scan(acme, *, iterative: bool) -> tuple[int, str]:
    """A selective filter (kinds fact or lesson: the 25 facts) on the tenant's whole HNSW graph, as on a big store:
    its row count and its plan. Two kinds, because one kind alone is searched on that kind's own index.

    Run directly, not through recall, whose exact fallback would hide a short index scan.
    """
    q = recall.RecallQuery(query=QUERY, kinds=["fact", "lesson"])
    literal = VectorField().get_prep_value(embed_one(QUERY))
    with rls.tenant_scope(acme.scope), connection.cursor() as cursor:
        # A few hundred rows would be sorted exactly; on a big store the planner takes the index: make it take it.
        cursor.execute("SET LOCAL enable_sort = off")  # no exact sort: the HNSW index is the only ordered path
        cursor.execute("SHOW hnsw.iterative_scan")
        assert cursor.fetchone()[0] == "relaxed_order"  # every app connection's setting (VECTOR_SEARCH_OPTIONS)
        if not iterative:
            cursor.execute("SET LOCAL hnsw.iterative_scan = off")
            cursor.execute("SET LOCAL hnsw.ef_search = 40")
        where, params = recall.channels.filters(q, None, statuses=["live"])
        sql = f"SELECT id FROM memory_memory WHERE {where} ORDER BY embedding <=> %s::vector LIMIT 50"
        cursor.execute(f"EXPLAIN {sql}", [*params, literal])
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(sql, [*params, literal])
        return len(cursor.fetchall()), plan


@pytest.mark.slow
def test_a_selective_filter_loses_no_rows_on_the_index(acme):
    _store(acme)
    found, plan = _index_scan(acme, iterative=True)
    # The tenant's own partition and its own HNSW graph (memory migration 0010), chosen when planning: no other.
    partition = "memory_memory_" + acme.org.id.hex
    assert f"Index Scan using {partition}_embedding_idx on {partition}" in plan
    assert "Append" not in plan
    assert found == FACTS
    # The control: the same index scan without iterative scanning comes back short, so the check above can fail.
    short, _ = _index_scan(acme, iterative=False)
    assert short < FACTS


@pytest.mark.slow
def test_when_the_iterative_scan_gives_up_an_exact_sort_finds_the_rows(acme):
    # On a big store the scan can visit hnsw.max_scan_tuples tuples near the query without one passing the filter.
    _store(acme)
    q = recall.RecallQuery(query=QUERY, kinds=["fact"])
    with rls.tenant_scope(acme.scope), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL hnsw.max_scan_tuples = 60")
        where, params = recall.channels.filters(q, None, statuses=["live"])
        rows, _ = recall.channels.vector_channel(embed_one(QUERY), where, params)
    assert len(rows) == FACTS


def _partition_index_predicates(acme) -> dict[str, str]:
    """{index name: its WHERE} for the HNSW indexes of the tenant's partition."""
    partition = "memory_memory_" + acme.org.id.hex
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexdef LIKE %s",
                       [partition, "%USING hnsw%"])
        return {name: definition.partition(" WHERE ")[2] for name, definition in cursor.fetchall()}


def _kind_search(acme, kinds: list[str], *, explain: str = "") -> list:
    q = recall.RecallQuery(query=QUERY, kinds=kinds)
    literal = VectorField().get_prep_value(embed_one(QUERY))
    with rls.tenant_scope(acme.scope), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")  # a small store would be sorted exactly: take the indexes
        where, params = recall.channels.filters(q, None, statuses=["live"])
        sql, sql_params = recall.channels.nearest_query(literal, where, params, kinds)
        if explain == "generic":  # the plan a prepared statement keeps, made before any parameter is known
            numbered = iter(range(1, len(sql_params) + 1))
            cursor.execute("EXPLAIN (GENERIC_PLAN) " + re.sub("%s", lambda _: f"${next(numbered)}", sql))
            return [row[0] for row in cursor.fetchall()]
        cursor.execute(sql, sql_params)
        return cursor.fetchall()


@pytest.mark.slow
def test_a_kind_filter_searches_that_kinds_own_index_even_in_a_generic_plan(acme):
    _store(acme)
    predicates = _partition_index_predicates(acme)
    assert sorted(predicates.values()).count("") == 1 and len(predicates) == 1 + len(Memory.Kind.values)
    plan = "\n".join(_kind_search(acme, ["fact"], explain="generic"))
    used = set(re.findall(r"Index Scan using (\S+) on memory_memory_" + acme.org.id.hex, plan))
    assert used and {predicates[name] for name in used} == {"((kind)::text = 'fact'::text)"}, plan


@pytest.mark.slow
def test_the_kinds_indexes_find_what_an_exact_sort_finds(acme):
    _store(acme)
    for kinds in (["fact"], ["note", "fact"]):
        found = _kind_search(acme, kinds)
        with rls.tenant_scope(acme.scope), connection.cursor() as cursor:
            where, params = recall.channels.filters(recall.RecallQuery(query=QUERY, kinds=kinds), None,
                                                    statuses=["live"])
            literal = VectorField().get_prep_value(embed_one(QUERY))
            cursor.execute(f"SELECT id, embedding <=> %s::vector FROM memory_memory WHERE {where}"
                           " ORDER BY 2 LIMIT 50", [literal, *params])
            exact = cursor.fetchall()
        assert [row[0] for row in found] == [row[0] for row in exact], kinds
    with pytest.raises(ValueError):
        recall.channels.nearest_query("[0]", "TRUE", [], ["fact'; DROP TABLE memory_memory; --"])
