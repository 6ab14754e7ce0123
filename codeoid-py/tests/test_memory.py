"""Opening, closing and the properties of Memory."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

import codeoid


def test_open_creates_the_store_and_binds_the_workspace(
    tmp_path: pathlib.Path, workspace: pathlib.Path
) -> None:
    db = tmp_path / "nested" / "dir" / "codeoid.db"
    with codeoid.Memory(db, workspace, env=False) as memory:
        assert db.exists()
        assert memory.path == str(db)
        assert memory.workspace_id.startswith("ws_") and len(memory.workspace_id) == 19
        assert pathlib.Path(memory.workspace_root) == workspace.resolve()
        assert memory.workspace_name == "project"
        assert memory.tenant == ""
        assert not memory.closed
        assert "codeoid.Memory" in repr(memory)


def test_str_paths_work_as_well_as_pathlike(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    with codeoid.Memory(str(tmp_path / "a.db"), str(workspace), env=False) as memory:
        assert memory.path == str(tmp_path / "a.db")


def test_worktrees_of_one_repository_share_a_workspace(tmp_path: pathlib.Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with codeoid.Memory(tmp_path / "a.db", repo, env=False) as top:
        with codeoid.Memory(tmp_path / "a.db", repo / "sub", env=False) as sub:
            assert top.workspace_id == sub.workspace_id


def test_tenants_do_not_share_a_directory(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    with codeoid.Memory(tmp_path / "a.db", workspace, tenant="alice", env=False) as a:
        with codeoid.Memory(tmp_path / "a.db", workspace, tenant="bob", env=False) as b:
            assert a.workspace_id != b.workspace_id
            assert a.tenant == "alice"
            session = a.start_session()
            with pytest.raises(codeoid.NotFoundError):
                b.session(session.id)


def test_in_memory_store(workspace: pathlib.Path) -> None:
    with codeoid.Memory(":memory:", workspace, env=False) as memory:
        assert memory.path is None
        memory.start_session("s1")
        assert [s.id for s in memory.sessions()] == ["s1"]
        assert "':memory:'" in repr(memory)


def test_default_path_follows_codeoid_db_like_the_cli(
    tmp_path: pathlib.Path, workspace: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "from-env.db"
    monkeypatch.setenv("CODEOID_DB", str(target))
    assert codeoid.default_store_path() == str(target)
    with codeoid.Memory(workspace=workspace) as memory:
        assert memory.path == str(target)
    assert target.exists()


def test_default_path_without_env_is_the_platform_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEOID_DB", raising=False)
    path = codeoid.default_store_path()
    assert path.endswith(os.path.join("codeoid", "codeoid.db"))


def test_environment_settings_apply_unless_env_is_false(
    tmp_path: pathlib.Path, workspace: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEOID_MEMORY", "maybe")
    with pytest.raises(codeoid.InvalidInputError, match="CODEOID_MEMORY"):
        codeoid.Memory(tmp_path / "a.db", workspace)
    codeoid.Memory(tmp_path / "a.db", workspace, env=False).close()


def test_the_workspace_defaults_to_the_current_directory(
    tmp_path: pathlib.Path, workspace: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    with codeoid.Memory(tmp_path / "a.db", env=False) as memory:
        assert pathlib.Path(memory.workspace_root) == workspace.resolve()


def test_settings_are_validated(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    with pytest.raises(codeoid.InvalidInputError):
        codeoid.Memory(tmp_path / "a.db", workspace, soft_threshold=2.0, env=False)
    with pytest.raises(codeoid.InvalidInputError, match="busy_timeout"):
        codeoid.Memory(tmp_path / "a.db", workspace, busy_timeout=-1.0, env=False)
    # Beyond what SQLite takes (i32::MAX milliseconds): an error naming it, not a panic.
    with pytest.raises(codeoid.InvalidInputError, match="busy_timeout"):
        codeoid.Memory(tmp_path / "a.db", workspace, busy_timeout=3e6, env=False)
    with pytest.raises(codeoid.InvalidInputError):
        codeoid.Memory(tmp_path / "a.db", workspace, max_episode_bytes=10, env=False)
    with pytest.raises(codeoid.InvalidInputError, match="min_turns"):
        codeoid.Memory(tmp_path / "a.db", workspace, min_turns=2**40, env=False)
    with pytest.raises(codeoid.IoError):
        codeoid.Memory(tmp_path / "a.db", workspace, compress_rules=tmp_path / "missing.json", env=False)


def test_a_file_that_is_not_a_store_is_corrupt(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    bogus = tmp_path / "not-a-db"
    bogus.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(codeoid.CorruptError):
        codeoid.Memory(bogus, workspace, env=False)
    assert bogus.read_bytes() == b"this is not sqlite" * 100, "left untouched"


def test_close_is_idempotent_and_later_calls_raise(memory: codeoid.Memory) -> None:
    session = memory.start_session()
    memory.close()
    memory.close()
    assert memory.closed
    assert repr(memory) == "<codeoid.Memory closed>"
    with pytest.raises(codeoid.InvalidInputError, match="closed"):
        memory.session(session.id)
    with pytest.raises(ValueError, match="closed"):
        _ = memory.workspace_id
    with pytest.raises(codeoid.InvalidInputError, match="closed"):
        with memory:
            pass


def test_context_manager_closes_even_on_error(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    memory = codeoid.Memory(tmp_path / "a.db", workspace, env=False)
    with pytest.raises(RuntimeError):
        with memory as entered:
            assert entered is memory
            raise RuntimeError("boom")
    assert memory.closed


def test_reopening_sees_what_was_recorded(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    with codeoid.Memory(tmp_path / "a.db", workspace, env=False) as memory:
        memory.start_session("kept", name="kept")
    with codeoid.Memory(tmp_path / "a.db", workspace, env=False) as memory:
        assert memory.session("kept").name == "kept"


def test_result_classes_are_not_constructible_or_mutable(memory: codeoid.Memory) -> None:
    session = memory.start_session()
    with pytest.raises(TypeError):
        codeoid.Session()
    with pytest.raises(AttributeError):
        session.name = "x"  # type: ignore[misc]
    assert memory.session(session.id) == session
