//! Recording turns: one transaction for turn, usage and episodes; incremental chunking across
//! calls and reopenings; idempotent re-recording; finishing; oversize and raw outputs; threads.

use std::sync::Arc;

use codeoid_core::ErrorKind;
use codeoid_core::canonical::{EpisodeKind, EpisodeStatus, PathAccess, Turn, blob_id};
use codeoid_core::store::{LineageKind, NewSession, RawOutput, Store, StoreOptions};
use serde_json::json;

use super::{at, call, result, session, temp_store, temp_store_with, time, usage, workspace};

#[test]
fn one_record_turn_stores_the_turn_its_usage_and_its_episodes() {
    let (_dir, store) = temp_store();
    let ws = workspace("/work/repo");
    let s = session(&store, &ws, "main", 0);
    let prompt = at(Turn::user_text("Why does the build fail?"), "u1", 1);
    let mut assistant = at(
        call("c1", "Read", json!({"file_path": "/work/repo/src/lib.rs"})),
        "a1",
        2,
    );
    assistant.usage = Some(usage(1200, 80, true));
    let out = store.record_turn(&s.id, &prompt).unwrap();
    assert_eq!((out.seq, out.duplicate), (0, false));
    assert!(
        out.episode_ids.is_empty(),
        "the prompt waits for its answer"
    );
    store.record_turn(&s.id, &assistant).unwrap();
    let done = store
        .record_turn(&s.id, &at(result("c1", "pub fn run() {}", false), "r1", 3))
        .unwrap();
    assert_eq!(done.episode_ids.len(), 1);

    let turns = store.turns(&s.id, ..).unwrap();
    assert_eq!(turns.len(), 3);
    assert_eq!(turns[1].turn, assistant, "turns come back verbatim");
    assert_eq!(turns[2].seq, 2);
    assert_eq!(
        store.turns(&s.id, 1..2).unwrap()[0].turn.id.as_deref(),
        Some("a1")
    );

    let ledger = store.usage(&s.id, ..).unwrap();
    assert_eq!(ledger.len(), 1);
    assert_eq!((ledger[0].turn_seq, ledger[0].call.input_tokens), (1, 1200));
    assert!(ledger[0].call.primary);

    let ep = store.episode(ws.id(), &done.episode_ids[0]).unwrap();
    assert_eq!(ep.header.kind, EpisodeKind::ToolCall);
    assert_eq!(ep.header.summary, "Read(/work/repo/src/lib.rs)");
    assert_eq!(ep.header.turn_seq, 2);
    assert_eq!(ep.header.created_at, time(3));
    assert_eq!(
        ep.content,
        "# User intent\nWhy does the build fail?\n\n# Tool: Read\n\n## Input\n{\n  \"file_path\": \
         \"/work/repo/src/lib.rs\"\n}\n\n## Result\npub fn run() {}"
    );
    assert_eq!(
        ep.header.token_estimate,
        ep.content.chars().count().div_ceil(4) as u64
    );
    assert_eq!(ep.paths.len(), 1);
    assert_eq!(ep.paths[0].given, "/work/repo/src/lib.rs");
    assert_eq!(ep.paths[0].relative, "src/lib.rs");
    assert_eq!(ep.paths[0].access, PathAccess::Read);

    let s = store.session(&s.id).unwrap();
    assert_eq!(s.turn_count, 3);
    assert_eq!(s.first_intent.as_deref(), Some("Why does the build fail?"));
    assert_eq!(s.last_activity_at, time(3));
}

#[test]
fn a_call_and_its_result_pair_up_across_calls_and_reopenings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/codeoid.db");
    let ws = workspace("/w");
    let sid = {
        let store = Store::open(&path).unwrap();
        let s = session(&store, &ws, "s", 0);
        store
            .record_turns(
                &s.id,
                &[
                    at(Turn::user_text("list files"), "u", 1),
                    at(call("k", "Bash", json!({"command": "ls"})), "a", 2),
                ],
            )
            .unwrap();
        s.id
    };
    let store = Store::open(&path).unwrap();
    let out = store
        .record_turn(&sid, &at(result("k", "a.txt\nb.txt", false), "r", 3))
        .unwrap();
    assert_eq!(out.episode_ids.len(), 1);
    let ep = store.episode(ws.id(), &out.episode_ids[0]).unwrap();
    assert!(ep.content.starts_with("# User intent\nlist files\n"));
    assert!(ep.content.ends_with("## Result\na.txt\nb.txt"));
}

