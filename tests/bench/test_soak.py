"""The bounded soak on every `make test` (bench/soak.py; `make soak SECONDS=600` runs it longer): client processes
on loopback against the served stack, with a real RQ worker reviewing the writes meanwhile, for SOAK_SECONDS (60);
then no 5xx, no request without an answer, only the expected refusals, and every lifecycle invariant holds in SQL."""
import os
import subprocess

import pytest

from bench.soak import check_invariants, format_report, run_soak, soak_tokens
from embedded_stack.launcher import WORKER_ARGS
from memory.outbox import review_queue
from tests.support.stack import MANAGE, served, stack_env

SECONDS = float(os.environ.get("SOAK_SECONDS", "60"))
CLIENTS = 4
# A forget, restore or supersede of a memory that the judge (or a restore) changed meanwhile is refused: expected.
EXPECTED_REFUSALS = {"not_live", "already_live", "successor_not_live"}


@pytest.mark.slow
def test_a_bounded_soak_keeps_every_invariant(committed, tmp_path, settings):
    tokens = soak_tokens(CLIENTS)
    # The soak measures the lifecycle under load, not the rate limit (tests/tenants/test_rate_limits.py does that).
    env = stack_env(WEB_THREADS="8", DB_POOL_MAX_SIZE="8", RATE_LIMIT_PER_MINUTE="0")
    review_queue().empty()
    with open(tmp_path / "worker.log", "w") as log:
        worker = subprocess.Popen([*MANAGE, *WORKER_ARGS], env=env,
                                  cwd=settings.BASE_DIR, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        with served(env, tmp_path / "server.log") as port:
            report = run_soak(port=port, tokens=tokens, seconds=SECONDS)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        review_queue().empty()
    report["invariants"] = check_invariants()
    print("\nsoak:\n" + "\n".join(format_report(report)))
    assert report["requests"] > 0 and report["server_errors"] == 0, report["statuses"]
    refusals = {key.split()[2] for key in report["statuses"] if key.split()[1].startswith("4")}
    assert refusals <= EXPECTED_REFUSALS, report["statuses"]
    assert set(report["invariants"].values()) == {0}, report["invariants"]
    reviewed = report["per_operation"]["remember"]["requests"]
    assert reviewed > 0 and report["per_operation"]["restore"]["requests"] > 0


def test_the_invariant_queries_see_what_they_look_for(committed, api, remember):
    """Each query counts a broken row when one is made (as the owner, behind the app's back)."""
    from django.db import connections

    from tests.support.tenants import build_tenant

    acme = build_tenant("acme")
    first = remember(acme.admin_token, "Deploys go out on Monday.", project="web")["memory"]["id"]
    remember(acme.admin_token, "Deploys go out on Tuesday.", project="web",
             links=[{"type": "supersedes", "dst": first}])
    third = remember(acme.admin_token, "The VPN is vpn1.", project="web")["memory"]["id"]
    fourth = remember(acme.admin_token, "Backups run nightly.", project="web")["memory"]["id"]
    assert set(check_invariants().values()) == {0}
    with connections["owner"].cursor() as cursor:
        # The superseded memory comes back to life without its link being undone: its chain has two live memories.
        cursor.execute("UPDATE memory_memory SET status = 'live' WHERE id = %s", [first])
        # Two others name each other as successor, with no link that retired them.
        for older, newer in ((third, fourth), (fourth, third)):
            cursor.execute("UPDATE memory_memory SET status = 'superseded', superseded_by_id = %s WHERE id = %s",
                           [newer, older])
    assert check_invariants() == {
        "walks_that_loop": 2, "chains_with_more_than_one_live": 1, "live_with_a_successor": 1,
        "superseded_without_exactly_one_retiring_link": 2, "retiring_links_to_unretired": 1,
    }
