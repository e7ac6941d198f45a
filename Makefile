# statlas: `make demo` runs the main job on the embedded defaults, `make test` the whole suite,
# `make check` lint and the tests that need neither Spark nor PostgreSQL.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# .venv is installed again when what it installs changes: pyproject.toml without the
# linters' and the test runner's settings (editing those needs no install)
STAMP  := $(VENV)/.installed-$(shell awk '/^\[/ { tool = /^\[+tool\.(ruff|mypy|pytest)/ } !tool' pyproject.toml | cksum | cut -d' ' -f1)
DEMO   := demo
JAR    := collectors/jvm/statlas-collect.jar
# Hive Metastore clients the tests talk to, written by others: each pins an old thrift
# (hive-metastore-client: 0.13) that would replace the project's, so they are installed
# without their dependencies and run on the project's thrift (pyproject.toml's [dev] notes it)
HMS_CLIENTS := hmsclient==0.1.1 hive-metastore-client==1.0.9

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[postgres,spark,daemon,dev]'
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps $(HMS_CLIENTS)
	rm -f $(VENV)/.installed-*
	touch $@

# the one-pass collection scan (collectors/jvm_scan.py), compiled by the JDK's javac
$(JAR): $(STAMP) $(wildcard collectors/jvm/src/statlas/collect/*.java)
	$(BIN)/python -m collectors.jvm_scan

.PHONY: install
install: $(STAMP) $(JAR) ## create .venv with the project and every extra, build the scan's jar

# the Kerberos tests' Python clients and the daemon's GSSAPI, built against MIT Kerberos
KERBEROS := $(VENV)/.kerberos-installed
$(KERBEROS): $(STAMP) | tools
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[kerberos,kerberos-tests]'
	touch $@

.PHONY: tools
tools: ## system tools the tests use (MIT Kerberos for a test KDC, chromium for the console, docker-compose)
	@command -v krb5kdc >/dev/null 2>&1 && command -v krb5-config >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing MIT Kerberos (Debian packages) for the Kerberos tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      krb5-kdc krb5-admin-server krb5-user libkrb5-dev >/dev/null; \
	  else echo "MIT Kerberos is not installed: install krb5-kdc krb5-admin-server krb5-user libkrb5-dev"; exit 1; fi; }
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (Debian package) for the console's browser tests"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || { \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; \
	  else echo "chromium is not installed: install Debian's chromium for the console's tests"; exit 1; fi; }
	@command -v docker-compose >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing docker-compose (Debian package) to validate compose.yaml"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >/dev/null; \
	  else echo "docker-compose is not installed: the compose.yaml check will be skipped"; fi; }

.PHONY: demo
demo: $(STAMP) $(JAR) ## generate a dataset, register it in ./demo/statlas.db, look up, collect statistics
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(BIN)/python benchmarks/demo_data.py $(DEMO)/sales
	cd $(DEMO) && ../$(BIN)/statlas db upgrade
	cd $(DEMO) && ../$(BIN)/statlas table register sales --path sales
	cd $(DEMO) && ../$(BIN)/statlas table register sales --path sales
	cd $(DEMO) && ../$(BIN)/statlas table show sales
	cd $(DEMO) && ../$(BIN)/statlas partitions sales --in dt=2024-03-01,2024-03-02 --in region=emea,apac
	cd $(DEMO) && printf '["2024-03-05", "emea"]\n["2024-03-06", "amer"]\n' > tuples.jsonl
	cd $(DEMO) && ../$(BIN)/statlas partitions sales --tuples dt,region=tuples.jsonl --json
	cd $(DEMO) && ../$(BIN)/statlas partitions sales --where "dt BETWEEN '2024-03-30' AND '2024-04-01' AND region <> 'emea'"
	cd $(DEMO) && ../$(BIN)/statlas partitions sales --where "dt IS NULL"
	cd $(DEMO) && ! ../$(BIN)/statlas partitions sales --in dt=2024-3-1
	cd $(DEMO) && ../$(BIN)/statlas collect sales 2>/dev/null
	cd $(DEMO) && ../$(BIN)/statlas collect sales
	cd $(DEMO) && ../$(BIN)/statlas stats sales --where "region = 'emea'"
	cd $(DEMO) && ../$(BIN)/statlas stats sales --column amount --buckets 4 --json
	cd $(DEMO) && ../$(BIN)/statlas estimate --sql "SELECT s.region, COUNT(*) FROM sales s WHERE s.dt BETWEEN '2024-03-01' AND '2024-03-07' AND s.amount > 400 GROUP BY s.region"
	@echo "demo done: the metastore is $(DEMO)/statlas.db"

.PHONY: lint
lint: $(STAMP) ## ruff and mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

.PHONY: test
test: $(STAMP) $(JAR) tools $(KERBEROS) lint ## lint, then the whole suite on SQLite and PostgreSQL
	$(BIN)/pytest -n 2 --dist loadgroup

# the tests that need neither Spark (so no JVM and no jar) nor PostgreSQL, without the slow ones
CHECK_MARKERS := not spark and not postgres and not slow

.PHONY: check
check: $(STAMP) $(KERBEROS) lint ## lint, then the fast tests: no Spark, no PostgreSQL (under a minute)
	$(BIN)/pytest -n 2 --dist loadgroup -m "$(CHECK_MARKERS)"

.PHONY: bench
bench: $(STAMP) ## the partition-lookup benchmark (1,000,000 partitions; several minutes)
	$(BIN)/python benchmarks/partition_lookup.py

.PHONY: data
data: $(STAMP) ## TPC-H SF 1 partitioned as a lake, uniform and Zipf-skewed (benchmarks/.data)
	$(BIN)/python benchmarks/data.py --scale 1

.PHONY: clean
clean: ## remove .venv, the demo and caches
	rm -rf $(VENV) $(DEMO) $(JAR) .mypy_cache .ruff_cache .pytest_cache .hypothesis
