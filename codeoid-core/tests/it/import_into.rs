//! Importing real logs into a real store file: every spotter session lands in its workspace with
//! one episode per tool call; importing again adds nothing (row for row); a log imported while it
//! was still being written, cut at any line or inside a line, and imported again once complete,
//! leaves exactly the store one import of the complete log leaves; the Codex, Gemini CLI and
//! SWE-agent fixtures import too; sessions that cannot be placed are skipped and reported.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use codeoid_core::ErrorKind;
use codeoid_core::canonical::{EpisodeKind, EpisodeStatus, Part};
use codeoid_core::import::{self, ImportOptions, ImportSummary, SessionKind};
use codeoid_core::store::{LineageKind, Store, WorkspaceSource, workspace_id};
use serde_json::Value;

use crate::store_rows::{Scope, assert_same, counts, dump};
use crate::support::{evaldata, fts_segments};

fn spotter() -> PathBuf {
    evaldata().join("claude-code-sessions/spotter")
}

/// Finish every session, whatever its age.
fn finishing() -> ImportOptions {
    ImportOptions {
        finish_after: Some(Duration::ZERO),
        ..ImportOptions::default()
    }
}

fn import(store: &Store, path: &Path, options: &ImportOptions) -> ImportSummary {
    import::import_into(store, path, options, &mut |_| {})
        .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.full_message()))
}

fn open(dir: &Path) -> (PathBuf, Store) {
    let db = dir.join("codeoid.db");
    let store = Store::open(&db).unwrap();
    (db, store)
}

#[test]
fn the_spotter_folder_imports_into_a_real_store() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    let mut progress = 0;
    let summary = import::import_into(&store, &spotter(), &ImportOptions::default(), &mut |_| {
        progress += 1
    })
    .unwrap();
    assert_eq!(progress, 13, "before the first file and after each of 12");
    assert_eq!(summary.report.files, 12);
    assert_eq!(summary.report.malformed_lines_skipped, 0);
    assert_eq!(
        (summary.sessions_new, summary.sessions_skipped),
        (12, 0),
        "{:?}",
        summary.skipped_sessions
    );
    assert_eq!(summary.turns_added, 510 + 482);
    assert_eq!(summary.turns_unchanged + summary.turns_replaced, 0);
    // The logs are from months ago: every session is over, so every one is finished.
    assert_eq!(summary.sessions_finished, 12);

    // Independently: the readers' sessions, compared with what the store holds.
    let read = import::read_path(&spotter()).unwrap();
    let mut episodes_total = 0;
    for session in &read.sessions {
        let stored = store.session(&session.session_id).unwrap();
        assert_eq!(stored.turn_count, session.turns.len() as u64);
        assert!(stored.finished_at.is_some());
        // A subagent works in its parent's workspace, wherever its own log starts.
        let parent = read
            .sessions
            .iter()
            .find(|p| Some(&p.session_id) == session.parent_session_id.as_ref());
        let cwd = parent.unwrap_or(session).cwd.as_ref().unwrap();
        // The recorded directory is not on this machine: it is its own, stable identity.
        assert!(!cwd.exists());
        assert_eq!(
            stored.workspace_id,
            workspace_id("", &cwd.to_string_lossy())
        );
        let turns = store.turns(&stored.id, ..).unwrap();
        for (stored_turn, turn) in turns.iter().zip(&session.turns) {
            assert_eq!(&stored_turn.turn, turn, "turns are stored verbatim");
        }
        let usage = store.usage_totals(&stored.id).unwrap();
        let stats = session.stats();
        assert_eq!(usage.calls, stats.usage_calls);
        assert_eq!(usage.input_tokens, stats.input_tokens);
        assert_eq!(usage.output_tokens, stats.output_tokens);
        assert_eq!(usage.cache_read_tokens, stats.cache_read_tokens);
        assert_eq!(
            usage.primary_calls,
            if session.kind == SessionKind::Main {
                stats.usage_calls
            } else {
                0
            }
        );
        // One tool_call episode per call, none for anything else; results without a call
        // (from before a compaction) are kept as their own episodes.
        let mut calls = HashSet::new();
        let mut results = HashSet::new();
        for turn in &session.turns {
            for part in &turn.parts {
                match part {
                    Part::ToolCall(c) => {
                        calls.insert(c.id.clone());
                    }
                    Part::ToolResult(r) => {
                        results.insert(r.call_id.clone());
                    }
                    _ => {}
                }
            }
        }
        let headers = store.session_episodes(&stored.id).unwrap();
        episodes_total += headers.len();
        let tool_episodes: Vec<_> = headers
            .iter()
            .filter(|h| h.kind == EpisodeKind::ToolCall)
            .collect();
        let orphans = results.difference(&calls).count();
        assert_eq!(tool_episodes.len(), calls.len() + orphans, "{}", stored.id);
        let with_call: HashSet<_> = tool_episodes
            .iter()
            .filter_map(|h| h.call_id.clone())
            .filter(|id| calls.contains(id))
            .collect();
        assert_eq!(with_call, calls);
        let cancelled = tool_episodes
            .iter()
            .filter(|h| h.status == EpisodeStatus::Cancelled)
            .count();
        assert!(cancelled <= calls.difference(&results).count());

        match session.kind {
            SessionKind::Main => assert!(stored.lineage.is_none()),
            _ => {
                let lineage = stored.lineage.clone().unwrap();
                assert_eq!(lineage.kind, LineageKind::Subagent);
                assert_eq!(
                    Some(&lineage.parent_session_id),
                    session.parent_session_id.as_ref()
                );
                if let Some(call) = &session.parent_tool_call_id {
                    // The lineage points at the parent turn that holds the Task call.
                    let at = lineage.at_turn.unwrap();
                    let parent_turn =
                        &store.turns(&lineage.parent_session_id, at..=at).unwrap()[0].turn;
                    assert!(
                        parent_turn
                            .parts
                            .iter()
                            .any(|p| matches!(p, Part::ToolCall(c) if &c.id == call))
                    );
                }
            }
        }
    }
    assert_eq!(summary.episodes_added, episodes_total as u64);
    store.integrity_check().unwrap();
}

