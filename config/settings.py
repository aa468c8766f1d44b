"""Settings, all from environment variables. Unset variables fall back to the embedded services of `make run`."""
import os
from pathlib import Path

from config.dburl import database_from_url

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("ZM_DATA_DIR", BASE_DIR / ".data"))
EMBEDDED_PG_PORT = int(os.environ.get("ZM_PG_PORT", "55432"))
EMBEDDED_REDIS_PORT = int(os.environ.get("ZM_REDIS_PORT", "56379"))


def _env_bool(name: str, default: bool) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def _embedded_secret_key() -> str:
    # A fresh checkout gets its own random key, kept with the embedded data so sessions survive restarts.
    path = DATA_DIR / "secret_key"
    if not path.exists():
        import secrets

        DATA_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = os.environ.get("SECRET_KEY") or _embedded_secret_key()
DEBUG = _env_bool("DEBUG", False)
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h.strip()]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_rq",
    "oauth2_provider",  # the OAuth 2.1 authorization server's models and token endpoint (oauth/)
    "oauth",  # its management command: oauth_cleanup
    "tenants",
    "memory",
    "hygiene",
]

MIDDLEWARE = [
    # Outermost: a request id, the request's metrics and its one log line, whatever answers it (telemetry/).
    "telemetry.middleware.RequestTelemetry",
    "django.middleware.security.SecurityMiddleware",
    "plumbing.security.ContentSecurityPolicyMiddleware",
    # The pages' own CSS and scripts, served by the app itself (no CDN, no collectstatic step): whitenoise finds them
    # in each app's static/ folder at start-up and serves them with cache headers.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "plumbing.errors.DatabaseUnavailableMiddleware",  # a database failure outside DRF: 503, not 500
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",  # X-Frame-Options: DENY; nothing here is framed
]

