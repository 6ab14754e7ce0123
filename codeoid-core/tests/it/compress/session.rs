//! Replay of real Claude Code sessions: every Bash call recorded in the spotter transcripts
//! (`../shared/evaldata/claude-code-sessions/spotter`), its recorded output compressed by the
//! rule its command selects, with no fact lost.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use codeoid_core::compress::Registry;
use serde_json::Value;

use super::workspace_root;

/// One recorded Bash call: the command and the text Claude Code showed the model.
pub(crate) struct ShellCall {
    pub(crate) command: String,
    pub(crate) output: String,
}

fn spotter_dir() -> PathBuf {
    workspace_root().join("../shared/evaldata/claude-code-sessions/spotter")
}

fn transcripts(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Every Bash call with a result in the spotter transcripts, main sessions and subagents.
pub(crate) fn shell_calls() -> Vec<ShellCall> {
    let mut calls = Vec::new();
    for file in transcripts(&spotter_dir()) {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut commands: HashMap<String, String> = HashMap::new();
        for line in text.lines() {
            let Ok(record) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let Some(parts) = record["message"]["content"].as_array() else {
                continue;
            };
            for part in parts {
                if part["type"] == "tool_use" && part["name"] == "Bash" {
                    if let (Some(id), Some(command)) =
                        (part["id"].as_str(), part["input"]["command"].as_str())
                    {
                        commands.insert(id.to_owned(), command.to_owned());
                    }
                } else if part["type"] == "tool_result" {
                    let Some(command) = part["tool_use_id"]
                        .as_str()
                        .and_then(|id| commands.remove(id))
                    else {
                        continue;
                    };
                    calls.push(ShellCall {
                        command,
                        output: result_text(&part["content"]),
                    });
                }
            }
        }
    }
    calls
}

#[test]
fn recorded_session_outputs_lose_no_fact() {
    let registry = Registry::builtin().unwrap();
    let calls = shell_calls();
    assert!(calls.len() >= 200, "only {} Bash calls found", calls.len());
    let mut compressed_count = 0;
    for call in &calls {
        let Some(compressed) = registry.compress(&call.command, call.output.as_bytes()) else {
            continue;
        };
        compressed_count += 1;
        let missing = registry
            .missing_facts(&compressed.rule, call.output.as_bytes(), &compressed.text)
            .unwrap();
        assert!(
            missing.is_empty(),
            "{:?} lost facts: {missing:#?}",
            call.command
        );
    }
    assert!(compressed_count > 0);
}

#[test]
fn large_recorded_runs_failing_for_one_reason_shrink_by_a_third() {
    let registry = Registry::builtin().unwrap();
    let (mut runs, mut bytes_in, mut bytes_out) = (0, 0, 0);
    for call in shell_calls() {
        if call.output.len() < 4096 || registry.rule_for(&call.command) != Some("mix-test") {
            continue;
        }
        // A run of at least 4 KiB where at least three failures raise the same exception: the
        // repeated stack frames and advice are what deduplication is for.
        let mut errors: HashMap<&str, usize> = HashMap::new();
        for line in call
            .output
            .lines()
            .filter(|l| l.trim_start().starts_with("** ("))
        {
            *errors.entry(line).or_default() += 1;
        }
        if errors.values().all(|&n| n < 3) {
            continue;
        }
        let compressed = registry
            .compress(&call.command, call.output.as_bytes())
            .unwrap_or_else(|| panic!("{:?} was not compressed", call.command));
        runs += 1;
        bytes_in += compressed.bytes_in;
        bytes_out += compressed.bytes_out;
    }
    assert!(
        runs >= 3,
        "only {runs} large recorded runs fail for one reason"
    );
    assert!(
        bytes_out * 3 < bytes_in * 2,
        "kept {bytes_out} of {bytes_in} bytes"
    );
}