#[test]
fn re_recording_the_same_turns_adds_nothing() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    let turns = vec![
        at(Turn::user_text("fix it"), "u", 1),
        at(call("c", "Edit", json!({"file_path": "x.rs"})), "a", 2),
        at(result("c", "ok", false), "r", 3),
        at(Turn::assistant_text("Fixed."), "f", 4),
    ];
    let first = store.record_turns(&s.id, &turns).unwrap();
    assert!(first.iter().all(|r| !r.duplicate));
    store.finish_session(&s.id).unwrap();
    let before = store.session_episodes(&s.id).unwrap();
    assert_eq!(before.len(), 2, "the edit and the final answer");

    let again = store.record_turns(&s.id, &turns).unwrap();
    assert!(
        again
            .iter()
            .all(|r| r.duplicate && r.episode_ids.is_empty())
    );
    assert_eq!(
        again.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    let single = store.record_turn(&s.id, &turns[2]).unwrap();
    assert!(single.duplicate);
    assert!(store.finish_session(&s.id).unwrap().is_empty());
    assert_eq!(store.session_episodes(&s.id).unwrap(), before);
    assert_eq!(store.turns(&s.id, ..).unwrap().len(), 4);

    // A batch that repeats an id within itself stores it once.
    let s2 = session(&store, &ws, "s2", 5);
    let dup = at(Turn::user_text("hi"), "same", 6);
    let out = store.record_turns(&s2.id, &[dup.clone(), dup]).unwrap();
    assert_eq!((out[0].duplicate, out[1].duplicate), (false, true));
}

#[test]
fn the_first_intent_is_what_the_person_asked() {
    let (_dir, store) = temp_store();
    let s = session(&store, &workspace("/w"), "s", 0);
    let mut summary = at(Turn::user_text("Summary of earlier work"), "c", 1);
    summary
        .meta
        .insert("compaction_summary".into(), json!(true));
    let mut brief = at(Turn::user_text("Subagent: scan the repo"), "b", 2);
    brief.meta.insert("sidechain".into(), json!(true));
    let mut context = at(
        Turn::user_text("<environment_context>cwd: /w</environment_context>"),
        "e",
        3,
    );
    context.meta.insert("is_meta".into(), json!(true));
    let asked = at(Turn::user_text("Add a --json flag"), "u", 4);
    store
        .record_turns(&s.id, &[summary, brief, context, asked])
        .unwrap();
    let s = store.session(&s.id).unwrap();
    assert_eq!(s.first_intent.as_deref(), Some("Add a --json flag"));
}

#[test]
fn turns_without_id_or_time_get_them() {
    let (_dir, store) = temp_store();
    let s = session(&store, &workspace("/w"), "s", 0);
    let before = chrono::Utc::now();
    let out = store.record_turn(&s.id, &Turn::user_text("hello")).unwrap();
    assert!(out.turn_id.starts_with("turn_"), "{}", out.turn_id);
    let stored = &store.turns(&s.id, ..).unwrap()[0].turn;
    assert_eq!(stored.id.as_deref(), Some(out.turn_id.as_str()));
    assert!(stored.timestamp.unwrap() >= before - chrono::Duration::seconds(1));
}

#[test]
fn finishing_keeps_the_last_call_and_the_final_answer() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("deploy"), "u", 1),
                at(call("a", "Bash", json!({"command": "make"})), "c1", 2),
                at(result("a", "built", false), "r1", 3),
                at(Turn::assistant_text("Built. Deploying now."), "t", 4),
                at(
                    call("b", "Bash", json!({"command": "make deploy"})),
                    "c2",
                    5,
                ),
            ],
        )
        .unwrap();
    let ids = store.finish_session(&s.id).unwrap();
    assert_eq!(ids.len(), 1);
    let last = store.episode(ws.id(), &ids[0]).unwrap();
    assert_eq!(last.header.status, EpisodeStatus::Cancelled);
    assert_eq!(last.header.summary, "Bash(make deploy)");
    assert!(last.content.contains("# Reasoning\nBuilt. Deploying now."));
    assert!(store.session(&s.id).unwrap().finished_at.is_some());

    // A final answer after tools is an assistant_turn once the session finishes.
    let s2 = session(&store, &ws, "s2", 10);
    store
        .record_turns(
            &s2.id,
            &[
                at(Turn::user_text("check"), "u", 11),
                at(call("x", "Read", json!({"file_path": "a"})), "c", 12),
                at(result("x", "A", true), "r", 13),
                at(Turn::assistant_text("The file is missing."), "f", 14),
            ],
        )
        .unwrap();
    store.finish_session(&s2.id).unwrap();
    let kinds: Vec<_> = store
        .session_episodes(&s2.id)
        .unwrap()
        .into_iter()
        .map(|h| (h.kind, h.status))
        .collect();
    assert_eq!(
        kinds,
        [
            (EpisodeKind::ToolCall, EpisodeStatus::Failed),
            (EpisodeKind::AssistantTurn, EpisodeStatus::Ok)
        ]
    );
}

