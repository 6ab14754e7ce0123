//! The chunker and store on real Claude Code logs from `evaldata`: every tool call becomes
//! exactly one episode holding its exact result, and re-recording adds nothing.
//!
//! The reader here is a deliberately small test fixture (message content → parts); the real
//! importer, with usage de-duplication and subagent handling, lives in `import`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use codeoid_core::canonical::{
    EpisodeKind, Part, Role, ToolCall, ToolResult, ToolResultPart, Turn,
};
use codeoid_core::store::{NewSession, Workspace};
use serde_json::Value;

use super::{evaldata, temp_store};

fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            jsonl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

/// Text of a tool_result `content`: a string, or text blocks joined by newlines.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// One turn per user/assistant line; `None` for other lines.
fn turn_of(line: &Value) -> Option<Turn> {
    let role = match line.get("type")?.as_str()? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let message = line.get("message")?;
    let mut parts = Vec::new();
    match message.get("content")? {
        Value::String(s) => parts.push(Part::Text { text: s.clone() }),
        Value::Array(blocks) => {
            for b in blocks {
                match (role, b.get("type").and_then(Value::as_str)) {
                    (_, Some("text")) => parts.push(Part::Text {
                        text: b.get("text")?.as_str()?.to_owned(),
                    }),
                    (Role::Assistant, Some("tool_use")) => parts.push(Part::ToolCall(ToolCall {
                        id: b.get("id")?.as_str()?.to_owned(),
                        provider_id: None,
                        name: b.get("name")?.as_str()?.to_owned(),
                        input: b.get("input").cloned().unwrap_or(Value::Null),
                    })),
                    (Role::User, Some("tool_result")) => parts.push(Part::ToolResult(ToolResult {
                        call_id: b.get("tool_use_id")?.as_str()?.to_owned(),
                        parts: vec![ToolResultPart::Text {
                            text: result_text(b.get("content").unwrap_or(&Value::Null)),
                        }],
                        is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                    })),
                    _ => {}
                }
            }
        }
        _ => return None,
    }
    let mut turn = Turn::new(role, parts);
    turn.id = line.get("uuid").and_then(Value::as_str).map(str::to_owned);
    turn.timestamp = line
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|t| t.parse().ok());
    if line.get("isSidechain").and_then(Value::as_bool) == Some(true) {
        turn.meta.insert("sidechain".into(), Value::Bool(true));
    }
    if line.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
        turn.meta
            .insert("compaction_summary".into(), Value::Bool(true));
    }
    Some(turn)
}

/// Every Claude Code log of `evaldata`, sorted by path, with its turns as [`turn_of`] reads them.
fn evaldata_logs() -> Vec<(PathBuf, Vec<Turn>)> {
    let mut files = Vec::new();
    jsonl_files(&evaldata().join("claude-code-sessions"), &mut files);
    files.sort();
    assert!(files.len() >= 10, "evaldata missing: {files:?}");
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            let turns = text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter_map(|v| turn_of(&v))
                .collect();
            (file, turns)
        })
        .collect()
}

#[test]
fn every_real_tool_call_becomes_one_episode_with_its_exact_result() {
    let (_dir, store) = temp_store();
    let ws = Workspace::resolve("/nonexistent/evaldata-project").unwrap();
    let mut total_calls = 0;
    for (n, (file, turns)) in evaldata_logs().iter().enumerate() {
        let mut calls: HashMap<String, String> = HashMap::new();
        let mut results: HashMap<String, String> = HashMap::new();
        for turn in turns {
            for part in &turn.parts {
                match part {
                    Part::ToolCall(c) => {
                        calls.insert(c.id.clone(), c.name.clone());
                    }
                    Part::ToolResult(r) => {
                        if let Some(ToolResultPart::Text { text }) = r.parts.first() {
                            results.insert(r.call_id.clone(), text.clone());
                        }
                    }
                    _ => {}
                }
            }
        }
        total_calls += calls.len();
        let s = store
            .create_session(
                &ws,
                NewSession {
                    id: Some(format!("log-{n}")),
                    ..NewSession::default()
                },
            )
            .unwrap();
        store.record_turns(&s.id, turns).unwrap();
        store.finish_session(&s.id).unwrap();
        let episodes = store.session_episodes(&s.id).unwrap();
        let mut seen = HashSet::new();
        for header in episodes.iter().filter(|h| h.kind == EpisodeKind::ToolCall) {
            let call_id = header.call_id.clone().unwrap();
            let stored = store.episode(ws.id(), &header.id).unwrap();
            if let Some(name) = calls.get(&call_id) {
                assert!(
                    seen.insert(call_id.clone()),
                    "{}: {call_id} twice",
                    file.display()
                );
                assert_eq!(header.tool_name.as_deref(), Some(name.as_str()));
            }
            if let Some(output) = results.get(&call_id) {
                assert!(
                    stored.content.ends_with(output.as_str()),
                    "{}: result of {call_id} not stored verbatim",
                    file.display()
                );
            }
        }
        let missing: Vec<_> = calls.keys().filter(|id| !seen.contains(*id)).collect();
        assert!(
            missing.is_empty(),
            "{}: calls without an episode: {missing:?}",
            file.display()
        );
        // Re-recording the same log adds nothing.
        let again = store.record_turns(&s.id, turns).unwrap();
        assert!(again.iter().all(|r| r.duplicate));
        assert_eq!(store.session_episodes(&s.id).unwrap().len(), episodes.len());
    }
    assert!(total_calls > 700, "{total_calls} tool calls in evaldata");
    store.integrity_check().unwrap();
}

