//! Importing real session logs: every file of the evaluation data imports, counts match an
//! independent count, chosen turns match their source lines byte for byte, bad input gives
//! clear errors or reported skips, and no input makes an importer panic.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{evaldata, tool_calls, tool_results};
use codeoid_core::ErrorKind;
use codeoid_core::canonical::{Part, Role, ToolResultPart, Turn};
use codeoid_core::import::{
    self, Import, ImportedSession, LogFormat, Progress, SessionKind, TurnStats,
};
use serde_json::Value;

fn claude_dir() -> PathBuf {
    evaldata().join("claude-code-sessions")
}

fn fixture(rel: &str) -> PathBuf {
    evaldata().join(rel)
}

fn read(rel: &str) -> Import {
    import::read_path(&fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {}", e.full_message()))
}

/// The source line `number` (1-based) of `path`, parsed.
fn source_line(path: &Path, number: usize) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let line = text.lines().nth(number - 1).unwrap();
    serde_json::from_str(line).unwrap()
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(jsonl_files(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Invariants every imported session must hold.
fn check_invariants(session: &ImportedSession) {
    let mut ids = HashSet::new();
    assert!(!session.session_id.is_empty());
    for turn in &session.turns {
        turn.validate()
            .unwrap_or_else(|e| panic!("{}: {}", session.session_id, e.message()));
        let id = turn.id.clone().expect("every imported turn has an id");
        assert!(
            ids.insert(id.clone()),
            "duplicate turn id {id} in {}",
            session.session_id
        );
        assert_eq!(turn.meta["source"], session.format.as_str());
        let primary = session.kind == SessionKind::Main;
        for call in turn.usage.iter().flat_map(|u| &u.calls) {
            assert_eq!(
                call.primary, primary,
                "usage flag in {}",
                session.session_id
            );
        }
        if !primary {
            assert_eq!(turn.meta["sidechain"], true);
        }
    }
}

fn result_texts(turn: &Turn) -> Vec<(&str, String)> {
    turn.parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolResult(r) => Some((
                r.call_id.as_str(),
                r.parts
                    .iter()
                    .filter_map(|p| match p {
                        ToolResultPart::Text { text } => Some(text.as_str()),
                        ToolResultPart::Image(_) => None,
                    })
                    .collect::<Vec<_>>()
                    .join(""),
            )),
            _ => None,
        })
        .collect()
}

fn find_turn<'a>(import: &'a Import, id: &str) -> (&'a ImportedSession, &'a Turn) {
    import
        .sessions
        .iter()
        .find_map(|s| {
            s.turns
                .iter()
                .find(|t| t.id.as_deref() == Some(id))
                .map(|t| (s, t))
        })
        .unwrap_or_else(|| panic!("no turn {id}"))
}

// ---------------------------------------------------------------- Claude Code, real logs

#[test]
fn every_claude_code_log_matches_an_independent_count() {
    let files = jsonl_files(&claude_dir());
    assert_eq!(files.len(), 21, "evaluation data changed");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/claude_code_counts.py");
    let output = Command::new("python3")
        .arg(&script)
        .args(&files)
        .output()
        .expect("python3 runs the independent counter");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected: BTreeMap<String, BTreeMap<String, u64>> =
        serde_json::from_slice(&output.stdout).unwrap();

    let mut malformed_total = 0;
    for file in &files {
        let import = import::read_path(file)
            .unwrap_or_else(|e| panic!("{} does not import: {}", file.display(), e.message()));
        let want = &expected[&file.display().to_string()];
        let mut got = TurnStats::default();
        for session in &import.sessions {
            check_invariants(session);
            assert_eq!(session.format, LogFormat::ClaudeCode);
            got.merge(&session.stats());
        }
        let report = &import.report;
        let actual = BTreeMap::from([
            ("sessions", import.sessions.len() as u64),
            ("user_turns", got.user_turns),
            ("assistant_turns", got.assistant_turns),
            ("tool_calls", got.tool_calls),
            ("tool_results", got.tool_results),
            ("tool_errors", got.tool_errors),
            ("usage_calls", got.usage_calls),
            ("input_tokens", got.input_tokens),
            ("output_tokens", got.output_tokens),
            ("cache_read_tokens", got.cache_read_tokens),
            ("cache_creation_tokens", got.cache_creation_tokens),
            ("malformed_lines", report.malformed_lines_skipped),
            ("duplicate_lines", report.duplicate_lines_dropped),
            ("non_message_lines", report.non_message_lines_ignored),
            ("repeated_usage", report.repeated_usage_merged),
        ]);
        for (key, value) in actual {
            assert_eq!(value, want[key], "{key} of {}", file.display());
        }
        assert_eq!(report.turns, got, "report totals agree with the sessions");
        malformed_total += report.malformed_lines_skipped;
    }
    // Only the deliberately broken fixture has malformed lines.
    assert_eq!(malformed_total, 7);
}

