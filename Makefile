# codeoid: the commands a developer and CI run. `make test` is the whole test suite.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
TEST_MODEL_DIR = $(shell ./scripts/fetch-test-model.sh)
# Python tools the Rust tests call (the provider SDKs that validate translations), in a venv under
# target/ so nothing touches the system Python.
TOOLS_VENV := target/venv-tools
TOOLS_PYTHON := $(TOOLS_VENV)/bin/python

.PHONY: test test-rust lint fmt-check clippy model tools-venv

## The whole test suite: fetches the test model and every tool it needs, then runs every suite.
test: test-rust

model:
	@./scripts/fetch-test-model.sh

$(TOOLS_VENV)/.installed: scripts/requirements-translate.txt
	$(PYTHON) -m venv $(TOOLS_VENV)
	$(TOOLS_PYTHON) -m pip install --quiet --disable-pip-version-check -r scripts/requirements-translate.txt
	touch $@

tools-venv: $(TOOLS_VENV)/.installed

test-rust: tools-venv
	CODEOID_TEST_MODEL_DIR="$(TEST_MODEL_DIR)" PYTHON="$(abspath $(TOOLS_PYTHON))" \
		CODEOID_REQUIRE_SDK_VALIDATION=1 cargo test --workspace --all-targets
	CODEOID_TEST_MODEL_DIR="$(TEST_MODEL_DIR)" cargo test --workspace --doc

lint: fmt-check clippy

fmt-check:
	cargo fmt --all --check

clippy:
	cargo clippy --workspace --all-targets -- -D warnings
