"""Shared fixtures: a fresh store per test in a temporary workspace, and turn builders."""

from __future__ import annotations

import _thread
import os
import pathlib
import signal
from collections.abc import Callable, Iterator

import pytest

import codeoid


@pytest.fixture
def workspace(tmp_path: pathlib.Path) -> pathlib.Path:
    """A workspace directory (not a git repository) with one source file."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.rs").write_text("fn main() {}\n")
    return root


@pytest.fixture
def ctrl_c() -> Iterator[Callable[[], None]]:
    """Simulates a Ctrl-C (`_thread.interrupt_main`), with Python's own SIGINT handler in place
    for the test: a process started with SIGINT ignored (a shell's background job) never has
    one, and the simulation would then do nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield _thread.interrupt_main
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(autouse=True)
def no_model_download(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test downloads an embedding model: a Memory opened without `model_dir` or
    `embeddings=False` looks for one as the CLI does, and would fetch it in the background."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("CODEOID_MODEL_DIR", raising=False)


@pytest.fixture
def memory(tmp_path: pathlib.Path, workspace: pathlib.Path) -> Iterator[codeoid.Memory]:
    """A memory over a store file of its own, ignoring the environment, without embeddings
    (recall ranks by words, recency and paths)."""
    with codeoid.Memory(tmp_path / "codeoid.db", workspace, embeddings=False, env=False) as m:
        yield m


@pytest.fixture
def session(memory: codeoid.Memory) -> codeoid.Session:
    return memory.start_session(name="test session")


@pytest.fixture
def model_dir() -> pathlib.Path:
    """The real embedding model (all-MiniLM-L6-v2) that `make test` fetches.

    Fails rather than skips when the variable is missing: the real-model tests are part of the
    normal suite.
    """
    value = os.environ.get("CODEOID_TEST_MODEL_DIR")
    if not value:
        pytest.fail("CODEOID_TEST_MODEL_DIR is not set; run the suite through `make test-python`")
    path = pathlib.Path(value)
    assert (path / "model.safetensors").is_file(), f"no model.safetensors in {path}"
    return path


@pytest.fixture
def model_memory(
    tmp_path: pathlib.Path, workspace: pathlib.Path, model_dir: pathlib.Path
) -> Iterator[codeoid.Memory]:
    """A memory that embeds with the real test model."""
    with codeoid.Memory(tmp_path / "model.db", workspace, model_dir=model_dir, env=False) as m:
        yield m