#[test]
fn a_whole_projects_folder_imports_with_subagents_linked() {
    let import = import::read_path(&claude_dir().join("spotter")).unwrap();
    let report = &import.report;
    assert_eq!(report.files, 12);
    assert!(
        report.skipped_files.is_empty(),
        "{:?}",
        report.skipped_files
    );
    assert_eq!(report.malformed_lines_skipped, 0);
    assert_eq!(import.sessions.len(), 12);
    for session in &import.sessions {
        check_invariants(session);
    }
    let main = import
        .sessions
        .iter()
        .find(|s| s.session_id == "4d5611e5-241a-462a-8d15-5122611a9569")
        .unwrap();
    assert_eq!(main.kind, SessionKind::Main);
    assert_eq!(
        main.cwd.as_deref(),
        Some(Path::new(
            "/home/USER/projects/spotter-worktrees/spotter-dov"
        ))
    );
    assert_eq!(main.provider.as_deref(), Some("anthropic"));
    assert_eq!(main.model.as_deref(), Some("claude-opus-4-6"));
    assert_eq!(main.meta["version"], "2.1.39");

    let agent = import
        .sessions
        .iter()
        .find(|s| s.session_id == "4d5611e5-241a-462a-8d15-5122611a9569:agent-a2898e3")
        .unwrap();
    assert_eq!(agent.kind, SessionKind::Subagent);
    assert_eq!(agent.agent_id.as_deref(), Some("a2898e3"));
    assert_eq!(
        agent.parent_session_id.as_deref(),
        Some(main.session_id.as_str())
    );
    // The Task call that started it, found through the parent's progress / toolUseResult lines.
    assert_eq!(
        agent.parent_tool_call_id.as_deref(),
        Some("toolu_017pLRuPHYTX5t99EnLyV53m")
    );
    assert!(main.turns.iter().any(|t| {
        t.parts
            .iter()
            .any(|p| matches!(p, Part::ToolCall(c) if c.id == "toolu_017pLRuPHYTX5t99EnLyV53m"))
    }));
    assert_eq!(agent.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    // The subagent's turns are never mixed into the parent.
    let agent_ids: HashSet<_> = agent.turns.iter().filter_map(|t| t.id.clone()).collect();
    assert!(
        main.turns
            .iter()
            .all(|t| !agent_ids.contains(t.id.as_deref().unwrap()))
    );
    assert!(main.turns.iter().all(|t| !t.meta.contains_key("sidechain")));
}

#[test]
fn a_renamed_subagent_transcript_is_still_a_subagent() {
    let rel = "claude-code-sessions/spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl";
    let bytes = std::fs::read(fixture(rel)).unwrap();
    let import =
        import::read_bytes(LogFormat::ClaudeCode, Path::new("renamed.jsonl"), &bytes).unwrap();
    assert_eq!(import.sessions.len(), 1);
    let session = &import.sessions[0];
    check_invariants(session);
    assert_eq!(session.kind, SessionKind::Subagent);
    assert_eq!(
        session.session_id,
        "4d5611e5-241a-462a-8d15-5122611a9569:agent-a2898e3"
    );
    assert_eq!(session.stats(), read(rel).sessions[0].stats());
}

#[test]
fn inline_sidechains_of_older_versions_become_linked_subagent_sessions() {
    let rel = "claude-code-sessions/claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
    let import = read(rel);
    let (main, subs): (Vec<_>, Vec<_>) = import
        .sessions
        .iter()
        .partition(|s| s.kind == SessionKind::Main);
    assert_eq!(main.len(), 1);
    assert_eq!(subs.len(), 5);
    let main = main[0];
    // Its one summary line names a leaf in another file: it titles another session.
    assert_eq!(main.title, None);
    let task_calls: Vec<&str> = tool_calls(&main.turns)
        .into_iter()
        .filter(|c| c.name == "Task")
        .map(|c| c.id.as_str())
        .collect();
    for sub in &subs {
        check_invariants(sub);
        assert_eq!(
            sub.parent_session_id.as_deref(),
            Some(main.session_id.as_str())
        );
        let call = sub
            .parent_tool_call_id
            .as_deref()
            .expect("linked to its Task call");
        assert!(task_calls.contains(&call));
        assert!(
            sub.session_id
                .starts_with("fe5e1c67-53e7-4862-81ae-d0e013e3270b:sidechain-")
        );
    }
    // Line 16 starts the first sidechain; its prompt is the first user turn of that session.
    let path = fixture(rel);
    let line = source_line(&path, 16);
    let first = subs
        .iter()
        .find(|s| s.session_id.ends_with(line["uuid"].as_str().unwrap()))
        .unwrap();
    assert_eq!(
        first.turns[0].text(),
        line["message"]["content"].as_str().unwrap()
    );
    // The main conversation still pairs each Task call with its result across the sidechains.
    let results: HashSet<&str> = tool_results(&main.turns)
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert!(task_calls.iter().all(|c| results.contains(c)));
}

#[test]
fn one_response_split_over_lines_is_one_turn_with_results_in_the_next() {
    let rel = "claude-code-sessions/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl";
    let path = fixture(rel);
    let import = read(rel);
    // Lines 49..=75+ repeat message msg_..ZvVorFAw with tool results written in between.
    let first = source_line(&path, 49);
    let msg_id = first["message"]["id"].as_str().unwrap();
    let (session, turn) = find_turn(&import, msg_id);
    assert_eq!(turn.role, Role::Assistant);
    let Part::Thinking(thinking) = &turn.parts[0] else {
        panic!("first part is the thinking block")
    };
    assert_eq!(
        thinking.text,
        first["message"]["content"][0]["thinking"].as_str().unwrap()
    );
    let signature = thinking.signature.as_ref().unwrap();
    assert_eq!(signature.provider, "anthropic");
    assert_eq!(signature.model.as_deref(), Some("claude-opus-4-6"));
    assert_eq!(
        signature.value,
        first["message"]["content"][0]["signature"]
            .as_str()
            .unwrap()
    );
    // Every tool_use line of the response is in this one turn, inputs verbatim.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut expected_calls = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["message"]["id"] == msg_id {
            for block in v["message"]["content"].as_array().unwrap() {
                if block["type"] == "tool_use" {
                    expected_calls.push((
                        block["id"].as_str().unwrap().to_owned(),
                        block["input"].clone(),
                    ));
                }
            }
        }
    }
    let calls: Vec<(String, Value)> = turn
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(c) => {
                assert_eq!(c.provider_id.as_deref(), Some(c.id.as_str()));
                Some((c.id.clone(), c.input.clone()))
            }
            _ => None,
        })
        .collect();
    assert!(calls.len() >= 7);
    assert_eq!(calls, expected_calls);
    // The next turn holds all their results, in order, byte for byte.
    let index = session
        .turns
        .iter()
        .position(|t| std::ptr::eq(t, turn))
        .unwrap();
    let results = &session.turns[index + 1];
    assert_eq!(results.role, Role::User);
    let ids: Vec<&str> = result_texts(results)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let want: Vec<&str> = calls.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, want);
    let line54 = source_line(&path, 54);
    let block = &line54["message"]["content"][0];
    let (call_id, text) = &result_texts(results)[0];
    assert_eq!(*call_id, block["tool_use_id"].as_str().unwrap());
    assert_eq!(text, block["content"].as_str().unwrap());
    // Usage was reported on every line of the response but is counted once.
    let calls = &turn.usage.as_ref().unwrap().calls;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].request_id.as_deref(), first["requestId"].as_str());
    assert_eq!(
        calls[0].cache_read_tokens,
        first["message"]["usage"]["cache_read_input_tokens"]
            .as_u64()
            .unwrap()
    );
}

#[test]
fn repeated_usage_keeps_the_largest_report_once() {
    let rel = "claude-code-sessions/claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";
    let path = fixture(rel);
    let import = read(rel);
    // Lines 3 and 4 are one response; output_tokens grows from 8 to 322 between them.
    let (l3, l4) = (source_line(&path, 3), source_line(&path, 4));
    assert_eq!(l3["message"]["id"], l4["message"]["id"]);
    let (_, turn) = find_turn(&import, l3["message"]["id"].as_str().unwrap());
    let calls = &turn.usage.as_ref().unwrap().calls;
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].output_tokens,
        l4["message"]["usage"]["output_tokens"].as_u64().unwrap()
    );
    assert_eq!(calls[0].input_tokens, 3);
    assert_eq!(calls[0].cache_creation_tokens, 10816);
    assert_eq!(calls[0].cache_read_tokens, 4734);
    assert!(calls[0].primary);
    let stamp = chrono::DateTime::parse_from_rfc3339(l3["timestamp"].as_str().unwrap()).unwrap();
    assert_eq!(
        turn.timestamp.unwrap(),
        stamp,
        "a turn is timed by its first line"
    );
}

#[test]
fn compaction_summaries_tool_errors_and_side_data_are_kept() {
    let rel = "claude-code-sessions/spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";
    let path = fixture(rel);
    let import = read(rel);
    let line = source_line(&path, 755);
    assert_eq!(line["isCompactSummary"], true);
    let (_, turn) = find_turn(&import, line["uuid"].as_str().unwrap());
    assert_eq!(turn.meta["compaction_summary"], true);
    assert_eq!(turn.text(), line["message"]["content"].as_str().unwrap());

    // A Task result: its toolUseResult side data is kept (agent id, usage), minus nothing.
    let line = source_line(&path, 113);
    let (_, turn) = find_turn(&import, line["uuid"].as_str().unwrap());
    let call_id = line["message"]["content"][0]["tool_use_id"]
        .as_str()
        .unwrap();
    let side = &turn.meta["tool_use_results"][call_id];
    assert_eq!(side["agentId"], "a2898e3");
    assert_eq!(side["totalTokens"], line["toolUseResult"]["totalTokens"]);
    let (_, text) = &result_texts(turn)[0];
    let source: Vec<&str> = line["message"]["content"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["text"].as_str().unwrap())
        .collect();
    assert_eq!(source.len(), 2, "the report and the agent footer");
    assert!(
        *text == source.concat(),
        "tool result differs from its source line"
    );

    // Every is_error result of the file's user lines is flagged (progress lines quote
    // subagent messages too; they are not the conversation).
    let text = std::fs::read_to_string(&path).unwrap();
    let errors_in_source = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "user")
        .filter_map(|v| v["message"]["content"].as_array().cloned())
        .flatten()
        .filter(|b| b["type"] == "tool_result" && b["is_error"] == true)
        .count() as u64;
    assert!(errors_in_source > 0);
    let got: u64 = import.sessions.iter().map(|s| s.stats().tool_errors).sum();
    assert_eq!(got, errors_in_source);
}

#[test]
fn malformed_lines_are_skipped_with_line_numbers_and_the_rest_imports() {
    let rel = "claude-code-sessions/claude-code-log-fixtures/edge_cases.jsonl";
    let import = read(rel);
    let lines: Vec<u64> = import
        .report
        .malformed
        .iter()
        .map(|i| i.line.unwrap())
        .collect();
    // 10: "contenst" typo, 11: message is a string, 13/15/16: not objects, 14: no type,
    // 18: a bare string where a content block belongs.
    assert_eq!(lines, vec![10, 11, 13, 14, 15, 16, 18]);
    let reasons: Vec<&str> = import
        .report
        .malformed
        .iter()
        .map(|i| i.reason.as_str())
        .collect();
    assert_eq!(reasons[0], "message has no \"content\"");
    assert_eq!(reasons[2], "a JSON string, not an object");
    assert_eq!(
        reasons[6],
        "content block 0 is a JSON string, not an object"
    );
    assert!(
        import.report.malformed[0]
            .to_string()
            .ends_with("edge_cases.jsonl:10: message has no \"content\"")
    );
    let session = &import.sessions[0];
    check_invariants(session);
    assert_eq!(session.session_id, "edge_cases");
    assert_eq!(
        session
            .title
            .as_deref()
            .map(|t| t.starts_with("Tested various edge cases")),
        Some(true)
    );
    // The failing tool's result is an error, its text verbatim; the unicode line survives.
    let (_, turn) = find_turn(&import, "edge_005");
    let Part::ToolResult(r) = &turn.parts[0] else {
        panic!()
    };
    assert!(r.is_error);
    assert_eq!(
        result_texts(turn)[0].1,
        "Error: Tool execution failed with error: Command not found"
    );
    let (_, turn) = find_turn(&import, "edge_011");
    assert!(turn.text().contains("中文, العربية, русский, 🎉"));
}

