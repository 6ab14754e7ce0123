//! The provider-independent repairs every translation starts with: pairing tool calls with their
//! results in the shape all four providers demand.
//!
//! Canonical turns come from logs, importers and harnesses, and are not always in the strict shape
//! providers accept. This module turns them into a plan that is, reporting every repair:
//! - Every turn passes [`Turn::validate`]; tool call ids are unique within an assistant block
//!   (a run of consecutive assistant turns, sent as one message), otherwise an
//!   [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) error names both turns: results
//!   could not be paired with such calls unambiguously.
//! - An id that a later block uses again (a harness that numbers calls per request: `call_0` for a
//!   Read, answered, then `call_0` for a Bash) is sent, with the results answering that block, as
//!   `{id}-{n}`, the smallest `n >= 2` no call of the conversation has, because providers require
//!   ids unique across the request. Deterministic, and reported as changed.
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
use std::collections::{HashMap, HashSet};

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
    /// A call; owned when its id had to be replaced (see the module documentation).
    Call(Cow<'a, ToolCall>),
    /// A result with the name of the call it answers (Gemini needs it).
    Result {
        result: Cow<'a, ToolResult>,
        name: &'a str,
    },
}

struct Open<'a> {
    /// The call as in the input: its results carry its id.
    call: &'a ToolCall,
    /// The id it is sent with (a new one when an earlier block used its id).
    sent_id: Cow<'a, str>,
    at: (usize, usize),
}

