//! Recall's rule against one text taking two hits: a subagent's answer is also its parent's
//! result for the call that started it (Claude Code's `Task`), so the subagent's `assistant_turn`
//! and the parent's tool call match the same queries with the same words. In the real logs every
//! subagent answer is held verbatim by its parent's call, and both came back among the first five
//! hits. Of two such episodes the better-ranked one is kept; the other is one `get_episode` (or
//! a `timeline` walk) away, as every episode is.
//!
//! Deliberately narrow: only a subagent's answer against an episode of its own parent that holds
//! it whole. Other repeats stay hits: a prompt repeated as every call's `# User intent` is what
//! finds those calls, and two runs of one command with one output are two events.

use std::collections::HashMap;

use crate::canonical::EpisodeKind;
use crate::error::{ErrorKind, Result};
use crate::store::{EpisodeHeader, LineageKind, Store};

use super::query::Hit;

/// The heading an `assistant_turn` episode's content starts with (see the chunker).
const ANSWER_HEADING: &str = "# Assistant\n";

/// Shortest answer compared, in bytes: a short answer ("Done.") could occur in any text.
const MIN_ANSWER_BYTES: usize = 100;

/// Finds the subagent answers among a recall's hits, remembering each session's parent.
pub(crate) struct SubagentAnswers<'s> {
    store: &'s Store,
    /// Each session asked about: its parent's id when it is a subagent.
    parents: HashMap<String, Option<String>>,
}

impl<'s> SubagentAnswers<'s> {
    /// A finder reading sessions from `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        SubagentAnswers {
            store,
            parents: HashMap::new(),
        }
    }

    /// `true` when the episode (`header`, `content`) and one of `kept` are a subagent's answer
    /// and the episode of its parent that holds it.
    ///
    /// # Errors
    /// A database error reading a session.
    pub(crate) fn repeats_a_hit(
        &mut self,
        header: &EpisodeHeader,
        content: &str,
        kept: &[Hit],
    ) -> Result<bool> {
        for hit in kept {
            if self.holds_answer((header, content), (&hit.header, &hit.content))?
                || self.holds_answer((&hit.header, &hit.content), (header, content))?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `true` when `answer` is a subagent's answer and `holder` is an episode of that subagent's
    /// parent session whose content holds it whole.
    fn holds_answer(
        &mut self,
        (answer_header, answer_content): (&EpisodeHeader, &str),
        (holder_header, holder_content): (&EpisodeHeader, &str),
    ) -> Result<bool> {
        let Some(text) = answer_text(answer_header, answer_content) else {
            return Ok(false);
        };
        let parent = self.parent_of(&answer_header.session_id)?;
        Ok(parent == Some(holder_header.session_id.as_str()) && holder_content.contains(text))
    }

    /// The parent of `session_id` when it is a subagent session.
    fn parent_of(&mut self, session_id: &str) -> Result<Option<&str>> {
        if !self.parents.contains_key(session_id) {
            let parent = match self.store.session(session_id) {
                Ok(session) => session
                    .lineage
                    .filter(|l| l.kind == LineageKind::Subagent)
                    .map(|l| l.parent_session_id),
                // Removed since the hit was read (a concurrent re-import): no parent to match.
                Err(e) if e.kind() == ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            };
            self.parents.insert(session_id.to_owned(), parent);
        }
        Ok(self.parents[session_id].as_deref())
    }
}

/// The answer an `assistant_turn` episode holds, when it is long enough to compare.
fn answer_text<'c>(header: &EpisodeHeader, content: &'c str) -> Option<&'c str> {
    if header.kind != EpisodeKind::AssistantTurn {
        return None;
    }
    content
        .strip_prefix(ANSWER_HEADING)
        .map(str::trim)
        .filter(|text| text.len() >= MIN_ANSWER_BYTES)
}
