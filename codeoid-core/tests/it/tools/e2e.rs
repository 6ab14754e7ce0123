//! End to end on whole real sessions from `evaldata`, imported with the real importer: a live
//! session calls the four tools as a model would. A Claude Code session that set up a TODO app
//! project (21 tool calls, its Task subagents) is embedded with the real model for `recall` and
//! `recall_file`; a larger one from the same project (160+ tool calls) is walked with `timeline`
//! while new episodes arrive and read back with `get_episode`, lexically (embedding it in an
//! unoptimized test build takes minutes). Expected answers come from the canonical turns and the
//! SQLite file directly, not from the code under test.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use codeoid_core::canonical::{Part, ToolResultPart, Turn};
use codeoid_core::import;
use codeoid_core::store::{NewSession, Store, Workspace, WorkspaceSource};
use codeoid_core::{Memory, MemoryConfig};
use serde_json::{Value, json};

use crate::retrieve::model_config;
use crate::support::evaldata;

/// 21 tool calls: commands discovered, package.json read twice, CLAUDE.md edited twice.
const SMALL_LOG: &str =
    "claude-code-sessions/claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";
/// 160+ tool calls building the app.
const LARGE_LOG: &str =
    "claude-code-sessions/claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
const ROOT: &str = "/path/to/Demo";

struct Imported {
    _dir: tempfile::TempDir,
    memory: Memory,
    /// Every imported session (the conversation and its subagents).
    sessions: Vec<String>,
    /// Their turns, session after session.
    turns: Vec<Turn>,
    db: std::path::PathBuf,
}

fn import_session(log: &str, config: MemoryConfig) -> Imported {
    let import = import::read_path(&evaldata().join(log)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("codeoid.db");
    let store = Arc::new(Store::open(&db).unwrap());
    let workspace = Workspace::from_parts("", ROOT, ROOT, WorkspaceSource::Directory);
    let memory = Memory::for_workspace(store, workspace, config).unwrap();
    let mut sessions = Vec::new();
    let mut turns = Vec::new();
    for session in &import.sessions {
        memory
            .start_session(NewSession {
                id: Some(session.session_id.clone()),
                created_at: session.started_at,
                ..NewSession::default()
            })
            .unwrap();
        memory
            .record_turns(&session.session_id, &session.turns)
            .unwrap();
        memory.finish_session(&session.session_id).unwrap();
        sessions.push(session.session_id.clone());
        turns.extend(session.turns.iter().cloned());
    }
    Imported {
        _dir: dir,
        memory,
        sessions,
        turns,
        db,
    }
}

/// `(call id, tool name, input)` of every tool call, in order.
fn calls(turns: &[Turn]) -> Vec<(String, String, Value)> {
    turns
        .iter()
        .flat_map(|t| t.parts.iter())
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some((c.id.clone(), c.name.clone(), c.input.clone())),
            _ => None,
        })
        .collect()
}

