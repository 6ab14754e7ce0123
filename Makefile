# codeoid: the commands a developer and CI run. `make test` is the whole test suite.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
TEST_MODEL_DIR = $(shell ./scripts/fetch-test-model.sh)
# Python tools the Rust tests call (the provider SDKs that validate translations), in a venv under
# target/ so nothing touches the system Python.
TOOLS_VENV := target/venv-tools
TOOLS_PYTHON := $(TOOLS_VENV)/bin/python

.PHONY: test test-rust test-python bench-python lint fmt-check clippy model tools-venv py-venv

## The whole test suite: fetches the test model and every tool it needs, then runs every suite.
test: test-rust test-python

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

# Python bindings (codeoid-py). The test venv holds the build and test tools; the package is
# installed into it with `pip install ./codeoid-py`, exactly as a user installs from a checkout.
# A wheel is also built and installed into a second, fresh venv that has nothing else. maturin
# builds with the workspace's dev profile (see codeoid-py/pyproject.toml), so the dependencies
# `cargo test` already optimized are reused.
PY_VENV := target/py-venv
PY_PYTHON := $(PY_VENV)/bin/python
PY_WHEEL_VENV := target/py-venv-wheel
PY_WHEELS := target/py-wheels
PIP_QUIET := --quiet --disable-pip-version-check

$(PY_VENV)/.installed: codeoid-py/requirements-test.txt
	$(PYTHON) -m venv $(PY_VENV)
	$(PY_PYTHON) -m pip install $(PIP_QUIET) -r codeoid-py/requirements-test.txt
	touch $@

py-venv: $(PY_VENV)/.installed

test-python: py-venv
	rm -f codeoid-py/python/codeoid/_codeoid*.so  # a stale `maturin develop` build
	$(PY_PYTHON) -m pip install $(PIP_QUIET) --force-reinstall --no-deps ./codeoid-py
	rm -rf $(PY_WHEELS) $(PY_WHEEL_VENV)
	$(PY_VENV)/bin/maturin build --quiet --manifest-path codeoid-py/Cargo.toml --out $(PY_WHEELS)
	$(PYTHON) -m venv $(PY_WHEEL_VENV)
	$(PY_WHEEL_VENV)/bin/python -m pip install $(PIP_QUIET) --no-index $(PY_WHEELS)/codeoid-*.whl
	cd $(PY_WHEELS) && ../../$(PY_WHEEL_VENV)/bin/python -c 'import codeoid; \
		m = codeoid.Memory(":memory:", ".", env=False); s = m.start_session(); \
		print("wheel ok:", codeoid.__version__, m.record_turn(s.id, {"role": "user", "parts": []}).seq)'
	cd codeoid-py && CODEOID_TEST_MODEL_DIR="$(TEST_MODEL_DIR)" ../$(PY_PYTHON) -m pytest -W error -q tests
	$(PY_PYTHON) -m mypy.stubtest codeoid
	$(PY_PYTHON) -m mypy --strict examples/python codeoid-py/tests codeoid-py/benches
	cd examples/python && CODEOID_TEST_MODEL_DIR="$(TEST_MODEL_DIR)" ../../$(PY_PYTHON) -W error agent_loop.py

## Per-call overhead of the Python bindings over the Rust API (docs/benchmarks.md).
bench-python: py-venv
	$(PY_PYTHON) -m pip install $(PIP_QUIET) --force-reinstall --no-deps ./codeoid-py
	cd codeoid-py && ../$(PY_PYTHON) -m pytest -W error -q -s benches --benchmark-columns=min,median,mean,rounds

lint: fmt-check clippy

fmt-check:
	cargo fmt --all --check

clippy:
	cargo clippy --workspace --all-targets -- -D warnings