#[test]
fn two_imports_of_one_folder_at_once_count_each_session_new_once() {
    let once = tempfile::tempdir().unwrap();
    import(&open(once.path()).1, &spotter(), &ImportOptions::default());
    // The race (both look a session up before either creates it) is not won every time.
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let (db, store) = open(dir.path());
        let other = Store::open(&db).unwrap();
        let start = std::sync::Barrier::new(2);
        let run = |store: &Store| {
            start.wait();
            import(store, &spotter(), &ImportOptions::default())
        };
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(|| run(&store));
            let b = scope.spawn(|| run(&other));
            (a.join().unwrap(), b.join().unwrap())
        });
        // Each import saw every session, and exactly one of them created it.
        for summary in [&a, &b] {
            let seen = summary.sessions_new + summary.sessions_updated + summary.sessions_unchanged;
            assert_eq!(seen, 12, "{summary:?}");
        }
        assert_eq!(a.sessions_new + b.sessions_new, 12, "{a:?}\n{b:?}");
        assert_eq!(counts(&db), counts(&once.path().join("codeoid.db")));
    }
}

#[test]
fn an_import_stopped_between_files_stores_those_read_and_goes_on_when_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let (db, store) = open(dir.path());
    let mut asked = 0;
    let summary = import::import_into_while(
        &store,
        &spotter(),
        &ImportOptions::default(),
        &mut |_| {},
        &mut || {
            asked += 1;
            asked <= 3
        },
    )
    .unwrap();
    assert!(summary.stopped);
    assert_eq!(
        asked, 4,
        "asked before each file, and not again once told to stop"
    );
    assert_eq!(
        (summary.report.files, summary.sessions_new),
        (3, 3),
        "{summary:?}"
    );
    let again = import(&store, &spotter(), &ImportOptions::default());
    assert!(!again.stopped);
    assert_eq!((again.sessions_new, again.sessions_unchanged), (9, 3));
    let once = tempfile::tempdir().unwrap();
    import(&open(once.path()).1, &spotter(), &ImportOptions::default());
    assert_eq!(counts(&db), counts(&once.path().join("codeoid.db")));
}

#[test]
fn a_real_session_recorded_in_one_batch_writes_its_index_once() {
    // Real turns bring every kind of row: usage on each assistant turn, paths, sidechains,
    // thinking. FTS5 writes its pending terms out at every savepoint, and a statement that
    // needs a statement journal opens one: none of the write path's statements may, or each
    // turn costs a segment of its own and merges follow on the write path.
    let read = import::read_path(&spotter()).unwrap();
    let longest = read.sessions.iter().max_by_key(|s| s.turns.len()).unwrap();
    assert!(longest.turns.len() > 200);
    assert!(longest.turns.iter().filter(|t| t.usage.is_some()).count() > 100);
    let dir = tempfile::tempdir().unwrap();
    let (db, store) = open(dir.path());
    let ws = codeoid_core::store::Workspace::from_parts(
        "",
        "/repo",
        "/repo",
        WorkspaceSource::Directory,
    );
    let session = store
        .create_session(&ws, codeoid_core::store::NewSession::default())
        .unwrap();
    let recorded = store.record_turns(&session.id, &longest.turns).unwrap();
    assert!(recorded.iter().map(|r| r.episode_ids.len()).sum::<usize>() > 100);
    assert_eq!(fts_segments(&db), 1, "one transaction, one segment");
}

#[test]
fn importing_again_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, store) = open(dir.path());
    import(&store, &spotter(), &finishing());
    let before = dump(&db, &Scope::All);
    let counted = counts(&db);
    for options in [finishing(), ImportOptions::default()] {
        let again = import(&store, &spotter(), &options);
        assert_eq!(
            (
                again.sessions_new,
                again.sessions_updated,
                again.sessions_unchanged
            ),
            (0, 0, 12)
        );
        assert_eq!((again.turns_added, again.turns_unchanged), (0, 992));
        assert_eq!((again.episodes_added, again.episodes_removed), (0, 0));
        assert_eq!(counts(&db), counted);
        assert_same(&dump(&db, &Scope::All), &before, "second import");
    }
    // A subagent's log imported alone, without its parent: nothing changes either, the link to
    // the parent's call included.
    let agent =
        spotter().join("4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl");
    let alone = import(&store, &agent, &finishing());
    assert_eq!((alone.sessions_unchanged, alone.turns_added), (1, 0));
    assert_same(&dump(&db, &Scope::All), &before, "subagent imported alone");
}

/// Line-oriented prefixes of `text`: the first `k` lines, and when `mid_line` the first `k`
/// lines plus half of the next (a line still being written).
fn prefix(lines: &[&str], k: usize, mid_line: bool) -> String {
    let mut out: String = lines[..k].iter().map(|l| format!("{l}\n")).collect();
    if mid_line && k < lines.len() {
        let next = lines[k];
        let mut cut = next.len() / 2;
        while !next.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push_str(&next[..cut]);
    }
    out
}

