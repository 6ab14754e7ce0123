//! Workspace identity against real git repositories and worktrees.

use std::path::Path;
use std::process::Command;

use codeoid_core::canonical::Turn;
use codeoid_core::store::{NewSession, Workspace, WorkspaceSource, workspace_id};
use serde_json::json;

use super::{at, call, result, temp_store};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=codeoid",
            "-c",
            "user.email=codeoid@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git must be installed to run the workspace tests");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn all_worktrees_of_a_repository_share_one_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("repo");
    std::fs::create_dir_all(main.join("src/deep")).unwrap();
    git(&main, &["init", "-q"]);
    std::fs::write(main.join("src/lib.rs"), "").unwrap();
    git(&main, &["add", "."]);
    git(&main, &["commit", "-qm", "init"]);
    let linked = dir.path().join("repo-feature");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            linked.to_str().unwrap(),
        ],
    );

    let a = Workspace::resolve(&main).unwrap();
    let b = Workspace::resolve(&linked).unwrap();
    let nested = Workspace::resolve(main.join("src/deep")).unwrap();
    assert_eq!(a.source(), WorkspaceSource::Git);
    assert_eq!(a.id(), b.id(), "worktrees share memory");
    assert_eq!(a.id(), nested.id());
    let common = main.join(".git").canonicalize().unwrap();
    assert_eq!(a.key(), common.to_string_lossy());
    assert_eq!(a.id(), workspace_id("", &common.to_string_lossy()));
    assert_eq!(a.root(), main.canonicalize().unwrap());
    assert_eq!(b.root(), linked.canonicalize().unwrap());
    assert_eq!(
        nested.root(),
        a.root(),
        "the root is the checkout's top level"
    );

    let other_tenant = Workspace::resolve_for_tenant(&main, "acme").unwrap();
    assert_ne!(
        other_tenant.id(),
        a.id(),
        "two tenants in one directory do not share"
    );
    assert_eq!(other_tenant.tenant(), "acme");

    // The same file touched from both worktrees is one relative path.
    let (_db, store) = temp_store();
    for (ws, name) in [(&a, "main"), (&b, "feature")] {
        let s = store
            .create_session(
                ws,
                NewSession {
                    name: Some(name.into()),
                    ..NewSession::default()
                },
            )
            .unwrap();
        let file = ws.root().join("src/lib.rs");
        store
            .record_turns(
                &s.id,
                &[
                    at(Turn::user_text("look"), "u", 1),
                    at(call("c", "Read", json!({ "file_path": file })), "a", 2),
                    at(result("c", "", false), "r", 3),
                ],
            )
            .unwrap();
    }
    let hot = store.hot_files(a.id(), 10).unwrap();
    assert_eq!(hot.len(), 1);
    assert_eq!((hot[0].path.as_str(), hot[0].touches), ("src/lib.rs", 2));
    assert_eq!(store.sessions(a.id()).unwrap().len(), 2);
}

#[test]
fn outside_git_the_normalized_directory_is_the_identity() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    std::fs::create_dir_all(plain.join("sub")).unwrap();
    let ws = Workspace::resolve(plain.join("sub/..")).unwrap();
    assert_eq!(ws.source(), WorkspaceSource::Directory);
    let canonical = plain.canonicalize().unwrap();
    assert_eq!(ws.root(), canonical);
    assert_eq!(ws.id(), workspace_id("", &canonical.to_string_lossy()));
    assert_ne!(ws.id(), Workspace::resolve(plain.join("sub")).unwrap().id());
}

#[test]
fn a_gitdir_file_that_is_not_a_link_means_no_repository() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".git"), "this is not a gitdir link\n").unwrap();
    let ws = Workspace::resolve(dir.path()).unwrap();
    assert_eq!(ws.source(), WorkspaceSource::Directory);
}