#[test]
fn re_importing_yields_identical_sessions() {
    let first = import::read_path(&claude_dir()).unwrap();
    let second = import::read_path(&claude_dir()).unwrap();
    assert_eq!(first, second);
    let turns: u64 = first.sessions.iter().map(|s| s.turns.len() as u64).sum();
    assert_eq!(
        turns,
        first.report.turns.user_turns + first.report.turns.assistant_turns
    );
}

#[test]
fn api_errors_images_and_redacted_thinking_map_to_their_parts() {
    let log = [
        r#"{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}}"#,
        r#"{"type":"assistant","uuid":"a1","sessionId":"s","requestId":"r1","message":{"id":"m1","role":"assistant","model":"claude-opus-4-6","content":[{"type":"redacted_thinking","data":"EmwKAhgB"}],"usage":{"input_tokens":10,"output_tokens":1}}}"#,
        r#"{"type":"assistant","uuid":"a2","sessionId":"s","isApiErrorMessage":true,"message":{"id":"synthetic-1","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 {\"type\":\"overloaded_error\"}"}],"usage":{"input_tokens":0,"output_tokens":0}}}"#,
        r#"{"type":"assistant","uuid":"a3","sessionId":"s","requestId":"r2","timestamp":"not a time","message":{"id":"m2","role":"assistant","model":"claude-opus-4-6","content":[{"type":"web_search_tool_result","tool_use_id":"srv1","content":[]},{"type":"text","text":"done"}]}}"#,
    ]
    .join("\n");
    let import =
        import::read_bytes(LogFormat::ClaudeCode, Path::new("s.jsonl"), log.as_bytes()).unwrap();
    let turns = &import.sessions[0].turns;
    check_invariants(&import.sessions[0]);
    assert!(
        matches!(&turns[0].parts[1], Part::Image(i) if i.media_type.as_deref() == Some("image/png"))
    );
    let Part::Thinking(t) = &turns[1].parts[0] else {
        panic!()
    };
    assert!(t.redacted);
    assert_eq!(t.signature.as_ref().unwrap().value, "EmwKAhgB");
    assert_eq!(
        turns[2].parts,
        vec![Part::Error {
            message: "API Error: 529 {\"type\":\"overloaded_error\"}".into()
        }]
    );
    assert_eq!(turns[2].meta["api_error"], true);
    assert_eq!(turns[2].model, None, "synthetic messages have no model");
    assert!(turns[2].usage.is_none(), "synthetic messages cost nothing");
    assert_eq!(
        turns[3].meta["unsupported_parts"][0]["type"],
        "web_search_tool_result"
    );
    assert_eq!(turns[3].timestamp, None);
    assert_eq!(import.report.unsupported_parts, 1);
    assert_eq!(import.report.warnings, 1);
    assert_eq!(import.report.warning_list[0].line, Some(4));
}

// ---------------------------------------------------------------- Codex, Gemini, SWE-agent

#[test]
fn codex_rollouts_import_with_usage_from_cumulative_deltas() {
    let import = read("codex-gemini-fixtures/v1_codex_golden.jsonl");
    assert_eq!(import.sessions.len(), 1);
    let s = &import.sessions[0];
    check_invariants(s);
    assert_eq!(s.format, LogFormat::Codex);
    assert_eq!(s.session_id, "golden-codex-001");
    assert_eq!(
        s.cwd.as_deref(),
        Some(Path::new("/home/testuser/codex-project"))
    );
    assert_eq!(s.provider.as_deref(), Some("openai"));
    assert_eq!(s.model.as_deref(), Some("gpt-4.5-turbo"));
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    // prompt; reasoning + text + call; result; prompt; answer.
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::User,
            Role::Assistant
        ]
    );
    let stats = s.stats();
    assert_eq!((stats.tool_calls, stats.tool_results), (1, 1));
    assert_eq!(
        result_texts(&s.turns[2])[0].1,
        "total 24\ndrwxr-xr-x 3 user user 4096 Jan 4 09:00 .\n-rw-r--r-- 1 user user  256 Jan 4 08:00 README.md"
    );
    let Part::Thinking(t) = &s.turns[1].parts[0] else {
        panic!()
    };
    assert_eq!(t.text, "Preparing to list directory contents");
    // One token_count: cumulative 300 input of which 120 cached, 135 output.
    assert_eq!(
        (
            stats.usage_calls,
            stats.input_tokens,
            stats.cache_read_tokens,
            stats.output_tokens
        ),
        (1, 180, 120, 135)
    );
    assert!(s.turns[4].usage.is_some());
    assert_eq!(s.turns[0].id.as_deref(), Some("line-3"));
    assert_eq!(import.report.non_message_lines_ignored, 2);

    let import = read("codex-gemini-fixtures/rejections_codex_with_escalation.jsonl");
    let s = &import.sessions[0];
    check_invariants(s);
    let stats = s.stats();
    assert_eq!((stats.tool_calls, stats.tool_results), (4, 2));
    let last = s.turns.last().unwrap();
    assert_eq!(
        last.parts.last(),
        Some(&Part::Error {
            message: "turn aborted: user_cancelled".into()
        })
    );
    let escalated = s.turns.iter().flat_map(|t| &t.parts).find_map(|p| match p {
        Part::ToolCall(c) if c.id == "call_esc_002" => Some(c),
        _ => None,
    });
    assert_eq!(
        escalated.unwrap().input["sandbox_permissions"],
        "require_escalated"
    );

    let import = read("codex-gemini-fixtures/compaction_codex_session_with_compaction.jsonl");
    let s = &import.sessions[0];
    let summary = s
        .turns
        .iter()
        .find(|t| t.meta.get("compaction_summary") == Some(&Value::Bool(true)))
        .unwrap();
    assert!(summary.text().starts_with("**Progress + Plan Status**"));
    assert_eq!(s.meta["git"]["branch"], "feature/api");
}

#[test]
fn a_codex_content_item_of_an_unknown_type_keeps_its_message() {
    let item = |json: &str| {
        format!(r#"{{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{json}}}"#)
    };
    let log = [
        r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}"#.to_owned(),
        item(r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"say it"}]}"#),
        item(r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"kept"},{"type":"output_audio","data":"UklGRg=="}]}"#),
    ]
    .join("\n");
    let import = import::read_bytes(
        LogFormat::Codex,
        Path::new("rollout-x.jsonl"),
        log.as_bytes(),
    )
    .unwrap();
    assert_eq!(import.report.malformed_lines_skipped, 0);
    assert_eq!(import.report.unsupported_parts, 1);
    let answer = import.sessions[0].turns.last().unwrap();
    assert_eq!(answer.role, Role::Assistant);
    assert_eq!(answer.text(), "kept");
    assert_eq!(
        answer.meta["unsupported_parts"],
        serde_json::json!([{"type": "output_audio", "data": "UklGRg=="}])
    );
}