#[test]
fn a_resumed_session_is_no_longer_finished_and_snapshots_only_the_turn_after_the_finish() {
    let (dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("build"), "u", 1),
                at(call("a", "Bash", json!({"command": "make"})), "c1", 2),
            ],
        )
        .unwrap();
    let cancelled = store.finish_session(&s.id).unwrap();
    assert_eq!(cancelled.len(), 1);
    assert!(store.session(&s.id).unwrap().finished_at.is_some());

    // Resumed one turn at a time, as a harness records.
    for (i, turn) in [
        at(Turn::user_text("again"), "u2", 3),
        at(call("b", "Bash", json!({"command": "make"})), "c2", 4),
        at(result("b", "built", false), "r2", 5),
    ]
    .iter()
    .enumerate()
    {
        store.record_turn(&s.id, turn).unwrap();
        assert!(
            store.session(&s.id).unwrap().finished_at.is_none(),
            "after resumed turn {i}"
        );
    }
    // The turn after the finish keeps the state the finish left; later ones need none.
    let conn = rusqlite::Connection::open(dir.path().join("codeoid.db")).unwrap();
    let snapshots: Vec<(i64, bool)> = conn
        .prepare(
            "SELECT seq, chunker_before IS NOT NULL FROM turns WHERE session_id = ?1 ORDER BY seq",
        )
        .unwrap()
        .query_map([&s.id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        snapshots,
        [(0, true), (1, false), (2, true), (3, false), (4, false)]
    );
    // The finish's cancellation stays; the resumed call is its own episode.
    let statuses: Vec<_> = store
        .session_episodes(&s.id)
        .unwrap()
        .into_iter()
        .map(|h| h.status)
        .collect();
    assert_eq!(statuses, [EpisodeStatus::Cancelled, EpisodeStatus::Ok]);
    // Finishing again closes it again.
    store.finish_session(&s.id).unwrap();
    assert!(store.session(&s.id).unwrap().finished_at.is_some());
}

#[test]
fn a_rotation_decided_on_a_stale_count_is_refused() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    // Two writers decided to rotate after seeing no rotation; the first one wins.
    let first = store
        .rotate_session_from(&s.id, 0, Some("ctx-a"), None, Some("\"seed a\""))
        .unwrap();
    assert_eq!(first.count, 1);
    let err = store
        .rotate_session_from(&s.id, 0, Some("ctx-b"), None, Some("\"seed b\""))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RotationRefused);
    assert!(err.message().contains("another writer"), "{err}");
    let after = store.session(&s.id).unwrap();
    assert_eq!(after.rotation_count, 1);
    assert_eq!(after.backing_context_id.as_deref(), Some("ctx-a"));
    assert_eq!(
        store.take_pending_seed(&s.id).unwrap().as_deref(),
        Some("\"seed a\"")
    );
    // Decided on the current count, it goes ahead.
    let second = store
        .rotate_session_from(&s.id, 1, Some("ctx-c"), None, None)
        .unwrap();
    assert_eq!(second.count, 2);
}