/// The places where a Claude Code log is most likely to be caught mid-write: inside a response
/// split over lines, between a call and its result, between two results, before an assistant
/// line that continues a response after results.
fn risky_cuts(lines: &[&str]) -> Vec<usize> {
    let parsed: Vec<Option<Value>> = lines.iter().map(|l| serde_json::from_str(l).ok()).collect();
    let kind = |i: usize| -> (Option<String>, Option<String>, bool, bool) {
        let v = parsed[i].as_ref();
        let t = v.and_then(|v| v["type"].as_str()).map(str::to_owned);
        let message = v.map(|v| &v["message"]);
        let id = message.and_then(|m| m["id"].as_str()).map(str::to_owned);
        let blocks = message
            .and_then(|m| m["content"].as_array())
            .cloned()
            .unwrap_or_default();
        let has = |ty: &str| blocks.iter().any(|b| b["type"] == ty);
        (t, id, has("tool_use"), has("tool_result"))
    };
    let mut cuts = Vec::new();
    for k in 1..lines.len() {
        let (t0, id0, use0, result0) = kind(k - 1);
        let (t1, id1, _, result1) = kind(k);
        let split = t0.as_deref() == Some("assistant") && id0.is_some() && id0 == id1;
        let call_then_result = use0 && result1;
        let two_results = result0 && result1;
        let resumed = t1.as_deref() == Some("assistant")
            && (0..k)
                .rev()
                .take_while(|&j| kind(j).0.as_deref() != Some("assistant"))
                .any(|j| kind(j).3)
            && (0..k)
                .rev()
                .find(|&j| kind(j).0.as_deref() == Some("assistant"))
                .is_some_and(|j| kind(j).1 == id1);
        if split || call_then_result || two_results || resumed {
            cuts.push(k);
        }
    }
    cuts
}

/// Imports `rel` (under `root`) cut at each of `cuts`, then whole, into fresh stores, and checks
/// each against one import of the whole log. Returns how many stored turns the second imports
/// replaced in all, so callers can check the cuts did catch turns mid-write.
fn check_growing(root: &Path, rel: &str, cuts: &[(usize, bool)], options: &ImportOptions) -> u64 {
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let whole_dir = tempfile::tempdir().unwrap();
    let log = whole_dir.path().join(rel);
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, &text).unwrap();
    let (db, store) = open(whole_dir.path());
    import(&store, &log, options);
    drop(store);
    let expected = dump(&db, &Scope::All);

    let mut replaced = 0;
    for &(k, mid_line) in cuts {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join(rel);
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let (db, store) = open(dir.path());
        std::fs::write(&log, prefix(&lines, k, mid_line)).unwrap();
        let first = import(&store, &log, options);
        assert_eq!(
            first.report.malformed_lines_skipped,
            u64::from(mid_line && k < lines.len()),
            "a half-written line is skipped and reported"
        );
        std::fs::write(&log, &text).unwrap();
        replaced += import(&store, &log, options).turns_replaced;
        drop(store);
        assert_same(
            &dump(&db, &Scope::All),
            &expected,
            &format!("{rel} cut after line {k} (mid-line {mid_line})"),
        );
    }
    replaced
}

#[test]
fn a_log_imported_while_written_ends_as_if_imported_once_at_every_cut() {
    let root = spotter();
    let no_finish = ImportOptions {
        finish_after: None,
        ..ImportOptions::default()
    };
    // Every line and every half line of two short logs; with and without finishing (which a
    // later import must undo) for one of them.
    for (rel, both) in [("tool_heavy.jsonl", true), ("short.jsonl", false)] {
        let n = std::fs::read_to_string(root.join(rel))
            .unwrap()
            .lines()
            .count();
        let cuts: Vec<(usize, bool)> = (1..n).flat_map(|k| [(k, false), (k, true)]).collect();
        let replaced = check_growing(&root, rel, &cuts, &finishing());
        assert!(
            replaced > 0,
            "{rel}: some cut must leave a turn that changes later"
        );
        if both {
            check_growing(&root, rel, &cuts, &no_finish);
        }
    }
    // Every risky point of a log whose responses continue after their results.
    let rel = "subagent.jsonl";
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cuts: Vec<(usize, bool)> = risky_cuts(&lines).into_iter().map(|k| (k, false)).collect();
    assert!(cuts.len() > 20, "{}", cuts.len());
    assert!(check_growing(&root, rel, &cuts, &finishing()) > 0);
}

#[test]
fn a_long_log_cut_inside_responses_and_between_calls_and_results_ends_as_if_imported_once() {
    let root = spotter();
    for rel in [
        "4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
        "4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl",
    ] {
        let text = std::fs::read_to_string(root.join(rel)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let risky = risky_cuts(&lines);
        assert!(risky.len() > 20, "{rel}: {} risky cuts", risky.len());
        // A spread of them, and one cut inside a line.
        let step = risky.len() / 6;
        let mut cuts: Vec<(usize, bool)> =
            risky.iter().step_by(step).map(|&k| (k, false)).collect();
        cuts.push((risky[risky.len() / 2], true));
        assert!(check_growing(&root, rel, &cuts, &finishing()) > 0, "{rel}");
    }
}

#[test]
fn the_codex_gemini_and_swe_agent_fixtures_import_into_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (db, store) = open(dir.path());
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let options = ImportOptions {
        fallback_dir: Some(project.clone()),
        ..ImportOptions::default()
    };
    for folder in ["codex-gemini-fixtures", "swe-agent-trajectories"] {
        let path = evaldata().join(folder);
        let read = import::read_path(&path).unwrap();
        let summary = import(&store, &path, &options);
        let with_turns: Vec<_> = read
            .sessions
            .iter()
            .filter(|s| !s.turns.is_empty())
            .collect();
        assert_eq!(summary.sessions_new, with_turns.len() as u64, "{folder}");
        assert_eq!(
            summary.sessions_empty,
            (read.sessions.len() - with_turns.len()) as u64
        );
        let turns = read.report.turns.user_turns + read.report.turns.assistant_turns;
        assert_eq!(summary.turns_added, turns, "{folder}");
        assert_eq!(
            summary.sessions_skipped, 0,
            "{:?}",
            summary.skipped_sessions
        );
        for session in with_turns {
            let stored = store.session(&session.session_id).unwrap();
            assert_eq!(stored.turn_count, session.turns.len() as u64);
            assert_eq!(stored.provider, session.provider);
            if session.cwd.is_none() {
                // Gemini CLI and SWE-agent name no directory: the fallback workspace.
                let root = store
                    .workspaces()
                    .unwrap()
                    .into_iter()
                    .find(|w| w.id == stored.workspace_id)
                    .unwrap()
                    .root;
                assert_eq!(Path::new(&root), project.canonicalize().unwrap());
            }
            assert!(!store.session_episodes(&stored.id).unwrap().is_empty());
        }
        let before = dump(&db, &Scope::All);
        let again = import(&store, &path, &options);
        assert_eq!(
            (again.turns_added, again.sessions_updated),
            (0, 0),
            "{folder}"
        );
        assert_same(&dump(&db, &Scope::All), &before, folder);
    }
}