#[test]
fn codex_token_counts_that_repeat_are_never_double_counted() {
    let tc = |input: u64, cached: u64, output: u64| {
        format!(
            r#"{{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{input},"cached_input_tokens":{cached},"output_tokens":{output}}}}}}}}}"#
        )
    };
    let item = |json: &str| {
        format!(r#"{{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{json}}}"#)
    };
    let log = [
        r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}"#.to_owned(),
        item(r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}"#),
        item(r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}"#),
        tc(100, 40, 10),
        tc(100, 40, 10),
        item(r#"{"type":"function_call_output","call_id":"c1","output":"a\nb"}"#),
        item(r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two files"}]}"#),
        tc(250, 140, 25),
        r#"{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"token_count","info":null}}"#.to_owned(),
        tc(250, 140, 25),
        "{\"timestamp\": truncated".to_owned(),
    ]
    .join("\n");
    let import = import::read_bytes(
        LogFormat::Codex,
        Path::new("rollout-x.jsonl"),
        log.as_bytes(),
    )
    .unwrap();
    let s = &import.sessions[0];
    check_invariants(s);
    let calls: Vec<(u64, u64, u64)> = s
        .turns
        .iter()
        .flat_map(|t| t.usage.iter().flat_map(|u| &u.calls))
        .map(|c| (c.input_tokens, c.cache_read_tokens, c.output_tokens))
        .collect();
    assert_eq!(calls, vec![(60, 40, 10), (50, 100, 15)]);
    assert_eq!(import.report.repeated_usage_merged, 2);
    assert_eq!(import.report.malformed_lines_skipped, 1);
    assert_eq!(import.report.malformed[0].line, Some(11));
    assert_eq!(s.turns.len(), 4);
    assert_eq!(s.turns[1].parts.len(), 1);
    let Part::ToolCall(call) = &s.turns[1].parts[0] else {
        panic!()
    };
    assert_eq!(call.input["command"][0], "ls");
}

#[test]
fn current_codex_rollouts_skip_instructions_and_echoed_events() {
    // The shape Codex 0.13x writes: instructions as a developer message, the environment as a
    // user message, every prompt and answer echoed as event_msg, rate limits on token counts.
    let log = [
        r#"{"timestamp":"2026-06-05T04:58:20.653Z","type":"session_meta","payload":{"id":"019e9625-802f","timestamp":"2026-06-05T04:58:20.593Z","cwd":"/tmp/ws","originator":"codex_exec","cli_version":"0.135.0","source":"exec","model_provider":"openai","base_instructions":{"text":"You are Codex."}}}"#,
        r#"{"timestamp":"2026-06-05T04:58:20.657Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1","model_context_window":258400}}"#,
        r#"{"timestamp":"2026-06-05T04:58:23.498Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>sandbox: read-only</permissions instructions>"}]}}"#,
        r#"{"timestamp":"2026-06-05T04:58:23.498Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/tmp/ws</cwd>\n</environment_context>"}]}}"#,
        r#"{"timestamp":"2026-06-05T04:58:23.498Z","type":"turn_context","payload":{"turn_id":"t1","cwd":"/tmp/ws","model":"gpt-5.5","summary":"auto"}}"#,
        r#"{"timestamp":"2026-06-05T04:58:23.506Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"what is in this folder?"}]}}"#,
        r#"{"timestamp":"2026-06-05T04:58:23.506Z","type":"event_msg","payload":{"type":"user_message","message":"what is in this folder?","images":[]}}"#,
        r#"{"timestamp":"2026-06-05T04:58:26.680Z","type":"event_msg","payload":{"type":"agent_message","message":"Nothing yet.","phase":"final_answer"}}"#,
        r#"{"timestamp":"2026-06-05T04:58:26.681Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Nothing yet."}],"phase":"final_answer"}}"#,
        r#"{"timestamp":"2026-06-05T04:58:26.707Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":22539,"cached_input_tokens":20864,"output_tokens":10,"reasoning_output_tokens":0,"total_tokens":22549},"last_token_usage":{"input_tokens":22539,"cached_input_tokens":20864,"output_tokens":10,"reasoning_output_tokens":0,"total_tokens":22549},"model_context_window":258400},"rate_limits":{"primary":{"used_percent":15.0}}}}"#,
        r#"{"timestamp":"2026-06-05T04:58:26.713Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"Nothing yet."}}"#,
    ]
    .join("\n");
    let path = Path::new("rollout-2026-06-05T04-58-20-019e9625-802f.jsonl");
    let import = import::read_bytes(LogFormat::Codex, path, log.as_bytes()).unwrap();
    assert_eq!(import.sessions.len(), 1);
    let s = &import.sessions[0];
    check_invariants(s);
    assert_eq!(s.session_id, "019e9625-802f");
    assert_eq!(s.meta["version"], "0.135.0");
    let texts: Vec<String> = s.turns.iter().map(Turn::text).collect();
    assert_eq!(
        texts,
        [
            "<environment_context>\n  <cwd>/tmp/ws</cwd>\n</environment_context>",
            "what is in this folder?",
            "Nothing yet."
        ]
    );
    assert_eq!(s.turns[0].meta["is_meta"], true);
    assert!(!s.turns[1].meta.contains_key("is_meta"));
    assert_eq!(s.turns[2].model.as_deref(), Some("gpt-5.5"));
    let call = &s.turns[2].usage.as_ref().unwrap().calls[0];
    assert_eq!(
        (
            call.input_tokens,
            call.cache_read_tokens,
            call.output_tokens
        ),
        (22539 - 20864, 20864, 10)
    );
    // session_meta, task_started, developer message, turn_context, user_message,
    // agent_message, task_complete.
    assert_eq!(import.report.non_message_lines_ignored, 7);
    assert_eq!(import.report.non_message_types["developer message"], 1);
}

/// A Codex rollout of `items`, each a `(type, payload)` envelope, after its `session_meta`.
fn codex_rollout(items: &[(&str, Value)]) -> Import {
    let mut lines = vec![
        serde_json::json!({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
        "payload": {"id": "s1", "cwd": "/w"}}),
    ];
    lines.extend(items.iter().map(|(kind, payload)| {
        serde_json::json!({"timestamp": "2026-01-01T00:00:01Z", "type": kind, "payload": payload})
    }));
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    import::read_bytes(
        LogFormat::Codex,
        Path::new("rollout-x.jsonl"),
        text.join("\n").as_bytes(),
    )
    .unwrap()
}

#[test]
fn codex_calls_that_failed_are_errors_whatever_their_output_looks_like() {
    use serde_json::json;
    let call = |id: &str| {
        (
            "response_item",
            json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"make\"]}", "call_id": id}),
        )
    };
    let patch = |id: &str| {
        (
            "response_item",
            json!({"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch\n", "call_id": id}),
        )
    };
    let output = |id: &str, kind: &str, output: Value| {
        (
            "response_item",
            json!({"type": kind, "call_id": id, "output": output}),
        )
    };
    let freeform = |code: i32| {
        json!(format!(
            "Exit code: {code}\nWall time: 0.1 seconds\nOutput:\nmake: done\n"
        ))
    };
    let items = [
        call("freeform-failed"),
        output("freeform-failed", "function_call_output", freeform(2)),
        call("freeform-ok"),
        output("freeform-ok", "function_call_output", freeform(0)),
        patch("structured-failed"),
        output(
            "structured-failed",
            "custom_tool_call_output",
            json!(
                r#"{"output":"patch did not apply","metadata":{"exit_code":1,"duration_seconds":0.0}}"#
            ),
        ),
        patch("structured-ok"),
        output(
            "structured-ok",
            "custom_tool_call_output",
            json!(
                r#"{"output":"Success. Updated the following files:\nM a.rs\n","metadata":{"exit_code":0,"duration_seconds":0.0}}"#
            ),
        ),
        // The command's end event decides over what the text says.
        call("event-failed"),
        (
            "event_msg",
            json!({"type": "exec_command_end", "call_id": "event-failed", "exit_code": 101, "stdout": "", "stderr": ""}),
        ),
        output("event-failed", "function_call_output", freeform(0)),
        patch("patch-failed"),
        output("patch-failed", "custom_tool_call_output", json!("Success.")),
        (
            "event_msg",
            json!({"type": "patch_apply_end", "call_id": "patch-failed", "success": false, "stdout": "", "stderr": "bad hunk"}),
        ),
        // Older rollouts wrote the flag themselves.
        call("legacy-failed"),
        output(
            "legacy-failed",
            "function_call_output",
            json!({"content": "denied", "success": false}),
        ),
        call("plain"),
        output(
            "plain",
            "function_call_output",
            json!("error: words alone decide nothing"),
        ),
    ];
    let import = codex_rollout(&items);
    let s = &import.sessions[0];
    check_invariants(s);
    let failed: Vec<&str> = tool_results(&s.turns)
        .iter()
        .filter(|r| r.is_error)
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(
        failed,
        [
            "freeform-failed",
            "structured-failed",
            "event-failed",
            "patch-failed",
            "legacy-failed"
        ]
    );
    assert_eq!(s.stats().tool_results, 8);
    assert_eq!(import.report.malformed_lines_skipped, 0);
}