#[test]
fn oversize_content_is_capped_and_kept_whole_in_a_blob() {
    let mut options = StoreOptions::default();
    options.max_episode_bytes = 8 * 1024;
    let (_dir, store) = temp_store_with(options);
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    let output: String = (0..20_000).map(|i| format!("log line {i}\n")).collect();
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("run"), "u", 1),
                at(call("c", "Bash", json!({"command": "make -j2"})), "a", 2),
            ],
        )
        .unwrap();
    let out = store
        .record_turn(&s.id, &at(result("c", &output, false), "r", 3))
        .unwrap();
    let ep = store.episode(ws.id(), &out.episode_ids[0]).unwrap();
    assert!(ep.content.len() <= 8 * 1024, "{}", ep.content.len());
    assert!(ep.content.starts_with("# User intent\nrun\n"));
    assert!(ep.content.ends_with("log line 19999\n"));
    assert_eq!(ep.blobs.len(), 1);
    let blob = &ep.blobs[0];
    assert_eq!(blob.role, "content");
    assert!(ep.content.contains(&format!("raw blob {}", blob.blob_id)));
    let whole = String::from_utf8(store.blob(ws.id(), &blob.blob_id).unwrap()).unwrap();
    assert!(
        whole.ends_with(&format!("## Result\n{output}")),
        "nothing dropped"
    );
    assert_eq!(blob.len, whole.len() as u64);
    assert_eq!(blob.blob_id, blob_id(whole.as_bytes()));
    assert_eq!(
        ep.header.token_estimate,
        ep.content.chars().count().div_ceil(4) as u64
    );
    let other = workspace("/other");
    assert_eq!(
        store.blob(other.id(), &blob.blob_id).unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn raw_outputs_keep_exact_bytes() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    let stdout: Vec<u8> = [b"ok \xff\xfe binary\n".as_slice(), &[0u8, 1, 2]].concat();
    let stderr = b"warning: \xc3 truncated".to_vec();
    let id = store
        .record_raw_output(
            &s.id,
            &RawOutput::new("cargo build 2>&1", &stdout, &stderr, Some(101)),
        )
        .unwrap();
    let ep = store.episode(ws.id(), &id).unwrap();
    assert_eq!(ep.header.summary, "shell(cargo build 2>&1)");
    assert_eq!(ep.header.status, EpisodeStatus::Failed);
    assert!(ep.content.contains("exit code: 101"));
    assert!(
        ep.content.contains("ok \u{fffd}\u{fffd} binary"),
        "{}",
        ep.content
    );
    let roles: Vec<_> = ep.blobs.iter().map(|b| b.role.as_str()).collect();
    assert_eq!(roles, ["stderr", "stdout"]);
    assert_eq!(store.blob(ws.id(), &ep.blobs[1].blob_id).unwrap(), stdout);
    assert_eq!(store.blob(ws.id(), &ep.blobs[0].blob_id).unwrap(), stderr);
    let err = store
        .record_raw_output(
            &s.id,
            &RawOutput {
                tool_name: " ",
                ..RawOutput::new("x", b"", b"", None)
            },
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn episodes_of_another_workspace_are_not_found() {
    let (_dir, store) = temp_store();
    let mine = workspace("/mine");
    let theirs = workspace("/theirs");
    let s = session(&store, &theirs, "s", 0);
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("secret"), "u", 1),
                at(Turn::assistant_text("ok"), "a", 2),
            ],
        )
        .unwrap();
    let id = store.finish_session(&s.id).unwrap().remove(0);
    assert!(store.episode(theirs.id(), &id).is_ok());
    let err = store.episode(mine.id(), &id).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(
        err.message(),
        store
            .episode(mine.id(), "ep_0000000000000000")
            .unwrap_err()
            .message()
            .replace("ep_0000000000000000", &id),
        "a foreign id reads exactly like a missing one"
    );
    // An empty id is a malformed argument; a huge one is not repeated whole in the message.
    let err = store.episode(mine.id(), "").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("episode id is empty"), "{err}");
    let pasted = "x".repeat(100_000);
    let err = store.episode(mine.id(), &pasted).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.message().contains("… (100000 characters)"), "{err}");
    assert!(err.message().len() < 300, "{err}");
}

