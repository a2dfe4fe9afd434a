# The whole set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.installed-test-stamp
# A kernel profile that keeps the JVM's output out of notebook cells (see tests/ipython).
export IPYTHONDIR := $(CURDIR)/tests/ipython
export PYSPARK_PYTHON := $(CURDIR)/$(BIN)/python

.PHONY: demo test lab docs fuzz check-python check-java samples clean lock test-oldest

# --- dependencies: pyproject.toml states ranges; requirements.lock the exact versions CI, Binder and the
# environment files use (the newest the ranges allow when `make lock` last ran). Installs take the lock as
# constraints, so `make test` tests exactly those versions.
LOCK   := requirements.lock
UV     := $(BIN)/uv
OLDEST := .venv-oldest
OLDEST_STAMP := $(OLDEST)/.installed-stamp
# The core tests (no Spark, views, browser, database or notebooks): what `make test-oldest` runs.
CORE_TESTS := tests/test_core_only.py tests/test_read.py tests/test_detect.py tests/test_conformance.py \
	tests/test_ordering.py tests/test_replay_answers.py tests/test_tables.py tests/test_filters.py \
	tests/test_fast_path.py tests/test_tuple_rows.py

# Refresh the lock to the newest versions pyproject.toml's ranges allow (Python 3.11, as CI and Binder),
# then the environment files from it.
lock: | $(UV)
	UV_CUSTOM_COMPILE_COMMAND="make lock" $(UV) pip compile pyproject.toml --all-extras --upgrade \
	  --python-version 3.11 --quiet -o $(LOCK)
	$(BIN)/python tools/envfiles.py

$(UV): | check-python
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) uv

# CI's second run: the core tests on the oldest versions pyproject.toml's ranges allow (the lower bounds
# of cdckit's own requirements, the newest of what those need), in a venv of their own.
test-oldest: $(OLDEST_STAMP)
	$(OLDEST)/bin/python -c 'import duckdb, msgspec, numpy, orjson, pandas, pyarrow, tqdm as t; \
	  print("oldest:", *(f"{m.__name__} {m.__version__}" for m in (pandas, numpy, pyarrow, duckdb, msgspec, orjson, t)))'
	$(OLDEST)/bin/python -m pytest -q -p no:randomly -o addopts="-p no:cacheprovider --import-mode=importlib" $(CORE_TESTS)

$(OLDEST_STAMP): pyproject.toml $(LOCK) | $(UV)
	rm -rf $(OLDEST)
	$(PYTHON) -m venv --without-pip $(OLDEST)
	$(UV) pip install --quiet --python $(OLDEST)/bin/python --resolution lowest-direct -e .
	$(UV) pip install --quiet --python $(OLDEST)/bin/python -c $(LOCK) pytest hypothesis
	touch $(OLDEST_STAMP)
# --- end of dependencies

demo: $(STAMP)
	@$(MAKE) --no-print-directory check-java || echo "(the demo runs on pandas; Spark features need Java 17+)"
	$(BIN)/python -m cdckit.demo --out out/events.parquet

# --- parallel tests: pytest-xdist, one worker per core and one more (at most 4: each starts its own Spark
# session, whose JVM takes up to a quarter of the memory); the extra worker runs while the others wait on a JVM,
# a database or a browser starting (on 2 cores: 11.5 min, against 13.3 with two). --dist loadfile keeps each
# file in one worker, in order: a notebook's cells (nbval) and the tests that share a module-scoped server,
# capture or Spark fixture. --no-loadscope-reorder hands the files out in collection order, which
# tests/conftest.py starts with the slowest files, so that no long file starts last while the others idle.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); n=$$((n + 1)); [ "$$n" -gt 4 ] && n=4; echo $$n)
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
# --- end of parallel tests

# The run must leave the working tree as it found it: any file it changes or adds is named and fails it.
test: $(TEST_STAMP) check-java
	@before="$$(git status --porcelain 2>/dev/null)"; \
	$(BIN)/python -m pytest $(PYTEST_PARALLEL); status=$$?; \
	after="$$(git status --porcelain 2>/dev/null)"; \
	if [ "$$before" != "$$after" ]; then \
	  echo "make test changed the working tree (git status before and after differ):"; \
	  echo "$$after"; \
	  exit 1; \
	fi; \
	exit $$status

# The documentation site (mkdocs.yml, docs/): built offline, any warning an error, into build/site.
# The tests build it too (tests/test_docs.py), so `make test` fails on a page that no longer builds.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict
	@echo "the site: build/site/index.html"

# Binder and containers run as root, where Jupyter refuses to start without --allow-root.
lab: $(STAMP)
	$(BIN)/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) notebooks/

# The long fuzzing campaign; failing cases land in tests/fuzz_cases/ and become regression tests.
fuzz: $(STAMP)
	$(BIN)/python tests/fuzz_campaign.py --seconds $${FUZZ_SECONDS:-1800} --workers $${FUZZ_WORKERS:-2} --out tests/fuzz_cases

# Every extra (pyproject.toml) but the test-only producers: the demo, the notebooks and the tests use them.
# uv installs them (its parallel downloads take a fresh install from about 3 minutes to under one).
$(STAMP): pyproject.toml $(LOCK) binder/jupyterlab-overrides.json | check-python
	@$(MAKE) --no-print-directory $(UV)
	UV_LINK_MODE=copy $(UV) pip install --quiet --python $(BIN)/python -c $(LOCK) -e '.[spark,viz,notebooks,dev,bench]'
	@# JupyterLab from this venv (make lab, or started by hand) asks no question about news on every page
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp binder/jupyterlab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $(STAMP)

# The tests also run the real producers (the producers extra: Debezium's engine, about 200 MB); the demo does not.
$(TEST_STAMP): $(STAMP)
	UV_LINK_MODE=copy $(UV) pip install --quiet --python $(BIN)/python -c $(LOCK) -e '.[producers]'
	touch $(TEST_STAMP)

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || \
	  { echo "cdckit needs Python 3.10 or newer ($(PYTHON) is older); set PYTHON=/path/to/python3.11"; exit 1; }

check-java:
	@java_bin="$${JAVA_HOME:+$$JAVA_HOME/bin/}java"; \
	version=$$("$$java_bin" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1); \
	if [ -z "$$version" ] || [ "$$version" -lt 17 ]; then \
	  echo "Spark needs Java 17 or newer; found: $${version:-no java}."; \
	  echo "  Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless"; \
	  echo "  conda:         conda install -c conda-forge openjdk=17"; \
	  echo "  then put java on PATH or set JAVA_HOME."; \
	  exit 1; \
	fi

# Rewrite the shop sample files after changing an encoder or the scenario.
samples: $(STAMP)
	$(BIN)/python -m cdckit.samples.build

clean:
	rm -rf $(VENV) $(OLDEST) out build *.egg-info
