"""One JSON log line per request, with its request id (answered in X-Request-ID) and the caller's ids, never its
content; the review job that a write queued logs under the write's request id."""
import json
import logging
from datetime import datetime, timedelta

from pythonjsonlogger.json import JsonFormatter

from telemetry.logs import REQUEST_LOGGER

SECRET_WORDS = "The vault passphrase is correct-horse-battery."


def json_line(record: logging.LogRecord) -> dict:
    """The record as the server's console handler wrote it (settings.LOGGING, LOG_FORMAT=json): its filter added
    the ids when the record was emitted."""
    handler = next(h for h in logging.getLogger().handlers if isinstance(h.formatter, JsonFormatter))
    return json.loads(handler.format(record))


def request_lines(caplog) -> list[dict]:
    return [json_line(r) for r in caplog.records if r.name == REQUEST_LOGGER]


def test_a_request_logs_one_json_line_with_its_ids_and_no_content(acme, api, caplog):
    caplog.set_level(logging.INFO, logger=REQUEST_LOGGER)
    response = api(acme.member_token).post("/api/v1/memories", {"content": SECRET_WORDS}, format="json")
    assert response.status_code == 201
    [line] = request_lines(caplog)
    assert line["request_id"] == response["X-Request-ID"] and len(line["request_id"]) == 32
    assert (line["route"], line["method"], line["status"]) == ("api/v1/memories", "POST", 201)
    assert line["org_id"] == str(acme.org.id) and line["token_id"]
    assert line["duration_ms"] > 0 and line["level"] == "INFO" and line["logger"] == REQUEST_LOGGER
    assert datetime.fromisoformat(line["time"]).utcoffset() == timedelta(0)
    text = json.dumps(line)
    assert "passphrase" not in text and acme.member_token not in text and response.json()["memory"]["id"] not in text


def test_a_callers_request_id_is_kept_when_plain_and_replaced_otherwise(acme, api, caplog):
    caplog.set_level(logging.INFO, logger=REQUEST_LOGGER)
    kept = api(acme.member_token).get("/api/v1/me", HTTP_X_REQUEST_ID="lb-7f3a.42")
    assert kept["X-Request-ID"] == "lb-7f3a.42"
    replaced = api(acme.member_token).get("/api/v1/me", HTTP_X_REQUEST_ID="<script> " * 3)
    assert replaced["X-Request-ID"] != "<script> " * 3 and len(replaced["X-Request-ID"]) == 32
    assert [line["request_id"] for line in request_lines(caplog)] == ["lb-7f3a.42", replaced["X-Request-ID"]]


def test_an_unauthenticated_request_is_logged_without_caller(client, caplog):
    caplog.set_level(logging.INFO, logger=REQUEST_LOGGER)
    assert client.get("/api/v1/me").status_code == 401
    [line] = request_lines(caplog)
    assert (line["status"], line["org_id"], line["token_id"]) == (401, None, None)


def test_the_review_job_logs_under_the_request_id_of_the_write(acme, api, queue, work, caplog):
    first = api(acme.member_token).post("/api/v1/memories", {"content": "Backups run at 02:00."}, format="json")
    second = api(acme.member_token).post("/api/v1/memories", {"content": "Backups run at 03:00."}, format="json")
    jobs = {job.meta["request_id"] for job in (queue.fetch_job(i) for i in queue.job_ids)}
    assert jobs == {first["X-Request-ID"], second["X-Request-ID"]}
    caplog.set_level(logging.INFO)
    work()
    job_lines = [json_line(r) for r in caplog.records if "Job OK" in r.getMessage()]
    assert {line["request_id"] for line in job_lines} == {first["X-Request-ID"], second["X-Request-ID"]}
    assert {line["org_id"] for line in job_lines} == {str(acme.org.id)}