# Behind TLS (ZM_HTTPS=true): a proxy in front terminates TLS and sets X-Forwarded-Proto (replacing any a client
# sent; a proxy that does not set it makes every request look like plain HTTP and be redirected). Cookies are then
# secure-only, plain-HTTP requests are redirected to HTTPS (except /healthz: probes reach it over plain HTTP inside
# the network) and HSTS is sent for a year. Each has its own variable to override it. With ZM_HTTPS=true, DEBUG off,
# a SECRET_KEY and ALLOWED_HOSTS, `manage.py check --deploy` has nothing to say (tests/config/test_settings.py).
HTTPS = _env_bool("ZM_HTTPS", False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", HTTPS)
SECURE_REDIRECT_EXEMPT = [r"^(healthz|livez|readyz|metrics)$"]
SESSION_COOKIE_SECURE = _env_bool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = _env_bool("CSRF_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_HTTPONLY = True  # no script of ours reads it: forms carry the token
SESSION_COOKIE_AGE = int(os.environ.get("SESSION_COOKIE_AGE", str(14 * 24 * 3600)))
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600 if HTTPS else 0)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = _env_bool("SECURE_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = [
    # HSTS for every subdomain (W005) and browser preload lists (W021) are decisions about the whole domain, which
    # this server does not own and which cannot be taken back for the HSTS lifetime: opt in with the variables above.
    "security.W005",
    "security.W021",
    # django-oauth-toolkit's RFC 9700 notes that we answer deliberately (oauth/): http redirect URIs are allowed
    # because native MCP clients listen on loopback (RFC 8252), and oauth/registration.py refuses http anywhere else
    # (W008); the RFC 9207 `iss` parameter is left out of authorization responses (W005) because the toolkit takes it
    # from the request's host, not PUBLIC_URL, and the MCP SDK compares it as a string with the metadata's issuer,
    # which pydantic renders with a trailing slash: a client that forwards it would refuse every approval.
    "oauth2_provider.W005",
    "oauth2_provider.W008",
]

ROOT_URLCONF = "config.urls"
# API.md's body limit: larger JSON bodies answer 413 in the envelope (plumbing.errors.bad_request).
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
CSRF_FAILURE_VIEW = "plumbing.errors.csrf_failure"
WSGI_APPLICATION = "config.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# Two roles (see tenants/db_roles.py): "default" is the runtime app role, which owns nothing and is subject to
# row-level security; "owner" owns the schema and is used only to run migrations (`migrate --database owner`).
_EMBEDDED_DB = f"127.0.0.1:{EMBEDDED_PG_PORT}/zero_memory"
DATABASE_URL = os.environ.get("DATABASE_URL", f"postgres://zm_app:zm_app@{_EMBEDDED_DB}")
DATABASE_OWNER_URL = os.environ.get("DATABASE_OWNER_URL", f"postgres://zm_owner:zm_owner@{_EMBEDDED_DB}")
# The app role's connections come from a pool per process (psycopg_pool through Django): a request borrows one and
# hands it back when it ends, so a server with many request threads keeps a bounded number of Postgres connections.
# Identity is set transaction-locally (tenants/rls.py), so a borrowed connection carries none from its last user.
# Size the pools so that web workers x DB_POOL_MAX_SIZE, plus the RQ worker and the commands, stays under Postgres'
# max_connections (100 by default). A request waits up to DB_POOL_TIMEOUT seconds for a free connection, then answers
# 503 database_unavailable: a web worker runs at most WEB_THREADS <= DB_POOL_MAX_SIZE requests, so the wait only
# happens while Postgres is unreachable (a restart), and should end in a prompt 503, not hang the client for long.
DB_POOL = {
    "min_size": int(os.environ.get("DB_POOL_MIN_SIZE", "2")),
    "max_size": int(os.environ.get("DB_POOL_MAX_SIZE", "10")),
    "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "5")),
}
# Threads per web worker (config/asgi.py): the requests one worker runs at once, each with a pooled connection.
# Four, not more: requests are CPU-bound (the model, Postgres on the same cores), and more threads only contend.
# `make bench ARGS="http --clients 16"` on 2 cores, 2 workers, interleaved runs (medians): 8 threads 60.1 recalls/s
# and 60.6 remembers/s, recall p95 425 ms; 4 threads 70.3 and 71.5, p95 339 ms; 2 and 3 threads were no better.
WEB_THREADS = int(os.environ.get("WEB_THREADS", "4"))
# A request body is read whole on the event loop before a thread takes the request (plumbing/body.py): a client that
# sends it slower than this many seconds is answered 408 and holds no thread meanwhile.
BODY_TIMEOUT_SECONDS = float(os.environ.get("BODY_TIMEOUT_SECONDS", "30"))
# Every tenant transaction (request, job step, command) cancels a statement running longer than this (tenants/rls.py):
# no query can hold a pooled connection for ever. A cancelled request answers 503 statement_timeout.
STATEMENT_TIMEOUT_MS = int(os.environ.get("STATEMENT_TIMEOUT_MS", "5000"))
# Every session of the app role searches HNSW with iterative scans (pgvector >= 0.8): a filtered scan (and RLS is a
# filter) otherwise stops at ef_search candidates and silently returns fewer rows than asked for. Set once per
# connection: a SET LOCAL in each transaction cost remember and recall a round trip each.
VECTOR_SEARCH_OPTIONS = "-c hnsw.iterative_scan=relaxed_order -c hnsw.ef_search=100"
# Server-side binding lets psycopg prepare a statement after its fifth run on a connection, so Postgres stops
# planning it again with the row-level security policies folded in (docs/tuning.md). RLS stays exact: the policies
# read app.org_id at execution time. A PgBouncer in front needs its prepared-statement support.
DATABASES = {
    # CONN_MAX_AGE must be 0 with a pool: "closing" a connection returns it to the pool.
    # CONN_HEALTH_CHECKS: the pool checks a connection (an empty query, 35-85 us) before lending it, so after a
    # Postgres restart no request is handed a dead connection (tests/api/test_postgres_restart.py).
    "default": {**database_from_url(DATABASE_URL), "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": True,
                "OPTIONS": {"pool": DB_POOL, "options": VECTOR_SEARCH_OPTIONS, "server_side_binding": True, "prepare_threshold": 5}},
    "owner": {**database_from_url(DATABASE_OWNER_URL), "CONN_MAX_AGE": 0},
}

# django_rq's only migration renames admin permissions through the default alias (the app role, which cannot
# write them); we use no Django admin, so its migrations are skipped. Its Dashboard model has no table.
MIGRATION_MODULES = {"django_rq": None}

REDIS_URL = os.environ.get("REDIS_URL", f"redis://127.0.0.1:{EMBEDDED_REDIS_PORT}/0")
RQ_QUEUES = {
    "default": {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 300},
}

# Requests per token (a web session: per user) per window, counted in Redis so that every web worker shares them
# (tenants/ratelimit.py); over it, 429 rate_limited with Retry-After. 0 disables. The window is a minute; tests
# shorten it.
RATE_LIMIT_PER_MINUTE = int(os.environ.get("RATE_LIMIT_PER_MINUTE", "600"))
RATE_LIMIT_WINDOW_SECONDS = 60

JUDGE_BACKEND = os.environ.get("JUDGE_BACKEND", "local")  # local | vllm (hygiene/judge/)
JUDGE_AUTO_RESOLVE_THRESHOLD = float(os.environ.get("JUDGE_AUTO_RESOLVE_THRESHOLD", "0.9"))
# The judge sees a write's JUDGE_CANDIDATES nearest memories above a low similarity floor: a rewrite shares few words
# with what it replaces, and the judge, not the floor, tells a replacement from a neighbour (docs/tuning.md).
JUDGE_CANDIDATE_SIMILARITY = float(os.environ.get("JUDGE_CANDIDATE_SIMILARITY", "0.25"))
JUDGE_CANDIDATES = int(os.environ.get("JUDGE_CANDIDATES", "5"))
# Of one write's verdicts, how many may retire or open a conflict (hygiene/services.py acting_verdicts): one keeps
# the queue shortest at the same recall (docs/tuning.md).
JUDGE_ACTIONS_PER_WRITE = int(os.environ.get("JUDGE_ACTIONS_PER_WRITE", "1"))
# The queue rule (hygiene/services.py action_for, queue_refusal): a verdict of supersedes, duplicate or contradicts
# opens a conflict from this confidence on, and only between memories at least this similar; below, it is recorded
# and nobody is asked. The bars keep the queue under 10 open conflicts per 100 writes (docs/tuning.md).
JUDGE_QUEUE_THRESHOLD = float(os.environ.get("JUDGE_QUEUE_THRESHOLD", "0.6"))
JUDGE_QUEUE_SIMILARITY = float(os.environ.get("JUDGE_QUEUE_SIMILARITY", "0.35"))
JUDGE_RETRY_INTERVALS = [int(s) for s in os.environ.get("JUDGE_RETRY_INTERVALS", "10,60,300").split(",") if s]
JUDGE_VLLM_URL = os.environ.get("JUDGE_VLLM_URL", "http://127.0.0.1:8001/v1")
JUDGE_VLLM_MODEL = os.environ.get("JUDGE_VLLM_MODEL", "Qwen/Qwen2.5-7B-Instruct")
JUDGE_VLLM_API_KEY = os.environ.get("JUDGE_VLLM_API_KEY", "")
# How the server is told to answer in the verdicts' JSON schema: `json_schema` (OpenAI's structured outputs: vLLM,
# and most servers) or `json_object` ({"type": "json_object", "schema": ...}: llama-cpp-python's server, which refuses
# json_schema; docs/API.md, the vllm judge, has the prompt measured through one on CPU).
JUDGE_RESPONSE_FORMAT = os.environ.get("JUDGE_RESPONSE_FORMAT", "json_schema")
JUDGE_TIMEOUT_SECONDS = float(os.environ.get("JUDGE_TIMEOUT_SECONDS", "20"))
# A review `running` this long lost its worker (killed mid-review): the periodic hygiene_flush queues it again and
# the next claim takes it. Longer than the slowest review (a batch of candidates x JUDGE_TIMEOUT_SECONDS x retries).
HYGIENE_STALE_RUN_SECONDS = float(os.environ.get("HYGIENE_STALE_RUN_SECONDS", "600"))
JUDGE_BATCH_SIZE = int(os.environ.get("JUDGE_BATCH_SIZE", "8"))
# Requests in flight at once per judge call (several batches of JUDGE_BATCH_SIZE pairs keep a GPU's batching fed).
JUDGE_VLLM_CONCURRENCY = int(os.environ.get("JUDGE_VLLM_CONCURRENCY", "4"))
# While the vLLM server cannot answer: `local` judges with the embedded judge (verdicts say so), empty raises
# JudgeUnavailable and RQ retries later. The breaker opens after JUDGE_BREAKER_FAILURES failed batches in a row and
# probes again after JUDGE_BREAKER_COOLDOWN_SECONDS.
JUDGE_VLLM_FALLBACK = os.environ.get("JUDGE_VLLM_FALLBACK", "local")
JUDGE_BREAKER_FAILURES = int(os.environ.get("JUDGE_BREAKER_FAILURES", "3"))
JUDGE_BREAKER_COOLDOWN_SECONDS = float(os.environ.get("JUDGE_BREAKER_COOLDOWN_SECONDS", "30"))
EMBEDDING_BACKEND = os.environ.get("EMBEDDING_BACKEND", "onnx")  # onnx | torch (memory/embeddings.py)
EMBEDDING_MODEL_DIR = Path(os.environ.get("EMBEDDING_MODEL_DIR", DATA_DIR / "models"))
# onnxruntime threads per process; 0: all cores (up to 4). `make run` gives each web worker cores / workers.
EMBEDDING_THREADS = int(os.environ.get("EMBEDDING_THREADS", "0"))

AUTH_USER_MODEL = "tenants.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# The web pages (tenants/pages.py). Sign-in links (`manage.py bootstrap`, an admin adding a user) are absolute URLs
# on PUBLIC_URL, work once, and expire after SIGN_IN_LINK_HOURS. Failed password sign-ins are throttled per account:
# SIGN_IN_FAILURES within SIGN_IN_FAILURE_MINUTES lock that account's password sign-in until the window ends.
PUBLIC_URL = os.environ.get("PUBLIC_URL", f"http://127.0.0.1:{os.environ.get('PORT', '8000')}").rstrip("/")
SIGN_IN_LINK_HOURS = float(os.environ.get("SIGN_IN_LINK_HOURS", "24"))
SIGN_IN_FAILURES = int(os.environ.get("SIGN_IN_FAILURES", "5"))
SIGN_IN_FAILURE_MINUTES = int(os.environ.get("SIGN_IN_FAILURE_MINUTES", "15"))
LOGIN_URL = "/sign-in"

# The OAuth 2.1 authorization server (oauth/, on django-oauth-toolkit): what MCP's authorization spec asks of a server
# that a client reaches by its URL alone. Authorization code with PKCE S256 only, public clients registered
# dynamically, access tokens of an hour, refresh tokens that rotate (a reused one revokes its family), every token
# bound to this server's resource (RFC 8707) and stored only as its SHA-256 (RFC 9700 token storage).
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH_SCOPES = {"memory:read": "Read your memories", "memory:write": "Read and write your memories"}
OAUTH2_PROVIDER = {
    "SCOPES": OAUTH_SCOPES,
    "DEFAULT_SCOPES": ["memory:read"],
    "READ_SCOPE": "memory:read",
    "WRITE_SCOPE": "memory:write",
    "OAUTH2_VALIDATOR_CLASS": "oauth.validator.Validator",
    "PKCE_REQUIRED": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("OAUTH_ACCESS_TOKEN_SECONDS", "3600")),
    "REFRESH_TOKEN_EXPIRE_SECONDS": int(os.environ.get("OAUTH_REFRESH_TOKEN_SECONDS", str(30 * 24 * 3600))),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],  # http for loopback only: oauth/registration.py decides
    "ALLOW_URI_WILDCARDS": False,
    "ALLOW_LOCALHOST_LOOPBACK": True,  # RFC 8252 section 7.3: a loopback redirect URI may use any port
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
}
# Open dynamic client registration (RFC 7591), limited per client address in Redis (tenants/ratelimit.py's windows).
OAUTH_REGISTRATIONS_PER_WINDOW = int(os.environ.get("OAUTH_REGISTRATIONS_PER_WINDOW", "20"))
OAUTH_REGISTRATION_WINDOW_SECONDS = int(os.environ.get("OAUTH_REGISTRATION_WINDOW_SECONDS", "3600"))
# The token, revocation and authorization endpoints, per client address and endpoint (oauth/throttle.py); 0: none.
OAUTH_REQUESTS_PER_WINDOW = int(os.environ.get("OAUTH_REQUESTS_PER_WINDOW", "120"))
OAUTH_REQUEST_WINDOW_SECONDS = int(os.environ.get("OAUTH_REQUEST_WINDOW_SECONDS", "60"))
# `manage.py oauth_cleanup` (hourly CronJob in k8s): registered clients never used for this long are removed.
OAUTH_UNUSED_CLIENT_DAYS = int(os.environ.get("OAUTH_UNUSED_CLIENT_DAYS", "7"))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "/static/"
WHITENOISE_USE_FINDERS = True

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "tenants.auth.BearerTokenAuthentication",
        "tenants.auth.OrgSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["plumbing.parsers.StrictJSONParser"],  # refuses what Postgres cannot store
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "plumbing.schema.AutoSchema",
    "EXCEPTION_HANDLER": "plumbing.errors.api_exception_handler",
    # No OPTIONS metadata answers (they are not in the OpenAPI document, and would show view docstrings): 405.
    "DEFAULT_METADATA_CLASS": None,
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "zero-memory API",
    "DESCRIPTION": "Multi-tenant memory server for AI agents. Contract: API.md; project notes: docs/API.md.",
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "MemoryKindEnum": "memory.models.Memory.Kind",
        "MemoryScopeEnum": "memory.models.Memory.Scope",
        "MemoryWriterEnum": "memory.models.Memory.Writer",
        "MemoryStatusEnum": "memory.models.Memory.Status",
        "ConflictStatusEnum": "memory.models.Conflict.Status",
        "TokenWriterEnum": "tenants.models.ApiToken.Writer",
    },
}

