# The whole set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.installed-test-stamp
# A kernel profile that keeps the JVM's output out of notebook cells (see tests/ipython).
export IPYTHONDIR := $(CURDIR)/tests/ipython
export PYSPARK_PYTHON := $(CURDIR)/$(BIN)/python

.PHONY: demo test lab docs fuzz check-python check-java samples clean

demo: $(STAMP)
	@$(MAKE) --no-print-directory check-java || echo "(the demo runs on pandas; Spark features need Java 17+)"
	$(BIN)/python -m cdckit.demo --out out/events.parquet

# The run must leave the working tree as it found it: any file it changes or adds is named and fails it.
test: $(TEST_STAMP) check-java
	@before="$$(git status --porcelain 2>/dev/null)"; \
	$(BIN)/python -m pytest; status=$$?; \
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
$(STAMP): pyproject.toml | check-python
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[spark,viz,notebooks,dev,bench]'
	touch $(STAMP)

# The tests also run the real producers (the producers extra: Debezium's engine, about 200 MB); the demo does not.
$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[producers]'
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
	rm -rf $(VENV) out build *.egg-info
