# Every target works from a fresh clone: `install` creates .venv when it is missing.
# `serve` installs only what serving needs (the `service` extra); `install`, which every other
# target uses, installs the whole development and benchmark stack on top.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SERVE_STAMP := $(VENV)/.installed-service
NODE_DIR := tests/interop/node
NODE_STAMP := $(NODE_DIR)/node_modules/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install install-service node-packages serve test deep lint fmt type check bench fuzz drills drills-fast docs dist clean

$(SERVE_STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[service]'
	touch $(SERVE_STAMP)

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(SERVE_STAMP)

install: $(STAMP)

# The interop tests run react-querybuilder, pinned by the lock file; without npm they are
# skipped (or fail under AUDIENCEFILTER_REQUIRE_SERVERS=1), so a machine without Node still tests.
$(NODE_STAMP): $(NODE_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  (cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error) && touch $(NODE_STAMP); \
	else echo "npm not found: the react-querybuilder interop tests will be skipped"; fi

node-packages: $(NODE_STAMP)

install-service: $(SERVE_STAMP)

serve: install-service  ## the main job: the reference service on the embedded SQLite database
	$(BIN)/python -m audiencefilter.service demo --host $(HOST) --port $(PORT)

# Two processes, a file's tests kept together in one (each process starts its own throw-away
# servers); `make test WORKERS=0` runs in one process.
WORKERS ?= 2
# A run's processes keep their compiled modules, and pytest its rewritten test modules, in
# __pycache__ (ignored by git and by the build). Where the environment sets
# PYTHONDONTWRITEBYTECODE, each worker and each subprocess compiled them again: a worker's
# collection took 21 s of CPU instead of 11 s.
test deep: export PYTHONDONTWRITEBYTECODE =
test: install node-packages  ## every test; starts throw-away PostgreSQL/MariaDB servers when their binaries exist
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS) --dist loadfile --no-loadscope-reorder

SPACE_TESTS = tests/test_space.py tests/test_space_text.py tests/test_space_frames.py tests/test_space_sql.py tests/test_space_servers.py tests/test_space_spark.py
SHAPE_TESTS = tests/test_column_types.py tests/test_shapes_relations.py tests/test_shape_values.py tests/test_python_values.py tests/test_frame_shapes.py tests/test_shapes_settings.py

deep: install  ## the whole input space on every surface and engine, against the oracle (docs/testing.md)
	HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest -q -p no:cacheprovider $(SPACE_TESTS) $(SHAPE_TESTS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

fmt: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

type: install
	$(BIN)/mypy

check: lint type test

bench: install  ## engines side by side (docs/performance-results.md), the speed gates, the known gaps, every claim
	$(BIN)/python -m benchmarks.run
	$(BIN)/python -m benchmarks.gates
	$(BIN)/python -m benchmarks.gaps
	$(BIN)/python -m benchmarks.claims

fuzz: install  ## coverage-guided fuzzing of both readers; new inputs land in tests/fuzz/corpus
	$(BIN)/pip install --quiet atheris
	$(BIN)/python -m tests.fuzz.run json -runs=500000 -max_len=2048
	$(BIN)/python -m tests.fuzz.run text -runs=500000 -max_len=2048

drills: install  ## fault and load drills (crash, outage, shared limits, wrk, fuzzing); docs/drills.md
	$(BIN)/python -m drills

drills-fast: install  ## the same drills at CI sizes, a few minutes
	$(BIN)/python -m drills --fast

docs: install  ## the documentation site (mkdocs-material, API reference from docstrings) into site/
	$(BIN)/python -m mkdocs build --strict

dist: install  ## the wheel and the sdist into dist/ (the package is on no index: install the wheel)
	$(BIN)/python -m build --outdir dist .

clean:
	rm -rf dist site $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
