"""Traces, collected with the SDK's in-memory exporter: one remember gives a request span with its steps and its
database calls as children, and the review job that it queued runs in a span linked to it. Tracing is off unless
configured (OTEL_EXPORTER_OTLP_ENDPOINT); the fixture turns it on for one test and off again."""
import pytest
from django.db import connections
from opentelemetry.instrumentation.django import DjangoInstrumentor
from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
from opentelemetry.instrumentation.redis import RedisInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from telemetry import tracing
from tests.support.openapi import ValidatingClient


@pytest.fixture
def spans(monkeypatch):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    assert tracing.configure(provider)
    connections.close_all()  # pooled connections made before the psycopg instrumentation are not traced
    for pool in connections["default"]._connection_pools.values():
        pool.close()
    connections["default"]._connection_pools.clear()
    yield exporter
    DjangoInstrumentor().uninstrument()
    PsycopgInstrumentor().uninstrument()
    RedisInstrumentor().uninstrument()
    monkeypatch.setattr(tracing, "_enabled", False)
    provider.shutdown()


def test_tracing_is_off_unless_an_endpoint_is_configured(monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert tracing.configure() is False and tracing.enabled() is False


def test_one_remember_has_step_and_database_spans_and_its_review_job_is_linked(acme, spans, queue, work):
    client = ValidatingClient(calls=[])  # made after instrumenting: its handler loads the tracing middleware
    response = client.post("/api/v1/memories", {"content": "The release train leaves on Tuesdays."},
                           format="json", HTTP_AUTHORIZATION=f"Bearer {acme.member_token}")
    assert response.status_code == 201
    [request] = [s for s in spans.get_finished_spans() if s.kind.name == "SERVER"]
    children = [s for s in spans.get_finished_spans() if s.parent and s.parent.span_id == request.context.span_id]
    names = {s.name for s in children}
    assert {"remember.dedup", "remember.insert", "remember.similar_existing", "remember.outbox",
            "remember.commit"} <= names
    steps = sorted((s for s in children if s.name.startswith("remember.")), key=lambda s: s.start_time)
    assert all(s.start_time <= s.end_time <= request.end_time for s in steps)
    in_request = [s for s in spans.get_finished_spans() if s.context.trace_id == request.context.trace_id]
    assert any(s.attributes.get("db.system") == "postgresql" for s in in_request)
    assert any(s.attributes.get("db.system") == "redis" for s in in_request)  # the enqueue

    spans.clear()
    work()
    [job] = [s for s in spans.get_finished_spans() if s.name == "job review_memory"]
    assert job.context.trace_id != request.context.trace_id  # a trace of its own ...
    assert [link.context.trace_id for link in job.links] == [request.context.trace_id]  # ... linked to the write
    assert any(s.context.trace_id == job.context.trace_id and s.attributes.get("db.system") == "postgresql"
               for s in spans.get_finished_spans())
