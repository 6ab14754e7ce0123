//! Seed blocks: the text that opens the first message after a rotation (DESIGN §5).
//!
//! A seed tells the model that its context was rotated, where it is (workspace, rotation number,
//! session name), how to reach the earlier turns (the four memory tools), and what the person
//! last asked, verbatim. The last request is the [`Anchor`]: the most recent user *prompt*, never
//! the assistant's reply, a tool result, a harness-written compaction summary or a subagent's
//! message.
//!
//! Invariants:
//! - The anchor shown is at most [`ANCHOR_MAX_CHARS`] characters of the message, cut on `char`
//!   boundaries; a longer message keeps its head and tail around an explicit marker that says
//!   how many characters were left out and that memory holds the whole text.
//! - A seed block a harness put into a user message (first, behind a reminder, or after the
//!   prompt) is not part of what the person typed, so every such block is stripped from the
//!   anchor: seeds never nest.
//! - With memory disabled the seed is a generic continuation notice that names nothing from the
//!   session.
//!
//! This module formats text; it does not decide when to rotate (see `policy`) or store anything.

use serde::{Deserialize, Serialize};

use crate::canonical::Turn;
use crate::canonical::{ROTATION_SEED_CLOSE, ROTATION_SEED_OPEN, without_rotation_seed};
use crate::error::{Error, Result};

/// The most characters of the last user message that a seed carries.
pub const ANCHOR_MAX_CHARS: usize = 2_000;

/// Of a capped anchor, how many characters come from the end of the message; the rest come from
/// its start. The ask often closes a long paste ("...fix this"), so both ends are kept.
const ANCHOR_TAIL_CHARS: usize = 500;

/// Opening tag of every seed block.
const SEED_OPEN: &str = ROTATION_SEED_OPEN;
/// Closing tag of every seed block.
const SEED_CLOSE: &str = ROTATION_SEED_CLOSE;

/// Names and session text longer than this are cut: they sit on one line of the seed.
const NAME_MAX_CHARS: usize = 200;

/// The last user prompt before a rotation, verbatim (uncapped; [`Anchor::capped`] applies the
/// cap).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    text: String,
}

impl Anchor {
    /// The most recent user prompt in `turns` (oldest first), or `None` when there is none.
    ///
    /// Skipped: everything but a prompt the person typed ([`Turn::is_person_prompt`]: assistant
    /// turns, user turns holding only tool results or blank text, compaction summaries, subagent
    /// briefs, text the harness injected), and user turns that are nothing but a seed block.
    pub fn from_turns(turns: &[Turn]) -> Option<Anchor> {
        turns.iter().rev().find_map(|turn| {
            if !turn.is_person_prompt() {
                return None;
            }
            let full = turn.text();
            let text = without_rotation_seed(&full);
            (!text.trim().is_empty()).then(|| Anchor {
                text: text.to_string(),
            })
        })
    }

    /// An anchor from a user message the caller already found (for example with a query on the
    /// store). Seed blocks in it are stripped as in [`Anchor::from_turns`].
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when the text is blank (after stripping a seed block).
    pub fn from_text(text: &str) -> Result<Anchor> {
        let stripped = without_rotation_seed(text);
        if stripped.trim().is_empty() {
            return Err(Error::invalid_input(
                "the anchor text is blank; pass the last message the person typed, not a tool \
                 result or an empty turn",
            ));
        }
        Ok(Anchor {
            text: stripped.to_string(),
        })
    }

    /// The message, verbatim and uncapped.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The message as the seed shows it: whole when it has at most [`ANCHOR_MAX_CHARS`]
    /// characters, otherwise its first 1,500 and last 500 characters around a marker line that
    /// names how many characters were elided.
    pub fn capped(&self) -> String {
        let total = self.text.chars().count();
        if total <= ANCHOR_MAX_CHARS {
            return self.text.clone();
        }
        let head_chars = ANCHOR_MAX_CHARS - ANCHOR_TAIL_CHARS;
        let elided = total - ANCHOR_MAX_CHARS;
        let head_end = byte_offset(&self.text, head_chars);
        let tail_start = byte_offset(&self.text, total - ANCHOR_TAIL_CHARS);
        format!(
            "{}\n[codeoid: {elided} characters elided from the middle of this message; the full \
             text is in memory]\n{}",
            &self.text[..head_end],
            &self.text[tail_start..]
        )
    }
}