# Logs (telemetry/logs.py): one JSON object per line by default, with the request id, organization and token ids of
# the request or job that wrote it; LOG_FORMAT=plain for a person reading a terminal.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "json")
LOG_FORMATS = {
    "json": {
        "()": "pythonjsonlogger.json.JsonFormatter",
        "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s %(org_id)s %(token_id)s",
        "rename_fields": {"levelname": "level", "name": "logger"},
        "timestamp": "time",  # ISO 8601, UTC
    },
    "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"},
}
if LOG_FORMAT not in LOG_FORMATS:
    raise ValueError(f"LOG_FORMAT must be json or plain, not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "telemetry.logs.ContextFilter"}},
    "formatters": {"chosen": LOG_FORMATS[LOG_FORMAT]},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "chosen", "filters": ["context"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # A body over DATA_UPLOAD_MAX_MEMORY_SIZE is the client's mistake, answered 413 in the envelope (and in the
        # request log); Django would also log it as an ERROR with a whole traceback.
        "django.security.RequestDataTooBig": {"level": "CRITICAL"},
        # The request log replaces Django's warnings for 4xx answers (which carry the path); a 5xx's traceback is
        # still logged, as an ERROR.
        "django.request": {"level": "ERROR"},
    },
}

# Prometheus metrics (telemetry/): GET /metrics answers only `Authorization: Bearer <METRICS_TOKEN>` (unset: off,
# 404). A process without a web server (the RQ worker's pod) serves them on METRICS_PORT when set. With
# PROMETHEUS_MULTIPROC_DIR (prometheus-client's own variable; `make run` and k8s set it) every process writes its
# values there and /metrics adds them up. Traces: OTEL_EXPORTER_OTLP_ENDPOINT (telemetry/tracing.py).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_PORT = int(os.environ.get("METRICS_PORT") or 0)
PROMETHEUS_MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
