# The README's two commands: `make demo` (set up, run the main job on a builtin) and `make test` (set up, run the suite).
# `make shell` opens a shell in the environment; `make docs` builds the documentation site.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup demo test test-fast lint docs shell bench clean mutants mutants-sample

$(BIN)/fsa2rnn: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv --system-site-packages $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip || echo "(pip not upgraded; continuing)"
	@# Keep a torch that is already there (a GPU machine's build); otherwise take the pinned CPU wheel.
	@$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q "torch==2.13.0"
	@$(BIN)/python -m pip install -q -e ".[nn,triton,dev,lstar,docs]"
	@touch $@

setup: $(BIN)/fsa2rnn

demo: setup
	@PATH=$(BIN):$$PATH bash examples/quickstart.sh

test: setup
	@PATH=$(BIN):$$PATH $(BIN)/python -m pytest

# The inner loop: the contracts and the unit tests, without the tests that train (tests/conftest.py: TRAINING), on
# two worker processes (pytest-xdist).
test-fast: setup
	@PATH=$(BIN):$$PATH $(BIN)/python -m pytest -m "not training and not slow" -n 2

lint: setup
	@$(BIN)/ruff check .

# The documentation site (MkDocs + Material + mkdocstrings) into site/; --strict: a broken link or reference fails.
docs: setup
	@NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site
	@echo "docs: site/index.html (or: $(BIN)/mkdocs serve)"

# A shell with the virtual environment active: fsa2rnn, python and pytest are this checkout's (exit to leave).
shell: setup
	@echo "fsa2rnn environment: $(VENV) (type exit to leave)"
	@VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(BIN):$$PATH $${SHELL:-bash}

bench: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# Mutation testing (docs/mutation.md): the modules of MUTANTS_PHASE (or MUTANTS_MODULES, paths), niced, resumable;
# work files in MUTANTS_DIR, reports in MUTANTS_DIR/reports, scores in mutation/scores.json. In the background:
# `nohup make mutants MUTANTS_DIR=/some/dir > mutants.log 2>&1 &` (run it again to resume).
MUTANTS_DIR   ?= out/mutants
MUTANTS_JOBS  ?= 1
MUTANTS_PHASE ?= 1
mutants: setup
	@OMP_NUM_THREADS=1 nice -n 15 $(BIN)/python -m mutation run --phase $(MUTANTS_PHASE) --dir $(MUTANTS_DIR) \
		--jobs $(MUTANTS_JOBS) $(if $(MUTANTS_MODULES),--modules $(MUTANTS_MODULES))

# The CI step: the sampled mutants (mutation/sample.txt) must be killed, and no tracked score below its floor.
mutants-sample: setup
	@OMP_NUM_THREADS=1 $(BIN)/python -m mutation sample --dir $(MUTANTS_DIR)

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache .hypothesis out site