#[test]
fn subagents_share_their_parents_workspace_whatever_directory_they_started_in() {
    // Three of this log's five inline subagents start in subfolders of the project (todo-app,
    // todo-app/types), which is not a repository here.
    let log = evaldata()
        .join("claude-code-sessions/claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl");
    let read = import::read_path(&log).unwrap();
    let main = read
        .sessions
        .iter()
        .find(|s| s.kind == SessionKind::Main)
        .unwrap();
    let started_elsewhere = read
        .sessions
        .iter()
        .filter(|s| s.kind == SessionKind::Subagent && s.cwd != main.cwd)
        .count();
    assert!(started_elsewhere >= 3, "{started_elsewhere}");

    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    let summary = import(&store, &log, &ImportOptions::default());
    assert_eq!((summary.sessions_new, summary.sessions_skipped), (6, 0));
    let parent = store.session(&main.session_id).unwrap();
    for session in &read.sessions {
        let stored = store.session(&session.session_id).unwrap();
        if session.kind == SessionKind::Subagent {
            // Its first intent is the brief it was given (its turns are a sidechain's).
            let brief = session.turns.iter().find(|t| t.is_user_prompt()).unwrap();
            let intent = stored.first_intent.as_deref().unwrap_or("<none>");
            assert!(
                brief.text().starts_with(intent.trim_end_matches('…')),
                "{}: {intent:?}",
                session.session_id
            );
        }
        assert_eq!(
            stored.workspace_id, parent.workspace_id,
            "{}",
            session.session_id
        );
    }
    assert_eq!(store.workspaces().unwrap().len(), 1);

    // A subagent an older codeoid stored in its own folder's workspace stays there and keeps
    // syncing, rather than being refused as another workspace's session.
    let moved = read
        .sessions
        .iter()
        .find(|s| s.kind == SessionKind::Subagent && s.cwd != main.cwd)
        .unwrap();
    let cwd = moved.cwd.as_ref().unwrap();
    let own = codeoid_core::store::Workspace::from_parts(
        "",
        &cwd.to_string_lossy(),
        cwd,
        WorkspaceSource::Directory,
    );
    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    let new = codeoid_core::store::NewSession {
        id: Some(moved.session_id.clone()),
        ..Default::default()
    };
    store.create_session(&own, new).unwrap();
    let summary = import(&store, &log, &ImportOptions::default());
    assert_eq!(
        summary.sessions_skipped, 0,
        "{:?}",
        summary.skipped_sessions
    );
    let stored = store.session(&moved.session_id).unwrap();
    assert_eq!(stored.workspace_id, own.id());
    assert_eq!(stored.turn_count, moved.turns.len() as u64);
}

