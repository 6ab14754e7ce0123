"""Recall, recall_file, flush, the embedding status and warnings: lexically, and with the real
all-MiniLM-L6-v2 model (`CODEOID_TEST_MODEL_DIR`, which `make test-python` sets)."""

from __future__ import annotations

import concurrent.futures
import datetime
import math
import pathlib
import socket
import threading
import time
from collections.abc import Callable

import pytest

import codeoid
from helpers import call, read_file_exchange, result, user

UTC = datetime.timezone.utc


def exchange(memory: codeoid.Memory, session_id: str, key: str, path: str, output: str,
             tool: str = "Read") -> str:
    """A prompt, one tool call on `path` and its output; returns the tool episode's id."""
    memory.record_turn(session_id, user(f"look at {path}"))
    memory.record_turn(session_id, call(key, tool, {"file_path": path}))
    outcome = memory.record_turn(session_id, result(key, output))
    return outcome.episode_ids[0]


def test_recall_finds_another_sessions_episode_by_its_words(memory: codeoid.Memory) -> None:
    first = memory.start_session(name="first")
    episode_id = exchange(memory, first.id, "c1", "src/parser.rs", "fn parse splits fields on commas")
    second = memory.start_session(name="second")

    hits = memory.recall("where are fields split on commas", session=second.id)
    assert [h.id for h in hits][:1] == [episode_id]
    hit = hits[0]
    episode = memory.get_episode(episode_id)
    assert (hit.session_id, hit.kind, hit.tool_name, hit.call_id, hit.status, hit.summary) == (
        first.id, "tool_call", "Read", "c1", "ok", episode.summary)
    assert (hit.content, hit.turn_seq, hit.created_at, hit.token_estimate) == (
        episode.content, episode.turn_seq, episode.created_at, episode.token_estimate)
    assert hit.workspace_id == memory.workspace_id
    assert [p.relative for p in hit.paths] == ["src/parser.rs"]
    c = hit.components
    assert c.vec == 0.0, "no model: the meaning signal is zero"
    assert 0.0 < c.bm25 <= 1.0 and 0.0 < c.recency <= 1.0 and 0.0 <= c.path <= 1.0
    assert hit.score > 0.0
    assert repr(hit).startswith("Hit(id='ep_") and "bm25=" in repr(c)
    with pytest.raises(AttributeError):
        hit.score = 1.0  # type: ignore[misc]
    r = hit.relevance
    # `split` is not `splits`: two of three terms, both in every episode of this small store
    # (their weight is near 0), so the hit is a match by the three-term majority.
    assert (r.terms, r.held) == (3, ["fields", "commas"]), r
    assert 0.0 <= r.share < 0.5 and not r.weak
    assert (r.lift, r.lift_needed) == (None, None), "no model: no similarity lift"
    assert repr(r).startswith("Relevance(terms=")


def test_a_hit_holding_one_common_word_of_a_longer_query_is_weak(memory: codeoid.Memory) -> None:
    first = memory.start_session(name="first")
    exchange(memory, first.id, "c1", "src/parser.rs", "fn parse splits fields on commas")
    hits = memory.recall("parse kubernetes helm rollout charts", session=memory.start_session().id)
    assert hits, "a word matches, so there is a hit"
    assert hits[0].relevance.held == ["parse"] and hits[0].relevance.weak


def test_the_calling_sessions_own_episodes_are_left_out_unless_asked(memory: codeoid.Memory) -> None:
    session = memory.start_session()
    episode_id = exchange(memory, session.id, "c1", "src/lexer.rs", "tokenizes identifiers")
    assert memory.recall("tokenizes identifiers", session=session.id) == []
    assert [h.id for h in memory.recall("tokenizes identifiers", session=session.id,
                                        include_current_session=True)][:1] == [episode_id]
    assert [h.id for h in memory.recall("tokenizes identifiers")][:1] == [episode_id], "no session: all"


