"""Per-call overhead of the bindings over the Rust API, for `get_episode`.

pytest-benchmark times the Python call alone. The overhead test times, in interleaved rounds of
the same length, a Python loop of `get_episode` and `_bench_episode`, which calls the core's
`Memory::episode` in a loop inside the extension. Their difference is what the bindings add: argument conversion, the closed check, releasing and retaking the GIL, the panic boundary
and building the frozen `Episode`. Run with `make bench-python`; docs/benchmarks.md has figures.
"""

from __future__ import annotations

import pathlib
import statistics
import time
from collections.abc import Iterator

import pytest

import codeoid

OVERHEAD_BUDGET_US = 10.0


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[codeoid.Memory, str]]:
    root = tmp_path_factory.mktemp("bench")
    (root / "ws").mkdir()
    memory = codeoid.Memory(root / "bench.db", root / "ws", env=False)
    session = memory.start_session()
    memory.record_turn(session.id, {"role": "user", "parts": [{"type": "text", "text": "read main"}]})
    memory.record_turn(session.id, {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "Read", "input": {"file_path": "src/main.rs"}}]})
    content = "fn main() {\n    println!(\"hello\");\n}\n" * 40  # ~1.5 KB, a typical small read
    out = memory.record_turn(session.id, {"role": "user", "parts": [
        {"type": "tool_result", "call_id": "c1", "parts": [{"type": "text", "text": content}]}]})
    yield memory, out.episode_ids[0]
    memory.close()


def python_seconds_per_call(memory: codeoid.Memory, episode_id: str, n: int) -> float:
    get = memory.get_episode
    start = time.perf_counter()
    for _ in range(n):
        get(episode_id)
    return (time.perf_counter() - start) / n


def test_get_episode_python(benchmark: pytest.FixtureRequest, stored: tuple[codeoid.Memory, str]) -> None:
    memory, episode_id = stored
    episode = benchmark(memory.get_episode, episode_id)  # type: ignore[operator]
    assert episode.id == episode_id


def test_overhead_is_under_budget(stored: tuple[codeoid.Memory, str]) -> None:
    """Interleaved rounds of the same number of calls on each side; the median difference."""
    memory, episode_id = stored
    n = 2000
    python_seconds_per_call(memory, episode_id, 200)  # warm the reader pool and caches
    diffs, pys, rusts = [], [], []
    for _ in range(15):
        py = python_seconds_per_call(memory, episode_id, n)
        rust = codeoid._codeoid._bench_episode(memory, episode_id, n)
        pys.append(py)
        rusts.append(rust)
        diffs.append(py - rust)
    overhead_us = statistics.median(diffs) * 1e6
    print(
        f"\nget_episode: python {statistics.median(pys) * 1e6:.2f} us/call, "
        f"rust {statistics.median(rusts) * 1e6:.2f} us/call, overhead {overhead_us:.2f} us/call"
    )
    assert overhead_us < OVERHEAD_BUDGET_US
