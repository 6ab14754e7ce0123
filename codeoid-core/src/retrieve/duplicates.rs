//! Recall's rule against one text taking two hits, in the two cases where one recorded event is
//! stored twice:
//!
//! - **A subagent's answer** is also its parent's result for the call that started it (Claude
//!   Code's `Task`), so the subagent's `assistant_turn` and the parent's tool call match the same
//!   queries with the same words. In the real logs every subagent answer is held verbatim by its
//!   parent's call, and both came back among the first five hits. Of two such episodes the
//!   better-ranked one is kept.
//! - **A command's raw output.** `Memory::run` stores the raw stdout and stderr as an episode of
//!   their own (`shell(cmd)`, no call id) before the compressed text is shown, and the harness
//!   then records its tool call (`Bash(cmd)`) with the compressed text, whose last line names
//!   the raw episode (`[codeoid: … — get_episode("ep_…") has the raw output]`); an output
//!   short enough to pass through uncompressed has no marker, and the call's result holds it
//!   whole instead. Both hold the command and its facts, and came back as hits 1 and 2. The
//!   call is shown, at the better place of the two (it has the intent, the reasoning and the
//!   marker that leads to the raw bytes); the raw episode it stands for is passed over. A raw
//!   output no candidate stands for (the call did not match the query, or the harness never
//!   recorded one) stays a hit.
//!
//! Either way the other episode is one `get_episode` (or a `timeline` walk) away, as every
//! episode is.
//!
//! Deliberately narrow: only a subagent's answer against an episode of its own parent that holds
//! it whole, and only a raw-output episode named by a call of its session (or whose stdout,
//! 100 bytes or more, that call holds whole). Other repeats stay hits: a
//! prompt repeated as every call's `# User intent` is what finds those calls, and two runs of one
//! command with one output are two events.

use std::collections::HashMap;

use crate::canonical::EpisodeKind;
use crate::error::{ErrorKind, Result};
use crate::store::{EpisodeHeader, LineageKind, Store, StoredEpisode};

use super::fusion::{Candidate, Ranked};
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

/// How the compressed-output markers end (see `compress::Compressed::hint_via`): naming the
/// `get_episode` call, or a shell command, that returns the raw output.
const RAW_MARKER_ENDS: [&str; 2] = [") has the raw output]", "` prints the raw output]"];

