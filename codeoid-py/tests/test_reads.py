"""Reading memory back: episodes, the timeline, blobs, and the model-facing texts."""

from __future__ import annotations

import datetime

import pytest

import codeoid
from helpers import assistant, read_file_exchange, user


def test_get_episode_returns_the_exact_content(memory: codeoid.Memory, session: codeoid.Session) -> None:
    episode_id = read_file_exchange(memory, session.id, content="fn main() {\n    println!(\"é\");\n}")
    e = memory.get_episode(episode_id)
    assert e.id == episode_id
    assert (e.kind, e.status, e.tool_name, e.call_id) == ("tool_call", "ok", "Read", "call_src_main_rs")
    assert e.session_id == session.id and e.workspace_id == memory.workspace_id
    assert e.summary == "Read(src/main.rs)"
    assert e.content.startswith("# User intent\nplease look at src/main.rs")
    assert "## Result\nfn main() {\n    println!(\"é\");\n}" in e.content
    assert e.token_estimate > 0 and e.turn_seq == 2
    assert isinstance(e.created_at, datetime.datetime) and e.created_at.tzinfo is not None
    assert [(p.given, p.relative, p.access) for p in e.paths] == [("src/main.rs", "src/main.rs", "read")]
    hash = e.paths[0].content_hash
    assert hash is not None and hash.startswith("sha256:"), "a live read of a file on disk is hashed"
    assert e.blobs == []
    assert "Episode(id=" in repr(e) and "EpisodePath(" in repr(e.paths[0])
    assert memory.get_episode(episode_id) == e


def test_episode_text_has_a_header_then_the_content(memory: codeoid.Memory, session: codeoid.Session) -> None:
    episode_id = read_file_exchange(memory, session.id)
    text = memory.episode_text(episode_id, session.id)
    assert episode_id in text
    assert text.endswith(memory.get_episode(episode_id).content)
    assert "current session" in text
    assert memory.episode_text(episode_id) != ""


def test_unknown_episode_is_not_found(memory: codeoid.Memory) -> None:
    with pytest.raises(codeoid.NotFoundError, match="ep_missing"):
        memory.get_episode("ep_missing")
    with pytest.raises(codeoid.NotFoundError):
        memory.episode_text("ep_missing")


def test_another_workspace_cannot_read_an_episode(
    memory: codeoid.Memory, session: codeoid.Session, tmp_path: pytest.TempPathFactory
) -> None:
    import os

    episode_id = read_file_exchange(memory, session.id)
    other_dir = memory.workspace_root + "-elsewhere"
    os.makedirs(other_dir)
    with codeoid.Memory(memory.path, other_dir, env=False) as other:
        with pytest.raises(codeoid.NotFoundError):
            other.get_episode(episode_id)
        assert other.timeline().episodes == []


def test_timeline_pages_newest_first_and_walks_with_next(
    memory: codeoid.Memory, session: codeoid.Session
) -> None:
    for i in range(7):
        memory.record_turn(session.id, user(f"question {i}"))
        memory.record_turn(session.id, assistant(f"answer {i}"))
    memory.finish_session(session.id)  # the last answer is buffered until then
    page = memory.timeline(limit=3)
    assert len(page) == 3
    assert page.episodes[0].summary == "question 6"
    assert page.next is not None and page.next["limit"] == 3 and page.next["before"] == page.episodes[-1].id
    seen = [e.summary for e in page.episodes]
    while page.next is not None:
        page = memory.timeline(**page.next)
        seen += [e.summary for e in page.episodes]
    assert seen == [f"question {i}" for i in reversed(range(7))]
    header = memory.timeline(limit=1).episodes[0]
    assert (header.kind, header.status, header.session_id) == ("user_turn", "ok", session.id)
    assert header.tool_name is None and header.call_id is None and header.token_estimate > 0
    assert "EpisodeHeader(" in repr(header) and "TimelinePage(" in repr(page)
    assert memory.timeline(offset=5, limit=10).episodes[0].summary == "question 1"


def test_timeline_limits_and_anchors_are_checked(memory: codeoid.Memory) -> None:
    with pytest.raises(codeoid.InvalidInputError, match="limit"):
        memory.timeline(limit=0)
    with pytest.raises(codeoid.InvalidInputError):
        memory.timeline(limit=1001)
    with pytest.raises(codeoid.NotFoundError):
        memory.timeline(before="ep_missing")


def test_timeline_text_is_what_the_model_reads(memory: codeoid.Memory, session: codeoid.Session) -> None:
    episode_id = read_file_exchange(memory, session.id)
    text = memory.timeline_text(session.id, limit=5)
    assert f"(episode_id: {episode_id})" in text
    assert "[current session]" in text
    assert "prior session #" in memory.timeline_text(None, limit=5) or "[" in text


def test_blobs_keep_oversize_content_whole(tmp_path: pytest.TempPathFactory, workspace: object) -> None:
    import pathlib

    root = pathlib.Path(str(workspace))
    with codeoid.Memory(pathlib.Path(str(tmp_path)) / "b.db", root, max_episode_bytes=2048, env=False) as memory:
        s = memory.start_session()
        big = "line of output\n" * 1000
        episode_id = read_file_exchange(memory, s.id, content=big)
        e = memory.get_episode(episode_id)
        assert len(e.content.encode()) < len(big)
        [blob] = e.blobs
        assert blob.role == "content" and blob.blob_id.startswith("blob_")
        whole = memory.blob(blob.blob_id)
        assert isinstance(whole, bytes) and big.encode() in whole and blob.len == len(whole)
        assert "BlobRef(" in repr(blob)
        with pytest.raises(codeoid.NotFoundError):
            memory.blob("blob_" + "0" * 32)


def test_a_read_only_memory_reads_and_raises_on_writes(
    memory: codeoid.Memory, session: codeoid.Session, tmp_path: pytest.TempPathFactory
) -> None:
    episode_id = read_file_exchange(memory, session.id)
    with codeoid.Memory(memory.path, memory.workspace_root, read_only=True, embeddings=False, env=False) as reader:
        assert reader.get_episode(episode_id).content == memory.get_episode(episode_id).content
        assert [s.id for s in reader.sessions()] == [session.id]
        with pytest.raises(codeoid.IoError, match="opened read-only"):
            reader.record_turn(session.id, user("one more"))
        with pytest.raises(codeoid.IoError):
            reader.start_session(name="another")
    missing = str(tmp_path) + "/none.db"
    with pytest.raises(codeoid.NotFoundError, match="none.db"):
        codeoid.Memory(missing, memory.workspace_root, read_only=True, embeddings=False, env=False)
    import os

    assert not os.path.exists(missing)
