# The two commands of the README. Both work on a fresh Debian machine with Python 3.11 and no services running.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test fuzz bench install clean-data

$(STAMP): pyproject.toml
	@echo "[zero-memory] creating $(VENV) and installing the project (first time: a few minutes)"
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install --quiet --upgrade pip
	@$(VENV)/bin/pip install --quiet -e '.[test]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	@$(VENV)/bin/python -m config.launcher run

test: $(STAMP)
	@$(VENV)/bin/python -m config.launcher test $(PYTEST_ARGS)

# The gauntlet of tests/fuzz run longer than in `make test`: more fuzz cases per operation and token kind, more
# lifecycle sequences, e.g. make fuzz FUZZ_EXAMPLES=1000 PROPERTY_EXAMPLES=2000
FUZZ_EXAMPLES ?= 300
PROPERTY_EXAMPLES ?= 500
fuzz: $(STAMP)
	@ZM_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) ZM_PROPERTY_EXAMPLES=$(PROPERTY_EXAMPLES) \
		$(VENV)/bin/python -m config.launcher test tests/fuzz $(PYTEST_ARGS)

# Benchmarks against the embedded services, e.g. make bench ARGS="recall --memories 100000"
bench: $(STAMP)
	@$(VENV)/bin/python -m config.launcher bench $(ARGS)

# As root in a private directory the Postgres cluster lives outside .data (config/services.py): that goes too.
clean-data:
	rm -rf $$(cat .data/postgres-home 2>/dev/null) .data