/// The ids of the raw-output episodes `content` names in compressed-output markers, in order.
fn named_raw_outputs(content: &str) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for end in RAW_MARKER_ENDS {
        for (at, _) in content.match_indices(end) {
            let before = &content[..at];
            let id = if end.starts_with(')') {
                before
                    .strip_suffix('"')
                    .and_then(|b| b.rsplit_once("get_episode(\""))
                    .map(|(_, id)| id)
            } else {
                // `{command} {id}`: the id is the last word inside the backticks.
                before
                    .rsplit_once('`')
                    .and_then(|(_, inside)| inside.rsplit(' ').next())
            };
            if let Some(id) = id.filter(|id| is_episode_id(id)) {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
    }
    ids
}

/// `true` for text shaped like an episode id (`ep_` then letters, digits and `_`).
fn is_episode_id(text: &str) -> bool {
    text.strip_prefix("ep_").is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `true` for a raw-output episode (`Memory::run`'s record of a command): a tool call with no
/// call of its own.
fn is_raw_output(header: &EpisodeHeader) -> bool {
    header.kind == EpisodeKind::ToolCall && header.call_id.is_none()
}

/// The stdout a raw-output episode's content holds (its layout is `store::blobs`'s: `### stdout`
/// then `### stderr`), trimmed, when it is long enough to compare.
fn raw_stdout(content: &str) -> Option<&str> {
    const STDOUT: &str = "\n\n### stdout\n";
    let start = content.find(STDOUT)? + STDOUT.len();
    let end = content[start..]
        .rfind("\n\n### stderr\n")
        .map_or(content.len(), |at| start + at);
    Some(content[start..end].trim()).filter(|text| text.len() >= MIN_ANSWER_BYTES)
}

/// `true` when the call (`header`, `content`) stands for the raw output `(raw, raw_content)`:
/// a call of the same session whose text names the raw episode in a compressed-output marker,
/// or holds its stdout whole (an output short enough to pass through uncompressed carries no
/// marker).
fn stands_for(
    (header, content): (&EpisodeHeader, &str),
    (raw, raw_content): (&EpisodeHeader, &str),
) -> bool {
    header.session_id == raw.session_id
        && header.kind == EpisodeKind::ToolCall
        && header.call_id.is_some()
        && (named_raw_outputs(content).contains(&raw.id.as_str())
            || raw_stdout(raw_content).is_some_and(|stdout| content.contains(stdout)))
}

/// `true` when `header` (with `content`) is a raw-output episode that one of `kept` stands for.
pub(crate) fn raw_output_named_by(header: &EpisodeHeader, content: &str, kept: &[Hit]) -> bool {
    is_raw_output(header)
        && kept
            .iter()
            .any(|hit| stands_for((&hit.header, &hit.content), (header, content)))
}

/// Most candidates read, below a raw-output hit, in search of the call that stands for it.
const MAX_NAMER_READS: usize = 20;

/// When `raw` (with `raw_content`) is a raw-output episode, the candidate ranked `below` it
/// (within the first [`MAX_NAMER_READS`] calls of its session) that stands for it, read whole:
/// the call the harness recorded with the (compressed) output.
///
/// # Errors
/// A database error reading a candidate.
pub(crate) fn namer_below(
    store: &Store,
    workspace_id: &str,
    (raw, raw_content): (&EpisodeHeader, &str),
    candidates: &[Candidate],
    below: &[Ranked],
) -> Result<Option<(Ranked, StoredEpisode)>> {
    if !is_raw_output(raw) {
        return Ok(None);
    }
    // The harness records the call in the session that ran the command.
    let calls = below.iter().filter(|r| {
        let h = &candidates[r.index].header;
        h.session_id == raw.session_id && h.kind == EpisodeKind::ToolCall && h.call_id.is_some()
    });
    for ranked in calls.take(MAX_NAMER_READS) {
        let episode = match store.episode(workspace_id, &candidates[ranked.index].header.id) {
            Ok(episode) => episode,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if stands_for((&episode.header, &episode.content), (raw, raw_content)) {
            return Ok(Some((*ranked, episode)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_name_their_raw_episodes() {
        let content = "# Tool: Bash\n...\n3 passed\n[codeoid: pytest kept 12% — \
                       get_episode(\"ep_d44504a3041114fe\") has the raw output]\n\
                       [codeoid: ls kept 3% — `codeoid show --blob stdout ep_ab12` prints the raw \
                       output]\n";
        assert_eq!(
            named_raw_outputs(content),
            ["ep_d44504a3041114fe", "ep_ab12"]
        );
        assert!(named_raw_outputs("get_episode(\"ep_1\") pages the whole episode]").is_empty());
        assert!(named_raw_outputs("get_episode(\"x y\") has the raw output]").is_empty());
        assert!(named_raw_outputs("has the raw output]").is_empty());
    }

    #[test]
    fn the_stdout_of_a_raw_output_is_read_from_its_layout() {
        let out = "x".repeat(120);
        let content = format!(
            "# Tool: shell\n\n## Input\n{{}}\n\n## Result\nexit code: 1\n\n### stdout\n{out}\n\n\n\
             ### stderr\n"
        );
        assert_eq!(raw_stdout(&content), Some(out.as_str()));
        let short = content.replace(&out, "ok");
        assert_eq!(raw_stdout(&short), None, "too short to compare");
        assert_eq!(raw_stdout("no layout"), None);
    }
}
