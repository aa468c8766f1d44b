# The zero-memory image: web server, RQ worker and management commands (k8s/ runs it; k8s/README.md).
# Three stages: `export` installs the whole project (torch included) only to export all-MiniLM-L6-v2 to ONNX;
# `runtime-deps` installs the runtime's dependencies, without torch, into a virtualenv; the final stage holds that
# virtualenv, the exported model and the code, runs as a non-root user and has no compiler or package manager work.
# With EMBEDDING_BACKEND=onnx the runtime never imports torch (memory/embeddings.py; tests/k8s/test_dockerfile.py).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS export
WORKDIR /src
COPY pyproject.toml README.md ./
# torch's CPU wheels (the default ones pull in CUDA), then the rest of the project's dependencies.
RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0" \
    && pip install --no-cache-dir .
COPY manage.py ./
COPY config config
COPY plumbing plumbing
COPY embedded_stack embedded_stack
COPY mcp_server mcp_server
COPY tenants tenants
COPY memory memory
COPY hygiene hygiene
COPY oauth oauth
COPY telemetry telemetry
# No database or Redis is needed: the command exports the model and embeds one sentence with it.
RUN SECRET_KEY=build-only ZM_DATA_DIR=/tmp/zero-memory EMBEDDING_MODEL_DIR=/opt/zero-memory/models \
    python manage.py embeddings

FROM ${PYTHON_IMAGE} AS runtime-deps
# pyproject's dependencies less those of the export and of `make run`'s embedded services (k8s/runtime_requirements.py).
COPY pyproject.toml k8s/runtime_requirements.py /tmp/
RUN python /tmp/runtime_requirements.py /tmp/pyproject.toml /tmp/requirements.txt /tmp/requirements-no-deps.txt \
    && python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir -r /tmp/requirements.txt \
    && /opt/venv/bin/pip install --no-cache-dir --no-deps -r /tmp/requirements-no-deps.txt

FROM ${PYTHON_IMAGE}
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    EMBEDDING_BACKEND=onnx \
    EMBEDDING_MODEL_DIR=/opt/zero-memory/models
RUN groupadd --system --gid 10001 zm \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin zm
COPY --from=runtime-deps /opt/venv /opt/venv
COPY --from=export /opt/zero-memory/models /opt/zero-memory/models
WORKDIR /app
COPY manage.py ./
COPY config config
COPY plumbing plumbing
COPY embedded_stack embedded_stack
COPY mcp_server mcp_server
COPY tenants tenants
COPY memory memory
COPY hygiene hygiene
COPY oauth oauth
COPY telemetry telemetry
USER 10001:10001
EXPOSE 8000
# The web server of `make run` (embedded_stack/launcher.py server_command); k8s/ gives each pod its own command.
CMD ["python", "-m", "uvicorn", "config.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--workers", "2", "--lifespan", "on", "--no-access-log", "--timeout-graceful-shutdown", "10"]
