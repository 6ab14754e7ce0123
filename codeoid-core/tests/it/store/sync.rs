//! Tail replacement (`Store::sync_turns`): a log re-read while it grows ends up stored exactly as
//! if it had been read once, whatever point it was first cut at; re-syncing writes nothing; a
//! finish is undone when the log goes on; episodes not derived from the replaced turns stay.

use codeoid_core::ErrorKind;
use codeoid_core::canonical::{EpisodeKind, EpisodeStatus, Part, Role, ToolCall, Turn};
use codeoid_core::store::{NewSession, RawOutput, Session, Store, TimelineQuery, Workspace};
use serde_json::json;

use super::{at, call, result, temp_store, time, usage, workspace};
use crate::store_rows::{Scope, assert_same, dump};

/// Session `name` with a fixed id, so two stores derive the same episode ids.
fn session(store: &Store, ws: &Workspace, name: &str, seconds: i64) -> Session {
    store
        .create_session(
            ws,
            NewSession {
                id: Some(format!("ses_{name}")),
                name: Some(name.to_owned()),
                created_at: Some(time(seconds)),
                ..NewSession::default()
            },
        )
        .unwrap()
}

/// A conversation whose final form has a response split over growing versions: the full turns,
/// and for each turn index a partial version of it (what a log cut mid-way shows).
fn conversation() -> (Vec<Turn>, Vec<Turn>) {
    let prompt = at(Turn::user_text("Rename parse_args to parse"), "u1", 1);
    let mut response = at(
        Turn::new(
            Role::Assistant,
            vec![
                Part::Text {
                    text: "Looking at both files.".into(),
                },
                Part::ToolCall(ToolCall {
                    id: "c1".into(),
                    provider_id: None,
                    name: "Read".into(),
                    input: json!({"file_path": "src/cli.rs"}),
                }),
                Part::ToolCall(ToolCall {
                    id: "c2".into(),
                    provider_id: None,
                    name: "Read".into(),
                    input: json!({"file_path": "src/main.rs"}),
                }),
            ],
        ),
        "a1",
        2,
    );
    response.usage = Some(usage(900, 60, true));
    let mut results = at(result("c1", "fn parse_args() {}", false), "r1", 3);
    let second = result("c2", "parse_args();", false);
    results.parts.extend(second.parts);
    let mut edit = at(
        call("c3", "Edit", json!({"file_path": "src/cli.rs"})),
        "a2",
        4,
    );
    edit.usage = Some(usage(1500, 40, true));
    let edited = at(result("c3", "ok", false), "r2", 5);
    let answer = at(Turn::assistant_text("Renamed in both files."), "a3", 6);
    let next = at(Turn::user_text("Now run the tests"), "u2", 7);
    let full = vec![prompt, response, results, edit, edited, answer, next];

    let mut partial = full.clone();
    // The response as the first line of the log shows it: text only, smaller usage.
    partial[1].parts.truncate(1);
    partial[1].usage = Some(usage(900, 5, true));
    // The results turn before the second result line was written.
    partial[2].parts.truncate(1);
    (full, partial)
}

/// Every prefix of the log as a reader sees it: `full[..k]`, with the last turn in its partial
/// version when it has one.
fn prefixes(full: &[Turn], partial: &[Turn]) -> Vec<Vec<Turn>> {
    let mut out = Vec::new();
    for k in 1..=full.len() {
        out.push(full[..k].to_vec());
        if partial[k - 1] != full[k - 1] {
            let mut cut = full[..k].to_vec();
            cut[k - 1] = partial[k - 1].clone();
            out.push(cut);
        }
    }
    out
}

fn synced_once(full: &[Turn], finish: bool) -> Vec<String> {
    let (dir, store) = temp_store();
    let s = session(&store, &workspace("/work/repo"), "main", 0);
    store.sync_turns(&s.id, 0, full, finish).unwrap();
    drop(store);
    dump(&dir.path().join("codeoid.db"), &Scope::All)
}

