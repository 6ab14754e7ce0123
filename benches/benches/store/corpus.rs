//! The evaldata corpus the store benches record: every real Claude Code tool call and prompt,
//! and the synthetic exchanges (prompt, two real calls, answer) built from them.

use std::path::Path;

use codeoid_core::canonical::{Part, Role, ToolCall, ToolResult, ToolResultPart, Turn};
use serde_json::Value;

/// One real tool call: name, input, output.
pub(crate) struct RealCall {
    pub(crate) name: String,
    pub(crate) input: Value,
    pub(crate) output: String,
}

/// Every tool call with a text result in the evaldata Claude Code logs, and the prompts.
pub(crate) fn corpus() -> (Vec<RealCall>, Vec<String>) {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir)
            .expect("evaldata is readable")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/evaldata/claude-code-sessions");
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    let mut inputs = std::collections::HashMap::new();
    let mut calls = Vec::new();
    let mut prompts = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("evaldata log is readable");
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let content = v.pointer("/message/content");
            if let Some(Value::String(s)) = content {
                if v.get("type").and_then(Value::as_str) == Some("user") {
                    prompts.push(s.clone());
                }
            }
            for block in content.and_then(Value::as_array).into_iter().flatten() {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                        let name = block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        let input = block.get("input").cloned().unwrap_or(Value::Null);
                        inputs.insert(id.to_owned(), (name.to_owned(), input));
                    }
                    Some("tool_result") => {
                        let id = block
                            .get("tool_use_id")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        let output = match block.get("content") {
                            Some(Value::String(s)) => s.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        if let Some((name, input)) = inputs.remove(id) {
                            calls.push(RealCall {
                                name,
                                input,
                                output,
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(
        calls.len() > 700 && prompts.len() > 10,
        "evaldata corpus is incomplete"
    );
    (calls, prompts)
}

fn assistant_call(id: &str, call: &RealCall) -> Turn {
    Turn::new(
        Role::Assistant,
        vec![
            Part::Text {
                text: "Let me check that.".to_owned(),
            },
            Part::ToolCall(ToolCall {
                id: id.to_owned(),
                provider_id: None,
                name: call.name.clone(),
                input: call.input.clone(),
            }),
        ],
    )
}

fn tool_result(id: &str, call: &RealCall) -> Turn {
    Turn::new(
        Role::User,
        vec![Part::ToolResult(ToolResult {
            call_id: id.to_owned(),
            parts: vec![ToolResultPart::Text {
                text: call.output.clone(),
            }],
            is_error: false,
        })],
    )
}

/// `n` exchanges starting at corpus position `start`: prompt, two calls with results, answer.
/// Each exchange yields three episodes (two tool calls, and the answer once the next prompt
/// arrives).
pub(crate) fn exchanges(
    calls: &[RealCall],
    prompts: &[String],
    start: usize,
    n: usize,
) -> Vec<Turn> {
    let mut turns = Vec::with_capacity(n * 6);
    for i in start..start + n {
        let mut prompt = Turn::user_text(prompts[i % prompts.len()].clone());
        prompt.id = Some(format!("u{i}"));
        turns.push(prompt);
        for k in 0..2 {
            let call = &calls[(2 * i + k) % calls.len()];
            let id = format!("c{i}_{k}");
            let mut a = assistant_call(&id, call);
            a.id = Some(format!("a{i}_{k}"));
            let mut r = tool_result(&id, call);
            r.id = Some(format!("r{i}_{k}"));
            turns.push(a);
            turns.push(r);
        }
        let mut answer = Turn::assistant_text(format!("Done with step {i}."));
        answer.id = Some(format!("f{i}"));
        turns.push(answer);
    }
    turns
}