/// Every row a session's turns left in the store file, in order, as text: turns (JSON and
/// chunker snapshots), episodes with their content and paths, and the FTS matches of words
/// taken from the episodes (the index is contentless, so it is compared by what it finds).
fn rows_of(db: &Path, session_id: &str, words: &[String]) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut rows = Vec::new();
    let mut turns = conn
        .prepare("SELECT seq, turn_id, role, json, chunker_before FROM turns WHERE session_id = ?1 ORDER BY seq")
        .unwrap();
    let found = turns
        .query_map([session_id], |r| {
            Ok(format!(
                "turn {} {} {} {} {:?}",
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?
            ))
        })
        .unwrap();
    rows.extend(found.map(Result::unwrap));
    let mut episodes = conn
        .prepare(
            "SELECT e.turn_seq, e.kind, e.tool_name, e.call_id, e.status, e.summary,
                    e.token_estimate, e.origin_seq, c.content,
                    (SELECT group_concat(p.ord || ' ' || p.given || ' ' || p.relative || ' ' || p.access, '; ')
                     FROM episode_paths p WHERE p.episode_pk = e.pk)
             FROM episodes e JOIN episode_contents c ON c.episode_pk = e.pk
             WHERE e.session_id = ?1 ORDER BY e.pk",
        )
        .unwrap();
    let found = episodes
        .query_map([session_id], |r| {
            Ok(format!(
                "episode {} {} {:?} {:?} {} {} {} {:?} {} {:?}",
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, i64>(6)?,
                r.get::<_, Option<i64>>(7)?,
                r.get::<_, String>(8)?,
                r.get::<_, Option<String>>(9)?
            ))
        })
        .unwrap();
    rows.extend(found.map(Result::unwrap));
    let mut matches = conn
        .prepare(
            "SELECT group_concat(hit, ' ') FROM (
                 SELECT e.turn_seq || ':' || e.kind || ':' || round(bm25(episodes_fts), 9) AS hit
                 FROM episodes_fts JOIN episodes e ON e.pk = episodes_fts.rowid
                 WHERE episodes_fts MATCH ?1 AND e.session_id = ?2 ORDER BY e.pk)",
        )
        .unwrap();
    for word in words {
        let quoted = format!("\"{word}\"");
        let found: Option<String> = matches
            .query_row(rusqlite::params![quoted, session_id], |r| r.get(0))
            .unwrap();
        rows.push(format!("match {word}: {found:?}"));
    }
    rows
}

#[test]
fn a_batch_stores_exactly_what_one_turn_at_a_time_stores() {
    // Batches of 64 turns and more are prepared on a second thread; the rows must not depend on
    // it. Every log is recorded both ways: as one batch, and one `record_turn` at a time.
    let (dir, store) = temp_store();
    let db = dir.path().join("codeoid.db");
    let ws = Workspace::resolve("/nonexistent/evaldata-project").unwrap();
    let mut batched_turns = 0;
    for (n, (file, turns)) in evaldata_logs().iter().enumerate() {
        if turns.len() >= 64 {
            batched_turns += turns.len();
        }
        let session = |name: &str| {
            store
                .create_session(
                    &ws,
                    NewSession {
                        id: Some(format!("{name}-{n}")),
                        ..NewSession::default()
                    },
                )
                .unwrap()
        };
        let (batch, single) = (session("batch"), session("single"));
        let recorded = store.record_turns(&batch.id, turns).unwrap();
        for turn in turns {
            store.record_turn(&single.id, turn).unwrap();
        }
        let finished = (
            store.finish_session(&batch.id).unwrap().len(),
            store.finish_session(&single.id).unwrap().len(),
        );
        assert_eq!(finished.0, finished.1, "{}", file.display());
        let words: Vec<String> = store
            .session_episodes(&batch.id)
            .unwrap()
            .iter()
            .flat_map(|h| {
                h.summary
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| w.len() > 3)
                    .map(str::to_lowercase)
                    .take(2)
                    .collect::<Vec<_>>()
            })
            .take(40)
            .collect();
        let (a, b) = (
            rows_of(&db, &batch.id, &words),
            rows_of(&db, &single.id, &words),
        );
        assert_eq!(a.len(), b.len(), "{}", file.display());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y, "{}", file.display());
        }
        assert!(
            a.iter()
                .any(|r| r.starts_with("match") && !r.ends_with("None")),
            "{}: no word of the summaries found anything",
            file.display()
        );
        let duplicates = recorded.iter().filter(|r| r.duplicate).count();
        assert_eq!(
            duplicates,
            turns.len() - a.iter().filter(|r| r.starts_with("turn ")).count(),
            "{}",
            file.display()
        );
    }
    assert!(
        batched_turns > 500,
        "only {batched_turns} turns in large batches"
    );
    store.integrity_check().unwrap();
}
