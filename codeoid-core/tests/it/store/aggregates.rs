//! Aggregate reads: counts, hot files, recent sessions, the latest read of a file (with its
//! content hash) and paths of many episodes.

use codeoid_core::canonical::{PathAccess, Turn};
use codeoid_core::store::{
    NewSession, StoreOptions, Workspace, WorkspaceSource, file_content_hash,
};
use serde_json::json;

use super::{at, call, result, session, temp_store, temp_store_with, time, workspace};

#[test]
fn counts_hot_files_and_recent_sessions() {
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let a = session(&store, &ws, "a", 0);
    let b = session(&store, &ws, "b", 1);
    let mut turns = vec![at(Turn::user_text("refactor the parser"), "u", 2)];
    for (i, (tool, path)) in [
        ("Read", "/repo/src/parser.rs"),
        ("Edit", "src/parser.rs"),
        ("Read", "/repo/src/lib.rs"),
        ("Grep", "src"),
        ("Read", "./src/parser.rs"),
    ]
    .iter()
    .enumerate()
    {
        let id = format!("c{i}");
        let key = if *tool == "Grep" { "path" } else { "file_path" };
        turns.push(at(
            call(&id, tool, json!({ key: path })),
            &format!("a{i}"),
            3 + i as i64,
        ));
        turns.push(at(result(&id, "ok", false), &format!("r{i}"), 3 + i as i64));
    }
    store.record_turns(&a.id, &turns).unwrap();
    store
        .record_turns(
            &b.id,
            &[
                at(Turn::user_text("hello"), "u", 100),
                at(Turn::assistant_text("hi"), "x", 101),
            ],
        )
        .unwrap();
    store.finish_session(&b.id).unwrap();

    let stats = store.workspace_stats(ws.id()).unwrap();
    assert_eq!((stats.episodes, stats.sessions), (6, 2));
    assert_eq!(stats.last_activity, Some(time(101)));

    let hot = store.hot_files(ws.id(), 10).unwrap();
    let hot: Vec<_> = hot.iter().map(|h| (h.path.as_str(), h.touches)).collect();
    assert_eq!(
        hot,
        [("src/parser.rs", 3), ("src/lib.rs", 1)],
        "searches are not touches"
    );
    assert_eq!(store.hot_files(ws.id(), 1).unwrap().len(), 1);

    let recent = store.recent_sessions(ws.id(), 5).unwrap();
    assert_eq!(recent[0].session.id, b.id);
    assert_eq!(recent[0].episodes, 1);
    assert_eq!(
        recent[1].session.first_intent.as_deref(),
        Some("refactor the parser")
    );
    assert_eq!(recent[1].episodes, 5);

    let (ep, path) = store
        .latest_episode_for_path(ws.id(), "src/parser.rs", Some(PathAccess::Read))
        .unwrap()
        .unwrap();
    assert_eq!(path.given, "./src/parser.rs");
    assert_eq!(ep.header.call_id.as_deref(), Some("c4"));
    let (ep, _) = store
        .latest_episode_for_path(ws.id(), "src/parser.rs", Some(PathAccess::Write))
        .unwrap()
        .unwrap();
    assert_eq!(ep.header.call_id.as_deref(), Some("c1"));
    assert!(
        store
            .latest_episode_for_path(ws.id(), "nope.rs", None)
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .latest_episode_for_path(workspace("/else").id(), "src/parser.rs", None)
            .unwrap()
            .is_none()
    );

    let ids: Vec<String> = store
        .session_episodes(&a.id)
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let paths = store.episode_paths(ws.id(), &id_refs).unwrap();
    assert_eq!(paths.len(), 5);
    assert_eq!(paths[&ids[0]][0].relative, "src/parser.rs");
    assert!(
        store
            .episode_paths(workspace("/else").id(), &id_refs)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn reads_of_live_files_record_their_hash() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("checkout");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let mut options = StoreOptions::default();
    options.hash_read_files = true;
    let (_db, store) = temp_store_with(options);
    let root_str = root.to_string_lossy().into_owned();
    let ws = Workspace::from_parts("", &root_str, &root, WorkspaceSource::Directory);
    let s = store.create_session(&ws, NewSession::default()).unwrap();
    store
        .record_turns(
            &s.id,
            &[
                at(
                    call("r", "Read", json!({"file_path": root.join("src/main.rs")})),
                    "a",
                    1,
                ),
                at(result("r", "1\tfn main() {}", false), "b", 2),
                at(
                    call("w", "Write", json!({"file_path": "src/main.rs"})),
                    "c",
                    3,
                ),
                at(result("w", "written", false), "d", 4),
                at(
                    call("m", "Read", json!({"file_path": "src/missing.rs"})),
                    "e",
                    5,
                ),
                at(result("m", "not found", true), "f", 6),
            ],
        )
        .unwrap();
    let (_, read) = store
        .latest_episode_for_path(ws.id(), "src/main.rs", Some(PathAccess::Read))
        .unwrap()
        .unwrap();
    let expected = file_content_hash(&root.join("src/main.rs"))
        .unwrap()
        .unwrap();
    assert_eq!(read.content_hash.as_deref(), Some(expected.as_str()));
    assert!(expected.starts_with("sha256:") && expected.len() == 7 + 64);
    let (_, write) = store
        .latest_episode_for_path(ws.id(), "src/main.rs", Some(PathAccess::Write))
        .unwrap()
        .unwrap();
    assert_eq!(write.content_hash, None, "only reads are hashed");
    let (_, missing) = store
        .latest_episode_for_path(ws.id(), "src/missing.rs", None)
        .unwrap()
        .unwrap();
    assert_eq!(missing.content_hash, None);
    std::fs::write(root.join("src/main.rs"), "fn main() { changed() }\n").unwrap();
    assert_ne!(
        file_content_hash(&root.join("src/main.rs"))
            .unwrap()
            .unwrap(),
        expected
    );
}

#[test]
fn a_stored_session_names_its_workspace_at_its_own_root() {
    let (_dir, store) = temp_store();
    let ws = Workspace::from_parts("acme", "/repo/.git", "/repo/wt", WorkspaceSource::Git);
    let s = session(&store, &ws, "a", 0);

    let record = store.workspace_record(ws.id()).unwrap().unwrap();
    assert_eq!(
        (record.tenant.as_str(), record.key.as_str()),
        ("acme", "/repo/.git")
    );
    assert!(
        store
            .workspace_record("ws_0000000000000000")
            .unwrap()
            .is_none()
    );

    let found = store.session_workspace(&s.id, "acme").unwrap().unwrap();
    assert_eq!(found.id(), ws.id());
    assert_eq!(found.key(), "/repo/.git");
    assert_eq!(found.root(), std::path::Path::new("/repo/wt"));
    assert!(
        store.session_workspace(&s.id, "").unwrap().is_none(),
        "another tenant's workspace is not offered"
    );
    assert!(
        store
            .session_workspace("no-such-session", "acme")
            .unwrap()
            .is_none()
    );
    assert_eq!(record.at_root("/elsewhere").id(), ws.id());
}

#[test]
fn recent_sessions_leave_subagents_to_their_parents() {
    use codeoid_core::store::{Lineage, LineageKind};
    let (_dir, store) = temp_store();
    let ws = workspace("/repo");
    let parent = session(&store, &ws, "parent", 0);
    let fork = store
        .create_session(
            &ws,
            NewSession {
                name: Some("fork".into()),
                created_at: Some(time(5)),
                lineage: Some(Lineage {
                    parent_session_id: parent.id.clone(),
                    parent_name: None,
                    at_turn: None,
                    kind: LineageKind::Fork,
                }),
                ..NewSession::default()
            },
        )
        .unwrap();
    for n in 0..3 {
        store
            .create_session(
                &ws,
                NewSession {
                    name: Some(format!("explore {n}")),
                    created_at: Some(time(10 + n)),
                    lineage: Some(Lineage {
                        parent_session_id: parent.id.clone(),
                        parent_name: None,
                        at_turn: None,
                        kind: LineageKind::Subagent,
                    }),
                    ..NewSession::default()
                },
            )
            .unwrap();
    }
    let recent: Vec<String> = store
        .recent_sessions(ws.id(), 10)
        .unwrap()
        .into_iter()
        .map(|r| r.session.id)
        .collect();
    assert_eq!(recent, [fork.id, parent.id]);
}