#[test]
fn prompts_typed_while_the_agent_works_and_hook_context_are_kept() {
    // Claude Code 2.1 writes what was typed during a tool run, and a hook's added context, as
    // `attachment` lines, never as `user` lines.
    let line = |t: &str, uuid: &str, second: u32, body: Value| {
        let mut line = serde_json::json!({
            "type": t, "uuid": uuid, "sessionId": "s-att", "cwd": "/elsewhere/att",
            "timestamp": format!("2026-01-05T10:00:{second:02}Z"),
        });
        line.as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        line.to_string()
    };
    let call = |id: &str, name: &str, input: Value| {
        serde_json::json!({"message": {"id": format!("msg_{id}"), "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}})
    };
    let result = |id: &str, text: &str| {
        serde_json::json!({"message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]}})
    };
    let attachment = |body: Value| serde_json::json!({ "attachment": body });
    let log = [
        line(
            "user",
            "u1",
            1,
            serde_json::json!({"message": {"role": "user", "content": "refactor the parser"}}),
        ),
        line(
            "assistant",
            "a1",
            2,
            call("t1", "Bash", serde_json::json!({"command": "ls"})),
        ),
        line("user", "r1", 3, result("t1", "parser.rs")),
        line(
            "attachment",
            "q1",
            4,
            attachment(
                serde_json::json!({"type": "queued_command", "commandMode": "prompt",
                "origin": {"kind": "human"}, "prompt": "also convert the prices to euros"}),
            ),
        ),
        line(
            "attachment",
            "h1",
            5,
            attachment(serde_json::json!({"type": "hook_success", "hookEvent": "PostToolUse"})),
        ),
        line(
            "attachment",
            "p1",
            6,
            attachment(
                serde_json::json!({"type": "queued_command", "commandMode": "prompt",
                "origin": {"kind": "peer"}, "prompt": "message from another session"}),
            ),
        ),
        // Claude Code tells the model a background command ended, as a user message.
        line(
            "user",
            "n1",
            6,
            serde_json::json!({"message": {"role": "user", "content":
                "<task-notification>\n<task-id>b0</task-id>\n<status>completed</status>\n\
                 </task-notification>\nRead the output file to retrieve the result"}}),
        ),
        line(
            "user",
            "i1",
            6,
            serde_json::json!({"message": {"role": "user", "content": "[Request interrupted by user]"}}),
        ),
        line(
            "assistant",
            "a2",
            7,
            call("t2", "Edit", serde_json::json!({"file_path": "prices.rs"})),
        ),
        line("user", "r2", 8, result("t2", "edited")),
        line(
            "attachment",
            "c1",
            9,
            attachment(serde_json::json!({"type": "hook_additional_context",
                "hookEvent": "PostToolUse", "toolUseID": "t2",
                "content": ["error[E0308]: mismatched types", "  --> prices.rs:3:9"]})),
        ),
        line(
            "assistant",
            "a3",
            10,
            serde_json::json!({"message": {"id": "msg_end", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "Done."}]}}),
        ),
    ]
    .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s-att.jsonl");
    std::fs::write(&path, log).unwrap();

    let read = import::read_path(&path).unwrap();
    assert_eq!(read.report.non_message_types.get("attachment"), Some(&1));
    let turns = &read.sessions[0].turns;
    let find = |id: &str| turns.iter().find(|t| t.id.as_deref() == Some(id)).unwrap();
    let queued = find("q1");
    assert_eq!(queued.text(), "also convert the prices to euros");
    assert!(queued.is_person_prompt());
    assert_eq!(queued.meta["attachment"], "queued_command");
    assert!(find("p1").meta_flag("is_meta"), "not typed by the person");
    assert!(
        find("n1").meta_flag("is_meta"),
        "a harness notice is not a prompt"
    );
    assert!(
        find("i1").meta_flag("is_meta"),
        "an interruption is not a prompt"
    );
    let hook = find("c1");
    assert!(hook.meta_flag("is_meta"));
    assert_eq!(
        hook.text(),
        "error[E0308]: mismatched types\n  --> prices.rs:3:9"
    );

    let store_dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(store_dir.path());
    import(&store, &path, &finishing());
    let episodes: Vec<_> = store
        .session_episodes("s-att")
        .unwrap()
        .into_iter()
        .map(|h| {
            let content = store.episode(&h.workspace_id, &h.id).unwrap().content;
            (h.kind, h.tool_name, content)
        })
        .collect();
    let edit = episodes
        .iter()
        .find(|(_, tool, _)| tool.as_deref() == Some("Edit"))
        .unwrap();
    assert!(
        edit.2
            .contains("# User intent\nalso convert the prices to euros"),
        "{}",
        edit.2
    );
    let context: Vec<&str> = episodes
        .iter()
        .filter(|(kind, _, _)| *kind == EpisodeKind::Context)
        .map(|(_, _, content)| content.as_str())
        .collect();
    assert_eq!(
        context,
        [
            "message from another session",
            "<task-notification>\n<task-id>b0</task-id>\n<status>completed</status>\n\
             </task-notification>\nRead the output file to retrieve the result",
            "[Request interrupted by user]",
            "error[E0308]: mismatched types\n  --> prices.rs:3:9"
        ]
    );
}

#[test]
fn an_older_copy_of_a_log_never_rolls_the_session_back() {
    let dir = tempfile::tempdir().unwrap();
    let (db, store) = open(dir.path());
    let live = spotter().join("tool_heavy.jsonl");
    import(&store, &live, &finishing());
    let before = dump(&db, &Scope::All);
    let id = &import::read_path(&live).unwrap().sessions[0].session_id;
    let stored = store.session(id).unwrap().turn_count;

    // An older copy under the same name, taken while a response was being written: its last
    // turn is that response cut short, which a sync would take for a change.
    let text = std::fs::read_to_string(&live).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let backup = dir.path().join("backup");
    std::fs::create_dir(&backup).unwrap();
    let copy = backup.join("tool_heavy.jsonl");
    for cut in [12, lines.len() / 2] {
        std::fs::write(&copy, lines[..cut].join("\n")).unwrap();
        let read = import::read_path(&copy).unwrap();
        assert!((read.sessions[0].turns.len() as u64) < stored);
        let summary = import(&store, &copy, &finishing());
        assert_eq!(summary.sessions_skipped, 1, "cut at line {cut}");
        assert!(
            summary.skipped_sessions[0]
                .reason
                .contains("an older copy of a log that only grows"),
            "{:?}",
            summary.skipped_sessions
        );
        assert_same(&dump(&db, &Scope::All), &before, "after an older copy");
    }
    // The live log still syncs as before.
    let again = import(&store, &live, &finishing());
    assert_eq!((again.sessions_unchanged, again.sessions_skipped), (1, 0));
}

/// A one-prompt Claude Code log whose working directory is `cwd`.
fn tiny_log(session_id: &str, cwd: &str, prompt_uuid: &str) -> String {
    let line = |t: &str, uuid: &str, message: Value| {
        serde_json::json!({
            "type": t, "uuid": uuid, "sessionId": session_id, "cwd": cwd,
            "timestamp": "2026-01-05T10:00:00Z", "message": message
        })
        .to_string()
    };
    [
        line(
            "user",
            prompt_uuid,
            serde_json::json!({"role": "user", "content": "hello"}),
        ),
        line(
            "assistant",
            &format!("{prompt_uuid}-a"),
            serde_json::json!({"id": format!("msg_{prompt_uuid}"), "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "hi"}]}),
        ),
    ]
    .join("\n")
}

#[test]
fn workspaces_follow_the_recorded_directory_an_override_or_the_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    // A directory that exists here, inside a git repository: resolved through git.
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let here = dir.path().join("here.jsonl");
    std::fs::write(
        &here,
        tiny_log("s-here", &repo.join("sub").to_string_lossy(), "u1"),
    )
    .unwrap();
    import(&store, &here, &ImportOptions::default());
    let stored = store.session("s-here").unwrap();
    let ws = codeoid_core::store::Workspace::resolve(&repo).unwrap();
    assert_eq!(ws.source(), WorkspaceSource::Git);
    assert_eq!(stored.workspace_id, ws.id());
    assert_eq!(stored.root, repo.canonicalize().unwrap());

    // A Windows directory of another machine: its text is the identity.
    let windows = dir.path().join("windows.jsonl");
    std::fs::write(&windows, tiny_log("s-win", r"C:\Users\dev\proj", "u2")).unwrap();
    import(&store, &windows, &ImportOptions::default());
    assert_eq!(
        store.session("s-win").unwrap().workspace_id,
        workspace_id("", r"C:\Users\dev\proj")
    );

    // An override puts everything in one workspace; the tenant separates memories.
    let other = dir.path().join("other.jsonl");
    std::fs::write(&other, tiny_log("s-other", "/elsewhere/proj", "u3")).unwrap();
    let options = ImportOptions {
        tenant: "acme".into(),
        workspace_dir: Some(repo.clone()),
        ..ImportOptions::default()
    };
    import(&store, &other, &options);
    let acme = codeoid_core::store::Workspace::resolve_for_tenant(&repo, "acme").unwrap();
    assert_eq!(store.session("s-other").unwrap().workspace_id, acme.id());
    assert_ne!(acme.id(), ws.id());

    // The same session id in another workspace is skipped and reported, never moved.
    let moved = import(&store, &here, &options);
    assert_eq!(moved.sessions_skipped, 1);
    assert!(
        moved.skipped_sessions[0].reason.contains("already exists"),
        "{:?}",
        moved.skipped_sessions
    );
    assert_eq!(store.session("s-here").unwrap().workspace_id, ws.id());

    // `workspace_dir` names a directory of this machine: a relative one is taken from the
    // current directory (not kept as the text "."), and one that does not exist is refused.
    let relative = dir.path().join("relative.jsonl");
    std::fs::write(&relative, tiny_log("s-rel", "/elsewhere/proj", "u4")).unwrap();
    let options = ImportOptions {
        workspace_dir: Some(PathBuf::from(".")),
        ..ImportOptions::default()
    };
    import(&store, &relative, &options);
    let here_ws =
        codeoid_core::store::Workspace::resolve(std::env::current_dir().unwrap()).unwrap();
    assert_eq!(store.session("s-rel").unwrap().workspace_id, here_ws.id());
    let missing = ImportOptions {
        workspace_dir: Some(dir.path().join("no-such-checkout")),
        ..ImportOptions::default()
    };
    let err =
        codeoid_core::import::import_into(&store, &relative, &missing, &mut |_| {}).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
}

#[test]
fn sessions_that_cannot_be_placed_or_would_replace_another_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let (db, store) = open(dir.path());
    // SWE-agent runs name no directory; without a fallback there is nowhere to put them.
    let swe = evaldata().join("swe-agent-trajectories");
    let summary = import(&store, &swe, &ImportOptions::default());
    assert_eq!((summary.sessions_new, summary.sessions_skipped), (0, 3));
    assert!(summary.skipped_sessions[0].reason.contains("fallback"));
    assert_eq!(counts(&db)[0], ("sessions".to_owned(), 0));

    // Another conversation under a known id does not replace the stored one.
    let first = dir.path().join("first.jsonl");
    std::fs::write(&first, tiny_log("s-1", "/p", "u1")).unwrap();
    import(&store, &first, &ImportOptions::default());
    let before = dump(&db, &Scope::All);
    let second = dir.path().join("second.jsonl");
    std::fs::write(&second, tiny_log("s-1", "/p", "u9")).unwrap();
    let summary = import(&store, &second, &ImportOptions::default());
    assert_eq!(summary.sessions_skipped, 1);
    assert!(
        summary.skipped_sessions[0]
            .reason
            .contains("another conversation")
    );
    assert_same(&dump(&db, &Scope::All), &before, "after a conflicting log");

    // Two files of one folder claiming one session: the second is left out.
    let folder = dir.path().join("twice");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("a.jsonl"), tiny_log("s-2", "/p", "u5")).unwrap();
    std::fs::write(folder.join("b.jsonl"), tiny_log("s-2", "/p", "u5")).unwrap();
    let summary = import(&store, &folder, &ImportOptions::default());
    assert_eq!((summary.sessions_new, summary.sessions_skipped), (1, 1));
    assert!(
        summary.skipped_sessions[0]
            .reason
            .contains("already imported from")
    );
}

#[test]
fn bad_arguments_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    let options = ImportOptions {
        batch_turns: 0,
        ..ImportOptions::default()
    };
    let err = import::import_into(&store, &spotter(), &options, &mut |_| {}).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("batch_turns is 0"), "{err}");
    let missing = dir.path().join("nope.jsonl");
    let err =
        import::import_into(&store, &missing, &ImportOptions::default(), &mut |_| {}).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let notes = dir.path().join("notes.json");
    std::fs::write(&notes, "{\"hello\": 1}").unwrap();
    let err =
        import::import_into(&store, &notes, &ImportOptions::default(), &mut |_| {}).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Import);
    // A named pipe is refused at once (reading it would wait for a writer forever), and so is a
    // device that never ends.
    let fifo = dir.path().join("pipe.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for special in [fifo.as_path(), std::path::Path::new("/dev/zero")] {
        let err = import::import_into(&store, special, &ImportOptions::default(), &mut |_| {})
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
        assert!(
            err.message().contains("neither a file nor a folder"),
            "{err}"
        );
    }
    // A NUL byte (from a binding's string) names no file: a bad argument, not an I/O failure.
    let err = import::check_path(std::path::Path::new("logs\0.jsonl")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.message().contains("NUL byte"), "{err}");
}