/// Which kind of seed a rotation produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeedKind {
    /// The full seed of DESIGN §5: workspace, rotation number, tools, anchor.
    Memory,
    /// The generic continuation notice used when memory is disabled.
    Generic,
}

/// The text that opens the first message after a rotation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedBlock {
    /// The rotation this seed follows (1 for the first rotation of a session).
    pub rotation: u32,
    /// Full or generic.
    pub kind: SeedKind,
    /// The exact text to prepend.
    pub text: String,
}

impl SeedBlock {
    /// The seed of DESIGN §5 for rotation number `rotation` of session `session_name` in
    /// `workspace`, anchored on `anchor`. Names are put on one line (whitespace collapsed) and
    /// cut at 200 characters.
    pub fn memory(
        workspace: &str,
        rotation: u32,
        session_name: &str,
        anchor: &Anchor,
    ) -> SeedBlock {
        let workspace = one_line(workspace, "unnamed workspace");
        let session = one_line(session_name, "unnamed session");
        let text = format!(
            "{SEED_OPEN}\n\
             This session's backing context was just rotated to stay below the compaction ceiling. This is a\n\
             CONTINUATION, not a new session.\n\
             \n\
             Workspace: {workspace}. Rotation #{rotation} of this session (\"{session}\").\n\
             \n\
             Prior turns are preserved verbatim in memory. Retrieve on demand:\n\
             \x20 - recall(query)               — semantic search across all prior episodes\n\
             \x20 - recall_file(path)           — most recent prior read of a specific file\n\
             \x20 - timeline(offset?, limit?)   — walk activity in order; each line has an episode_id\n\
             \x20 - get_episode(episode_id)     — fetch one past turn or tool result verbatim\n\
             \n\
             Most recent user turn before the rotation:\n\
             ---\n\
             {anchor}\n\
             ---\n\
             {SEED_CLOSE}",
            anchor = anchor.capped(),
        );
        SeedBlock {
            rotation,
            kind: SeedKind::Memory,
            text,
        }
    }

    /// The generic continuation notice for rotation number `rotation`, used when memory is
    /// disabled: it names nothing from the session and points at no tool.
    pub fn generic(rotation: u32) -> SeedBlock {
        let text = format!(
            "{SEED_OPEN}\n\
             This session's backing context was just rotated to stay below the compaction ceiling. This is a\n\
             CONTINUATION, not a new session.\n\
             \n\
             Earlier turns are no longer in your context and session memory is disabled, so they cannot be\n\
             retrieved. Continue from what the user says next, and ask them to restate anything you need.\n\
             {SEED_CLOSE}"
        );
        SeedBlock {
            rotation,
            kind: SeedKind::Generic,
            text,
        }
    }
}

/// Byte offset of the `chars`-th character of `text` (or its length).
fn byte_offset(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(at, _)| at)
}

