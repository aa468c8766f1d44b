"""The gauges /metrics reads when it is asked, from Postgres and Redis: how far the judge is behind (the oldest
waiting review's age), how many conflicts wait for a person, and how many jobs each queue holds in each state.
Read at scrape time, not kept in a process: any web worker answers them the same."""
import logging

import django_rq
from django.db import connection
from prometheus_client.core import GaugeMetricFamily
from rq.registry import DeferredJobRegistry, FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

logger = logging.getLogger(__name__)
QUEUES = ("default",)


class StoreGauges:
    def collect(self):
        lag = GaugeMetricFamily("zm_review_lag_seconds", "Age of the oldest review waiting for the judge (0: none).")
        conflicts = GaugeMetricFamily("zm_conflicts_open", "Conflicts waiting for a person, in every organization.")
        jobs = GaugeMetricFamily("zm_queue_jobs", "Jobs in an RQ queue, by state.", labels=["queue", "state"])
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT review_lag_seconds, conflicts_open FROM zm_operations_gauges()")
                review_lag, open_conflicts = cursor.fetchone()
            lag.add_metric([], review_lag)
            conflicts.add_metric([], open_conflicts)
        except Exception as error:  # noqa: BLE001 - a scrape still answers; the missing series say the database did not
            logger.warning("metrics: store gauges unavailable: %s: %s", type(error).__name__, error)
        for name in QUEUES:
            try:
                for state, count in queue_counts(name).items():
                    jobs.add_metric([name, state], count)
            except Exception as error:  # noqa: BLE001 - the same for Redis
                logger.warning("metrics: queue %s unavailable: %s: %s", name, type(error).__name__, error)
        return [lag, conflicts, jobs]


def queue_counts(name: str) -> dict[str, int]:
    queue = django_rq.get_queue(name)
    registries = {"started": StartedJobRegistry, "scheduled": ScheduledJobRegistry, "failed": FailedJobRegistry,
                  "deferred": DeferredJobRegistry}
    counts = {"queued": queue.count}
    for state, registry in registries.items():
        counts[state] = registry(queue=queue).count
    return counts