#[test]
fn sessions_are_idempotent_ordered_and_carry_lineage_and_rotations() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let new = NewSession {
        id: Some("log-session-1".into()),
        name: Some("import".into()),
        created_at: Some(time(50)),
        ..NewSession::default()
    };
    let a = store.create_session(&ws, new.clone()).unwrap();
    assert_eq!(store.create_session(&ws, new.clone()).unwrap(), a);
    let err = store.create_session(&workspace("/x"), new).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    assert!(err.message().contains("log-session-1"));

    let older = session(&store, &ws, "older", 10);
    let fork = store
        .create_session(
            &ws,
            NewSession {
                created_at: Some(time(60)),
                lineage: Some(codeoid_core::store::Lineage {
                    parent_session_id: a.id.clone(),
                    parent_name: a.name.clone(),
                    at_turn: Some(3),
                    kind: LineageKind::Fork,
                }),
                ..NewSession::default()
            },
        )
        .unwrap();
    assert!(fork.id.starts_with("ses_"));
    assert_eq!(fork.lineage.as_ref().unwrap().at_turn, Some(3));
    assert_eq!(fork.lineage.as_ref().unwrap().kind, LineageKind::Fork);
    let order: Vec<_> = store
        .sessions(ws.id())
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(order, [older.id.clone(), a.id.clone(), fork.id.clone()]);
    assert_eq!(store.session_ordinal(&older.id).unwrap(), 1);
    assert_eq!(store.session_ordinal(&fork.id).unwrap(), 3);

    let r1 = store
        .record_rotation(&a.id, Some("ctx-2"), Some(time(70)))
        .unwrap();
    let r2 = store
        .record_rotation(&a.id, Some("ctx-3"), Some(time(80)))
        .unwrap();
    assert_eq!((r1.count, r2.count), (1, 2));
    let a = store.session(&a.id).unwrap();
    assert_eq!(a.rotation_count, 2);
    assert_eq!(a.last_rotation_at, Some(time(80)));
    assert_eq!(a.backing_context_id.as_deref(), Some("ctx-3"));
    let ep = store.episode(ws.id(), &r2.episode_id).unwrap();
    assert_eq!(ep.header.kind, EpisodeKind::Rotation);
    assert!(ep.content.contains("Rotation #2 of session \"import\""));
    store.set_backing_context(&a.id, None).unwrap();
    assert_eq!(store.session(&a.id).unwrap().backing_context_id, None);
    assert_eq!(
        store.set_backing_context("nope", None).unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn usage_keeps_subagent_calls_apart() {
    let (_dir, store) = temp_store();
    let s = session(&store, &workspace("/w"), "s", 0);
    let mut turn = at(Turn::assistant_text("done"), "a", 1);
    let mut u = usage(100, 10, true);
    u.calls.extend(usage(5000, 500, false).calls);
    turn.usage = Some(u);
    store.record_turn(&s.id, &turn).unwrap();
    let totals = store.usage_totals(&s.id).unwrap();
    assert_eq!((totals.calls, totals.primary_calls), (2, 1));
    assert_eq!((totals.input_tokens, totals.output_tokens), (5100, 510));
    let rows = store.usage(&s.id, ..).unwrap();
    assert!(!rows[1].call.primary);
}

/// Records `n` raw outputs (one episode each) in a new session of `ws`.
fn record_outputs(store: &Store, ws: &codeoid_core::store::Workspace, n: usize) {
    let s = session(store, ws, "s", 0);
    for i in 0..n {
        store
            .record_raw_output(
                &s.id,
                &RawOutput::new(&format!("echo {i}"), b"x", b"", Some(0)),
            )
            .unwrap();
    }
}

/// Every stored vector of `model` in `ws`: episode id, window, vector.
fn vectors_of(
    store: &Store,
    ws: &codeoid_core::store::Workspace,
    model: &str,
) -> Vec<(String, u32, Vec<f32>)> {
    let mut seen = Vec::new();
    store
        .for_each_vector(ws.id(), model, |v| {
            seen.push((v.episode_id, v.window, v.vector));
            Ok(())
        })
        .unwrap();
    seen
}

#[test]
fn vectors_are_stored_per_model_and_missing_ones_are_listed() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    record_outputs(&store, &ws, 3);
    let missing = store.episodes_without_vectors("minilm", 10).unwrap();
    assert_eq!(missing.len(), 3);
    store
        .put_vectors(
            "minilm",
            &[(
                missing[0].id.clone(),
                vec![vec![0.5, -1.0], vec![0.25, 2.0]],
            )],
        )
        .unwrap();
    let left: Vec<_> = store
        .episodes_without_vectors("minilm", 10)
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(left, [missing[1].id.clone(), missing[2].id.clone()]);
    assert_eq!(store.episodes_without_vectors("bge", 10).unwrap().len(), 3);
    let seen = vectors_of(&store, &ws, "minilm");
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].2, vec![0.25, 2.0]);
    // Replacing, and rejecting malformed batches without storing anything.
    store
        .put_vectors("minilm", &[(missing[0].id.clone(), vec![vec![1.0, 1.0]])])
        .unwrap();
    assert_eq!(vectors_of(&store, &ws, "minilm").len(), 1);
    for bad in [
        vec![(missing[1].id.clone(), vec![vec![1.0], vec![1.0, 2.0]])],
        vec![(missing[1].id.clone(), vec![vec![f32::NAN]])],
        vec![(missing[1].id.clone(), vec![])],
    ] {
        assert_eq!(
            store.put_vectors("m", &bad).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    }
    let err = store
        .put_vectors(
            "m",
            &[
                (missing[1].id.clone(), vec![vec![1.0]]),
                ("ep_nope".into(), vec![vec![1.0]]),
            ],
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(
        store.episodes_without_vectors("m", 10).unwrap().len(),
        3,
        "rolled back"
    );
}

#[test]
fn a_version_3_file_opens_with_its_vectors_moved_and_its_wal_emptied() {
    let (dir, store) = temp_store();
    let ws = workspace("/w");
    record_outputs(&store, &ws, 40);
    let missing = store.episodes_without_vectors("minilm", 100).unwrap();
    let batch: Vec<(String, Vec<Vec<f32>>)> = missing
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.clone(), vec![vec![i as f32 + 0.5; 384]; 2]))
        .collect();
    store.put_vectors("minilm", &batch).unwrap();
    let before = vectors_of(&store, &ws, "minilm");
    assert_eq!(before.len(), 80);
    drop(store);
    // Back to the version 3 layout: the keyed WITHOUT ROWID table.
    let path = dir.path().join("codeoid.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE vectors RENAME TO v4;
         DROP INDEX vectors_by_episode;
         CREATE TABLE vectors (
             model TEXT NOT NULL, episode_pk INTEGER NOT NULL REFERENCES episodes(pk),
             window_index INTEGER NOT NULL, dim INTEGER NOT NULL, data BLOB NOT NULL,
             PRIMARY KEY (model, episode_pk, window_index)) STRICT, WITHOUT ROWID;
         INSERT INTO vectors SELECT model, episode_pk, window_index, dim, data FROM v4;
         DROP TABLE v4;
         ALTER TABLE sessions DROP COLUMN context_started_turn;
         DROP TABLE replaced_episodes;
         ALTER TABLE sessions DROP COLUMN assistant_turns_since_rotation;
         DROP INDEX episodes_unoriginated;
         PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    assert_eq!(vectors_of(&store, &ws, "minilm"), before);
    // The migration's pages were checkpointed at open, not left for the first write's commit.
    let wal = std::fs::metadata(path.with_extension("db-wal")).map_or(0, |m| m.len());
    assert!(wal < 64 * 1024, "{wal} bytes of WAL after opening");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (version, without_rowid): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT user_version FROM pragma_user_version),
                    (SELECT wr FROM pragma_table_list WHERE name = 'vectors')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (version, without_rowid),
        (codeoid_core::store::schema::SCHEMA_VERSION, 0)
    );
}

