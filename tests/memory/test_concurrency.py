"""Concurrent declared supersedes of one target, with real threads and real database connections."""
from memory import services
from memory.models import Link, Memory
from tenants import rls
from tenants.auth import load_principal
from tests.support.memories import WRITERS, at_once, remember_in_process
from tests.support.tenants import build_tenant


def test_eight_concurrent_supersedes_of_one_target_retire_it_exactly_once(committed):
    acme = build_tenant("acme")
    scope = rls.Scope(org_id=acme.org.id, user_id=acme.member.id)
    with rls.tenant_scope(scope):
        principal = load_principal(scope, token_id=None)
        target = remember_in_process(principal, "The build server is ci-1.")
    target_id = target.memory.id
    vectors = [services.memory_embedding(f"The build server is ci-{index + 2}.") for index in range(WRITERS)]

    def write(index: int):
        with rls.tenant_scope(scope):
            return remember_in_process(principal, f"The build server is ci-{index + 2}.", vectors[index],
                                       links=[services.LinkSpec("supersedes", target_id, f"writer {index}")])

    results = at_once(WRITERS, write)

    assert not [r for r in results if isinstance(r, Exception)], results
    winners = [r for r in results if r.superseded == [target_id]]
    losers = [r for r in results if r.skipped == [{"dst": target_id, "reason": "dead"}]]
    assert (len(winners), len(losers)) == (1, WRITERS - 1)
    with rls.tenant_scope(scope):
        retired = Memory.objects.get(pk=target_id)
        assert retired.status == "superseded" and retired.superseded_by_id == winners[0].memory.id
        assert Link.objects.filter(dst_id=target_id, type="supersedes", retired_dst=True).count() == 1
        # Linear: every new memory is live and no memory was retired twice.
        assert Memory.objects.filter(status="live").count() == WRITERS
