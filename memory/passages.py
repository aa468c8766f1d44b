"""Passages: a memory of several statements is also found by each of them.

A long chat turn is mostly about something else ("Can you tighten the release script? Side note, the launch moved
to the 14th."): its one vector mixes every topic of the turn, and "when is the launch?" finds it far down. Each
statement sentence of a memory of several (questions state nothing) gets its own vector, and recall scores such a
memory by the mean of its whole-text distance and its nearest sentence's. On the long-chat tuning half, by meaning
alone, the current answer to a changed fact was in the top 10 for 62% of questions with whole texts and 72% with
the mean, both versions for 38% and 68%, and the answer first over all questions for 40% and 44%; the nearest
sentence alone found more (77%) but put the old version first more often than the mean did.

Memories of one sentence have no passages: their whole text is their sentence.
"""
from dataclasses import dataclass

import numpy as np
from django.db import connection
from pgvector.django import VectorField

from memory.disagreement import sentences
from memory.embeddings import embed
from memory.models import Memory, Passage
from memory.normalize import normalize

MAX_PASSAGES = 16  # a long document is found by its first 16 statements; each costs about 4 ms to embed
# A statement is embedded from its first 300 characters (a chat sentence is shorter): a 16,000-character write of
# sixteen long sentences took 2.6 s to store over HTTP when each was embedded whole, 0.9-1.3 s with this (0.44 s of
# it embedding the statements, 0.11 s the whole text).
MAX_PASSAGE_CHARS = 300


@dataclass(frozen=True)
class Embedded:
    """What a memory is stored with, computed by the entry point before its transaction."""

    vector: np.ndarray  # the whole text: dedup, similar_existing and recall's whole-text search
    passages: tuple[np.ndarray, ...] = ()  # one per statement sentence, when there are several


def statements(content: str) -> list[str]:
    parts = [sentence.text[:MAX_PASSAGE_CHARS] for sentence in sentences(content)]
    return parts[:MAX_PASSAGES] if len(parts) > 1 else []


def embed_memory(content: str) -> Embedded:
    parts = statements(content)  # of the text as stored: recall reads the same sentences (statement_vectors)
    # One model call for the text and its statements: the same vectors, bit for bit, as a call each, and about 1 ms
    # less per write of two statements (18.3 -> 17.6 ms with one onnxruntime thread).
    vectors = embed([normalize(content), *parts])
    return Embedded(vectors[0], tuple(vectors[1:]))


def passage_rows(memory: Memory, embedded: Embedded) -> list[Passage]:
    """The rows a memory's statements are stored as (none for a memory of one statement)."""
    return [Passage(org_id=memory.org_id, memory_id=memory.id, position=position, scope=memory.scope,
                    owner_id=memory.owner_id, project_id=memory.project_id, embedding=vector)
            for position, vector in enumerate(embedded.passages)]


def nearest_query(literal: str, org_id, depth: int) -> tuple[str, list]:
    """The organization's ``depth`` passages nearest to the vector ``literal`` (memory_id, distance), for recall's
    one statement (memory/recall/channels.py vector_channel). RLS keeps them to what the caller may see; recall's
    filters apply to their memories afterwards. No join here: with one, Postgres walked every visible passage for
    each query (11 ms at 1,800 passages) instead of reading the nearest from the index."""
    sql = ("SELECT memory_id, embedding <=> %s::vector AS distance FROM memory_passage WHERE org_id = %s"
           f" ORDER BY embedding <=> %s::vector LIMIT {depth}")
    return sql, [literal, org_id, literal]


def nearest_statement_query(literal: str, org_id, memory: str) -> tuple[str, list]:
    """The distance of the nearest passage of the memory named by the column ``memory``, as a scalar subquery (NULL
    for a memory without passages)."""
    sql = ("(SELECT min(p.embedding <=> %s::vector) FROM memory_passage p WHERE p.org_id = %s"
           f" AND p.memory_id = {memory})")
    return sql, [literal, org_id]


def statement_vectors(org_id, memories: list[Memory]) -> dict[str, np.ndarray]:
    """Each memory's statement vectors in the order of its statements (disagreement.sentences): its passages, or its
    whole text's for a memory of one statement. A memory of several without passages (written before they existed)
    gets none: it is read by its words only."""
    if not memories:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            # vector_send: the binary form, read with numpy; parsing the text form took 10 ms for 10 memories.
            "SELECT m.id, p.position, vector_send(coalesce(p.embedding, m.embedding)) FROM memory_memory m"
            " LEFT JOIN memory_passage p ON p.org_id = %s AND p.memory_id = m.id"
            " WHERE m.org_id = %s AND m.id = ANY(%s) ORDER BY m.id, p.position",
            [org_id, org_id, [memory.id for memory in memories]],
        )
        rows: dict[str, list] = {}
        for memory_id, position, vector in cursor.fetchall():
            # dimensions and a reserved field (two 16-bit integers), then big-endian float32s
            rows.setdefault(memory_id, []).append((position, np.frombuffer(vector, ">f4", offset=4).astype(np.float32)))
    out = {}
    for memory in memories:
        found = rows.get(memory.id, [])
        whole_only = len(found) == 1 and found[0][0] is None
        if not whole_only:
            out[memory.id] = np.stack([vector for _, vector in found])
        elif len(sentences(memory.content)) == 1:
            out[memory.id] = found[0][1][None, :]
    return out


def vector_literal(vector: np.ndarray) -> str:
    return VectorField().get_prep_value(vector)