#[test]
fn opening_a_store_another_process_is_migrating_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codeoid.db");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    // A version 3 file: without what versions 4 to 7 add (the vectors table is rebuilt by the
    // migration whatever its layout).
    conn.execute_batch(
        "ALTER TABLE sessions DROP COLUMN context_started_turn;
         DROP TABLE replaced_episodes;
         ALTER TABLE sessions DROP COLUMN assistant_turns_since_rotation;
         DROP INDEX episodes_unoriginated;
         PRAGMA user_version = 3",
    )
    .unwrap();
    // Another process's migration: the write lock held for longer than the store's own timeout.
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let holder = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(800));
        conn.execute_batch("COMMIT").unwrap();
    });
    let mut options = StoreOptions::default();
    options.busy_timeout = std::time::Duration::from_millis(100);
    let store = Store::open_with(&path, options).unwrap();
    holder.join().unwrap();
    let ws = workspace("/w");
    record_outputs(&store, &ws, 1);
    assert_eq!(store.episodes_without_vectors("m", 10).unwrap().len(), 1);
}

#[test]
fn many_threads_write_and_read_at_once() {
    let (_dir, store) = temp_store();
    let store = Arc::new(store);
    let ws = workspace("/w");
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let store = Arc::clone(&store);
            let ws = ws.clone();
            std::thread::spawn(move || {
                let s = session(&store, &ws, &format!("t{t}"), t);
                for i in 0..50 {
                    store
                        .record_turns(
                            &s.id,
                            &[
                                at(
                                    call(
                                        &format!("c{i}"),
                                        "Bash",
                                        json!({"command": format!("echo {i}")}),
                                    ),
                                    &format!("a{i}"),
                                    i,
                                ),
                                at(result(&format!("c{i}"), "out", false), &format!("r{i}"), i),
                            ],
                        )
                        .unwrap();
                }
                s.id
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let store = Arc::clone(&store);
            let ws = ws.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    let page = store.timeline(ws.id(), &Default::default()).unwrap();
                    for h in page.episodes.iter().take(3) {
                        store.episode(ws.id(), &h.id).unwrap();
                    }
                }
            })
        })
        .collect();
    let ids: Vec<String> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    readers.into_iter().for_each(|r| r.join().unwrap());
    for id in ids {
        assert_eq!(store.turns(&id, ..).unwrap().len(), 100);
        assert_eq!(store.session_episodes(&id).unwrap().len(), 50);
    }
    store.integrity_check().unwrap();
}