#[test]
fn a_recent_log_stays_open_until_it_is_idle() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    let root = spotter();
    let text = std::fs::read_to_string(root.join("tool_heavy.jsonl")).unwrap();
    // The same log, as if written a minute ago.
    let now = chrono::Utc::now() - chrono::Duration::minutes(1);
    let recent: String = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v.get("timestamp").is_some() {
                v["timestamp"] = Value::String(now.to_rfc3339());
            }
            format!("{v}\n")
        })
        .collect();
    let log = dir.path().join("live.jsonl");
    std::fs::write(&log, recent).unwrap();
    let summary = import(&store, &log, &ImportOptions::default());
    assert_eq!(summary.sessions_finished, 0);
    let id = import::read_path(&log).unwrap().sessions[0]
        .session_id
        .clone();
    assert!(store.session(&id).unwrap().finished_at.is_none());
    let summary = import(&store, &log, &finishing());
    assert_eq!(
        (summary.sessions_finished, summary.sessions_updated),
        (1, 1)
    );
    let per_kind: HashMap<EpisodeKind, usize> =
        store
            .session_episodes(&id)
            .unwrap()
            .iter()
            .fold(HashMap::new(), |mut m, h| {
                *m.entry(h.kind).or_default() += 1;
                m
            });
    assert!(per_kind[&EpisodeKind::ToolCall] > 0);
}