#[test]
fn codex_response_items_without_a_canonical_part_stay_on_their_response() {
    use serde_json::json;
    let search = json!({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "rust E0599"}});
    let image = json!({"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "iVBORw0KGgo="});
    let items = [
        (
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "why E0599?"}]}),
        ),
        ("response_item", search.clone()),
        (
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It was renamed."}]}),
        ),
        (
            "event_msg",
            json!({"type": "token_count", "info": {"total_token_usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 5}}}),
        ),
        (
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "draw it"}]}),
        ),
        ("response_item", image.clone()),
    ];
    let import = codex_rollout(&items);
    let s = &import.sessions[0];
    check_invariants(s);
    assert_eq!(s.turns.len(), 4);
    assert_eq!(s.turns[1].text(), "It was renamed.");
    assert_eq!(s.turns[1].meta["unsupported_parts"], json!([search]));
    assert_eq!(s.turns[3].role, Role::Assistant);
    assert_eq!(s.turns[3].meta["unsupported_parts"], json!([image]));
    assert_eq!(import.report.unsupported_parts, 2);
    assert!(
        !import
            .report
            .non_message_types
            .keys()
            .any(|k| k.starts_with("response_item")),
        "{:?}",
        import.report.non_message_types
    );
}

#[test]
fn gemini_chats_import_from_json_and_patched_jsonl() {
    let import = read("codex-gemini-fixtures/v1_gemini_golden.json");
    let s = &import.sessions[0];
    check_invariants(s);
    assert_eq!(
        (s.format, s.session_id.as_str()),
        (LogFormat::GeminiCli, "golden-gemini-001")
    );
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::User,
            Role::Assistant
        ]
    );
    assert_eq!(s.turns[2].id.as_deref(), Some("msg-g2:results"));
    assert_eq!(
        result_texts(&s.turns[2]),
        vec![(
            "read_file-001",
            "{\"name\": \"test-project\", \"version\": \"1.0.0\"}".to_owned()
        )]
    );
    let Part::Thinking(t) = &s.turns[1].parts[0] else {
        panic!()
    };
    assert_eq!(
        t.text,
        "**File Reading Request**\nUser wants to see the contents of package.json"
    );
    // input - cached + tool, output + thoughts.
    let stats = s.stats();
    assert_eq!(
        (
            stats.input_tokens,
            stats.cache_read_tokens,
            stats.output_tokens
        ),
        (160 + 200, 50, 80 + 135)
    );
    assert_eq!(s.provider.as_deref(), Some("gemini"));

    let import = read("codex-gemini-fixtures/rejections_gemini_with_tool_error.jsonl");
    let s = &import.sessions[0];
    check_invariants(s);
    let stats = s.stats();
    assert_eq!((stats.user_turns, stats.assistant_turns), (4 + 4, 5));
    assert_eq!(
        (stats.tool_calls, stats.tool_results, stats.tool_errors),
        (4, 4, 1)
    );
    assert_eq!(stats.usage_calls, 5);
    let (_, failed) = find_turn(&import, "msg-ge4:results");
    assert_eq!(
        result_texts(failed)[0].1,
        "Failed to edit, 0 occurrences found for old_string"
    );
}

#[test]
fn a_gemini_call_that_ended_without_output_keeps_its_failure() {
    let log = [
        r#"{"sessionId":"g2","projectHash":"h","startTime":"2026-01-01T00:00:00Z","kind":"main"}"#,
        r#"{"id":"m1","timestamp":"2026-01-01T00:00:01Z","type":"user","content":"edit it"}"#,
        r#"{"id":"m2","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"","toolCalls":[{"id":"t1","name":"replace","args":{"file_path":"a.rs"},"status":"cancelled"},{"id":"t2","name":"shell","args":{"command":"make"},"status":"executing"}]}"#,
    ]
    .join("\n");
    let import = import::read_bytes(
        LogFormat::GeminiCli,
        Path::new("session-y.jsonl"),
        log.as_bytes(),
    )
    .unwrap();
    let s = &import.sessions[0];
    let results = tool_results(&s.turns);
    // The cancelled call's ending is its result; the running one has none yet.
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].call_id, "t1");
    assert!(results[0].is_error && results[0].parts.is_empty());
}

#[test]
fn gemini_jsonl_updates_and_rewinds_are_replayed() {
    let log = [
        r#"{"sessionId":"g1","projectHash":"h","startTime":"2026-01-01T00:00:00Z","kind":"main"}"#,
        r#"{"id":"m1","timestamp":"2026-01-01T00:00:01Z","type":"user","content":[{"text":"first"}]}"#,
        r#"{"id":"m2","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"","model":"gemini-2.5-pro"}"#,
        r#"{"id":"m2","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":[{"text":"answer","thoughtSignature":"c2ln"}],"model":"gemini-2.5-pro","tokens":{"input":10,"output":2,"cached":4,"thoughts":1,"tool":0,"total":13}}"#,
        r#"{"id":"m3","timestamp":"2026-01-01T00:00:03Z","type":"user","content":"oops"}"#,
        r#"{"id":"m4","timestamp":"2026-01-01T00:00:04Z","type":"gemini","content":"to be rewound"}"#,
        r#"{"$rewindTo":"m3"}"#,
        r#"{"$set":{"summary":"A title","lastUpdated":"2026-01-01T00:00:09Z"}}"#,
        r#"{"id":"m5","timestamp":"2026-01-01T00:00:05Z","type":"info","content":"Switched model"}"#,
        r#"[1,2]"#,
    ]
    .join("\n");
    let import = import::read_bytes(
        LogFormat::GeminiCli,
        Path::new("session-x.jsonl"),
        log.as_bytes(),
    )
    .unwrap();
    let s = &import.sessions[0];
    check_invariants(s);
    assert_eq!(s.title.as_deref(), Some("A title"));
    assert_eq!(s.turns.len(), 2);
    let Part::Thinking(sig) = &s.turns[1].parts[0] else {
        panic!()
    };
    assert_eq!(sig.signature.as_ref().unwrap().provider, "gemini");
    assert_eq!(
        s.turns[1].parts[1],
        Part::Text {
            text: "answer".into()
        }
    );
    // m2 replaced once, m3 and m4 rewound.
    assert_eq!(import.report.superseded_records, 3);
    assert_eq!(import.report.malformed[0].line, Some(10));
    assert_eq!(import.report.non_message_types["info message"], 1);
}