#[test]
fn checkpoints_happen_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codeoid.db");
    let store = Store::open(&path).unwrap();
    let s = session(&store, &workspace("/w"), "s", 0);
    let big = "0123456789abcdef".repeat(4096);
    for i in 0..40 {
        store
            .record_raw_output(
                &s.id,
                &RawOutput::new(&format!("cat part{i}"), big.as_bytes(), b"", Some(0)),
            )
            .unwrap();
    }
    // Commits only append to the WAL; the main file grows when a checkpoint copies pages back.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::metadata(&path).unwrap().len() < 2 * 1024 * 1024 {
        assert!(
            std::time::Instant::now() < deadline,
            "no checkpoint ran while the store was open"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        dir.path().join("codeoid.db-wal").exists(),
        "the store is still open"
    );
}

#[test]
fn the_wal_stays_bounded_under_back_to_back_commits() {
    wal_stays_bounded(None);
}

#[test]
fn the_wal_bound_is_in_bytes_whatever_the_page_size() {
    // A store someone converted to 64 KiB pages (`VACUUM`): the WAL hook counts frames, and
    // 16,384 of these would be 1 GiB.
    wal_stays_bounded(Some(65_536));
}

/// Writes about 240 MiB in back-to-back commits and checks the WAL never passed ~64 MiB.
fn wal_stays_bounded(page_size: Option<i64>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codeoid.db");
    if let Some(bytes) = page_size {
        drop(Store::open(&path).unwrap());
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = DELETE; PRAGMA page_size = {bytes}; VACUUM; \
             PRAGMA journal_mode = WAL;"
        ))
        .unwrap();
        let now: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        assert_eq!(now, bytes);
    }
    let store = Store::open(&path).unwrap();
    let s = session(&store, &workspace("/w"), "s", 0);
    let wal = dir.path().join("codeoid.db-wal");
    // Distinct outputs, so every commit writes fresh pages: about 240 MiB of WAL in all
    // without a bound, while the background checkpointer is always mid-copy.
    let mut largest = 0;
    for i in 0..1200 {
        let output = format!("{i:08} ").repeat(6 * 1024);
        store
            .record_raw_output(
                &s.id,
                &RawOutput::new(&format!("cat part{i}"), output.as_bytes(), b"", Some(0)),
            )
            .unwrap();
        largest = largest.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
    }
    // The backstop checkpoints at 64 MiB of frames, right after the commit that passes it.
    assert!(
        largest < 80 * 1024 * 1024,
        "the WAL grew to {} MiB",
        largest / (1024 * 1024)
    );
    store.integrity_check().unwrap();
}

#[test]
fn a_call_id_a_session_uses_again_is_recorded_again() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    let turns = vec![
        at(Turn::user_text("list files"), "u1", 1),
        at(call("call_0", "Bash", json!({"command": "ls"})), "a1", 2),
        at(result("call_0", "a.rs", false), "r1", 3),
        at(Turn::user_text("now test"), "u2", 4),
        at(
            call("call_0", "Bash", json!({"command": "cargo test"})),
            "a2",
            5,
        ),
        at(result("call_0", "test result: ok", false), "r2", 6),
    ];
    let recorded = store.record_turns(&s.id, &turns).unwrap();
    let ids: Vec<&String> = recorded.iter().flat_map(|r| &r.episode_ids).collect();
    let calls: Vec<String> = store
        .session_episodes(&s.id)
        .unwrap()
        .into_iter()
        .filter(|h| h.kind == EpisodeKind::ToolCall)
        .map(|h| h.summary)
        .collect();
    assert_eq!(calls, ["Bash(ls)", "Bash(cargo test)"], "{ids:?}");
}

