"""The RQ worker of `make run` and k8s: RQ's SimpleWorker (jobs run in the worker process, so the embedded judge's
model loads once) that measures every job (wait in the queue, run time, outcome), runs it under the request id of
the request that queued it, in a span linked to that request's, and in k8s serves its metrics on METRICS_PORT."""
import time

from django.conf import settings
from rq import SimpleWorker
from rq.utils import now

from telemetry import context, exposition, lock_failures, metrics, tracing


class Worker(SimpleWorker):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        tracing.configure()
        if settings.METRICS_PORT:
            exposition.serve_in_background(settings.METRICS_PORT)

    def perform_job(self, job, queue) -> bool:
        name = job.func_name.rsplit(".", 1)[-1]
        sent = job.meta or {}
        token = context.begin(sent.get("request_id") or job.id)
        context.note_caller(org_id=sent.get("org_id"), token_id=sent.get("token_id"))
        try:
            if job.enqueued_at is not None:
                metrics.job_wait.labels(name).observe(max(0.0, (now() - job.enqueued_at).total_seconds()))
            started = time.perf_counter()
            with tracing.job_span(name, sent.get("trace")):
                ok = super().perform_job(job, queue)
            metrics.job_duration.labels(name, "ok" if ok else "failed").observe(time.perf_counter() - started)
            return ok
        finally:
            context.end(token)


    def handle_exception(self, job, *exc_info) -> None:
        lock_failures.count(exc_info[1], f"rq:{job.func_name.rsplit('.', 1)[-1]}")
        super().handle_exception(job, *exc_info)


def job_meta() -> dict:
    """What a job carries from the request that queues it: its ids, and the trace context when tracing."""
    current = context.current()
    meta = {"request_id": current.request_id, "org_id": current.org_id, "token_id": current.token_id} if current else {}
    trace = tracing.carrier()
    if trace:
        meta["trace"] = trace
    return meta