/// Validates `turns` and plans them; see the module documentation.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] when a turn fails [`Turn::validate`] (the message names the
/// turn) or two tool calls of one assistant block share an id.
pub(crate) fn plan(turns: &[Turn]) -> Result<Plan<'_>> {
    let renamed = check(turns)?;
    let mut planner = Planner {
        turns,
        renamed,
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

/// A call whose id an earlier assistant block already used: the id it is sent with, and the
/// turn of the first call with its id.
#[derive(Debug)]
struct Renamed {
    id: String,
    first: usize,
}

/// Validates every turn, rejects an id repeated within one assistant block and picks new ids for
/// calls reusing an id of an earlier block, by (turn, part).
fn check(turns: &[Turn]) -> Result<HashMap<(usize, usize), Renamed>> {
    for (index, turn) in turns.iter().enumerate() {
        turn.validate()
            .map_err(|e| Error::invalid_input(format!("turn {index}: {}", e.message())))?;
    }
    let calls = |t: usize| {
        turns[t]
            .parts
            .iter()
            .enumerate()
            .filter_map(move |(p, part)| match part {
                Part::ToolCall(call) => Some(((t, p), call.id.as_str())),
                _ => None,
            })
    };
    // Every id in use, so that a new one never collides.
    let mut taken: HashSet<Cow<'_, str>> = (0..turns.len())
        .flat_map(calls)
        .map(|(_, id)| Cow::Borrowed(id))
        .collect();
    // Turn of the first call with each id, over the blocks before the current one.
    let mut earlier: HashMap<&str, usize> = HashMap::new();
    let mut renamed = HashMap::new();
    let mut start = 0;
    while start < turns.len() {
        let end = turns[start..]
            .iter()
            .position(|t| t.role != turns[start].role)
            .map_or(turns.len(), |len| start + len);
        let mut block: HashMap<&str, usize> = HashMap::new();
        for (at, id) in (start..end).flat_map(calls) {
            if let Some(first) = block.insert(id, at.0) {
                return Err(Error::invalid_input(format!(
                    "tool call id {id:?} appears in turn {first} and turn {}; the calls of one \
                     assistant message (consecutive assistant turns are sent as one) must have \
                     distinct ids, or their results cannot be told apart",
                    at.0
                )));
            }
            if let Some(&first) = earlier.get(id) {
                let new = (2u64..)
                    .map(|n| format!("{id}-{n}"))
                    .find(|candidate| !taken.contains(candidate.as_str()))
                    .unwrap_or_default();
                taken.insert(Cow::Owned(new.clone()));
                renamed.insert(at, Renamed { id: new, first });
            }
        }
        for (id, turn) in block {
            earlier.entry(id).or_insert(turn);
        }
        start = end;
    }
    Ok(renamed)
}

struct Planner<'a> {
    turns: &'a [Turn],
    renamed: HashMap<(usize, usize), Renamed>,
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
                        let sent = match self.renamed.get(&at) {
                            None => Cow::Borrowed(call),
                            Some(Renamed { id, first }) => {
                                self.losses.part(
                                    at,
                                    LossKind::Changed,
                                    format!(
                                        "tool call id {:?} was already used by a call in turn \
                                         {first}; sent as {id:?} with its results (providers \
                                         require distinct ids), which reads back as is",
                                        call.id
                                    ),
                                );
                                Cow::Owned(ToolCall {
                                    id: id.clone(),
                                    ..call.clone()
                                })
                            }
                        };
                        open.push(Open {
                            call,
                            sent_id: self
                                .renamed
                                .get(&at)
                                .map_or(Cow::Borrowed(call.id.as_str()), |r| {
                                    Cow::Owned(r.id.clone())
                                }),
                            at,
                        });
                        self.push_piece(at, PieceKind::Call(sent));
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
                    let result = if o.sent_id == o.call.id {
                        Cow::Borrowed(*result)
                    } else {
                        self.losses.part(
                            *at,
                            LossKind::Changed,
                            format!(
                                "result of tool call {:?} sent with its call's new id {:?}",
                                o.call.id, o.sent_id
                            ),
                        );
                        Cow::Owned(ToolResult {
                            call_id: o.sent_id.clone().into_owned(),
                            ..(*result).clone()
                        })
                    };
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
                        call_id: o.sent_id.clone().into_owned(),
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
    use crate::translate::Location;
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
    fn duplicate_call_ids_in_one_assistant_block_are_an_error_naming_both_turns() {
        // Consecutive assistant turns are one message: their results could not be told apart.
        let turns = vec![
            Turn::new(Role::Assistant, vec![call("x")]),
            Turn::new(Role::Assistant, vec![call("x")]),
            Turn::new(Role::User, vec![result("x")]),
        ];
        let err = plan(&turns).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(
            err.message().contains("\"x\" appears in turn 0 and turn 1"),
            "{err}"
        );
    }

    fn sent_ids(plan: &Plan<'_>) -> Vec<String> {
        plan.turns
            .iter()
            .flat_map(|t| &t.pieces)
            .filter_map(|p| match &p.kind {
                PieceKind::Call(call) => Some(format!("call {}", call.id)),
                PieceKind::Result { result, .. } => Some(format!("result {}", result.call_id)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_id_reused_by_a_later_block_gets_a_new_id_for_its_call_and_results() {
        // `x-2` is taken by a call of its own, so the second reuse of `x` must skip it.
        let turns = vec![
            Turn::new(Role::Assistant, vec![call("x"), call("x-2")]),
            Turn::new(Role::User, vec![result("x"), result("x-2")]),
            Turn::new(Role::Assistant, vec![call("x")]),
            Turn::new(Role::User, vec![result("x")]),
            Turn::new(Role::Assistant, vec![call("x")]),
        ];
        let plan = plan(&turns).unwrap();
        assert_eq!(
            sent_ids(&plan),
            [
                "call x",
                "call x-2",
                "result x",
                "result x-2",
                "call x-3",
                "result x-3",
                "call x-4"
            ]
        );
        assert_eq!(
            kinds(&plan),
            [LossKind::Changed, LossKind::Changed, LossKind::Changed]
        );
        let at: Vec<Location> = plan
            .losses
            .list
            .iter()
            .map(|l| l.location.clone())
            .collect();
        assert_eq!(
            at,
            [
                Location::Part { turn: 2, part: 0 },
                Location::Part { turn: 3, part: 0 },
                Location::Part { turn: 4, part: 0 }
            ]
        );
        assert!(
            plan.losses.list[0]
                .what
                .contains("already used by a call in turn 0"),
            "{:?}",
            plan.losses.list[0]
        );
    }

    #[test]
    fn a_cancelled_call_with_a_reused_id_is_answered_under_its_new_id() {
        let turns = vec![
            Turn::new(Role::Assistant, vec![call("x")]),
            Turn::new(Role::User, vec![result("x")]),
            Turn::new(Role::Assistant, vec![call("x")]),
            Turn::user_text("stop"),
        ];
        let plan = plan(&turns).unwrap();
        assert_eq!(
            sent_ids(&plan),
            ["call x", "result x", "call x-2", "result x-2"]
        );
        assert_eq!(kinds(&plan), [LossKind::Changed, LossKind::Synthesized]);
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
