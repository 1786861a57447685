# make test    - the test suite (unit, stateful, concurrency), on every core (pytest-xdist; JOBS=N to change)
# make verify  - lint, types, tests under the larger verify profile, CrossHair, conformance report
# make lock    - recompile requirements-dev.lock (the exact dev toolchain) from pyproject.toml
# make docs    - build/docs/: the HTML API reference of hicache from its docstrings (pdoc)
# make bench   - the benchmarks (outside the test run), printing ratios against in-run baselines
# make bench-scale [SIZES=10000,100000,1000000] - the file store at 10k/100k/1M page files against the
#                engine's evictor (issue 24) alone; rewrites its section of benchmarks/RESULTS.md and scale.svg
# make mutation / make modelcheck - see their targets below
# make engine-verdicts - the oracle's verdicts on the engine release's own HiCacheFile in the configurations
#                users run (issue 31 part 3): a table, a reproduction per failing clause under
#                build/engine-verdicts/, and the README's section "The engine's own store, judged"
# make bench-engine - the reference store inside the engine against the engine's HiCacheFile (issue 31,
#                F10) alone; prints its section (also part of make bench)
# make chart   - benchmarks/existence_cache.svg: contains_all ns/page against cache size per variant
# make hitrate - benchmarks/metadata_hitrate.svg: MetadataCache hit rate, eviction birth vs lru, on Zipf streams
# make slowfs  - benchmarks/slowfs.svg: HiCacheFile on a simulated slow metadata path (0.2, 1, 5 ms per call;
#                about 1 min; also part of make bench)
# make stress [RUNS=N] - the thread and process tiers N times idle and N times with every core busy
# Each target creates .venv on first use (Python >= 3.10 and make are all it needs), with exactly the
# versions requirements-dev.lock names (hash-checked); a changed lock file or pyproject.toml rebuilds it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCK   := requirements-dev.lock
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check
# pytest-xdist workers for make test and make verify: one per core by default
JOBS   ?= auto
# pytest keeps the test modules it rewrites (assert introspection) in __pycache__, which an environment
# with PYTHONDONTWRITEBYTECODE set forbids: rewriting all of them again costs each worker about 3 s a run
unexport PYTHONDONTWRITEBYTECODE
# the package of the models and their checkers, as the repository names it (hicache_spec once installed)
SPEC   := spec

.PHONY: torch-path engine-verdicts test verify verify-quick docs bench bench-engine bench-scale chart hitrate slowfs lint typecheck threads stress clean mutation modelcheck lock

$(STAMP): pyproject.toml $(LOCK)
	@rm -rf $(VENV)
	@$(PYTHON) -m venv $(VENV)
	@echo "installing the locked dev toolchain ($(LOCK)) into a new $(VENV)"
	@$(PIP) --require-hashes --no-deps -r $(LOCK)
	@# built with the locked setuptools just installed (offline); spec/ is installed as hicache_spec
	@$(PIP) --no-deps --no-build-isolation -e .
	@touch $(STAMP)

# Torch for the engine's own store (its tests and the oracle's engine form): Debian's python3-torch (CPU),
# which .ci/run installs with apt-get.  The venv does not see system packages, so a path file adds torch and
# numpy alone (links in $(VENV)/system-torch), when the system's Python is the venv's version; checked on
# every run (torch may be installed after the venv was made).  Without it those tests skip, saying why.
SYSTEM_SITE := /usr/lib/python3/dist-packages
torch-path: $(STAMP)
	@if [ -d $(SYSTEM_SITE)/torch ] && [ ! -e $(VENV)/system-torch/torch ] && \
	    [ "$$($(BIN)/python -c 'import sys; print(sys.version_info[:2])')" = \
	      "$$(/usr/bin/python3 -c 'import sys; print(sys.version_info[:2])' 2>/dev/null)" ]; then \
	    mkdir -p $(VENV)/system-torch && \
	    ln -sfn $(SYSTEM_SITE)/torch $(VENV)/system-torch/torch && \
	    ln -sfn $(SYSTEM_SITE)/numpy $(VENV)/system-torch/numpy && \
	    echo "$(abspath $(VENV))/system-torch" > "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/system-torch.pth" && \
	    echo "torch: $(SYSTEM_SITE)/torch linked into $(VENV) (torch and numpy alone)"; \
	fi

test: $(STAMP) torch-path
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal

# The lock file of the dev extra, for every platform and Python >= 3.10, with hashes.  Run it after a
# change of the dev extra in pyproject.toml (make verify checks that the lock satisfies the extra).
lock: $(STAMP)
	@$(PIP) -e '.[lock]'
	$(BIN)/uv pip compile pyproject.toml --extra dev --universal --python-version 3.10 \
		--generate-hashes --no-header --quiet -o $(LOCK)

threads: $(STAMP)
	$(BIN)/python -m pytest -m threads -n $(JOBS) --dist worksteal

# make stress [RUNS=N]: tests/concurrency, the scheduler's thread tests and tests/integration, N runs (default
# 20) idle then N with one bounded busy loop per core; prints failures per test (idle / busy) from JUnit XML
# reports (kept in build/stress); exits 1 on any failure.  Takes N x (idle + busy run time).
stress: $(STAMP)
	$(BIN)/python -m tools.stress --runs $(or $(RUNS),20)

verify: $(STAMP) torch-path
	$(BIN)/python -m $(SPEC).conformance.verify --jobs $(JOBS)

verify-quick: $(STAMP) torch-path
	$(BIN)/python -m $(SPEC).conformance.verify --quick --jobs $(JOBS)

# make mutation [MODULES=hicache/metadata_cache.py]: mutmut over hicache/, one file at a time, in a scratch
# copy (build/mutation); writes docs/mutation-score.json (shown by make verify).  CPU-heavy: one worker.
mutation: $(STAMP)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[mutation]'
	$(BIN)/python -m $(SPEC).conformance.mutation $(MODULES)

# make modelcheck [DEPTH=N] [WIDE=--wide]: the bounded exhaustive model check alone, with a progress display
modelcheck: $(STAMP)
	$(BIN)/python -m $(SPEC).modelcheck --progress --verbose $(if $(DEPTH),--depth $(DEPTH)) $(WIDE)

lint: $(STAMP)
	$(BIN)/python -m ruff check .

typecheck: $(STAMP)
	$(BIN)/python -m mypy

# make docs: pdoc renders hicache and hicache.fs (tools/docs.py) into build/docs (gitignored); open
# build/docs/index.html.  tests/tooling/test_docs.py builds the same pages.
docs: $(STAMP)
	$(BIN)/python -m tools.docs build/docs

bench: $(STAMP) torch-path
	$(if $(SIZES),HICACHE_BENCH_SIZES=$(SIZES)) $(BIN)/python -m benchmarks

engine-verdicts: $(STAMP) torch-path
	$(BIN)/python -m tools.engine_verdicts

bench-engine: $(STAMP) torch-path
	$(BIN)/python -m benchmarks --only bench_engine_backend

bench-scale: $(STAMP)
	$(BIN)/python -m benchmarks.bench_scale $(if $(SIZES),--sizes $(SIZES))

chart: $(STAMP)
	$(BIN)/python -m benchmarks.chart

hitrate: $(STAMP)
	$(BIN)/python -m benchmarks.hitrate

slowfs: $(STAMP)
	$(BIN)/python -m benchmarks.bench_slowfs

clean:
	rm -rf $(VENV) .verify .hypothesis .pytest_cache .mypy_cache .ruff_cache *.egg-info