def test_filters(memory: codeoid.Memory) -> None:
    a = memory.start_session()
    b = memory.start_session()
    in_a = exchange(memory, a.id, "a1", "src/a.rs", "widget frobnicator", tool="Read")
    in_b = exchange(memory, b.id, "b1", "src/b.rs", "widget frobnicator", tool="Grep")

    def ids(**kwargs: object) -> set[str]:
        return {h.id for h in memory.recall("widget frobnicator", limit=100, **kwargs)}  # type: ignore[arg-type]

    assert {in_a, in_b} <= ids()
    assert in_a in ids(only_session=a.id) and in_b not in ids(only_session=a.id)
    assert in_a not in ids(exclude_session=a.id) and in_b in ids(exclude_session=a.id)
    assert in_b not in ids(tool_name="read") and in_a in ids(tool_name="read")
    assert in_a in ids(paths=["src/a.rs"]) and in_b not in ids(paths=["src/a.rs"])
    created = memory.get_episode(in_a).created_at
    assert ids(until=created - datetime.timedelta(seconds=1)) == set()
    assert {in_a, in_b} <= ids(since=created - datetime.timedelta(hours=1))
    # A datetime in any timezone names the same instant; a naive one names none.
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    assert ids(until=(created - datetime.timedelta(seconds=1)).astimezone(plus_two)) == set()
    assert {in_a, in_b} <= ids(since=(created - datetime.timedelta(hours=1)).astimezone(plus_two))
    with pytest.raises(TypeError, match="no timezone"):
        memory.recall("widget frobnicator", since=datetime.datetime(2026, 1, 1))
    later = memory.recall("widget frobnicator", as_of=created + datetime.timedelta(days=30))
    now = memory.recall("widget frobnicator")
    assert later[0].components.recency < now[0].components.recency


def test_limit(memory: codeoid.Memory) -> None:
    session = memory.start_session()
    for i in range(8):
        exchange(memory, session.id, f"c{i}", f"src/m{i}.rs", f"gizmo number {i}")
    assert len(memory.recall("gizmo")) == 6, "the default limit"
    assert len(memory.recall("gizmo", limit=2)) == 2
    assert len(memory.recall("gizmo", limit=100)) == 8
    scores = [h.score for h in memory.recall("gizmo", limit=8)]
    assert scores == sorted(scores, reverse=True)


