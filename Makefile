# make test    - the test suite (unit, stateful, concurrency)
# make verify  - lint, types, tests under the larger verify profile, CrossHair, conformance report
# make bench   - the benchmarks (outside the test run), printing ratios against in-run baselines
# make mutation / make modelcheck - see their targets below
# make chart   - benchmarks/existence_cache.svg: contains_all ns/page against cache size per variant
# make stress [RUNS=N] - the thread and process tiers N times idle and N times with every core busy
# Each target creates .venv on first use (Python >= 3.10 and make are all it needs).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test verify verify-quick bench chart lint typecheck threads stress clean mutation modelcheck

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing the dev extra into $(VENV) (once)"
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

threads: $(STAMP)
	$(BIN)/python -m pytest -m threads

# make stress [RUNS=N]: tests/concurrency, the scheduler's thread tests and tests/integration, N runs (default
# 20) idle then N with one bounded busy loop per core; prints failures per test (idle / busy) from JUnit XML
# reports (kept in build/stress); exits 1 on any failure.  Takes N x (idle + busy run time).
stress: $(STAMP)
	$(BIN)/python -m tools.stress --runs $(or $(RUNS),20)

verify: $(STAMP)
	$(BIN)/python -m spec.verify

verify-quick: $(STAMP)
	$(BIN)/python -m spec.verify --quick

# make mutation [MODULES=hicache/metadata_cache.py]: mutmut over hicache/, one file at a time, in a scratch
# copy (build/mutation); writes docs/mutation-score.json (shown by make verify).  CPU-heavy: one worker.
mutation: $(STAMP)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[mutation]'
	$(BIN)/python -m spec.mutation $(MODULES)

# make modelcheck [DEPTH=N] [WIDE=--wide]: the bounded exhaustive model check alone, with a progress display
modelcheck: $(STAMP)
	$(BIN)/python -m spec.modelcheck --progress --verbose $(if $(DEPTH),--depth $(DEPTH)) $(WIDE)

lint: $(STAMP)
	$(BIN)/python -m ruff check .

typecheck: $(STAMP)
	$(BIN)/python -m mypy

bench: $(STAMP)
	$(BIN)/python -m benchmarks

chart: $(STAMP)
	$(BIN)/python -m benchmarks.chart

clean:
	rm -rf $(VENV) .verify .hypothesis .pytest_cache .mypy_cache .ruff_cache *.egg-info
