"""OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (then the SDK's OTLP/HTTP exporter sends
them there; OTEL_SERVICE_NAME and the other standard OTEL_* variables apply as the SDK reads them).

A request's span comes from the official Django instrumentation, with its database and Redis calls as children
(the psycopg and Redis instrumentations); the named steps of remember and recall (plumbing/timing.py) are added as
child spans when the request ends. A review job's span is linked to the span of the write that queued it: the
write's trace context travels in the job's meta.

Disabled, nothing here is called on a request's path beyond ``enabled()``."""
import os
from contextlib import contextmanager

from opentelemetry import propagate, trace

TRACER_NAME = "zero_memory"
_enabled = False


def enabled() -> bool:
    return _enabled


def configure(provider=None) -> bool:
    """Turn tracing on where an endpoint is configured (or for a given provider: the tests' in-memory one).
    Call before Django loads its middleware: the Django instrumentation adds one of its own."""
    global _enabled
    if provider is None:
        if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
            return False
        provider = _otlp_provider()
    if _enabled:
        return True
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor

    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument(tracer_provider=provider)
    PsycopgInstrumentor().instrument(tracer_provider=provider)
    RedisInstrumentor().instrument(tracer_provider=provider)
    _enabled = True
    return True


def _otlp_provider():
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    service = os.environ.get("OTEL_SERVICE_NAME", "zero-memory")
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def tracer():
    return trace.get_tracer(TRACER_NAME)


def record_steps(operation: str | None, laps: list[tuple[str, int, int]]) -> None:
    """The steps of one operation as child spans of the current span, from their measured start and end."""
    for step, start_ns, end_ns in laps:
        span = tracer().start_span(f"{operation or 'request'}.{step}", start_time=start_ns)
        span.end(end_time=end_ns)


def carrier() -> dict[str, str]:
    """The current trace context, to send with a job (W3C traceparent); empty while tracing is off."""
    headers: dict[str, str] = {}
    if _enabled:
        propagate.inject(headers)
    return headers


@contextmanager
def job_span(name: str, sent: dict[str, str] | None):
    """A job's span, in a trace of its own, linked to the span that queued it."""
    if not _enabled:
        yield
        return
    links = []
    if sent:
        queued_by = trace.get_current_span(propagate.extract(sent)).get_span_context()
        if queued_by.is_valid:
            links.append(trace.Link(queued_by, {"zero_memory.link": "queued_by"}))
    with tracer().start_as_current_span(f"job {name}", context=trace.set_span_in_context(trace.INVALID_SPAN),
                                        links=links, kind=trace.SpanKind.CONSUMER):
        yield
