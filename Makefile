# Every target creates the virtualenv itself, so a fresh clone needs only `make demo` / `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TYPECHECK := build/typecheck

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# the distribution was called `qdsl` before it took its own name on the index
	$(BIN)/python -m pip uninstall -q -y qdsl 2>/dev/null || true
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

.PHONY: install demo test test-deep lint typecheck bench wheel-check
install: $(STAMP)

demo: $(STAMP)
	$(BIN)/qdsl demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(MAKE) typecheck
	$(BIN)/python -m pytest -q

# mypy reads the package through a link tree shaped like the installed wheel
# (docs/architecture.md, "Layout").
typecheck: $(STAMP)
	rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)/qdsl
	for f in qdsl/*; do ln -s "$(CURDIR)/$$f" $(TYPECHECK)/qdsl/; done
	for d in dsl executor verifier facts envelope; do ln -s "$(CURDIR)/$$d" $(TYPECHECK)/qdsl/$$d; done
	$(BIN)/mypy
	$(BIN)/mypy -p benchmarks

# Every benchmark, then the summary of issue 12's table (benchmarks/__main__.py);
# e.g. `make bench BENCH_ARGS="--only compile,executor --sizes 10000"`.
bench: $(STAMP)
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

# The built wheel, installed into a fresh venv with an empty state dir.
wheel-check: $(STAMP)
	$(BIN)/python tests/wheel_check.py

# The reliability suites at ten times the CI examples (Hypothesis profile `deep`).
test-deep: $(STAMP)
	QDSL_HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest -q tests/executor tests/facade/test_cli_fuzz.py \
		tests/envelope/test_store_concurrency.py tests/envelope/test_store_kill9.py \
		tests/envelope/test_store_state_machine.py tests/envelope/test_envelope_budget_props.py \
		tests/generated