/// A Gemini CLI `.jsonl` chat of `records` (JSON values, one per line) after its metadata line.
fn gemini_chat(records: &[Value]) -> Import {
    let mut lines = vec![
        serde_json::json!({"sessionId": "g", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"})
            .to_string(),
    ];
    lines.extend(records.iter().map(Value::to_string));
    import::read_bytes(
        LogFormat::GeminiCli,
        Path::new("session-g.jsonl"),
        lines.join("\n").as_bytes(),
    )
    .unwrap()
}

fn turn_ids(s: &ImportedSession) -> Vec<&str> {
    s.turns.iter().filter_map(|t| t.id.as_deref()).collect()
}

const FULL_OUTPUT: &str = "error[E0425]: cannot find value `frobnicate_widget` in this scope";

/// The records a Gemini CLI chat writes before any history rewrite: a prompt, a call with its
/// full output, a second prompt and its answer.
fn gemini_records() -> Vec<Value> {
    use serde_json::json;
    vec![
        json!({"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [{"text": "find why the build fails"}]}),
        json!({"id": "m1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "Running the build.", "model": "gemini-2.5-pro",
               "toolCalls": [{"id": "rsc-1", "name": "run_shell_command", "args": {"command": "make"}, "status": "success",
                              "result": [{"functionResponse": {"id": "rsc-1", "name": "run_shell_command", "response": {"output": FULL_OUTPUT}}}]}]}),
        json!({"id": "u2", "timestamp": "2026-01-01T00:00:03Z", "type": "user", "content": [{"text": "fix it"}]}),
        json!({"id": "m2", "timestamp": "2026-01-01T00:00:04Z", "type": "gemini", "content": "Renamed it.", "model": "gemini-2.5-pro"}),
    ]
}

/// `message` as Gemini CLI's tool-output masking rewrites it.
fn masked(mut message: Value) -> Value {
    for call in message["toolCalls"].as_array_mut().into_iter().flatten() {
        call["result"] = serde_json::json!([{"functionResponse": {"id": call["id"], "name": call["name"],
            "response": {"output": "<tool_output_masked>Output too large; saved to tool-outputs/x.txt</tool_output_masked>"}}}]);
    }
    message
}

#[test]
fn a_gemini_history_rewrite_adds_its_summary_and_keeps_every_record() {
    use serde_json::json;
    // A chat compression: `$set.messages` is the summary, its acknowledgement and the kept
    // messages; the chat goes on after it.
    let mut records = gemini_records();
    let kept = records[2..].to_vec();
    let mut history = vec![
        json!({"id": "s1", "timestamp": "2026-01-01T00:00:05Z", "type": "user", "content": [{"text": "<state_snapshot>the build is fixed</state_snapshot>"}]}),
        json!({"id": "s2", "timestamp": "2026-01-01T00:00:05Z", "type": "gemini", "content": [{"text": "Got it. Thanks for the additional context!"}]}),
    ];
    history.extend(kept);
    records.push(json!({"$set": {"messages": history, "lastUpdated": "2026-01-01T00:00:05Z"}}));
    records.push(json!({"id": "u3", "timestamp": "2026-01-01T00:00:06Z", "type": "user", "content": [{"text": "now write a regression test"}]}));
    records.push(json!({"id": "m3", "timestamp": "2026-01-01T00:00:07Z", "type": "gemini", "content": "Added tests/regression.rs.", "model": "gemini-2.5-pro"}));
    let import = gemini_chat(&records);
    let s = &import.sessions[0];
    check_invariants(s);
    assert_eq!(
        turn_ids(s),
        ["u1", "m1", "m1:results", "u2", "m2", "s1", "s2", "u3", "m3"],
        "the records stay the conversation, the summary joins it, records after the $set count"
    );
    let summary = &s.turns[5];
    assert_eq!(summary.meta["compaction_summary"], true);
    assert!(!summary.is_person_prompt());
    assert_eq!(
        result_texts(&s.turns[2]),
        [("rsc-1", FULL_OUTPUT.to_owned())]
    );
    // The $set's copies of u2 and m2 were not applied.
    assert_eq!(import.report.superseded_records, 2);
    assert_eq!(import.report.malformed_lines_skipped, 0);

    // Tool-output masking, and the session context a chat start writes: the full output stays,
    // even when a later record of the message carries the placeholder (as older versions wrote
    // it), and the context is context, not a prompt.
    let mut records = gemini_records();
    let mut history = vec![json!({"id": "ctx", "type": "user",
        "content": [{"text": "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>"}]})];
    history.extend(records.iter().cloned().map(masked));
    records.push(json!({"$set": {"messages": history}}));
    records.push(masked(records[1].clone()));
    let import = gemini_chat(&records);
    let s = &import.sessions[0];
    check_invariants(s);
    assert_eq!(turn_ids(s), ["u1", "m1", "m1:results", "u2", "m2", "ctx"]);
    assert_eq!(
        result_texts(&s.turns[2]),
        [("rsc-1", FULL_OUTPUT.to_owned())]
    );
    assert_eq!(s.turns[5].meta["is_meta"], true);
    // Four copies not applied, one record replaced in place.
    assert_eq!(import.report.superseded_records, 5);
}

#[test]
fn gemini_function_responses_and_calls_in_content_pair_once() {
    use serde_json::json;
    // A history Gemini CLI only wrote in a `$set`: a call as a content part, its response as a
    // user message with an image beside it, and a part with no canonical form.
    let records = [json!({"$set": {"messages": [
        {"id": "s1", "type": "user", "content": [{"text": "<state_snapshot>...</state_snapshot>"}]},
        {"id": "s2", "type": "gemini", "content": [{"text": "Checking."},
            {"functionCall": {"id": "rsc-9", "name": "run_shell_command", "args": {"command": "cargo build"}}}]},
        {"id": "s3", "type": "user", "content": [
            {"functionResponse": {"id": "rsc-9", "name": "run_shell_command", "response": {"output": "error: linker `cc` not found"}}},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]},
        {"id": "s4", "type": "gemini", "content": [{"text": "Install a C toolchain."},
            {"executableCode": {"language": "PYTHON", "code": "print(1)"}}]}
    ]}})];
    let import = gemini_chat(&records);
    let s = &import.sessions[0];
    check_invariants(s);
    let results = tool_results(&s.turns);
    assert_eq!(tool_calls(&s.turns).len(), 1);
    assert_eq!(results.len(), 1, "the call is answered, not cancelled");
    assert_eq!(results[0].call_id, "rsc-9");
    assert!(!results[0].is_error);
    assert_eq!(results[0].parts.len(), 2, "the image belongs to the result");
    assert_eq!(
        s.turns[3].meta["unsupported_parts"],
        json!([{"executableCode": {"language": "PYTHON", "code": "print(1)"}}])
    );
    assert_eq!(import.report.unsupported_parts, 1);

    // A call both as a content part and in `toolCalls`, its response repeated in a later user
    // message, and a call without an id answered by name.
    let mut records = vec![
        json!({"id": "u1", "type": "user", "content": [{"text": "build it"}]}),
        json!({"id": "m1", "type": "gemini", "model": "gemini-2.5-pro", "content": [{"text": "Building."},
            {"functionCall": {"id": "rsc-1", "name": "run_shell_command", "args": {"command": "make"}}}],
            "toolCalls": [{"id": "rsc-1", "name": "run_shell_command", "args": {"command": "make"}, "status": "success",
                "result": [{"functionResponse": {"id": "rsc-1", "name": "run_shell_command", "response": {"output": "ok"}}}]}]}),
    ];
    records.push(json!({"$set": {"messages": [
        records[0].clone(), records[1].clone(),
        {"id": "r1", "type": "user", "content": [{"functionResponse": {"id": "rsc-1", "name": "run_shell_command", "response": {"output": "ok"}}}]},
        {"id": "m2", "type": "gemini", "content": [{"functionCall": {"name": "read_file", "args": {"absolute_path": "/p/a.rs"}}}]},
        {"id": "r2", "type": "user", "content": [{"functionResponse": {"name": "read_file", "response": {"error": "no such file"}}}]}
    ]}}));
    let import = gemini_chat(&records);
    let s = &import.sessions[0];
    check_invariants(s);
    let calls: Vec<&str> = tool_calls(&s.turns).iter().map(|c| c.id.as_str()).collect();
    assert_eq!(calls, ["rsc-1", "m2:part-0"]);
    let results: Vec<(&str, bool)> = tool_results(&s.turns)
        .iter()
        .map(|r| (r.call_id.as_str(), r.is_error))
        .collect();
    assert_eq!(results, [("rsc-1", false), ("m2:part-0", true)]);
    assert!(
        !turn_ids(s).contains(&"r1"),
        "a repeated result adds nothing"
    );
    // Every backend takes the session (a call made twice used to make it refuse to fork).
    for format in codeoid_core::translate::Format::ALL {
        let backend = codeoid_core::translate::Backend::new(format);
        codeoid_core::translate::to_messages(&s.turns, &backend, &Default::default())
            .unwrap_or_else(|e| panic!("{format}: {e}"));
    }
}

#[test]
fn a_resumed_gemini_chat_is_read_once_from_its_jsonl() {
    use serde_json::json;
    // Resuming `session-X.json` makes Gemini CLI write `session-X.jsonl` beside it: the metadata,
    // every message of the `.json`, then the new ones. The `.json` stays.
    let dir = tempfile::tempdir().unwrap();
    let chats = dir.path().join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    let old = gemini_records();
    let meta = json!({"sessionId": "g", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z"});
    let mut doc = meta.clone();
    doc["messages"] = Value::Array(old.clone());
    std::fs::write(chats.join("session-x.json"), doc.to_string()).unwrap();
    let mut lines = vec![meta];
    lines.extend(old);
    lines.push(json!({"$set": {"sessionId": "g"}}));
    lines.push(json!({"id": "u3", "type": "user", "content": [{"text": "and the tests?"}]}));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(chats.join("session-x.jsonl"), text).unwrap();
    // Another chat's `.json` beside them is not affected.
    let mut other = doc.clone();
    other["sessionId"] = json!("other");
    std::fs::write(chats.join("session-y.json"), other.to_string()).unwrap();

    let import = import::read_path(&chats).unwrap();
    let ids: Vec<&str> = import
        .sessions
        .iter()
        .map(|s| s.session_id.as_str())
        .collect();
    assert_eq!(ids, ["g", "other"]);
    assert_eq!(turn_ids(&import.sessions[0]).last(), Some(&"u3"));
    assert_eq!(import.report.files, 2);
    assert_eq!(import.report.skipped_files.len(), 1);
    let skipped = &import.report.skipped_files[0];
    assert!(skipped.path.ends_with("session-x.json"), "{skipped:?}");
    assert!(
        skipped.reason.starts_with("superseded by ") && skipped.reason.contains("session-x.jsonl"),
        "{}",
        skipped.reason
    );
}

#[test]
fn swe_agent_trajectories_import_in_both_formats() {
    let import = read(
        "swe-agent-trajectories/marshmallow-code__marshmallow-1867.function_calling_replace.traj",
    );
    let s = &import.sessions[0];
    check_invariants(s);
    assert_eq!(
        s.session_id,
        "marshmallow-code__marshmallow-1867.function_calling_replace"
    );
    let stats = s.stats();
    // 24 history entries: system prompt (not a turn), the task, 11 actions, 11 observations.
    assert_eq!((stats.user_turns, stats.assistant_turns), (12, 11));
    assert_eq!((stats.tool_calls, stats.tool_results), (11, 11));
    let path = fixture(
        "swe-agent-trajectories/marshmallow-code__marshmallow-1867.function_calling_replace.traj",
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (_, turn) = find_turn(&import, "history-3");
    assert_eq!(
        result_texts(turn)[0].0,
        doc["history"][3]["tool_call_ids"][0].as_str().unwrap()
    );
    assert_eq!(
        result_texts(turn)[0].1,
        doc["history"][3]["content"].as_str().unwrap()
    );
    assert_eq!(s.meta["exit_status"], "submitted");
    // It reuses one OpenAI call id for two calls in a row: canonical ids stay unique (the
    // second is suffixed, its result follows it), the original is the provider id, and the
    // session translates for every backend.
    let calls = tool_calls(&s.turns);
    let unique: HashSet<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(unique.len(), calls.len());
    let reused = calls.iter().find(|c| c.id.ends_with("~2")).unwrap();
    assert_eq!(
        Some(reused.id.trim_end_matches("~2")),
        reused.provider_id.as_deref()
    );
    let answered: HashSet<&str> = tool_results(&s.turns)
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(answered, unique);
    for format in codeoid_core::translate::Format::ALL {
        let backend = codeoid_core::translate::Backend::new(format);
        codeoid_core::translate::to_messages(&s.turns, &backend, &Default::default())
            .unwrap_or_else(|e| panic!("{format}: {e}"));
    }

    let import = read("swe-agent-trajectories/pydicom__pydicom-1458.traj");
    let s = &import.sessions[0];
    check_invariants(s);
    let stats = s.stats();
    // 26 entries: system prompt, a demonstration, the task, 12 actions, 11 observations; the
    // last action's observation is the trajectory's.
    assert_eq!(
        (
            stats.user_turns,
            stats.assistant_turns,
            stats.tool_calls,
            stats.tool_results
        ),
        (14, 12, 12, 12)
    );
    // The demonstration (another repository's run) is context, never the task.
    assert_eq!(s.turns[0].meta["demonstration"], true);
    assert_eq!(s.turns[0].meta["is_meta"], true);
    assert!(!s.turns[0].is_person_prompt());
    assert!(s.turns[1].is_person_prompt());
    assert_eq!(s.turns[s.turns.len() - 2].meta["action"], "submit\n");
    assert_eq!(s.meta["model_stats"]["api_calls"], 12);
}

#[test]
fn classic_swe_agent_actions_become_the_calls_the_function_calling_format_records() {
    // The function-calling trajectory records each step twice: the `action` string and the
    // `tool_calls` it came from. Stripped of `tool_calls`, it is a classic-format trajectory;
    // its actions must come back as the same calls, answered by the same observations.
    let rel =
        "swe-agent-trajectories/marshmallow-code__marshmallow-1867.function_calling_replace.traj";
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(fixture(rel)).unwrap()).unwrap();
    let mut classic = doc.clone();
    let mut expected = Vec::new();
    for entry in classic["history"].as_array_mut().unwrap() {
        let entry = entry.as_object_mut().unwrap();
        if let Some(Value::Array(calls)) = entry.remove("tool_calls") {
            for call in calls {
                let arguments = call["function"]["arguments"].as_str().unwrap();
                let input: Value = serde_json::from_str(arguments).unwrap();
                expected.push((call["function"]["name"].as_str().unwrap().to_owned(), input));
            }
        }
        if entry["role"] == "tool" {
            entry.remove("tool_call_ids");
            entry.insert("role".into(), "user".into());
        }
    }
    assert_eq!(expected.len(), 11);
    let import = import::read_bytes(
        LogFormat::SweAgent,
        Path::new("classic.traj"),
        classic.to_string().as_bytes(),
    )
    .unwrap();
    let s = &import.sessions[0];
    check_invariants(s);
    let got: Vec<(String, Value)> = tool_calls(&s.turns)
        .iter()
        .map(|c| (c.name.clone(), c.input.clone()))
        .collect();
    assert_eq!(got, expected);
    let answers: Vec<&str> = doc["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["role"] == "tool")
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    let results: Vec<String> = s
        .turns
        .iter()
        .flat_map(|t| result_texts(t).into_iter().map(|(_, text)| text))
        .collect();
    assert_eq!(results, answers);
    assert_eq!(
        s.stats().user_turns,
        12,
        "the task and 11 results, no prompt of tool output"
    );

    // The real classic trajectory: every action is a call, every observation its result, and
    // the last (`submit`), which has no observation in `history`, gets the trajectory's.
    let rel = "swe-agent-trajectories/pydicom__pydicom-1458.traj";
    let import = read(rel);
    let s = &import.sessions[0];
    check_invariants(s);
    let names: Vec<&str> = tool_calls(&s.turns)
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "create",
            "edit",
            "bash",
            "find_file",
            "open",
            "edit",
            "edit",
            "edit",
            "edit",
            "bash",
            "bash",
            "submit"
        ]
    );
    let open = tool_calls(&s.turns)[4];
    assert_eq!(
        open.input["path"],
        "pydicom/pixel_data_handlers/numpy_handler.py"
    );
    assert_eq!(open.input["line_number"], 293);
    let results = tool_results(&s.turns);
    assert_eq!(results.len(), 12);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(fixture(rel)).unwrap()).unwrap();
    let last = doc["trajectory"].as_array().unwrap().last().unwrap();
    assert_eq!(
        result_texts(s.turns.last().unwrap())[0].1,
        last["observation"].as_str().unwrap()
    );
    // Prompts: the demonstration (context) and the task; no observation is a prompt.
    let prompts: Vec<&Turn> = s.turns.iter().filter(|t| t.is_user_prompt()).collect();
    assert_eq!(prompts.len(), 2);
    assert!(prompts[1].text().starts_with("We're currently solving"));
}

#[test]
fn a_retry_run_imports_every_attempt_as_its_own_session() {
    // RetryAgent writes its attempts under `attempts` and, once it chose, the best one's copy at
    // the top level; while it runs, only the attempts.
    let load = |rel: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(fixture(rel)).unwrap()).unwrap()
    };
    let first = load("swe-agent-trajectories/pydicom__pydicom-1458.traj");
    let second = load("swe-agent-trajectories/swe-agent__test-repo-i1.traj");
    let mut done = second.clone();
    done["attempts"] = serde_json::json!([first, second]);
    done["info"]["best_attempt_idx"] = 1.into();
    let running = serde_json::json!({"attempts": [first]});

    let dir = tempfile::tempdir().unwrap();
    for (name, doc) in [("done.traj", &done), ("running.traj", &running)] {
        std::fs::write(dir.path().join(name), doc.to_string()).unwrap();
        assert_eq!(
            import::detect_format(&dir.path().join(name)).unwrap(),
            LogFormat::SweAgent,
            "{name}"
        );
    }
    let import = import::read_path(dir.path()).unwrap();
    assert!(
        import.report.skipped_files.is_empty(),
        "{:?}",
        import.report.skipped_files
    );
    let ids: Vec<&str> = import
        .sessions
        .iter()
        .map(|s| s.session_id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["done#attempt-0", "done#attempt-1", "running#attempt-0"]
    );
    for s in &import.sessions {
        check_invariants(s);
    }
    let (a0, a1) = (&import.sessions[0], &import.sessions[1]);
    assert_eq!(
        a0.turns.len(),
        read("swe-agent-trajectories/pydicom__pydicom-1458.traj").sessions[0]
            .turns
            .len()
    );
    assert_eq!(
        a1.turns.len(),
        read("swe-agent-trajectories/swe-agent__test-repo-i1.traj").sessions[0]
            .turns
            .len()
    );
    assert_eq!(a1.meta["best_attempt"], true);
    assert!(!a0.meta.contains_key("best_attempt"));
    assert_eq!(
        (a0.meta["attempt"].clone(), a0.meta["attempts"].clone()),
        (0.into(), 2.into())
    );
}

// ---------------------------------------------------------------- detection and errors

#[test]
fn formats_are_detected_from_content() {
    let cases = [
        (
            "claude-code-sessions/spotter/short.jsonl",
            LogFormat::ClaudeCode,
        ),
        (
            "codex-gemini-fixtures/v1_claude_golden.jsonl",
            LogFormat::ClaudeCode,
        ),
        (
            "codex-gemini-fixtures/v1_codex_golden.jsonl",
            LogFormat::Codex,
        ),
        (
            "codex-gemini-fixtures/v1_gemini_golden.json",
            LogFormat::GeminiCli,
        ),
        (
            "codex-gemini-fixtures/rejections_gemini_with_tool_error.jsonl",
            LogFormat::GeminiCli,
        ),
        (
            "swe-agent-trajectories/swe-agent__test-repo-i1.traj",
            LogFormat::SweAgent,
        ),
    ];
    for (rel, format) in cases {
        assert_eq!(
            import::detect_format(&fixture(rel)).unwrap(),
            format,
            "{rel}"
        );
    }
    // A Claude Code transcript renamed to something meaningless is still recognized.
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("notes.txt");
    std::fs::copy(
        fixture("claude-code-sessions/spotter/short.jsonl"),
        &renamed,
    )
    .unwrap();
    assert_eq!(
        import::detect_format(&renamed).unwrap(),
        LogFormat::ClaudeCode
    );
}

#[test]
fn unknown_and_unsupported_files_get_clear_errors() {
    let readme = claude_dir().join("spotter/README.md");
    let err = import::read_path(&readme).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Import);
    assert!(
        err.message().contains(&readme.display().to_string()),
        "{}",
        err.message()
    );
    assert!(
        err.message()
            .contains("supported formats: Claude Code transcripts"),
        "{}",
        err.message()
    );

    let history = fixture("codex-gemini-fixtures/telemetry_claude_history.jsonl");
    let err = import::detect_format(&history).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Import);
    assert!(
        err.message().contains("prompt history"),
        "{}",
        err.message()
    );

    let err = import::read_path(&fixture("does/not/exist.jsonl")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.message().contains("does/not/exist.jsonl"));

    // A truncated JSON document cannot be imported as a whole.
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("session-cut.json");
    let bytes = std::fs::read(fixture("codex-gemini-fixtures/v1_gemini_golden.json")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = import::read_path(&cut).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Import);
    assert!(err.message().contains("truncated"), "{}", err.message());

    // In a folder the same files are skipped and listed, and the rest imports.
    std::fs::copy(history, dir.path().join("history.jsonl")).unwrap();
    std::fs::copy(
        fixture("codex-gemini-fixtures/v1_codex_golden.jsonl"),
        dir.path().join("rollout-1.jsonl"),
    )
    .unwrap();
    let import = import::read_path(dir.path()).unwrap();
    assert_eq!(import.sessions.len(), 1);
    assert_eq!(import.report.skipped_files.len(), 2);
    assert_eq!(import.report.files_skipped, 2);
    assert!(
        import
            .report
            .skipped_files
            .iter()
            .all(|f| f.reason.starts_with("cannot import"))
    );
}

