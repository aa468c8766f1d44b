"""Probes. ``/livez``: the process answers (touches nothing: a database outage must not restart every pod).
``/readyz``: whether this process can serve, that is whether Postgres and Redis answer, with the judge reported
beside them (a vLLM judge that does not answer leaves the fallback judging, so it never makes a pod unready).
``/healthz``: the readiness answer without the judge, as it always was, for existing probes and scripts."""
import urllib.error
import urllib.request

import django_rq
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

JUDGE_PROBE_SECONDS = 1.0


def _check_db() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return "ok"
    except Exception as error:  # noqa: BLE001 - any failure means "not ok", and the message says which
        return f"error: {type(error).__name__}"


def _check_queue() -> str:
    try:
        django_rq.get_connection("default").ping()
        return "ok"
    except Exception as error:  # noqa: BLE001
        return f"error: {type(error).__name__}"


def _check_judge() -> str:
    """The embedded judge always answers; a vLLM server is asked for its /health (vLLM's own endpoint)."""
    if settings.JUDGE_BACKEND != "vllm":
        return "ok"
    base = settings.JUDGE_VLLM_URL.rstrip("/").removesuffix("/v1")
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=JUDGE_PROBE_SECONDS) as answer:
            answer.read()
        return "ok"
    except (urllib.error.URLError, OSError, ValueError) as error:
        fallback = settings.JUDGE_VLLM_FALLBACK or "none: reviews wait and retry"
        return f"error: {type(error).__name__} (fallback judge: {fallback})"


@require_GET
def livez(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def _readiness(request: HttpRequest, *, judge_check: bool) -> JsonResponse:
    db, queue = _check_db(), _check_queue()
    ready = db == "ok" and queue == "ok"
    body = {"status": "ok" if ready else "error", "db": db, "queue": queue, "judge": settings.JUDGE_BACKEND}
    if judge_check:
        body["judge_check"] = _check_judge()
    return JsonResponse(body, status=200 if ready else 503)


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    return _readiness(request, judge_check=True)


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return _readiness(request, judge_check=False)