#[test]
fn a_subagent_imported_after_its_parent_joins_the_parents_workspace() {
    // This subagent's log starts in a subfolder of its parent's project (not a repository
    // here); imported alone, after its parent's log was, it used to make a workspace of its own.
    let dir_of = evaldata().join("claude-code-sessions/spotter");
    let parent_log = dir_of.join("8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl");
    let sub_log =
        dir_of.join("8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-acompact-f46190.jsonl");
    let sub = import::read_path(&sub_log).unwrap().sessions.remove(0);
    let parent = import::read_path(&parent_log)
        .unwrap()
        .sessions
        .into_iter()
        .find(|s| s.kind == SessionKind::Main)
        .unwrap();
    assert_eq!(sub.kind, SessionKind::Subagent);
    assert_ne!(
        sub.cwd, parent.cwd,
        "the case needs a subagent started elsewhere"
    );

    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    let options = ImportOptions::default();
    import(&store, &parent_log, &options);
    let summary = import(&store, &sub_log, &options);
    assert_eq!(
        (summary.sessions_new, summary.sessions_skipped),
        (1, 0),
        "{:?}",
        summary.skipped_sessions
    );
    let stored_parent = store.session(&parent.session_id).unwrap();
    let stored_sub = store.session(&sub.session_id).unwrap();
    assert_eq!(stored_sub.workspace_id, stored_parent.workspace_id);
    assert_eq!(store.workspaces().unwrap().len(), 1);
}

/// The hex sha256 of `path`'s text: a Gemini CLI `projectHash`.
fn project_hash(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(path.to_str().unwrap().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A Gemini CLI `.jsonl` chat: its metadata line, then `records`.
fn gemini_jsonl(meta: Value, records: &[Value]) -> String {
    std::iter::once(&meta)
        .chain(records)
        .map(|r| format!("{r}\n"))
        .collect()
}

fn gemini_prompt(id: &str, text: &str) -> Value {
    serde_json::json!({"id": id, "timestamp": "2026-01-05T10:00:00Z", "type": "user", "content": [{"text": text}]})
}

fn gemini_answer(id: &str, text: &str) -> Value {
    serde_json::json!({"id": id, "timestamp": "2026-01-05T10:00:01Z", "type": "gemini", "content": text, "model": "gemini-2.5-pro"})
}

#[test]
fn a_gemini_chat_that_rewrote_its_history_ends_as_if_imported_once_at_every_cut() {
    use serde_json::json;
    // A chat compressed mid-way (`$set.messages` = a summary, its acknowledgement and the kept
    // messages), then going on; imported at every line while it was written, then whole. The
    // second import used to be refused as another conversation.
    let meta = json!({"sessionId": "g-grow", "projectHash": "h", "startTime": "2026-01-05T10:00:00Z", "kind": "main"});
    let call = json!({"id": "m1", "timestamp": "2026-01-05T10:00:02Z", "type": "gemini", "content": "Building.", "model": "gemini-2.5-pro",
        "toolCalls": [{"id": "rsc-1", "name": "run_shell_command", "args": {"command": "make"}, "status": "success",
            "result": [{"functionResponse": {"id": "rsc-1", "name": "run_shell_command", "response": {"output": "error: undefined frobnicate"}}}]}]});
    let records = [
        gemini_prompt("u1", "why does the build fail?"),
        call,
        json!({"$set": {"lastUpdated": "2026-01-05T10:00:02Z"}}),
        gemini_prompt("u2", "fix it"),
        gemini_answer("m2", "Renamed it."),
        json!({"$set": {"messages": [
            gemini_prompt("s1", "<state_snapshot>the build is fixed</state_snapshot>"),
            gemini_answer("s2", "Got it. Thanks for the additional context!"),
            gemini_prompt("u2", "fix it"),
            gemini_answer("m2", "Renamed it.")
        ]}}),
        gemini_prompt("u3", "now add a regression test"),
        gemini_answer("m3", "Added tests/regression.rs."),
    ];
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("gemini");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let rel = "chats/session-2026-01-05T10-00-ggrow000.jsonl";
    std::fs::create_dir_all(root.join("chats")).unwrap();
    std::fs::write(root.join(rel), gemini_jsonl(meta, &records)).unwrap();
    let options = ImportOptions {
        fallback_dir: Some(project),
        ..finishing()
    };
    let cuts: Vec<(usize, bool)> = (1..=records.len() + 1).map(|k| (k, false)).collect();
    check_growing(&root, rel, &cuts, &options);

    let (_db, store) = open(dir.path());
    let summary = import(&store, &root.join(rel), &options);
    assert_eq!((summary.sessions_new, summary.sessions_skipped), (1, 0));
    let stored = store.turns("g-grow", ..).unwrap();
    let ids: Vec<&str> = stored.iter().filter_map(|t| t.turn.id.as_deref()).collect();
    assert_eq!(
        ids,
        ["u1", "m1", "m1:results", "u2", "m2", "s1", "s2", "u3", "m3"]
    );
    let kinds: Vec<EpisodeKind> = store
        .session_episodes("g-grow")
        .unwrap()
        .iter()
        .map(|h| h.kind)
        .collect();
    assert!(kinds.contains(&EpisodeKind::Compaction), "{kinds:?}");
}

#[test]
fn a_gemini_chat_resumed_into_a_jsonl_brings_its_stored_session_up_to_date() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    let chats = dir.path().join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    let meta =
        json!({"sessionId": "g-resumed", "projectHash": "h", "startTime": "2026-01-05T10:00:00Z"});
    let old = [
        gemini_prompt("u1", "read package.json"),
        gemini_answer("m1", "It is test-project."),
    ];
    let mut doc = meta.clone();
    doc["messages"] = json!(old);
    std::fs::write(chats.join("session-r.json"), doc.to_string()).unwrap();
    let options = ImportOptions {
        fallback_dir: Some(dir.path().to_path_buf()),
        ..finishing()
    };
    // Imported before the chat was resumed...
    let first = import(&store, &chats, &options);
    assert_eq!((first.sessions_new, first.turns_added), (1, 2));
    // ...and after: the `.jsonl` holds the old messages and the new ones; the `.json` stays.
    let mut lines = old.to_vec();
    lines.push(json!({"$set": {"sessionId": "g-resumed"}}));
    lines.push(gemini_prompt("u2", "and its version?"));
    lines.push(gemini_answer("m2", "1.0.0."));
    std::fs::write(chats.join("session-r.jsonl"), gemini_jsonl(meta, &lines)).unwrap();
    let second = import(&store, &chats, &options);
    assert_eq!(
        (
            second.sessions_updated,
            second.sessions_skipped,
            second.turns_added
        ),
        (1, 0, 2),
        "{:?}",
        second.skipped_sessions
    );
    assert_eq!(
        second.report.files_skipped, 1,
        "the .json, whose messages the .jsonl has"
    );
    assert_eq!(store.session("g-resumed").unwrap().turn_count, 4);
    let third = import(&store, &chats, &options);
    assert_eq!((third.sessions_unchanged, third.turns_added), (1, 0));
}

#[test]
fn gemini_chats_go_to_the_directory_their_project_hash_names() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    let here = dir.path().canonicalize().unwrap();
    let (proj_a, proj_b) = (here.join("projA"), here.join("projB"));
    std::fs::create_dir_all(proj_a.join("src")).unwrap();
    std::fs::create_dir_all(&proj_b).unwrap();
    let chats = here.join("tmp/chats");
    std::fs::create_dir_all(chats.join("parent-elsewhere")).unwrap();
    let chat = |name: &str, id: &str, meta: Value| {
        let mut meta = meta;
        meta["sessionId"] = json!(id);
        meta["startTime"] = json!("2026-01-05T10:00:00Z");
        let records = [
            gemini_prompt(&format!("{id}-u"), "what is here?"),
            gemini_answer(&format!("{id}-a"), "code"),
        ];
        std::fs::write(chats.join(name), gemini_jsonl(meta, &records)).unwrap();
    };
    // A chat of projA, imported from one of its subfolders; one of a project not on this machine;
    // a subagent whose workspace directories name projB.
    chat(
        "session-a.jsonl",
        "g-a",
        json!({"projectHash": project_hash(&proj_a)}),
    );
    let gone = Path::new("/nowhere/project");
    chat(
        "session-gone.jsonl",
        "g-gone",
        json!({"projectHash": project_hash(gone)}),
    );
    chat(
        "parent-elsewhere/g-sub.jsonl",
        "g-sub",
        json!({"projectHash": project_hash(&proj_b), "kind": "subagent", "directories": [proj_b]}),
    );
    let read = import::read_path(&chats).unwrap();
    let sub = read
        .sessions
        .iter()
        .find(|s| s.session_id == "g-sub")
        .unwrap();
    assert_eq!(sub.cwd.as_deref(), Some(proj_b.as_path()));

    let options = ImportOptions {
        fallback_dir: Some(proj_a.join("src")),
        ..finishing()
    };
    let summary = import(&store, &chats, &options);
    assert_eq!(summary.sessions_new, 3, "{:?}", summary.skipped_sessions);
    assert_eq!(store.session("g-a").unwrap().root, proj_a);
    assert_eq!(store.session("g-sub").unwrap().root, proj_b);
    // No directory has the hash: the fallback, as before, but the report says so.
    assert_eq!(store.session("g-gone").unwrap().root, proj_a.join("src"));
    let warnings: Vec<&import::Issue> = summary
        .report
        .warning_list
        .iter()
        .filter(|w| w.reason.contains(&project_hash(gone)))
        .collect();
    assert_eq!(warnings.len(), 1, "{:?}", summary.report.warning_list);
    assert!(warnings[0].path.ends_with("session-gone.jsonl"));
    assert_eq!(summary.report.warnings, 1);
}