#[test]
fn every_prefix_then_the_whole_log_equals_the_whole_log_once() {
    let (full, partial) = conversation();
    for finish in [false, true] {
        let expected = synced_once(&full, finish);
        for (n, prefix) in prefixes(&full, &partial).into_iter().enumerate() {
            let (dir, store) = temp_store();
            let s = session(&store, &workspace("/work/repo"), "main", 0);
            store.sync_turns(&s.id, 0, &prefix, finish).unwrap();
            let second = store.sync_turns(&s.id, 0, &full, finish).unwrap();
            assert!(second.unchanged < full.len() as u64 || prefix == full);
            drop(store);
            let got = dump(&dir.path().join("codeoid.db"), &Scope::All);
            assert_same(&got, &expected, &format!("prefix {n} (finish {finish})"));
        }
    }
}

#[test]
fn batches_give_the_same_store_as_one_sync() {
    let (full, partial) = conversation();
    let expected = synced_once(&full, true);
    let (dir, store) = temp_store();
    let s = session(&store, &workspace("/work/repo"), "main", 0);
    // A first import that saw a cut log, then the whole log in batches of two.
    store.sync_turns(&s.id, 0, &partial[..3], true).unwrap();
    for (i, batch) in full.chunks(2).enumerate() {
        let last = (i + 1) * 2 >= full.len();
        store
            .sync_turns(&s.id, (i * 2) as u64, batch, last)
            .unwrap();
    }
    drop(store);
    assert_same(
        &dump(&dir.path().join("codeoid.db"), &Scope::All),
        &expected,
        "batched",
    );
}

#[test]
fn re_syncing_the_same_turns_writes_nothing() {
    let (full, _) = conversation();
    let (dir, store) = temp_store();
    let s = session(&store, &workspace("/work/repo"), "main", 0);
    let first = store.sync_turns(&s.id, 0, &full, true).unwrap();
    assert_eq!((first.added, first.unchanged), (7, 0));
    assert!(first.finished);
    let before = dump(&dir.path().join("codeoid.db"), &Scope::All);
    for _ in 0..2 {
        let again = store.sync_turns(&s.id, 0, &full, true).unwrap();
        assert!(again.is_noop(), "{again:?}");
        assert_eq!(again.unchanged, 7);
    }
    // An older, shorter copy of the log removes nothing either.
    let older = store.sync_turns(&s.id, 0, &full[..3], false).unwrap();
    assert!(older.is_noop(), "{older:?}");
    assert_same(
        &dump(&dir.path().join("codeoid.db"), &Scope::All),
        &before,
        "after re-syncs",
    );
}

#[test]
fn a_late_result_replaces_the_cancelled_placeholder_of_a_finished_sync() {
    let (full, _) = conversation();
    let (_dir, store) = temp_store();
    let ws = workspace("/work/repo");
    let s = session(&store, &ws, "main", 0);
    // The log ends on the edit call: finishing cancels it for now.
    let cut = store.sync_turns(&s.id, 0, &full[..4], true).unwrap();
    assert!(cut.finished);
    let cancelled: Vec<_> = store
        .session_episodes(&s.id)
        .unwrap()
        .into_iter()
        .filter(|h| h.status == EpisodeStatus::Cancelled)
        .collect();
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0].call_id.as_deref(), Some("c3"));
    assert!(store.session(&s.id).unwrap().finished_at.is_some());

    let grown = store.sync_turns(&s.id, 0, &full[..5], false).unwrap();
    assert_eq!((grown.unchanged, grown.removed, grown.added), (4, 0, 1));
    assert!(grown.episodes_removed >= 1, "{grown:?}");
    let episodes = store.session_episodes(&s.id).unwrap();
    let edit: Vec<_> = episodes
        .iter()
        .filter(|h| h.call_id.as_deref() == Some("c3"))
        .collect();
    assert_eq!(edit.len(), 1, "one episode for the call: {episodes:?}");
    assert_eq!(edit[0].status, EpisodeStatus::Ok);
    let content = store.episode(ws.id(), &edit[0].id).unwrap().content;
    assert!(
        content.starts_with("# User intent\nRename parse_args to parse"),
        "{content}"
    );
    assert!(content.ends_with("## Result\nok"), "{content}");
    assert!(store.session(&s.id).unwrap().finished_at.is_none());
}

