"""Operations: Prometheus metrics (metrics.py, exposition.py), one JSON log line per request (logs.py,
middleware.py), OpenTelemetry traces when configured (tracing.py) and the RQ worker that measures its jobs
(worker.py). Below every app: the apps report to it, it knows nothing of them."""
