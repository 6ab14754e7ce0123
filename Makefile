# codeoid: the commands a developer and CI run. `make test` is the whole test suite.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
TEST_MODEL_DIR = $(shell ./scripts/fetch-test-model.sh)

.PHONY: test test-rust lint fmt-check clippy model

## The whole test suite: fetches the test model and every tool it needs, then runs every suite.
test: test-rust

model:
	@./scripts/fetch-test-model.sh

test-rust:
	CODEOID_TEST_MODEL_DIR="$(TEST_MODEL_DIR)" cargo test --workspace --all-targets
	CODEOID_TEST_MODEL_DIR="$(TEST_MODEL_DIR)" cargo test --workspace --doc

lint: fmt-check clippy

fmt-check:
	cargo fmt --all --check

clippy:
	cargo clippy --workspace --all-targets -- -D warnings
