# Two commands: `make up` runs the service on the embedded stack; `make test` runs the tests.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: up test bench docs openapi asyncapi clean venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Re-install whenever the metadata changes, and rebuild the compiled fold (setup.py) whenever
# a projections source changes (a compiled module shadows its source) or a domain or schemas one
# does (the fold is compiled against their types: a schemas type the fold no longer type-checks
# against makes the build fall back to plain Python, which the next `make test` then reports).
$(STAMP): pyproject.toml setup.py $(wildcard projections/*.py projections/reducers/*.py domain/*.py schemas/*.py) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	@$(BIN)/python -c 'from projections import compiled; compiled.main()'
	touch $(STAMP)

venv: $(STAMP)

up: $(STAMP)
	$(BIN)/svc up $(ARGS)

# Four pytest workers on a 2-core box: most of a test's time is waiting (stacks starting,
# processes killed and restarted, stall limits), so two workers left the cores half idle (load
# under 2; pytest 7 m 33 s on a fresh clone, 5 m 41 s with four: docs/benchmarks.md, Test suite
# time). A test file each at a time (its module fixtures stay in one process), except the few long
# files tests/conftest.py lists in SPREAD_FILES, handed out test by test; end-to-end files first,
# unit files last (tests/conftest.py). Each worker starts its own broker and Postgres.
# `make test PYTEST_ARGS=` runs it serially.
PYTEST_ARGS ?= -n 4 --dist loadfile

# pytest exits 5 when it collected nothing: that must fail loudly, never pass. Bytecode is
# cached (PYTHONDONTWRITEBYTECODE emptied, where the environment sets it): the run starts ~200
# Python processes (projectors, API servers, CLI children), each of which otherwise compiles
# every source it imports again (0.05-0.2 CPU-s a process, measured).
test: $(STAMP)
	@PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

bench: $(STAMP)
	@$(BIN)/python -c 'import matplotlib' 2>/dev/null || $(BIN)/pip install --quiet -e '.[test,bench]'
	$(BIN)/python -m tests.perf.run $(ARGS)

docs: openapi asyncapi

openapi: $(STAMP)
	$(BIN)/svc openapi --out docs/openapi.json

asyncapi: $(STAMP)
	$(BIN)/svc asyncapi --out docs/asyncapi.json

clean:
	rm -rf $(VENV) .svc .pytest_cache .hypothesis .mypy_cache build
	find projections -name "*.so" -delete
