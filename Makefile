# Set-up and the two commands the README gives. Everything installs into .venv, with torch pinned to the CPU
# build through constraints.txt (any other torch pulls several GB of CUDA packages).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test lint clean

$(BIN)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	@if $(BIN)/pip list 2>/dev/null | grep -qi '^nvidia-'; then \
		echo "error: nvidia-* packages were installed (a CUDA torch); install through constraints.txt" >&2; exit 1; fi
	@touch $@

setup: $(BIN)/.installed

demo: setup
	$(BIN)/overseer demo

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .overseer .pytest_cache .mypy_cache .ruff_cache