/// `n` exchanges of a `Read` call (`src/m{i}.rs`) and its result: `2 * n` turns with ids.
fn read_exchanges(n: i64) -> Vec<Turn> {
    (0..n)
        .flat_map(|i| {
            [
                at(
                    call(
                        &format!("c{i}"),
                        "Read",
                        json!({"file_path": format!("src/m{i}.rs")}),
                    ),
                    &format!("a{i}"),
                    2 * i,
                ),
                at(
                    result(&format!("c{i}"), &format!("fn m{i}() {{}}"), false),
                    &format!("r{i}"),
                    2 * i + 1,
                ),
            ]
        })
        .collect()
}

#[test]
fn a_batch_that_fails_partway_stores_nothing_and_the_store_goes_on() {
    // 200 turns are prepared on a second thread while the writer writes; a write that fails
    // halfway (a trigger refuses turn 120) must stop both sides, roll everything back, and leave
    // the store usable.
    let (dir, store) = temp_store();
    let ws = workspace("/work/repo");
    let s = store.create_session(&ws, NewSession::default()).unwrap();
    let turns = read_exchanges(100);
    let raw = rusqlite::Connection::open(dir.path().join("codeoid.db")).unwrap();
    raw.execute_batch(
        "CREATE TRIGGER refuse_turn BEFORE INSERT ON turns WHEN NEW.seq = 120
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
    )
    .unwrap();
    let err = store.record_turns(&s.id, &turns).unwrap_err();
    let cause = std::error::Error::source(&err).map(ToString::to_string);
    assert!(
        cause
            .as_deref()
            .is_some_and(|c| c.contains("refused by the test")),
        "{err}: {cause:?}"
    );
    assert!(store.session_episodes(&s.id).unwrap().is_empty());
    assert_eq!(store.turns(&s.id, ..).unwrap().len(), 0);
    raw.execute_batch("DROP TRIGGER refuse_turn").unwrap();
    let recorded = store.record_turns(&s.id, &turns).unwrap();
    assert_eq!(recorded.len(), 200);
    assert!(recorded.iter().all(|r| !r.duplicate));
    assert_eq!(store.session_episodes(&s.id).unwrap().len(), 100);
    assert_eq!(store.turns(&s.id, ..).unwrap().len(), 200);
    store.integrity_check().unwrap();
}

#[test]
fn a_long_batch_reports_stored_and_repeated_ids_as_duplicates() {
    // Long enough to be prepared on a second thread: the first 40 turns are already stored and
    // one id comes twice in the batch; both kinds are duplicates with the earlier turn's seq.
    let (_dir, store) = temp_store();
    let ws = workspace("/work/repo");
    let s = store.create_session(&ws, NewSession::default()).unwrap();
    let turns = read_exchanges(100);
    store.record_turns(&s.id, &turns[..40]).unwrap();
    let mut batch = turns.clone();
    batch.insert(150, turns[120].clone());
    let recorded = store.record_turns(&s.id, &batch).unwrap();
    assert_eq!(recorded.len(), 201);
    for (i, r) in recorded.iter().enumerate() {
        let expected_seq = match i {
            150 => 120,
            151.. => i as u64 - 1,
            _ => i as u64,
        };
        assert_eq!(r.seq, expected_seq, "turn {i} of the batch");
        assert_eq!(r.duplicate, i < 40 || i == 150, "turn {i} of the batch");
        assert_eq!(r.turn_id, batch[i].id.clone().unwrap());
    }
    let stored = store.turns(&s.id, ..).unwrap();
    assert_eq!(stored.len(), 200);
    assert!(
        stored
            .iter()
            .enumerate()
            .all(|(i, t)| t.seq == i as u64 && t.turn.id == turns[i].id)
    );
    assert_eq!(store.session_episodes(&s.id).unwrap().len(), 100);
}
