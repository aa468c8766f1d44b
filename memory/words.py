"""recall's words channel: Okapi BM25 over Postgres full text, under row-level security and the query's filters.

Any term of the query counts, weighted by how rare it is among the memories the caller may see with these filters
(inverse document frequency) and normalised by the memory's length. A question rarely shares all its words with
the turn that answers it, so the former channel (every term required, ranked by ts_rank_cd) was mostly empty on
long conversations and the fusion rested on meaning alone; a rare identifier ("INC-4821", a name, a number) still
outweighs the common words around it, which is what requiring every term protected.

Cost is bounded by what a term brings, not by the tenant: a term found in more than COMMON memories is common, its
document frequency is counted up to COMMON and it brings no candidates of its own (its weight is small anyway);
the candidates are the memories with a rare term, plus the best matches of every term together. The tenant's size
and mean length (the statistics of the filtered, visible set) are cached per process for STATS_SECONDS.
"""
import time

from django.db import connection

K1 = 1.2  # term-frequency saturation
B = 0.75  # length normalisation
COMMON = 1000
ALL_TERMS_DEPTH = 50  # best matches of every term together, so a question of common words still finds its memory
STATS_SECONDS = 60
MAX_TERMS = 64  # a question has fewer; an 8 KB query of random words must not become thousands of index lookups
_stats: dict[tuple, tuple[float, int, float]] = {}  # (user, filters) -> (expires, memories, mean length)


def query_terms(text: str) -> list[str]:
    """The query's distinct lexemes (the `english` configuration, as the stored `search` column), at most MAX_TERMS:
    the longest, which are the rarer words as a rule."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT array(SELECT lexeme FROM unnest(to_tsvector('english', %s))"
                       " ORDER BY length(lexeme) DESC, lexeme LIMIT %s)", [text, MAX_TERMS])
        return cursor.fetchone()[0]


def _tsquery(lexeme: str) -> str:
    """One lexeme as tsquery text: quoted, so punctuation inside it ("v1.2", "inc-4821") is part of it."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _collection(where: str, params: list, user_id) -> tuple[int, float]:
    """How many memories pass the filters and their mean length in lexemes (cached: see the module docstring)."""
    key = (user_id, where, tuple(tuple(p) if isinstance(p, list) else p for p in params))
    cached = _stats.get(key)
    if cached and cached[0] > time.monotonic():
        return cached[1], cached[2]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), greatest(avg(length(search)), 1) FROM memory_memory WHERE {where}", params)
        size, mean_length = cursor.fetchone()
    if len(_stats) > 4096:
        _stats.clear()
    _stats[key] = (time.monotonic() + STATS_SECONDS, size, float(mean_length))
    return size, float(mean_length)


def bm25(terms: list[str], where: str, params: list, user_id, depth: int) -> list[tuple[str, float, float]]:
    """The ``depth`` best memories by BM25 for ``terms``, best first: (id, score, coverage), where coverage is the
    share of the query's weight (the sum of its terms' idf) that the memory matches."""
    if not terms:
        return []
    size, mean_length = _collection(where, params, user_id)
    if size == 0:
        return []
    queries = [_tsquery(term) for term in terms]
    every_term = " & ".join(queries)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH term AS (SELECT * FROM unnest(%s::text[], %s::tsquery[]) AS t(lexeme, query)),
            df AS (
                SELECT lexeme, query, (SELECT count(*) FROM (
                    SELECT 1 FROM memory_memory WHERE {where} AND search @@ term.query LIMIT {COMMON}) found) AS n
                FROM term
            ),
            rare AS (SELECT string_agg(query::text, ' | ')::tsquery AS query FROM df WHERE n < {COMMON}),
            candidate AS (
                SELECT id, search FROM memory_memory WHERE {where} AND search @@ (SELECT query FROM rare)
                UNION
                (SELECT id, search FROM memory_memory WHERE {where} AND search @@ %s::tsquery
                 ORDER BY ts_rank_cd(search, %s::tsquery) DESC LIMIT {ALL_TERMS_DEPTH})
            ),
            weighted AS (SELECT lexeme, n, ln(1 + (greatest(%s, n) - n + 0.5) / (n + 0.5)) AS idf FROM df)
            SELECT c.id,
                sum(w.idf * u.tf * {K1 + 1} / (u.tf + {K1} * (1 - {B} + {B} * length(c.search) / %s))) AS score,
                sum(w.idf) / (SELECT sum(idf) FROM weighted) AS coverage
            FROM candidate c
            CROSS JOIN LATERAL (
                SELECT lexeme, coalesce(array_length(positions, 1), 1) AS tf FROM unnest(c.search)) u
            JOIN weighted w USING (lexeme)
            GROUP BY c.id
            ORDER BY score DESC, c.id
            LIMIT {depth}
            """,
            [terms, queries, *params, *params, *params, every_term, every_term, size, mean_length],
        )
        return [(memory_id, float(score), float(coverage)) for memory_id, score, coverage in cursor.fetchall()]

