# The README's two commands: `make demo` (set up, run the main job on a builtin) and `make test` (set up, run the suite).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup demo test lint bench clean

$(BIN)/fsa2rnn: pyproject.toml setup.py
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

lint: setup
	@$(BIN)/ruff check .

bench: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache .hypothesis out
