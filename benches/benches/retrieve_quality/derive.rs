//! Deriving the queries mechanically from the logs: re-reads (by prompt and by intent), error
//! lines, and the off-topic prompts of the other harnesses.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use codeoid_benches::real_sessions::workspace;
use codeoid_core::canonical::{EpisodeKind, Part, PathAccess, Role, ToolResultPart};
use codeoid_core::import::ImportedSession;
use codeoid_core::store::{EpisodeHeader, Store, StoredEpisode};

use crate::query::Query;

/// Longest query kept (characters); a pasted log is cut.
const MAX_QUERY_CHARS: usize = 2_000;
/// An error line found in more episodes than this does not identify one.
const MAX_ERROR_MATCHES: usize = 5;

/// The user's own words in a turn: its text parts, unless it is harness markup (slash
/// commands, caveats, hook output start with `<`) or a compaction summary.
fn user_intent(parts: &[Part], meta_compaction: bool) -> Option<String> {
    if meta_compaction {
        return None;
    }
    let text: Vec<&str> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let text = text.join("\n");
    let text = text.trim();
    if text.starts_with('<') || text.split_whitespace().count() < 3 {
        return None;
    }
    Some(text.chars().take(MAX_QUERY_CHARS).collect())
}

/// The first line of a failed result that names an error, cut to 200 characters.
fn error_line(parts: &[ToolResultPart]) -> Option<String> {
    parts
        .iter()
        .filter_map(|p| match p {
            ToolResultPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .flat_map(str::lines)
        .map(|l| {
            l.trim()
                .trim_start_matches("<tool_use_error>")
                .trim_end_matches("</tool_use_error>")
                .trim()
        })
        .find(|l| l.to_ascii_lowercase().contains("error") && l.split_whitespace().count() >= 3)
        .map(|l| l.chars().take(200).collect())
}

/// The off-topic queries: every user prompt of the other harnesses' logs in evaldata, as
/// [`user_intent`] reads it, once.
pub(crate) fn off_topic(end: DateTime<Utc>) -> Vec<Query> {
    let root = codeoid_benches::real_sessions::evaldata();
    let mut queries: Vec<Query> = Vec::new();
    for dir in ["swe-agent-trajectories", "codex-gemini-fixtures"] {
        let import = codeoid_core::import::read_path(&root.join(dir)).unwrap();
        for session in import.sessions {
            for turn in session.turns.iter().filter(|t| t.role == Role::User) {
                let Some(text) = user_intent(&turn.parts, false) else {
                    continue;
                };
                if queries.iter().all(|q| q.text != text) {
                    queries.push(Query {
                        family: "off-topic",
                        text,
                        relevant: HashSet::new(),
                        as_of: end,
                        until: None,
                    });
                }
            }
        }
    }
    queries
}

pub(crate) fn derive(store: &Store, sessions: &[ImportedSession], ids: &[String]) -> Vec<Query> {
    let ws = workspace();
    // Every episode, whole, in time order.
    let mut episodes: Vec<StoredEpisode> = Vec::new();
    let mut by_call: HashMap<(String, String), usize> = HashMap::new();
    for id in ids {
        for header in store.session_episodes(id).unwrap() {
            let episode = store.episode(ws.id(), &header.id).unwrap();
            if let Some(call) = &header.call_id {
                by_call.insert((id.clone(), call.clone()), episodes.len());
            }
            episodes.push(episode);
        }
    }
    let end = episodes.iter().map(|e| e.header.created_at).max().unwrap();
    let reads_of = |e: &StoredEpisode| -> Vec<String> {
        e.paths
            .iter()
            .filter(|p| p.access == PathAccess::Read)
            .map(|p| p.relative.clone())
            .collect()
    };
    let earlier_readers = |path: &str, before: &EpisodeHeader| -> Vec<String> {
        episodes
            .iter()
            .filter(|e| e.header.created_at < before.created_at)
            .filter(|e| reads_of(e).iter().any(|p| p == path))
            .map(|e| e.header.id.clone())
            .collect()
    };

    let mut queries = Vec::new();
    let mut seen_text: HashSet<String> = HashSet::new();
    for (session, id) in sessions.iter().zip(ids) {
        // The open prompt and the re-read it led to.
        let mut open: Option<Query> = None;
        // The assistant's words since the open prompt.
        let mut intent = String::new();
        // Tool name of each call, by call id.
        let mut tools: HashMap<String, String> = HashMap::new();
        let close =
            |open: &mut Option<Query>, queries: &mut Vec<Query>, seen: &mut HashSet<String>| {
                if let Some(q) = open.take() {
                    if !q.relevant.is_empty() && seen.insert(format!("reread:{}", q.text)) {
                        queries.push(q);
                    }
                }
            };
        for turn in &session.turns {
            if turn.role == Role::User {
                let compaction =
                    turn.meta.get("compaction_summary") == Some(&serde_json::Value::Bool(true));
                if let Some(text) = user_intent(&turn.parts, compaction) {
                    close(&mut open, &mut queries, &mut seen_text);
                    intent.clear();
                    open = Some(Query {
                        family: "reread (prompt)",
                        text,
                        relevant: HashSet::new(),
                        as_of: end,
                        until: None,
                    });
                }
                for part in &turn.parts {
                    let Part::ToolResult(result) = part else {
                        continue;
                    };
                    let bash = tools.get(&result.call_id).is_some_and(|n| n == "Bash");
                    if !result.is_error && !bash {
                        continue;
                    }
                    let Some(line) = error_line(&result.parts) else {
                        continue;
                    };
                    if !seen_text.insert(format!("error:{line}")) {
                        continue;
                    }
                    let relevant: HashSet<String> = episodes
                        .iter()
                        .filter(|e| {
                            // A hook's report of the error (a `context` episode) is where it
                            // was reported too.
                            matches!(
                                e.header.kind,
                                EpisodeKind::ToolCall | EpisodeKind::Error | EpisodeKind::Context
                            )
                        })
                        .filter(|e| e.content.contains(&line))
                        .map(|e| e.header.id.clone())
                        .collect();
                    if !relevant.is_empty() && relevant.len() <= MAX_ERROR_MATCHES {
                        queries.push(Query {
                            family: "error",
                            text: line,
                            relevant,
                            as_of: end,
                            until: None,
                        });
                    }
                }
            }
            let Some(q) = open.as_mut() else {
                continue;
            };
            for part in &turn.parts {
                if let Part::Text { text } = part {
                    if turn.role == Role::Assistant {
                        intent.push_str(text);
                        intent.push('\n');
                    }
                    continue;
                }
                let Part::ToolCall(call) = part else {
                    continue;
                };
                tools.insert(call.id.clone(), call.name.clone());
                let Some(&at) = by_call.get(&(id.clone(), call.id.clone())) else {
                    continue;
                };
                let episode = &episodes[at];
                for path in reads_of(episode) {
                    let earlier = earlier_readers(&path, &episode.header);
                    if earlier.is_empty() {
                        continue;
                    }
                    if q.until.is_none() {
                        // Asked at the first re-read: what memory held just before it.
                        q.until = Some(episode.header.created_at);
                        q.as_of = episode.header.created_at;
                    }
                    let words = intent.trim();
                    if words.split_whitespace().count() >= 3 {
                        let text: String = words.chars().take(MAX_QUERY_CHARS).collect();
                        if seen_text.insert(format!("intent:{text}")) {
                            queries.push(Query {
                                family: "reread (intent)",
                                text,
                                relevant: earlier.iter().cloned().collect(),
                                as_of: episode.header.created_at,
                                until: Some(episode.header.created_at),
                            });
                        }
                    }
                    // Only reads memory could have returned then.
                    let cutoff = q.until.unwrap();
                    q.relevant.extend(earlier.into_iter().filter(|e| {
                        episodes
                            .iter()
                            .any(|x| &x.header.id == e && x.header.created_at < cutoff)
                    }));
                }
            }
        }
        close(&mut open, &mut queries, &mut seen_text);
    }
    queries
}
