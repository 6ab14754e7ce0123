//! The provider-independent repairs every translation starts with: pairing tool calls with their
//! results in the shape all four providers demand.
//!
//! Canonical turns come from logs, importers and harnesses, and are not always in the strict shape
//! providers accept. This module turns them into a plan that is, reporting every repair:
//! - Every turn passes [`Turn::validate`]; tool call ids are unique across the conversation
//!   (otherwise an [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) error names both
//!   turns: a duplicated id cannot be paired unambiguously, so it is never repaired).
//! - Consecutive assistant turns from the first one holding tool calls on are merged into one,
//!   because every provider wants the results directly after the message with the calls.
//! - All results answering an assistant block go to the start of the next user turn, in call
//!   order (Gemini pairs by position; Anthropic wants results before any text), even when the log
//!   had them spread over several user turns or after text.
//! - A call without a result (cancelled, interrupted) gets a synthesized error result saying so.
//!   Calls of a final assistant turn are left pending: the caller is about to run them.
//! - A result without a matching call in the preceding assistant block (or a second result for
//!   one call) is sent as plain user text.
//! - Harness error parts and empty turns are left out.
//!
//! It does not decide anything provider-specific: thinking, images and ids are the provider
//! modules' business.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::canonical::{Image, Part, Role, Thinking, ToolCall, ToolResult, ToolResultPart, Turn};
use crate::error::{Error, Result};

use super::loss::{LossKind, Losses};

/// The text of the result synthesized for a call that never got one.
pub const CANCELLED_RESULT: &str =
    "[no result was recorded for this tool call: it was cancelled or interrupted]";

/// Turns in the shape providers accept, with provenance for loss reports.
#[derive(Debug)]
pub(crate) struct Plan<'a> {
    pub(crate) turns: Vec<PlanTurn<'a>>,
    pub(crate) losses: Losses,
}

/// One message-to-be.
#[derive(Debug)]
pub(crate) struct PlanTurn<'a> {
    /// Index of the (first) canonical turn it comes from.
    pub(crate) index: usize,
    pub(crate) role: Role,
    pub(crate) pieces: Vec<Piece<'a>>,
}

/// One part-to-be and where it came from (turn, part) in the input.
#[derive(Debug)]
pub(crate) struct Piece<'a> {
    pub(crate) at: (usize, usize),
    pub(crate) kind: PieceKind<'a>,
}

#[derive(Debug)]
pub(crate) enum PieceKind<'a> {
    Text(Cow<'a, str>),
    Image(&'a Image),
    Thinking(&'a Thinking),
    Call(&'a ToolCall),
    /// A result with the name of the call it answers (Gemini needs it).
    Result {
        result: Cow<'a, ToolResult>,
        name: &'a str,
    },
}

struct Open<'a> {
    call: &'a ToolCall,
    at: (usize, usize),
}

/// Validates `turns` and plans them; see the module documentation.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] when a turn fails [`Turn::validate`] (the message names the
/// turn) or two tool calls share an id.
pub(crate) fn plan(turns: &[Turn]) -> Result<Plan<'_>> {
    check(turns)?;
    let mut planner = Planner {
        turns,
        out: Vec::with_capacity(turns.len()),
        losses: Losses::default(),
    };
    let mut open = Vec::new();
    let mut start = 0;
    while start < turns.len() {
        let role = turns[start].role;
        let end = turns[start..]
            .iter()
            .position(|t| t.role != role)
            .map_or(turns.len(), |len| start + len);
        match role {
            Role::Assistant => open = planner.assistant_block(start, end),
            Role::User => {
                planner.user_block(start, end, &open);
                open.clear();
            }
        }
        start = end;
    }
    let Planner {
        mut out,
        mut losses,
        ..
    } = planner;
    out.retain(|t| {
        if t.pieces.is_empty() && turns[t.index].parts.is_empty() {
            losses.turn(t.index, LossKind::Dropped, "empty turn left out");
        }
        !t.pieces.is_empty()
    });
    Ok(Plan { turns: out, losses })
}

fn check(turns: &[Turn]) -> Result<()> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (index, turn) in turns.iter().enumerate() {
        turn.validate()
            .map_err(|e| Error::invalid_input(format!("turn {index}: {}", e.message())))?;
        for part in &turn.parts {
            if let Part::ToolCall(call) = part {
                if let Some(first) = seen.insert(&call.id, index) {
                    return Err(Error::invalid_input(format!(
                        "tool call id {:?} appears in turn {first} and turn {index}; tool call \
                         ids must be unique within a conversation",
                        call.id
                    )));
                }
            }
        }
    }
    Ok(())
}

