//! Which newest turns of a conversation fit a token budget on a target backend: the pure piece a
//! fork to another backend needs.
//!
//! The window keeps the newest turns verbatim and starts at a user turn (or the first turn) where
//! no tool result after the cut answers a call before it, so a call is never separated from its
//! result. Older turns are reported as omitted so the caller can announce them (they stay in
//! memory, reachable through the memory tools); nothing here drops them silently.
//!
//! Tokens are estimated, not counted: characters / 4 per text, arguments and thinking that the
//! target would actually receive (foreign thinking only with
//! [`ForeignThinking::AsText`](super::ForeignThinking::AsText)), [`IMAGE_TOKENS`] per image and
//! [`PART_OVERHEAD_TOKENS`] per part. Good enough to choose a cut; the provider's count is the
//! truth.

use std::collections::HashMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::canonical::{Part, Role, Thinking, ToolResultPart, Turn};

use super::backend::{Backend, ForeignThinking, Options};
use super::thinking::{self, Verdict};

/// Estimated tokens of one image.
pub const IMAGE_TOKENS: u64 = 1_600;
/// Estimated framing tokens of one content part.
pub const PART_OVERHEAD_TOKENS: u64 = 4;

/// The turns to keep and those left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Index of the first kept turn; `turns[start..]` are kept verbatim.
    pub start: usize,
    /// The turns left out (`0..start`), oldest first.
    pub omitted: Range<usize>,
    /// Estimated tokens of the kept turns.
    pub kept_tokens: u64,
    /// Estimated tokens of the omitted turns.
    pub omitted_tokens: u64,
    /// `false` when even the smallest valid window (from the last valid cut) exceeds the budget;
    /// the window is then that smallest one.
    pub fits: bool,
}

fn chars(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

fn thinking_tokens(t: &Thinking, owner: &Turn, backend: &Backend, options: &Options) -> u64 {
    match thinking::classify(t, owner.provider.as_deref(), backend, options) {
        Verdict::Native => chars(&t.text) + t.signature.as_ref().map_or(0, |s| chars(&s.value)),
        Verdict::Foreign if options.foreign_thinking == ForeignThinking::AsText && !t.redacted => {
            chars(&t.text)
        }
        Verdict::Foreign => 0,
    }
}

/// Estimated tokens `turn` costs on `backend`.
pub(crate) fn turn_tokens(turn: &Turn, backend: &Backend, options: &Options) -> u64 {
    let mut total = 0;
    for part in &turn.parts {
        total += PART_OVERHEAD_TOKENS
            + match part {
                Part::Text { text } => chars(text),
                Part::Image(_) => IMAGE_TOKENS,
                Part::Thinking(t) => thinking_tokens(t, turn, backend, options),
                Part::ToolCall(call) => chars(&call.name) + chars(&call.input.to_string()),
                Part::ToolResult(result) => result
                    .parts
                    .iter()
                    .map(|p| match p {
                        ToolResultPart::Text { text } => chars(text),
                        ToolResultPart::Image(_) => IMAGE_TOKENS,
                    })
                    .sum(),
                Part::Error { .. } => 0,
            };
    }
    total
}

/// The newest turns of `turns` that fit `budget_tokens` on `backend`, cut where no tool call is
/// separated from its result; see the module documentation.
pub fn fit_window(
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    budget_tokens: u64,
) -> Window {
    let n = turns.len();
    // A cut at i is invalid when a result at or after i answers a call before i.
    let mut call_turn: HashMap<&str, usize> = HashMap::new();
    let mut blocked = vec![0i64; n + 1];
    for (t, turn) in turns.iter().enumerate() {
        for part in &turn.parts {
            match part {
                Part::ToolCall(call) => {
                    call_turn.insert(&call.id, t);
                }
                Part::ToolResult(result) => {
                    if let Some(&c) = call_turn.get(result.call_id.as_str()) {
                        if c < t {
                            blocked[c + 1] += 1;
                            blocked[t + 1] -= 1;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let mut valid = vec![false; n];
    let mut open = 0;
    for (i, turn) in turns.iter().enumerate() {
        open += blocked[i];
        valid[i] = i == 0 || (open == 0 && turn.role == Role::User);
    }
    let costs: Vec<u64> = turns
        .iter()
        .map(|t| turn_tokens(t, backend, options))
        .collect();
    let mut suffix = vec![0u64; n + 1];
    for i in (0..n).rev() {
        suffix[i] = suffix[i + 1] + costs[i];
    }
    let fitting = (0..n).find(|&i| valid[i] && suffix[i] <= budget_tokens);
    let (start, fits) = match fitting {
        Some(i) => (i, true),
        None => ((0..n).rev().find(|&i| valid[i]).unwrap_or(0), n == 0),
    };
    Window {
        start,
        omitted: 0..start,
        kept_tokens: suffix[start],
        omitted_tokens: suffix[0] - suffix[start],
        fits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::{ToolCall, ToolResult};
    use crate::translate::Format;
    use serde_json::json;

    fn exchange(id: &str, output: &str) -> [Turn; 2] {
        [
            Turn::new(
                Role::Assistant,
                vec![Part::ToolCall(ToolCall {
                    id: id.into(),
                    provider_id: None,
                    name: "Read".into(),
                    input: json!({"file_path": "a.rs"}),
                })],
            ),
            Turn::new(
                Role::User,
                vec![Part::ToolResult(ToolResult {
                    call_id: id.into(),
                    parts: vec![ToolResultPart::Text {
                        text: output.into(),
                    }],
                    is_error: false,
                })],
            ),
        ]
    }

    #[test]
    fn keeps_the_newest_turns_and_never_splits_a_call_from_its_result() {
        let mut turns = vec![Turn::user_text("start")];
        turns.extend(exchange("a", &"x".repeat(4_000)));
        turns.push(Turn::user_text("next"));
        turns.extend(exchange("b", "short"));
        turns.push(Turn::user_text("now this"));
        let backend = Backend::new(Format::Gemini);
        let options = Options::default();
        let all = fit_window(&turns, &backend, &options, u64::MAX);
        assert_eq!((all.start, all.fits, all.omitted_tokens), (0, true, 0));
        let window = fit_window(&turns, &backend, &options, 200);
        assert!(window.fits);
        // Turn 2 holds the big result of the call in turn 1 and turn 5 the result of the call in
        // turn 4, so the only cuts are 0, 3 and 6; 3 is the oldest that fits.
        assert_eq!(window.start, 3);
        assert_eq!(window.omitted, 0..3);
        assert!(window.omitted_tokens > 1_000);
        assert!(window.kept_tokens <= 200);
        let tiny = fit_window(&turns, &backend, &options, 1);
        assert!(!tiny.fits);
        assert_eq!(tiny.start, 6);
    }

    #[test]
    fn an_empty_conversation_fits() {
        let window = fit_window(
            &[],
            &Backend::new(Format::Anthropic),
            &Options::default(),
            0,
        );
        assert_eq!((window.start, window.fits), (0, true));
    }
}