def test_recall_bad_input(memory: codeoid.Memory) -> None:
    with pytest.raises(codeoid.InvalidInputError, match=r"recall limit 0 is out of range; use 1..=100"):
        memory.recall("x", limit=0)
    with pytest.raises(codeoid.InvalidInputError, match=r"recall limit 101 is out of range"):
        memory.recall("x", limit=101)
    with pytest.raises(codeoid.InvalidInputError, match="-1 is out of range") as info:
        memory.recall("x", limit=-1)
    assert "while processing 'limit'" in info.value.__notes__[0]
    with pytest.raises(TypeError, match="non-negative int, got str"):
        memory.recall("x", limit="5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="non-negative int, got float"):
        memory.recall("x", limit=5.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        memory.recall(b"\xff\xfe")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        memory.recall("\ud800")
    with pytest.raises(TypeError, match=r"got one bytes; pass \[b'src/a.rs'\]"):
        memory.recall("x", paths=b"src/a.rs")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got one str; pass \['src/a.rs'\]"):
        memory.recall("x", paths="src/a.rs")  # a str is a Sequence[str] to mypy, not here
    with pytest.raises(TypeError, match=r"path \[1\] is int, expected a str"):
        memory.recall("x", paths=["src/a.rs", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="expected a list of str paths, got int"):
        memory.recall("x", paths=3)  # type: ignore[arg-type]
    with pytest.raises(codeoid.InvalidInputError, match=r"path \[0\] is not valid Unicode"):
        memory.recall("x", paths=["\ud800"])
    assert memory.recall("x", paths=("src/a.rs",)) == []  # any sequence of str
    with pytest.raises(TypeError):
        memory.recall("x", since=datetime.datetime(2026, 1, 1))  # naive: no time zone
    moment = datetime.datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(codeoid.InvalidInputError, match="time range .* is empty; `since` must be before `until`"):
        memory.recall("x", since=moment, until=moment)
    with pytest.raises(codeoid.NotFoundError, match="nope"):
        memory.recall("x", session="nope")


def test_recall_file_says_whether_the_file_changed(memory: codeoid.Memory, workspace: pathlib.Path) -> None:
    session = memory.start_session()
    assert memory.recall_file("src/main.rs") is None
    read_id = read_file_exchange(memory, session.id, path="src/main.rs", content="fn main() {}")

    found = memory.recall_file("src/main.rs")
    assert found is not None
    assert found.episode.id == read_id and found.episode.content.endswith("fn main() {}")
    assert (found.path.relative, found.path.access) == ("src/main.rs", "read")
    assert found.path.content_hash is not None and found.path.content_hash.startswith("sha256:")
    assert (found.disk, found.disk_reason, found.later_write, found.part) == ("unchanged", None, None, None)
    assert memory.recall_file(str(workspace / "src" / "main.rs")) == found, "absolute paths too"
    assert "disk='unchanged'" in repr(found)

    (workspace / "src" / "main.rs").write_text("fn main() { changed() }\n")
    assert getattr(memory.recall_file("src/main.rs"), "disk", None) == "changed"
    memory.record_turn(session.id, call("w1", "Write", {"file_path": "src/main.rs", "content": "x"}))
    memory.record_turn(session.id, result("w1", "written"))
    after = memory.recall_file("src/main.rs")
    assert after is not None and after.later_write is not None
    memory.record_turn(session.id, call("r2", "Read", {"file_path": "src/lib.rs", "offset": 10, "limit": 5}))
    memory.record_turn(session.id, result("r2", "    10→pub mod store;"))
    window = memory.recall_file("src/lib.rs")
    assert window is not None and window.part == (
        "this read was called with range arguments (offset: 10, limit: 5) and may hold only part of the file"
    )
    assert after.later_write.tool_name == "Write"
    assert window.passed_over is None, "no earlier whole read of src/lib.rs"
    (workspace / "src" / "main.rs").unlink()
    assert getattr(memory.recall_file("src/main.rs"), "disk", None) == "deleted"


def test_recall_file_passes_over_a_partial_read_for_a_whole_one_of_the_same_content(
    memory: codeoid.Memory,
) -> None:
    session = memory.start_session()
    whole = read_file_exchange(memory, session.id, path="src/main.rs", content="fn main() {}")
    memory.record_turn(session.id, user("the first line again"))
    memory.record_turn(session.id, call("r2", "Read", {"file_path": "src/main.rs", "offset": 1, "limit": 1}))
    partial = memory.record_turn(session.id, result("r2", "     1→fn main() {}")).episode_ids[0]
    found = memory.recall_file("src/main.rs")
    assert found is not None and found.episode.id == whole and found.part is None
    assert found.passed_over is not None and found.passed_over.episode.id == partial
    assert "may hold only part" in found.passed_over.part
    assert repr(found.passed_over).startswith("PassedOver(episode='ep_")


def test_recall_file_without_a_hash_is_unknown_with_a_reason(
    tmp_path: pathlib.Path, workspace: pathlib.Path
) -> None:
    with codeoid.Memory(tmp_path / "h.db", workspace, hash_read_files=False, embeddings=False,
                        env=False) as memory:
        session = memory.start_session()
        memory.record_turns(session.id, [user("read it"), call("c", "Read", {"file_path": "src/main.rs"}),
                                         result("c", "fn main() {}")])
        found = memory.recall_file("src/main.rs")
        assert found is not None and found.disk == "unknown"
        assert found.disk_reason and "hash" in found.disk_reason
    with pytest.raises(TypeError):
        memory.recall_file(None)  # type: ignore[arg-type]


def test_flush_status_and_warnings_without_embeddings(memory: codeoid.Memory) -> None:
    assert memory.flush() is True
    assert memory.flush(0.5) is True
    assert memory.flush(timeout=0) is True
    status = memory.embedding_status()
    assert (status.phase, status.model_id, status.indexed_episodes) == ("disabled", None, 0)
    assert "phase='disabled'" in repr(status)
    assert memory.warnings() == []
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(codeoid.InvalidInputError, match="timeout .* is not a duration"):
            memory.flush(bad)
    with pytest.raises(TypeError):
        memory.flush("1")  # type: ignore[arg-type]


def test_ctrl_c_stops_a_flush_waiting_for_a_model(
    tmp_path: pathlib.Path, workspace: pathlib.Path, monkeypatch: pytest.MonkeyPatch, ctrl_c: Callable[[], None]
) -> None:
    # A hub that accepts connections and never answers: the model download never ends, and
    # flush() waits for it.
    hub = socket.socket()
    hub.bind(("127.0.0.1", 0))
    hub.listen()
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{hub.getsockname()[1]}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    with codeoid.Memory(tmp_path / "m.db", workspace, env=False) as memory:
        session = memory.start_session()
        read_file_exchange(memory, session.id)
        assert memory.flush(0.3) is False
        timer = threading.Timer(0.3, ctrl_c)
        started = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            memory.flush()
        assert time.monotonic() - started < 3.0
        timer.join()
        assert memory.embedding_status().phase == "downloading"
        assert memory.recall("main", limit=1)[0].components.vec == 0.0
    hub.close()


def test_a_missing_model_dir_is_lexical_recall_with_a_warning(
    tmp_path: pathlib.Path, workspace: pathlib.Path
) -> None:
    missing = tmp_path / "no-model-here"
    with codeoid.Memory(tmp_path / "m.db", workspace, model_dir=missing, env=False) as memory:
        session = memory.start_session()
        read_file_exchange(memory, session.id)
        assert memory.flush(30.0)
        assert memory.embedding_status().phase == "unavailable"
        warnings = memory.warnings()
        assert any(str(missing) in w for w in warnings), warnings
        assert memory.recall("main", limit=1)[0].components.vec == 0.0


def test_model_settings_conflict_and_types(tmp_path: pathlib.Path) -> None:
    with pytest.raises(codeoid.InvalidInputError, match="embeddings=False turns the model off, but model_dir="):
        codeoid.Memory(":memory:", tmp_path, embeddings=False, model_dir=tmp_path, env=False)
    with pytest.raises(TypeError):
        codeoid.Memory(":memory:", tmp_path, embeddings="no", env=False)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        codeoid.Memory(":memory:", tmp_path, model_dir=3, env=False)  # type: ignore[arg-type]


def test_embeddings_false_and_the_environment(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEOID_EMBEDDINGS", "0")
    with codeoid.Memory(":memory:", tmp_path) as memory:
        assert memory.embedding_status().phase == "disabled"
    with codeoid.Memory(":memory:", tmp_path, embeddings=True) as memory:
        assert memory.flush(30.0)
        assert memory.embedding_status().phase != "disabled", "embeddings=True overrides the variable"
    monkeypatch.setenv("CODEOID_EMBEDDINGS", "maybe")
    with pytest.raises(codeoid.InvalidInputError, match="CODEOID_EMBEDDINGS"):
        codeoid.Memory(":memory:", tmp_path)


def test_closed_memory(memory: codeoid.Memory) -> None:
    memory.close()
    for call_it in (lambda: memory.recall("x"), lambda: memory.recall_file("x"), memory.flush,
                    memory.warnings, memory.embedding_status):
        with pytest.raises(codeoid.InvalidInputError, match="closed"):
            call_it()


# --- the real model -----------------------------------------------------------------------------


def ready(memory: codeoid.Memory) -> codeoid.EmbeddingStatus:
    """Waits for the worker; fails with its warnings when the model did not load."""
    assert memory.flush(120.0), "the model did not load within two minutes"
    status = memory.embedding_status()
    assert status.phase == "ready", f"{status!r}; warnings: {memory.warnings()}"
    return status


def test_the_real_model_recalls_by_meaning(model_memory: codeoid.Memory) -> None:
    session = model_memory.start_session()
    pool = exchange(model_memory, session.id, "c1", "notes/db.txt",
                    "The database connection pool ran out of connections under heavy traffic.")
    exchange(model_memory, session.id, "c2", "notes/ui.txt",
             "The submit button on the settings page is rendered in bright orange.")
    status = ready(model_memory)
    assert status.model_id is not None and status.model_id.startswith("all-MiniLM-L6-v2@")
    assert status.indexed_episodes >= 2 and status.indexed_windows >= 2 and status.index_bytes > 0
    assert model_memory.warnings() == []

    # No word of the query is in either episode: only meaning ranks them.
    hits = model_memory.recall("postgres clients starved waiting for sockets", limit=2)
    assert [h.id for h in hits][:1] == [pool]
    assert len(hits) == 2 and hits[0].components.bm25 == 0.0
    assert 0.0 < hits[0].components.vec <= 1.0
    assert hits[0].components.vec > hits[1].components.vec


def test_a_thread_pool_of_recalls_releases_the_gil(model_memory: codeoid.Memory) -> None:
    session = model_memory.start_session()
    for i in range(20):
        exchange(model_memory, session.id, f"c{i}", f"src/mod{i}.rs", f"module {i} handles request routing")
    ready(model_memory)
    # A long query: embedding it is the model work a recall does.
    query = "which module routes the incoming requests to their handlers " * 4
    expected = [h.id for h in model_memory.recall(query, limit=5)]

    calls = 32
    ticks = 0
    stop = threading.Event()

    def tick() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: [h.id for h in model_memory.recall(query, limit=5)], range(calls)))
    elapsed = time.perf_counter() - start
    stop.set()
    ticker.join()
    assert all(r == expected for r in results), "concurrent recalls agree with a serial one"
    # A ticker that sleeps 1 ms ticks hundreds of times a second while the GIL is free; were it
    # held during each recall, it would tick about once per call, between calls. The bound is a
    # small multiple of that, since an optimized recall takes only milliseconds. (Wall-clock
    # speedup is not asserted: the test machine's cores are shared, and the model's matrix
    # products already use more than one.)
    assert ticks > 3 * calls, f"{ticks} ticks during {calls} recalls in {elapsed:.2f} s: the GIL is held"
