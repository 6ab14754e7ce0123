//! What a translation could not carry: the loss report.
//!
//! Every translator returns a [`Translation`]: the provider JSON (or the canonical turns) plus a
//! list of [`Loss`]es, one per thing that was dropped, rendered differently, moved, merged,
//! synthesized or changed. The contract the tests hold every translator to: **when the list is
//! empty, translating back gives the input again** (role and parts; turn metadata such as ids,
//! timestamps and usage is never part of a request body and is not reported).
//!
//! A loss is data, not an error: it is what a harness shows to a person or logs. Callers who would
//! rather fail set [`crate::translate::Options::strict`], which turns the first loss into an
//! [`crate::ErrorKind::Translation`] error.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};

/// Where a loss happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "at", rename_all = "snake_case")]
pub enum Location {
    /// A whole canonical turn (index into the input turns).
    Turn {
        /// Index of the turn.
        turn: usize,
    },
    /// One part of a canonical turn.
    Part {
        /// Index of the turn.
        turn: usize,
        /// Index of the part within the turn.
        part: usize,
    },
    /// A provider message (or Gemini content, or Responses input item) being read back, and
    /// optionally one of its content parts.
    Message {
        /// Index in the provider's list.
        message: usize,
        /// Index of the content part, when the loss concerns one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        part: Option<usize>,
    },
    /// A keyword of a tool's input schema, as a JSON pointer into that schema.
    Tool {
        /// Tool name.
        name: String,
        /// JSON pointer (RFC 6901) of the keyword within the input schema; empty for the root.
        pointer: String,
    },
}

/// What happened to the content at a [`Location`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossKind {
    /// Not sent at all (for example another provider's thinking signature, an image the format
    /// cannot place, a harness error part).
    Dropped,
    /// Sent as plain text instead of its structured form (foreign thinking with
    /// [`crate::translate::ForeignThinking::AsText`], a tool result without a matching call).
    AsText,
    /// Sent, but at another position (tool results hoisted before the user's text, content
    /// reordered into the provider's fixed layout).
    Moved,
    /// Sent inside a neighbouring message, so it reads back as part of another turn.
    Merged,
    /// Created by the translator to satisfy the provider (a cancelled-call result).
    Synthesized,
    /// Sent in a different form that reads back differently (an id replaced by its hash, a
    /// string argument parsed as JSON, a media type sniffed from the bytes).
    Changed,
    /// Sent as it is, but the provider accepts it only if the next request disables extended
    /// thinking: Anthropic history that ends inside a tool loop whose assistant message does not
    /// start with a thinking block (its thinking was another provider's). Send the next request
    /// without thinking, or fork where the tool loop has ended.
    NeedsThinkingOff,
}

impl LossKind {
    /// A short snake_case name.
    pub const fn name(self) -> &'static str {
        match self {
            LossKind::Dropped => "dropped",
            LossKind::AsText => "as_text",
            LossKind::Moved => "moved",
            LossKind::Merged => "merged",
            LossKind::Synthesized => "synthesized",
            LossKind::Changed => "changed",
            LossKind::NeedsThinkingOff => "needs_thinking_off",
        }
    }
}

/// One thing a translation could not carry unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loss {
    /// Where it happened.
    pub location: Location,
    /// What happened.
    pub kind: LossKind,
    /// A sentence for a person: what it was and why.
    pub what: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Turn { turn } => write!(f, "turn {turn}"),
            Location::Part { turn, part } => write!(f, "turn {turn} part {part}"),
            Location::Message {
                message,
                part: None,
            } => write!(f, "message {message}"),
            Location::Message {
                message,
                part: Some(part),
            } => write!(f, "message {message} part {part}"),
            Location::Tool { name, pointer } if pointer.is_empty() => write!(f, "tool {name:?}"),
            Location::Tool { name, pointer } => write!(f, "tool {name:?} schema {pointer}"),
        }
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.location, self.kind.name(), self.what)
    }
}

/// A translated value and what the translation lost.
#[derive(Debug, Clone, PartialEq)]
pub struct Translation<T> {
    /// The translated value.
    pub value: T,
    /// Everything that was not carried unchanged, in input order.
    pub losses: Vec<Loss>,
}

impl<T> Translation<T> {
    /// `true` when nothing was lost, i.e. translating back gives the input again.
    pub fn is_lossless(&self) -> bool {
        self.losses.is_empty()
    }
}

/// Collects losses while a translator runs.
#[derive(Debug, Default)]
pub(crate) struct Losses {
    pub(crate) list: Vec<Loss>,
}

impl Losses {
    pub(crate) fn push(&mut self, location: Location, kind: LossKind, what: impl Into<String>) {
        self.list.push(Loss {
            location,
            kind,
            what: what.into(),
        });
    }

    pub(crate) fn part(&mut self, at: (usize, usize), kind: LossKind, what: impl Into<String>) {
        self.push(
            Location::Part {
                turn: at.0,
                part: at.1,
            },
            kind,
            what,
        );
    }

    pub(crate) fn turn(&mut self, turn: usize, kind: LossKind, what: impl Into<String>) {
        self.push(Location::Turn { turn }, kind, what);
    }

    pub(crate) fn message(
        &mut self,
        message: usize,
        part: Option<usize>,
        kind: LossKind,
        what: impl Into<String>,
    ) {
        self.push(Location::Message { message, part }, kind, what);
    }

    pub(crate) fn extend(&mut self, other: Vec<Loss>) {
        self.list.extend(other);
    }

    /// Wraps `value` with the losses in input order, or fails on the first loss when `strict`.
    pub(crate) fn finish<T>(mut self, value: T, strict: bool) -> Result<Translation<T>> {
        // Stable: losses at one location keep the order they were found in.
        self.list.sort_by_key(|loss| match &loss.location {
            Location::Turn { turn } => (0, *turn, 0),
            Location::Part { turn, part } => (0, *turn, part + 1),
            Location::Message { message, part } => (1, *message, part.map_or(0, |p| p + 1)),
            Location::Tool { .. } => (2, 0, 0),
        });
        if strict {
            if let Some(first) = self.list.first() {
                return Err(Error::new(
                    ErrorKind::Translation,
                    format!(
                        "{first}; strict translation refuses any loss (set strict to false to \
                         repair and report instead)"
                    ),
                ));
            }
        }
        Ok(Translation {
            value,
            losses: self.list,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_location_kind_and_reason() {
        let loss = Loss {
            location: Location::Part { turn: 3, part: 1 },
            kind: LossKind::Dropped,
            what: "thinking signed by anthropic".into(),
        };
        assert_eq!(
            loss.to_string(),
            "turn 3 part 1: dropped: thinking signed by anthropic"
        );
    }

    #[test]
    fn strict_turns_the_first_loss_into_a_translation_error() {
        let mut losses = Losses::default();
        losses.turn(2, LossKind::Merged, "merged into turn 1");
        let err = losses.finish((), true).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Translation);
        assert!(
            err.message()
                .starts_with("turn 2: merged: merged into turn 1;")
        );
        assert!(Losses::default().finish(1, true).unwrap().is_lossless());
    }

    #[test]
    fn losses_serialize_with_a_tagged_location() {
        let loss = Loss {
            location: Location::Message {
                message: 4,
                part: None,
            },
            kind: LossKind::AsText,
            what: "x".into(),
        };
        let json = serde_json::to_value(&loss).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"location": {"at": "message", "message": 4}, "kind": "as_text", "what": "x"})
        );
    }
}
