# clinideid — the two commands: `make demo` (set up + run) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint format clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,service]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/clinideid deid src/clinideid/data/examples/ -o demo-output --language auto --ephemeral-key --overwrite
	@echo "De-identified notes and report written to demo-output/"

test: setup
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/python -m pytest -n auto --dist loadfile  # one process per core, each test file in one of them

lint: setup
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts

format: setup
	$(BIN)/ruff format src tests benchmarks
	$(BIN)/ruff check --fix src tests benchmarks

clean:
	rm -rf $(VENV) demo-output build *.egg-info .pytest_cache