#[test]
fn replacing_a_tail_keeps_rotations_raw_outputs_and_earlier_episodes() {
    let (full, partial) = conversation();
    let (_dir, store) = temp_store();
    let ws = workspace("/work/repo");
    let s = session(&store, &ws, "main", 0);
    store.sync_turns(&s.id, 0, &partial[..2], false).unwrap();
    let rotation = store.record_rotation(&s.id, Some("ctx-2"), None).unwrap();
    let raw = store
        .record_raw_output(&s.id, &RawOutput::new("cargo test", b"ok\n", b"", Some(0)))
        .unwrap();
    let out = store.sync_turns(&s.id, 0, &full, false).unwrap();
    assert_eq!((out.unchanged, out.removed), (1, 1));
    for id in [&rotation.episode_id, &raw] {
        store.episode(ws.id(), id).unwrap();
    }
    let kinds: Vec<EpisodeKind> = store
        .session_episodes(&s.id)
        .unwrap()
        .iter()
        .map(|h| h.kind)
        .collect();
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == EpisodeKind::Rotation)
            .count(),
        1
    );
    assert_eq!(store.session(&s.id).unwrap().rotation_count, 1);
    assert_eq!(store.turns(&s.id, ..).unwrap().len(), full.len());
    let ledger = store.usage(&s.id, ..).unwrap();
    assert_eq!(
        ledger.len(),
        2,
        "one usage row per call, the grown one replaced"
    );
    assert_eq!(ledger[0].call.output_tokens, 60);
}

#[test]
fn an_episode_a_replacement_removed_still_anchors_a_walk_and_says_it_was_replaced() {
    let (full, _) = conversation();
    let (dir, store) = temp_store();
    let ws = workspace("/work/repo");
    let s = session(&store, &ws, "main", 0);
    store.sync_turns(&s.id, 0, &full, false).unwrap();
    let by_call = |store: &Store, call: &str| {
        store
            .session_episodes(&s.id)
            .unwrap()
            .into_iter()
            .find(|h| h.call_id.as_deref() == Some(call))
    };
    let edit = by_call(&store, "c3").unwrap();
    let page = |before: &str| {
        let query = TimelineQuery {
            before: Some(before.to_owned()),
            ..TimelineQuery::default()
        };
        store.timeline(ws.id(), &query)
    };
    let older: Vec<String> = page(&edit.id)
        .unwrap()
        .episodes
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(older.len(), 2, "the two reads came before the edit");

    // The log changed from the edit on: another call took its place.
    let mut changed = full.clone();
    changed[3] = at(
        call("c9", "Write", json!({"file_path": "src/cli.rs"})),
        "a2",
        4,
    );
    changed[4] = at(result("c9", "ok", false), "r2", 5);
    let out = store.sync_turns(&s.id, 0, &changed, false).unwrap();
    assert!(out.episodes_removed >= 1, "{out:?}");
    assert!(by_call(&store, "c3").is_none());
    assert!(by_call(&store, "c9").is_some());

    let after: Vec<String> = page(&edit.id)
        .unwrap()
        .episodes
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(after, older, "the walk goes on from where the edit stood");
    let err = store.episode(ws.id(), &edit.id).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.message().contains("was removed when session"), "{err}");
    let err = store
        .episode(ws.id(), "ep_00000000000000000000")
        .unwrap_err();
    assert!(err.message().contains("not found"), "{err}");
    // Another workspace never learns of it.
    let other = workspace("/work/other");
    assert!(page(&edit.id).is_ok());
    let err = store
        .timeline(
            other.id(),
            &TimelineQuery {
                before: Some(edit.id.clone()),
                ..TimelineQuery::default()
            },
        )
        .unwrap_err();
    assert!(err.message().contains("not found"), "{err}");

    // The log as it was: the edit's episode is back under its id, and no longer remembered
    // as replaced.
    store.sync_turns(&s.id, 0, &full, false).unwrap();
    assert_eq!(store.episode(ws.id(), &edit.id).unwrap().header.id, edit.id);
    let remembered: i64 = rusqlite::Connection::open(dir.path().join("codeoid.db"))
        .unwrap()
        .query_row("SELECT count(*) FROM replaced_episodes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        remembered, 1,
        "only the c9 call's episode, which is gone now"
    );
}

