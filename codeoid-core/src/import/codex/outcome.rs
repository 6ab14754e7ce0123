//! Whether a Codex tool call failed. A rollout's `function_call_output.output` is the bare text
//! the model saw (codex-rs serializes `FunctionCallOutputPayload` as its `content` string, or its
//! content items; its `success` flag is never written), so the outcome is read from what else
//! the rollout holds, first match wins:
//! 1. the call's `event_msg` `exec_command_end` (`exit_code` ≠ 0 failed) or `patch_apply_end`
//!    (`success`), keyed by `call_id`, when the rollout recorded those events;
//! 2. an output object's `success` (older rollouts wrote `{content, success}`);
//! 3. the output text: the `Exit code: N` header of a shell tool's freeform output, or the
//!    `metadata.exit_code` of its structured JSON output (`{"output", "metadata": {"exit_code",
//!    "duration_seconds"}}`), N ≠ 0 failed.
//!
//! Anything else counts as a success: nothing here guesses from the words of an output.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::canonical::ToolResultPart;
use crate::import::fields::str_field;

/// `call_id` → failed, from the rollout's `exec_command_end` and `patch_apply_end` events.
pub(super) fn event_outcomes(records: &[(u64, Map<String, Value>)]) -> HashMap<String, bool> {
    let mut out = HashMap::new();
    for (_, obj) in records {
        if str_field(obj, "type") != Some("event_msg") {
            continue;
        }
        let Some(event) = obj.get("payload").and_then(Value::as_object) else {
            continue;
        };
        let Some(call_id) = str_field(event, "call_id") else {
            continue;
        };
        let failed = match str_field(event, "type") {
            Some("exec_command_end") => event
                .get("exit_code")
                .and_then(Value::as_i64)
                .map(|code| code != 0),
            Some("patch_apply_end") => event.get("success").and_then(Value::as_bool).map(|ok| !ok),
            _ => None,
        };
        if let Some(failed) = failed {
            out.insert(call_id.to_owned(), failed);
        }
    }
    out
}

/// `true` when an output's text reports a non-zero exit code (rule 3 of the module docs).
pub(super) fn text_says_failed(parts: &[ToolResultPart]) -> bool {
    let Some(ToolResultPart::Text { text }) = parts.first() else {
        return false;
    };
    let text = text.trim_start();
    let code = match text.strip_prefix("Exit code:") {
        Some(rest) => rest
            .lines()
            .next()
            .and_then(|n| n.trim().parse::<i64>().ok()),
        None if text.starts_with('{') => serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.get("metadata")?.get("exit_code")?.as_i64()),
        None => None,
    };
    code.is_some_and(|code| code != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Vec<ToolResultPart> {
        vec![ToolResultPart::Text { text: t.to_owned() }]
    }

    #[test]
    fn exit_codes_in_either_output_shape_decide() {
        assert!(text_says_failed(&text(
            "Exit code: 101\nWall time: 2.1 seconds\nOutput:\nerror"
        )));
        assert!(!text_says_failed(&text(
            "Exit code: 0\nWall time: 1 seconds\nOutput:\n"
        )));
        let structured = r#"{"output":"boom\n","metadata":{"exit_code":2,"duration_seconds":0.1}}"#;
        assert!(text_says_failed(&text(structured)));
        let fine = r#"{"output":"Success.","metadata":{"exit_code":0,"duration_seconds":0.0}}"#;
        assert!(!text_says_failed(&text(fine)));
        // Words alone decide nothing.
        assert!(!text_says_failed(&text("error: the build failed")));
        assert!(!text_says_failed(&text("Exit code: soon")));
        assert!(!text_says_failed(&[]));
    }
}
