"""GET /healthz: is the database reachable, is the queue reachable, which judge runs."""
import django_rq
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET


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


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    db, queue = _check_db(), _check_queue()
    healthy = db == "ok" and queue == "ok"
    body = {"status": "ok" if healthy else "error", "db": db, "queue": queue, "judge": settings.JUDGE_BACKEND}
    return JsonResponse(body, status=200 if healthy else 503)