fn one_line(name: &str, fallback: &str) -> String {
    let collapsed = name.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        return fallback.to_string();
    }
    match collapsed.char_indices().nth(NAME_MAX_CHARS) {
        Some((at, _)) => format!("{}…", &collapsed[..at]),
        None => collapsed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::{Part, Role, ToolResult, ToolResultPart};
    use serde_json::json;

    /// The seed of DESIGN §5, character for character: harnesses and models read it.
    #[test]
    fn memory_seed_is_pinned() {
        let anchor = Anchor::from_text("Fix the flaky test in store/mod.rs").unwrap();
        let seed = SeedBlock::memory("codeoid", 3, "refactor store", &anchor);
        let expected = "<rotation_context>
This session's backing context was just rotated to stay below the compaction ceiling. This is a
CONTINUATION, not a new session.

Workspace: codeoid. Rotation #3 of this session (\"refactor store\").

Prior turns are preserved verbatim in memory. Retrieve on demand:
  - recall(query)               — semantic search across all prior episodes
  - recall_file(path)           — most recent prior read of a specific file
  - timeline(offset?, limit?)   — walk activity in order; each line has an episode_id
  - get_episode(episode_id)     — fetch one past turn or tool result verbatim

Most recent user turn before the rotation:
---
Fix the flaky test in store/mod.rs
---
</rotation_context>";
        assert_eq!(seed.text, expected);
        assert_eq!((seed.rotation, seed.kind), (3, SeedKind::Memory));
    }

    #[test]
    fn generic_seed_names_nothing_from_the_session() {
        let seed = SeedBlock::generic(2);
        assert!(seed.text.starts_with("<rotation_context>\n"));
        assert!(seed.text.ends_with("\n</rotation_context>"));
        assert!(seed.text.contains("CONTINUATION, not a new session."));
        assert!(seed.text.contains("memory is disabled"));
        for tool in ["recall", "timeline", "get_episode", "Workspace:"] {
            assert!(!seed.text.contains(tool), "{tool}");
        }
        assert_eq!(seed.kind, SeedKind::Generic);
    }

    #[test]
    fn anchor_is_the_last_user_prompt_not_a_reply_result_or_summary() {
        let mut summary = Turn::user_text("This session is being continued from a previous one");
        summary
            .meta
            .insert("compaction_summary".into(), json!(true));
        let mut sidechain = Turn::user_text("subagent task prompt");
        sidechain.meta.insert("sidechain".into(), json!(true));
        let mut reminder =
            Turn::user_text("<system-reminder>PostToolUse hook: error</system-reminder>");
        reminder.meta.insert("is_meta".into(), json!(true));
        let tool_result = Turn::new(
            Role::User,
            vec![Part::ToolResult(ToolResult {
                call_id: "c1".into(),
                parts: vec![ToolResultPart::Text {
                    text: "tool output".into(),
                }],
                is_error: false,
            })],
        );
        let turns = vec![
            Turn::user_text("first prompt"),
            Turn::assistant_text("first reply"),
            Turn::user_text("the real last prompt"),
            Turn::assistant_text("a long reply"),
            tool_result,
            summary,
            sidechain,
            reminder,
            Turn::user_text("   "),
            Turn::assistant_text("final answer"),
        ];
        let anchor = Anchor::from_turns(&turns).unwrap();
        assert_eq!(anchor.text(), "the real last prompt");
        assert_eq!(
            Anchor::from_turns(&turns[..2]).unwrap().text(),
            "first prompt"
        );
        assert!(Anchor::from_turns(&turns[1..2]).is_none());
        assert!(Anchor::from_turns(&[]).is_none());
    }

    #[test]
    fn a_prepended_seed_is_not_part_of_the_anchor() {
        let earlier = SeedBlock::memory("ws", 1, "s", &Anchor::from_text("old ask").unwrap());
        let turn = Turn::user_text(format!("{}\n\nnow do the next step", earlier.text));
        let anchor = Anchor::from_turns(&[turn]).unwrap();
        assert_eq!(anchor.text(), "now do the next step");
        let seed_only = Turn::user_text(earlier.text.clone());
        let older = Turn::user_text("older prompt");
        assert_eq!(
            Anchor::from_turns(&[older, seed_only]).unwrap().text(),
            "older prompt"
        );
        assert!(Anchor::from_text(&earlier.text).is_err());
    }

    #[test]
    fn long_anchors_keep_head_and_tail_on_char_boundaries() {
        // Multi-byte characters everywhere, so a byte-based cut would split one.
        let text: String = (0..3_000)
            .map(|i| if i % 2 == 0 { 'é' } else { '🦀' })
            .collect::<String>()
            + "FIX IT";
        let anchor = Anchor::from_text(&text).unwrap();
        let capped = anchor.capped();
        let total = text.chars().count();
        assert!(capped.contains(&format!("{} characters elided", total - ANCHOR_MAX_CHARS)));
        assert!(capped.ends_with("FIX IT"));
        let (head, rest) = capped.split_once("\n[codeoid:").unwrap();
        let tail = rest.split_once("]\n").unwrap().1;
        assert_eq!(
            head.chars().count() + tail.chars().count(),
            ANCHOR_MAX_CHARS
        );
        assert!(text.starts_with(head) && text.ends_with(tail));
    }

    #[test]
    fn anchors_at_the_cap_are_whole() {
        let text = "x".repeat(ANCHOR_MAX_CHARS);
        assert_eq!(Anchor::from_text(&text).unwrap().capped(), text);
    }

    #[test]
    fn names_are_one_line_and_never_empty() {
        let anchor = Anchor::from_text("go").unwrap();
        let seed = SeedBlock::memory("my\nworkspace", 1, "  ", &anchor);
        assert!(seed.text.contains(
            "Workspace: my workspace. Rotation #1 of this session (\"unnamed session\")."
        ));
        assert!(Anchor::from_text(" \n ").is_err());
    }
}