#[test]
fn the_fixture_folders_import_with_only_prompt_logs_skipped() {
    let import = read("codex-gemini-fixtures");
    let skipped: Vec<String> = import
        .report
        .skipped_files
        .iter()
        .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        skipped,
        [
            "telemetry_claude_history.jsonl",
            "telemetry_codex_history.jsonl",
            "telemetry_gemini_logs.json"
        ]
    );
    let formats: Vec<LogFormat> = import.sessions.iter().map(|s| s.format).collect();
    assert_eq!(
        formats
            .iter()
            .filter(|f| **f == LogFormat::ClaudeCode)
            .count(),
        3
    );
    assert_eq!(
        formats.iter().filter(|f| **f == LogFormat::Codex).count(),
        3
    );
    assert_eq!(
        formats
            .iter()
            .filter(|f| **f == LogFormat::GeminiCli)
            .count(),
        2
    );
    for s in &import.sessions {
        check_invariants(s);
    }
    let import = read("swe-agent-trajectories");
    assert_eq!(import.sessions.len(), 3);
    assert!(import.report.skipped_files.is_empty());
}

#[test]
fn progress_reports_files_and_bytes_monotonically() {
    let mut seen: Vec<(u64, u64, u64, u64)> = Vec::new();
    let mut sessions = 0;
    let report = import::visit_path(
        &claude_dir(),
        &mut |p: &Progress<'_>| {
            seen.push((p.files_done, p.files_total, p.bytes_done, p.bytes_total))
        },
        &mut |_| {
            sessions += 1;
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(seen.first().unwrap().0, 0);
    let last = *seen.last().unwrap();
    assert_eq!(last.0, last.1);
    assert_eq!(last.2, last.3);
    assert_eq!(last.1, 21);
    assert_eq!(last.3, report.bytes);
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0 && w[0].2 <= w[1].2));
    assert_eq!(sessions, report.sessions);

    // An error from the session callback stops the walk and comes back unchanged.
    let err = import::visit_path(&claude_dir(), &mut |_| {}, &mut |_| {
        Err(codeoid_core::Error::new(ErrorKind::Busy, "store busy"))
    })
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
}