#[test]
fn turns_without_ids_or_timestamps_match_what_the_store_filled_in() {
    let (_dir, store) = temp_store();
    let s = session(&store, &workspace("/work/repo"), "main", 0);
    let bare = vec![Turn::user_text("hello"), Turn::assistant_text("hi")];
    let first = store.sync_turns(&s.id, 0, &bare, false).unwrap();
    assert_eq!(first.added, 2);
    let again = store.sync_turns(&s.id, 0, &bare, false).unwrap();
    assert!(again.is_noop(), "{again:?}");
    let mut changed = bare.clone();
    changed[1] = Turn::assistant_text("hi there");
    let out = store.sync_turns(&s.id, 0, &changed, false).unwrap();
    assert_eq!((out.unchanged, out.removed, out.added), (1, 1, 1));
    assert_eq!(store.turns(&s.id, ..).unwrap()[1].turn.text(), "hi there");
}

#[test]
fn bad_syncs_are_refused_and_write_nothing() {
    let (full, _) = conversation();
    let (dir, store) = temp_store();
    let s = session(&store, &workspace("/work/repo"), "main", 0);
    store.sync_turns(&s.id, 0, &full[..3], false).unwrap();
    let before = dump(&dir.path().join("codeoid.db"), &Scope::All);

    let err = store.sync_turns(&s.id, 9, &full, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("first_seq 9"), "{err}");

    let twice = vec![full[0].clone(), full[0].clone()];
    let err = store.sync_turns(&s.id, 0, &twice, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("\"u1\" appears twice"), "{err}");

    // A new turn reusing the id of a kept earlier turn.
    let mut reused = full[..4].to_vec();
    reused[3].id = Some("u1".into());
    let err = store.sync_turns(&s.id, 0, &reused, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    let err = store
        .sync_turns("ses_missing", 0, &full, false)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);

    let mut invalid = full.clone();
    invalid[2].id = Some(" ".into());
    let err = store.sync_turns(&s.id, 0, &invalid, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("turn 2 of the batch"), "{err}");

    assert_same(
        &dump(&dir.path().join("codeoid.db"), &Scope::All),
        &before,
        "after refused syncs",
    );
}

#[test]
fn a_tail_without_chunker_snapshots_cannot_be_replaced() {
    let (full, partial) = conversation();
    let (dir, store) = temp_store();
    let s = session(&store, &workspace("/work/repo"), "main", 0);
    store.sync_turns(&s.id, 0, &partial[..2], false).unwrap();
    // What a store written before schema version 2 looks like.
    let conn = rusqlite::Connection::open(dir.path().join("codeoid.db")).unwrap();
    conn.execute("UPDATE turns SET chunker_before = NULL", [])
        .unwrap();
    let err = store.sync_turns(&s.id, 0, &full, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("before schema version 2"), "{err}");
    // Its first turn changed too (a newer reader adds meta to it): every turn would be re-derived,
    // and its episodes, which carry no origin either, would stay beside their new copies.
    conn.execute("UPDATE episodes SET origin_seq = NULL", [])
        .unwrap();
    let episodes = store.session_episodes(&s.id).unwrap().len();
    let mut changed = full.clone();
    changed[0].meta.insert("is_meta".into(), json!(false));
    let err = store.sync_turns(&s.id, 0, &changed, false).unwrap_err();
    assert!(err.message().contains("from turn 0"), "{err}");
    assert_eq!(store.session_episodes(&s.id).unwrap().len(), episodes);
    // Appending still works: the session's own state carries on.
    let s2 = session(&store, &workspace("/work/repo"), "other", 1);
    store.sync_turns(&s2.id, 0, &full[..1], false).unwrap();
    conn.execute("UPDATE turns SET chunker_before = NULL", [])
        .unwrap();
    let appended = store.sync_turns(&s2.id, 0, &full[..2], false).unwrap();
    assert_eq!((appended.unchanged, appended.added), (1, 1));
}

