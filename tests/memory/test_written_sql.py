"""The hot paths' written-out SQL (plumbing/rows.py and its callers) against the ORM queries it replaced: the same
rows, the same values, the same instances."""
from django.db import connection
from django.db.models import F, Q
from pgvector.django import CosineDistance

from memory import selectors
from memory.embeddings import embed_one
from memory.models import Check, Conflict, Memory
from memory.normalize import content_hash
from memory.vocabulary import Resolution
from plumbing import rows
from tenants import rls

TEXTS = [
    "The api service deploys on Tuesdays after the sync.",
    "Billing runs its invoices on the first of the month.",
    "The search cluster has three nodes in Frankfurt.",
    "Release train leaves every Monday at 10:00 UTC. Staging freezes the day before.",
]


def _write(remember, acme) -> list[str]:
    written = [remember(acme.admin_token, text, project="web", session_id="s1")["memory"]["id"] for text in TEXTS]
    written.append(remember(acme.admin_token, "My own note: the api deploys are mine to watch.",
                            scope="personal", metadata={"tags": ["api"]}, namespace=["team", "api"])["memory"]["id"])
    # Another writer's memory in the same project: never the admin's similar_existing or duplicate.
    written.append(remember(acme.member_token, "The api service deploys on Tuesdays, the member says.",
                            project="web", session_id="s1")["memory"]["id"])
    return written


def test_similar_existing_is_the_orm_query_it_replaced(remember, acme):
    _write(remember, acme)
    vector = embed_one("When does the api service deploy?")
    with rls.tenant_scope(acme.scope):
        for exclude in ("mem_none", Memory.objects.order_by("created_at").first().id):
            place = Q(scope=Memory.Scope.PERSONAL) | Q(scope=Memory.Scope.PROJECT, project=acme.web)
            orm = (Memory.objects.filter(place, owner=acme.admin, status=Memory.Status.LIVE).exclude(pk=exclude)
                   .annotate(distance=CosineDistance("embedding", vector)).order_by(F("distance") + 0.0)[:10])
            written = selectors.similar_existing(owner=acme.admin, project=acme.web, vector=vector, exclude_id=exclude)
            assert [(m["id"], m["distance"]) for m in written] == [(m.id, round(m.distance, 4)) for m in orm]
            assert 0 < len(written) < len(TEXTS) + 2
            assert all(m["project"] == ("web" if m["scope"] == "project" else None) for m in written)


def test_memories_shown_are_what_select_related_loads(remember, acme):
    ids = _write(remember, acme)
    with rls.tenant_scope(acme.scope):
        orm = {m.id: m for m in selectors.with_relations(Memory.objects.filter(pk__in=ids))}
        for lock in (False, True):
            written = selectors.memories_shown([*ids, "mem_missing"], lock=lock)
            assert written.keys() == orm.keys()
            for memory_id, memory in written.items():
                expected = orm[memory_id]
                fields = [f.attname for f in Memory._meta.concrete_fields if f.attname != "embedding"]
                assert [getattr(memory, f) for f in fields] == [getattr(expected, f) for f in fields]
                assert (memory.owner, memory.project) == (expected.owner, expected.project)
                assert memory.owner.email == expected.owner.email
                assert "embedding" in memory.get_deferred_fields()
        assert selectors.memories_shown([]) == {}


def test_dedup_lookups_are_the_orm_queries_they_replaced(remember, acme):
    _write(remember, acme)
    with rls.tenant_scope(acme.scope):
        for scope, project, namespace in (("project", acme.web, None), ("personal", None, ["team", "api"])):
            same = Memory.objects.filter(owner=acme.admin, scope=scope, project=project, status=Memory.Status.LIVE,
                                         key_hash=None, namespace=namespace)
            place = selectors.same_place(owner=acme.admin, scope=scope, project=project, namespace=namespace)
            for text in [*TEXTS, "My own note: the api deploys are mine to watch.", "Nothing like it."]:
                expected = same.filter(content_hash=content_hash(text)).order_by("created_at").first()
                found = selectors.exact_duplicate(place, content_hash(text))
                assert (found and found.id) == (expected and expected.id)
                vector = embed_one(text)
                nearest = (same.filter(session_id="s1").annotate(distance=CosineDistance("embedding", vector))
                           .order_by("distance").first())
                found = selectors.nearest_in_session(place, "s1", vector)
                assert (found and (found.id, found.distance)) == (nearest and (nearest.id, nearest.distance))


def test_conflicts_and_checks_are_the_orm_queries_they_replaced(remember, acme):
    ids = _write(remember, acme)
    with rls.tenant_scope(acme.scope):
        Conflict.objects.create(org_id=acme.org.id, a_id=ids[0], b_id=ids[1], relation="supersedes")
        Conflict.objects.create(org_id=acme.org.id, a_id=ids[2], b_id=ids[0], relation="contradicts",
                                status=Conflict.Status.RESOLVED, resolution=Resolution.KEEP_BOTH)
        Conflict.objects.create(org_id=acme.org.id, a_id=ids[3], b_id=ids[4], relation="contradicts",
                                status=Conflict.Status.RESOLVED, resolution=Resolution.SUPERSEDE)
        for memory_id, outcome in ((ids[0], "fail"), (ids[0], "pass"), (ids[1], "fail")):
            Check.objects.create(org_id=acme.org.id, memory_id=memory_id, outcome=outcome, created_by=acme.admin)
        orm = (Conflict.objects.filter(Q(a_id__in=ids) | Q(b_id__in=ids))
               .filter(Q(status=Conflict.Status.OPEN) | Q(resolution=Resolution.KEEP_BOTH))
               .values_list("a_id", "b_id", "relation", "status"))
        opened, kept_both = selectors.conflicts_of(ids)
        assert sorted(opened) == sorted((a, b, r) for a, b, r, s in orm if s == Conflict.Status.OPEN) != []
        assert kept_both == {frozenset((a, b)) for a, b, _, s in orm if s != Conflict.Status.OPEN} != set()
        failed = selectors.failing_checks(ids)
        assert list(failed) == [ids[1]] and failed[ids[1]] == Check.objects.get(memory_id=ids[1])
        assert failed[ids[1]].detail == Check.objects.get(memory_id=ids[1]).detail
        assert selectors.conflicts_of([]) == ([], set()) and selectors.failing_checks([]) == {}


def test_a_written_insert_stores_what_save_stores(acme):
    with rls.tenant_scope(acme.scope):
        template = Memory.objects.create(
            org_id=acme.org.id, scope="project", owner=acme.admin, project=acme.web, kind="fact",
            content="Deploys are on Fridays.", content_hash="x", embedding=embed_one("Deploys are on Fridays."),
            writer="agent", metadata={"tags": ["a", 1]}, source={"url": "https://example.test"},
            namespace=["team", "api"], session_id="s1",
        )
        copy = Memory.objects.get(pk=template.pk)
        copy.id = "mem_" + "0" * 26
        with connection.cursor() as cursor:
            cursor.execute(*rows.insert([copy]))
        written, saved = Memory.objects.get(pk=copy.id), Memory.objects.get(pk=template.pk)
        for field in Memory._meta.concrete_fields:
            if field.attname not in ("id", "embedding"):
                assert getattr(written, field.attname) == getattr(saved, field.attname), field.attname
        assert list(written.embedding) == list(saved.embedding)
        assert rows.saved(copy)._state.adding is False