// ---------------------------------------------------------------- no input panics

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn real_lines() -> Vec<String> {
        let mut lines = Vec::new();
        for rel in [
            "claude-code-sessions/spotter/short.jsonl",
            "claude-code-sessions/claude-code-log-fixtures/edge_cases.jsonl",
            "codex-gemini-fixtures/rejections_codex_with_escalation.jsonl",
            "codex-gemini-fixtures/rejections_gemini_with_tool_error.jsonl",
        ] {
            let text = std::fs::read_to_string(fixture(rel)).unwrap();
            lines.extend(text.lines().map(str::to_owned));
        }
        lines
    }

    fn check_all_formats(bytes: &[u8]) {
        for format in LogFormat::ALL {
            if let Ok(import) = import::read_bytes(format, Path::new("agent-fuzz.jsonl"), bytes) {
                for session in &import.sessions {
                    check_invariants(session);
                }
                assert!(import.report.malformed.len() <= import::MAX_LISTED_ISSUES);
            }
            let _ = import::read_bytes(format, Path::new("fuzz.jsonl"), bytes);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn truncated_and_shuffled_real_lines_never_panic(
            picks in proptest::collection::vec((any::<prop::sample::Index>(), 0.0f64..1.2), 1..24)
        ) {
            let lines = real_lines();
            let mut out = String::new();
            for (index, cut) in picks {
                let line = index.get(&lines);
                let end = ((line.len() as f64) * cut) as usize;
                let end = (0..=end.min(line.len())).rev().find(|&e| line.is_char_boundary(e)).unwrap_or(0);
                out.push_str(&line[..end]);
                out.push('\n');
            }
            check_all_formats(out.as_bytes());
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            check_all_formats(&bytes);
        }

        #[test]
        fn arbitrary_json_records_never_panic(values in proptest::collection::vec(json_value(), 1..12)) {
            let text: Vec<String> = values.iter().map(Value::to_string).collect();
            check_all_formats(text.join("\n").as_bytes());
            // The same records as one JSON document (Gemini .json, SWE-agent .traj shapes).
            let doc = serde_json::json!({"sessionId": "s", "projectHash": "h", "messages": values.clone(), "history": values});
            check_all_formats(doc.to_string().as_bytes());
        }
    }

    /// JSON values biased towards the keys the importers look at.
    fn json_value() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec![
            "type",
            "message",
            "content",
            "role",
            "id",
            "uuid",
            "text",
            "tool_use_id",
            "usage",
            "payload",
            "timestamp",
            "isSidechain",
            "parentUuid",
            "toolCalls",
            "result",
            "tokens",
            "tool_calls",
            "tool_call_ids",
            "info",
            "call_id",
            "output",
            "arguments",
            "$set",
            "$rewindTo",
            "sessionId",
            "agentId",
            "thoughts",
            "requestId",
            "model",
        ]);
        let word = prop::sample::select(vec![
            "user",
            "assistant",
            "gemini",
            "tool_use",
            "tool_result",
            "text",
            "message",
            "function_call",
            "function_call_output",
            "response_item",
            "event_msg",
            "token_count",
            "thinking",
            "image",
            "error",
            "tool",
            "system",
            "m1",
            "c1",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            word.prop_map(Value::from),
            ".{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(key.clone(), inner, 0..6).prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }
}