struct Planner<'a> {
    turns: &'a [Turn],
    out: Vec<PlanTurn<'a>>,
    losses: Losses,
}

impl<'a> Planner<'a> {
    fn push_turn(&mut self, index: usize, role: Role) {
        self.out.push(PlanTurn {
            index,
            role,
            pieces: Vec::new(),
        });
    }

    fn push_piece(&mut self, at: (usize, usize), kind: PieceKind<'a>) {
        if let Some(turn) = self.out.last_mut() {
            turn.pieces.push(Piece { at, kind });
        }
    }

    fn assistant_block(&mut self, start: usize, end: usize) -> Vec<Open<'a>> {
        let turns = self.turns;
        let merge_from = (start..end.saturating_sub(1)).find(|&t| {
            turns[t]
                .parts
                .iter()
                .any(|p| matches!(p, Part::ToolCall(_)))
        });
        let mut open = Vec::new();
        for (t, turn) in turns.iter().enumerate().take(end).skip(start) {
            match merge_from {
                Some(first) if t > first => self.losses.turn(
                    t,
                    LossKind::Merged,
                    format!(
                        "merged into assistant turn {first}: results must directly follow the \
                         turn with the tool calls"
                    ),
                ),
                _ => self.push_turn(t, Role::Assistant),
            }
            for (p, part) in turn.parts.iter().enumerate() {
                let at = (t, p);
                match part {
                    Part::Text { text } => {
                        self.push_piece(at, PieceKind::Text(Cow::Borrowed(text)))
                    }
                    Part::Image(image) => self.push_piece(at, PieceKind::Image(image)),
                    Part::Thinking(thinking) => self.push_piece(at, PieceKind::Thinking(thinking)),
                    Part::ToolCall(call) => {
                        open.push(Open { call, at });
                        self.push_piece(at, PieceKind::Call(call));
                    }
                    Part::Error { .. } => self.drop_error(at),
                    // Turn::validate rejects results in assistant turns; nothing to send.
                    Part::ToolResult(_) => {}
                }
            }
        }
        open
    }

    fn user_block(&mut self, start: usize, end: usize, open: &[Open<'a>]) {
        let turns = self.turns;
        let index: HashMap<&str, usize> = open
            .iter()
            .enumerate()
            .map(|(k, o)| (o.call.id.as_str(), k))
            .collect();
        let mut answers: Vec<Option<(&'a ToolResult, (usize, usize))>> = vec![None; open.len()];
        for (t, turn) in turns.iter().enumerate().take(end).skip(start) {
            for (p, part) in turn.parts.iter().enumerate() {
                if let Part::ToolResult(result) = part {
                    if let Some(&k) = index.get(result.call_id.as_str()) {
                        if answers[k].is_none() {
                            answers[k] = Some((result, (t, p)));
                        }
                    }
                }
            }
        }
        self.push_turn(start, Role::User);
        // Results stay where they were only while every earlier one did too.
        let mut in_place = true;
        for (k, (o, answer)) in open.iter().zip(&answers).enumerate() {
            let name = o.call.name.as_str();
            in_place &= answer.is_some_and(|(_, at)| at == (start, k));
            match answer {
                Some((result, at)) => {
                    if !in_place {
                        self.losses.part(
                            *at,
                            LossKind::Moved,
                            format!(
                                "result of tool call {:?} moved to position {k} of turn {start}: \
                                 results go first, in call order, right after their calls",
                                o.call.id
                            ),
                        );
                    }
                    let result = Cow::Borrowed(*result);
                    self.push_piece(*at, PieceKind::Result { result, name });
                }
                None => {
                    self.losses.part(
                        o.at,
                        LossKind::Synthesized,
                        format!(
                            "tool call {:?} ({name}) has no result; an error result saying it \
                             was cancelled was added",
                            o.call.id
                        ),
                    );
                    let result = Cow::Owned(ToolResult {
                        call_id: o.call.id.clone(),
                        parts: vec![ToolResultPart::Text {
                            text: CANCELLED_RESULT.to_owned(),
                        }],
                        is_error: true,
                    });
                    self.push_piece(o.at, PieceKind::Result { result, name });
                }
            }
        }
        for (t, turn) in turns.iter().enumerate().take(end).skip(start) {
            if t != start {
                self.push_turn(t, Role::User);
            }
            for (p, part) in turn.parts.iter().enumerate() {
                let at = (t, p);
                match part {
                    Part::ToolResult(_) if answers.iter().flatten().any(|(_, a)| *a == at) => {}
                    Part::ToolResult(result) => self.orphan(result, at),
                    Part::Text { text } => {
                        self.push_piece(at, PieceKind::Text(Cow::Borrowed(text)))
                    }
                    Part::Image(image) => self.push_piece(at, PieceKind::Image(image)),
                    Part::Error { .. } => self.drop_error(at),
                    // Turn::validate rejects calls and thinking in user turns.
                    Part::ToolCall(_) | Part::Thinking(_) => {}
                }
            }
        }
    }

    fn orphan(&mut self, result: &'a ToolResult, at: (usize, usize)) {
        self.losses.part(
            at,
            LossKind::AsText,
            format!(
                "result for tool call {:?} has no matching call in the preceding assistant turn; \
                 sent as user text",
                result.call_id
            ),
        );
        let status = if result.is_error { "failed " } else { "" };
        let mut text = format!(
            "[{status}result of tool call {:?}, whose call is not in this conversation]",
            result.call_id
        );
        for part in &result.parts {
            if let ToolResultPart::Text { text: t } = part {
                text.push('\n');
                text.push_str(t);
            }
        }
        self.push_piece(at, PieceKind::Text(Cow::Owned(text)));
        for part in &result.parts {
            if let ToolResultPart::Image(image) = part {
                self.push_piece(at, PieceKind::Image(image));
            }
        }
    }

    fn drop_error(&mut self, at: (usize, usize)) {
        self.losses.part(
            at,
            LossKind::Dropped,
            "harness error part; never sent to a provider",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use serde_json::json;

    fn call(id: &str) -> Part {
        Part::ToolCall(ToolCall {
            id: id.into(),
            provider_id: None,
            name: "read".into(),
            input: json!({}),
        })
    }

    fn result(id: &str) -> Part {
        Part::ToolResult(ToolResult {
            call_id: id.into(),
            parts: vec![ToolResultPart::Text { text: "ok".into() }],
            is_error: false,
        })
    }

    fn kinds(plan: &Plan<'_>) -> Vec<LossKind> {
        plan.losses.list.iter().map(|l| l.kind).collect()
    }

    #[test]
    fn well_formed_conversations_need_no_repair() {
        let turns = vec![
            Turn::user_text("go"),
            Turn::new(Role::Assistant, vec![call("a"), call("b")]),
            Turn::new(
                Role::User,
                vec![result("a"), result("b"), Part::Text { text: "and".into() }],
            ),
        ];
        let plan = plan(&turns).unwrap();
        assert!(plan.losses.list.is_empty());
        assert_eq!(plan.turns.len(), 3);
    }

    #[test]
    fn results_are_hoisted_into_one_turn_in_call_order() {
        let turns = vec![
            Turn::new(Role::Assistant, vec![call("a"), call("b")]),
            Turn::new(
                Role::User,
                vec![Part::Text { text: "hi".into() }, result("b")],
            ),
            Turn::new(Role::User, vec![result("a")]),
        ];
        let plan = plan(&turns).unwrap();
        assert_eq!(plan.turns.len(), 2, "the emptied third turn is gone");
        let ids: Vec<_> = plan.turns[1]
            .pieces
            .iter()
            .map(|p| match &p.kind {
                PieceKind::Result { result, .. } => result.call_id.clone(),
                PieceKind::Text(t) => t.to_string(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(ids, ["a", "b", "hi"]);
        assert_eq!(kinds(&plan), [LossKind::Moved, LossKind::Moved]);
    }

    #[test]
    fn duplicate_call_ids_are_an_error_naming_both_turns() {
        let turns = vec![
            Turn::new(Role::Assistant, vec![call("x")]),
            Turn::new(Role::User, vec![result("x")]),
            Turn::new(Role::Assistant, vec![call("x")]),
        ];
        let err = plan(&turns).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(
            err.message().contains("\"x\" appears in turn 0 and turn 2"),
            "{err}"
        );
    }

    #[test]
    fn invalid_turns_are_rejected_with_their_index() {
        let turns = vec![Turn::user_text("a"), Turn::new(Role::User, vec![call("x")])];
        let err = plan(&turns).unwrap_err();
        assert!(
            err.message().starts_with("turn 1: part 0 of a user turn"),
            "{err}"
        );
    }
}