#[test]
fn a_swe_agent_demonstration_is_never_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, store) = open(dir.path());
    let traj = evaldata().join("swe-agent-trajectories/pydicom__pydicom-1458.traj");
    let options = ImportOptions {
        fallback_dir: Some(dir.path().to_path_buf()),
        ..finishing()
    };
    import(&store, &traj, &options);
    let stored = store.session("pydicom__pydicom-1458").unwrap();
    let intent = stored.first_intent.unwrap();
    assert!(intent.starts_with("We're currently solving"), "{intent}");
    let episodes = store.session_episodes(&stored.id).unwrap();
    let per_kind = |kind| episodes.iter().filter(|h| h.kind == kind).count();
    // The demonstration is one context episode; every action is a tool call with its result,
    // whose intent is the task; no observation is a prompt.
    assert_eq!(per_kind(EpisodeKind::Context), 1);
    assert_eq!(per_kind(EpisodeKind::ToolCall), 12);
    assert_eq!(per_kind(EpisodeKind::UserTurn), 0);
    let open = episodes
        .iter()
        .find(|h| h.tool_name.as_deref() == Some("open"))
        .unwrap();
    assert_eq!(open.status, EpisodeStatus::Ok);
    assert_eq!(
        open.summary,
        "open(pydicom/pixel_data_handlers/numpy_handler.py)"
    );
    let content = store.episode(&stored.workspace_id, &open.id).unwrap();
    assert!(
        content
            .content
            .starts_with("# User intent\nWe're currently solving"),
        "{}",
        &content.content[..200]
    );
    let paths: Vec<&str> = content.paths.iter().map(|p| p.given.as_str()).collect();
    assert_eq!(paths, ["pydicom/pixel_data_handlers/numpy_handler.py"]);
}