/// The text of the result of call `id`.
fn result_text(turns: &[Turn], id: &str) -> String {
    turns
        .iter()
        .flat_map(|t| t.parts.iter())
        .find_map(|p| match p {
            Part::ToolResult(r) if r.call_id == id => Some(
                r.parts
                    .iter()
                    .filter_map(|p| match p {
                        ToolResultPart::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        })
        .unwrap()
}

/// Every imported episode, as headers.
fn imported_episodes(imported: &Imported) -> Vec<codeoid_core::store::EpisodeHeader> {
    imported
        .sessions
        .iter()
        .flat_map(|s| imported.memory.store().session_episodes(s).unwrap())
        .collect()
}

/// Imported episode ids by tool call id.
fn episodes_by_call(imported: &Imported) -> HashMap<String, String> {
    imported_episodes(imported)
        .into_iter()
        .filter_map(|h| h.call_id.map(|c| (c, h.id)))
        .collect()
}

fn tool(memory: &Memory, session: &str, name: &str, args: Value) -> String {
    let out = memory.call_tool(Some(session), name, &args.to_string());
    assert!(!out.is_error, "{name} {args}: {}", out.text);
    out.text
}

#[test]
fn recall_and_recall_file_over_a_whole_imported_session() {
    let imported = import_session(SMALL_LOG, model_config());
    let memory = &imported.memory;
    memory.flush().unwrap();
    assert!(memory.warnings().is_empty(), "{:?}", memory.warnings());
    assert_eq!(
        memory.embedding_status().indexed_episodes,
        imported_episodes(&imported).len()
    );
    let live = memory
        .start_session(NewSession {
            name: Some("continuing".into()),
            ..NewSession::default()
        })
        .unwrap()
        .id;
    let by_call = episodes_by_call(&imported);
    let calls = calls(&imported.turns);
    assert!(
        calls.len() >= 21,
        "{} calls in {} sessions",
        calls.len(),
        imported.sessions.len()
    );

    // recall: the episodes that edited a file, found by its path and by what it is about.
    let target = "CLAUDE.md";
    let edits: HashSet<&String> = calls
        .iter()
        .filter(|(_, name, input)| {
            matches!(name.as_str(), "Edit" | "MultiEdit" | "Write")
                && input["file_path"].as_str() == Some(&format!("{ROOT}/{target}"))
        })
        .map(|(id, _, _)| &by_call[id])
        .collect();
    assert_eq!(edits.len(), 2, "{edits:?}");
    for query in [
        format!("changes to {ROOT}/{target}"),
        "where did we edit the project overview in CLAUDE.md".to_owned(),
    ] {
        let text = tool(memory, &live, "recall", json!({"query": query}));
        let found: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("- episode_id: "))
            .collect();
        assert_eq!(found.len(), 6, "{text}");
        assert!(
            found.iter().any(|id| edits.contains(&id.to_string())),
            "{query}: {found:?} has none of {edits:?}"
        );
        assert!(text.contains(" — prior session #"), "{text}");
        for session in &imported.sessions {
            assert!(
                !text.contains(session.as_str()),
                "raw session ids are never shown"
            );
        }
    }

    // recall_file: the last read of a file, in either form.
    let file = "todo-app/package.json";
    let (last_read, _, _) = calls
        .iter()
        .rev()
        .find(|(_, name, input)| {
            name == "Read" && input["file_path"].as_str() == Some(&format!("{ROOT}/{file}"))
        })
        .unwrap();
    let read_text = result_text(&imported.turns, last_read);
    for path in [file.to_owned(), format!("{ROOT}/{file}")] {
        let text = tool(memory, &live, "recall_file", json!({"path": path}));
        assert!(
            text.contains(&format!("\n- episode_id: {}\n", by_call[last_read])),
            "{text}"
        );
        assert!(
            text.contains(&format!("\n- file: {file} (read as {ROOT}/{file})\n")),
            "{text}"
        );
        assert!(
            text.contains("\n- on disk: unknown (no content hash"),
            "{text}"
        );
        for line in read_text.lines().take(5) {
            assert!(text.contains(line), "{line:?} missing from\n{text}");
        }
    }
}

/// Every imported episode through `get_episode` (its pages followed) equals the bytes in
/// SQLite.
fn assert_get_episode_is_exact(imported: &Imported, memory: &Memory, live: &str) {
    let conn = rusqlite::Connection::open(&imported.db).unwrap();
    let mut stored: HashMap<String, String> = HashMap::new();
    let mut stmt = conn
        .prepare(
            "SELECT e.id, c.content FROM episodes e JOIN episode_contents c ON c.episode_pk = e.pk",
        )
        .unwrap();
    for row in stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
    {
        let (id, content) = row.unwrap();
        stored.insert(id, content);
    }
    let episodes = imported_episodes(imported);
    assert!(episodes.len() > 150);
    let mut paged = 0;
    for id in episodes.iter().map(|h| &h.id) {
        let pages = super::pages::walk_in(memory, Some(live), id);
        paged += usize::from(pages.len() > 1);
        for page in &pages {
            assert!(
                page.header.contains(&format!("\n- episode_id: {id}")),
                "{}",
                page.header
            );
        }
        let body: String = pages.iter().map(|p| p.body.as_str()).collect();
        assert_eq!(body.as_bytes(), stored[id].as_bytes(), "{id}");
    }
    assert!(paged > 0, "some real episodes are longer than a page");
}

#[test]
fn timeline_walks_every_episode_once_while_new_ones_arrive_and_get_episode_is_exact() {
    let imported = import_session(LARGE_LOG, crate::tools::lexical_config());
    let before: HashSet<String> = imported_episodes(&imported)
        .into_iter()
        .map(|h| h.id)
        .collect();
    let probe = imported
        .memory
        .start_session(NewSession::default())
        .unwrap()
        .id;
    assert_get_episode_is_exact(&imported, &imported.memory, &probe);
    let memory = Arc::new(imported.memory);
    let all_before = memory
        .store()
        .workspace_stats(memory.workspace().id())
        .unwrap()
        .episodes as usize;
    let live = memory.start_session(NewSession::default()).unwrap().id;
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (memory, live) = (Arc::clone(&memory), live.clone());
        let (stop, written) = (Arc::clone(&stop), Arc::clone(&written));
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                memory
                    .record_turn(&live, &Turn::user_text(format!("new prompt {i}")))
                    .unwrap();
                i += 1;
                written.store(i, Ordering::SeqCst);
            }
        })
    };
    // The walk starts once the writer is going, and pages keep overlapping new writes.
    while written.load(Ordering::SeqCst) < 3 {
        std::thread::yield_now();
    }
    let at_start = written.load(Ordering::SeqCst);
    let mut seen: Vec<String> = Vec::new();
    let mut args = json!({"limit": 7});
    let mut pages = 0;
    loop {
        let text = tool(&memory, &live, "timeline", args.clone());
        pages += 1;
        let seen_writes = written.load(Ordering::SeqCst);
        while written.load(Ordering::SeqCst) == seen_writes {
            std::thread::yield_now();
        }
        for line in text.lines().filter(|l| l.starts_with("- [")) {
            let id = line
                .rsplit_once("(episode_id: ")
                .map(|(_, rest)| rest.trim_end_matches(')'))
                .unwrap();
            seen.push(id.to_owned());
        }
        match text
            .lines()
            .find_map(|l| l.strip_prefix("next page: timeline "))
        {
            Some(next) => args = serde_json::from_str(next).unwrap(),
            None => {
                assert!(text.ends_with("(end of timeline)\n"), "{text}");
                break;
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    assert!(
        written.load(Ordering::SeqCst) >= at_start + pages,
        "episodes arrived during the walk"
    );
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "an episode was listed twice");
    for id in &before {
        assert!(unique.contains(id), "{id} was skipped");
    }
    // Everything that existed when the walk started, plus at most the first page's newcomers.
    assert!(seen.len() >= all_before, "{} < {all_before}", seen.len());
    assert!(pages > all_before / 7, "{pages} pages");
}

/// A spotter session that read windows of files (`offset`/`limit`) 14 times.
const WINDOWED_READS_LOG: &str =
    "claude-code-sessions/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";

#[test]
fn recall_file_flags_every_real_read_of_part_of_a_file() {
    let imported = import_session(WINDOWED_READS_LOG, super::lexical_config());
    // Every Read call's id, and the files they read.
    let (reads, paths): (HashSet<String>, HashSet<String>) = calls(&imported.turns)
        .into_iter()
        .filter(|(_, name, _)| name == "Read")
        .filter_map(|(id, _, input)| Some((id, input["file_path"].as_str()?.to_owned())))
        .unzip();
    // The window Claude Code recorded for each read, read straight from the imported turns.
    let windows: HashMap<&str, &Value> = imported
        .turns
        .iter()
        .filter_map(|t| t.meta.get("tool_use_results")?.as_object())
        .flat_map(|records| records.iter())
        .filter_map(|(id, record)| Some((id.as_str(), record.get("file")?)))
        .collect();
    let (mut partial, mut whole) = (0, 0);
    for path in &paths {
        let found = imported.memory.recall_file(path).unwrap().unwrap();
        let call = found.episode.header.call_id.as_deref().unwrap();
        if !reads.contains(call) {
            continue; // the latest access was another reading tool
        }
        let file = windows[call];
        let number = |key: &str| file[key].as_u64().unwrap();
        let (start, lines, total) = (
            number("startLine"),
            number("numLines"),
            number("totalLines"),
        );
        let expected = (start > 1 || lines < total).then(|| {
            format!(
                "this read holds lines {start}–{} of {total} only; read the file for the rest",
                start + lines - 1
            )
        });
        assert_eq!(found.part.map(|p| p.to_string()), expected, "{path}");
        if expected.is_some() {
            partial += 1;
        } else {
            whole += 1;
        }
    }
    assert!(
        partial >= 3 && whole >= 3,
        "{partial} partial, {whole} whole"
    );
}