#[test]
fn a_session_finished_in_its_middle_keeps_that_finish_unless_the_turns_before_it_change() {
    let (_dir, store) = temp_store();
    let ws = workspace("/work/repo");
    let s = session(&store, &ws, "resumed", 0);
    let first = vec![
        at(Turn::user_text("Read the config"), "u1", 1),
        at(call("c1", "Read", json!({"file_path": "a.toml"})), "a1", 2),
    ];
    let second = vec![
        at(Turn::user_text("Now the lock file"), "u2", 3),
        at(call("c2", "Read", json!({"file_path": "b.lock"})), "a2", 4),
        at(result("c2", "v1", false), "r2", 5),
    ];
    store.record_turns(&s.id, &first).unwrap();
    store.finish_session(&s.id).unwrap();
    store.record_turns(&s.id, &second).unwrap();
    let all: Vec<Turn> = first.iter().chain(&second).cloned().collect();
    assert!(store.sync_turns(&s.id, 0, &all, false).unwrap().is_noop());

    let status_of = |call: &str| -> Vec<(EpisodeStatus, String)> {
        store
            .session_episodes(&s.id)
            .unwrap()
            .iter()
            .filter(|h| h.call_id.as_deref() == Some(call))
            .map(|h| (h.status, store.episode(ws.id(), &h.id).unwrap().content))
            .collect()
    };
    // A changed result after the finish: the finish (and c1's cancellation by it) stays.
    let mut changed = all.clone();
    changed[4] = at(result("c2", "v2", false), "r2", 5);
    let out = store.sync_turns(&s.id, 0, &changed, false).unwrap();
    assert_eq!((out.unchanged, out.removed, out.added), (4, 1, 1));
    let c2 = status_of("c2");
    assert_eq!(c2.len(), 1);
    assert!(c2[0].1.ends_with("## Result\nv2") && c2[0].1.contains("Now the lock file"));
    let c1 = status_of("c1");
    assert_eq!(c1.len(), 1);
    assert_eq!(c1[0].0, EpisodeStatus::Cancelled);
    assert!(c1[0].1.contains("the session finished"), "{}", c1[0].1);

    // A changed turn before the finish: the log is the truth, the finish goes with its tail.
    let mut earlier = changed.clone();
    earlier[1] = at(call("c1", "Read", json!({"file_path": "a.yaml"})), "a1", 2);
    let out = store.sync_turns(&s.id, 0, &earlier, false).unwrap();
    assert_eq!((out.unchanged, out.removed), (1, 4));
    let c1 = status_of("c1");
    assert_eq!(c1.len(), 1);
    assert!(
        c1[0].1.contains("a.yaml") && c1[0].1.contains("a new user prompt"),
        "{}",
        c1[0].1
    );
}

#[test]
fn a_grown_log_updates_the_session_details_it_names() {
    use codeoid_core::store::{Lineage, LineageKind, SessionUpdate};
    let (_dir, store) = temp_store();
    let s = session(&store, &workspace("/work/repo"), "untitled", 0);
    let same = store
        .update_session(&s.id, &SessionUpdate::default())
        .unwrap();
    assert_eq!(same, s, "nothing given, nothing changed");
    let lineage = Lineage {
        parent_session_id: "ses_main".into(),
        parent_name: Some("main".into()),
        at_turn: Some(7),
        kind: LineageKind::Subagent,
    };
    let update = SessionUpdate {
        name: Some("Port the parser".into()),
        provider: None,
        model: Some("claude-opus-4-6".into()),
        lineage: Some(lineage.clone()),
    };
    let updated = store.update_session(&s.id, &update).unwrap();
    assert_eq!(updated.name.as_deref(), Some("Port the parser"));
    assert_eq!(updated.model.as_deref(), Some("claude-opus-4-6"));
    assert_eq!(updated.provider, s.provider, "None leaves a field as it is");
    assert_eq!(updated.lineage, Some(lineage));
    assert_eq!(store.session(&s.id).unwrap(), updated);

    let err = store
        .update_session(
            &s.id,
            &SessionUpdate {
                name: Some(" ".into()),
                ..SessionUpdate::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = store
        .update_session("ses_missing", &SessionUpdate::default())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}
