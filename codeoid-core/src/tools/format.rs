//! The text a model reads from `recall` and `recall_file` (DESIGN §3). `timeline` and
//! `get_episode` reuse the store's renderers, so all four share one header style.
//!
//! Recall block, pinned by tests:
//! ```text
//! ### [1] {summary} — {label}
//! - when: {ISO-8601}
//! - kind: {kind} ({tool})
//! - score: 0.712 (vec=0.81, fts=0.55, rec=0.90, path=0.00)
//! - terms: 2 of 4 (invoice, rounding)
//! - episode_id: {id}
//!
//! {verbatim content}
//! ```
//! A `- status: failed|cancelled` line follows `kind` for episodes that did not end well (as in
//! `get_episode`). A `- terms: 2 of 4 (invoice, rounding)` line follows `score`: which of the
//! query's search terms the hit's own text holds. A weak hit ([`crate::retrieve::Relevance`]:
//! neither a lexical match worth the name nor a similarity clearly above the typical one) has
//! a `- weak match: …` line instead of its content, so irrelevant hits cost a few lines of
//! context, not kilobytes; when every hit is weak, the answer starts by saying so. Content is
//! verbatim; content longer than its share shows its head and tail around a marker naming the
//! `get_episode` call that returns all of it. A hit's share is at most [`MAX_CONTENT_CHARS`],
//! and all shown hits of one answer share [`RECALL_BUDGET_CHARS`] (see [`recall_shares`]), so
//! no `limit` lets one answer flood a small context window. Sessions are labels (`current
//! session`, `prior session #N`), never raw ids.

use std::borrow::Cow;

use crate::canonical::{EpisodeStatus, echo_chars, point_cap_marker, truncate_chars};
use crate::error::Result;
use crate::retrieve::{Hit, Relevance};
use crate::store::{EpisodeHeader, iso8601};

use super::FileRecall;
use super::file::DiskState;

/// Characters of one episode's content shown by `recall` and `recall_file`; the rest is one
/// `get_episode` away.
pub const MAX_CONTENT_CHARS: usize = 6_000;

/// Characters of content one `recall` answer shows over all its hits, about 6,000 tokens: at the
/// default limit six episodes of ordinary size (3 KB on average in real sessions) show whole,
/// and a `limit` of 20 long ones shows 1,200 characters of each rather than 120,000 in all.
pub const RECALL_BUDGET_CHARS: usize = 24_000;

/// The smallest share a hit gets, whatever the number of hits (only a caller passing more than
/// 24 hits reaches it; the tool's `limit` stops at 20).
const MIN_SHARE_CHARS: usize = 1_000;

/// How many characters of each content a `recall` answer shows, given their lengths in
/// characters: the budget [`RECALL_BUDGET_CHARS`] is divided fairly, shortest first, so a short
/// content shows whole and leaves what it does not use to the longer ones; no share exceeds
/// [`MAX_CONTENT_CHARS`] or falls below [`MIN_SHARE_CHARS`] (unless its content is shorter).
pub(crate) fn recall_shares(lengths: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let mut shares = vec![0; lengths.len()];
    let mut left = RECALL_BUDGET_CHARS;
    for (done, &i) in order.iter().enumerate() {
        let fair = (left / (lengths.len() - done)).clamp(MIN_SHARE_CHARS, MAX_CONTENT_CHARS);
        shares[i] = lengths[i].min(fair);
        left = left.saturating_sub(shares[i]);
    }
    shares
}

/// `content` whole when it has at most `max_chars` characters (`total` of them), else its head
/// and tail, `max_chars` in all, around a marker naming `get_episode`.
fn excerpt_within(content: &str, total: usize, max_chars: usize, episode_id: &str) -> String {
    if total <= max_chars {
        return content.to_owned();
    }
    // Two thirds head (intent, command, input), one third tail (errors, totals).
    let head_chars = max_chars * 2 / 3;
    let tail_chars = max_chars - head_chars;
    let head_end = content
        .char_indices()
        .nth(head_chars)
        .map_or(content.len(), |(at, _)| at);
    let tail_start = content
        .char_indices()
        .nth(total - tail_chars)
        .map_or(content.len(), |(at, _)| at);
    format!(
        "{}\n[codeoid: {} characters omitted here; get_episode(\"{episode_id}\") has the whole \
         episode]\n{}",
        &content[..head_end],
        total - head_chars - tail_chars,
        &content[tail_start..]
    )
}

/// `shown` content of episode `episode_id` as a model reads it: a capped episode's marker names
/// a raw blob, which no memory tool reads, so it names `get_episode` (which pages the whole
/// content) instead.
fn for_model(shown: &str, episode_id: &str) -> String {
    point_cap_marker(shown, &format!("get_episode(\"{episode_id}\") pages")).into_owned()
}

/// `content` whole when it has at most [`MAX_CONTENT_CHARS`] characters, else its head and tail
/// around a marker naming `get_episode`.
pub(crate) fn excerpt(content: &str, episode_id: &str) -> String {
    excerpt_within(
        content,
        content.chars().count(),
        MAX_CONTENT_CHARS,
        episode_id,
    )
}

fn kind_line(header: &EpisodeHeader) -> String {
    let mut line = format!("- kind: {}", header.kind);
    if let Some(tool) = &header.tool_name {
        line.push_str(&format!(" ({tool})"));
    }
    if header.status != EpisodeStatus::Ok {
        line.push_str(&format!("\n- status: {}", header.status.as_str()));
    }
    line
}

/// Most held terms a `- terms:` line names (the count is always whole).
const MAX_LISTED_TERMS: usize = 8;

/// The `- terms:` line of a hit: how many of the query's terms it holds, and which.
fn terms_line(relevance: &Relevance) -> String {
    let mut line = format!("- terms: {} of {}", relevance.held.len(), relevance.terms);
    if !relevance.held.is_empty() {
        let mut listed: Vec<&str> = relevance
            .held
            .iter()
            .take(MAX_LISTED_TERMS)
            .map(String::as_str)
            .collect();
        if relevance.held.len() > MAX_LISTED_TERMS {
            listed.push("…");
        }
        line.push_str(&format!(" ({})", listed.join(", ")));
    }
    line
}

/// Most characters of the query the "every hit is weak" notice repeats.
const WEAK_QUERY_MAX_CHARS: usize = 120;

/// The recall blocks of `hits` for `query`, numbered from 1, separated by a blank line; `label`
/// names a session relative to the caller. Weak hits show their header only; when all are
/// weak, a notice comes first.
///
/// # Errors
/// Whatever `label` returns.
pub(crate) fn recall_text(
    query: &str,
    hits: &[Hit],
    label: &mut dyn FnMut(&str) -> Result<String>,
) -> Result<String> {
    // A weak hit's content is not shown: it takes no share of the budget.
    let lengths: Vec<usize> = hits
        .iter()
        .map(|h| {
            if h.relevance.weak {
                0
            } else {
                h.content.chars().count()
            }
        })
        .collect();
    let shares = recall_shares(&lengths);
    let mut out = String::new();
    if !hits.is_empty() && hits.iter().all(|h| h.relevance.weak) {
        let shown = truncate_chars(query, WEAK_QUERY_MAX_CHARS);
        out.push_str(&format!(
            "No episode in this workspace's memory clearly matches {shown:?}: none holds half the \
             weight of its words or a file it names, or comes closer in meaning than unrelated \
             episodes do. The nearest {} are listed without their content; get_episode shows \
             any of them.\n\n",
            hits.len()
        ));
    }
    for (i, hit) in hits.iter().enumerate() {
        let header = &hit.header;
        let c = hit.components;
        if i > 0 {
            out.push_str("\n\n");
        }
        out.push_str(&format!(
            "### [{}] {} — {}\n- when: {}\n{}\n- score: {:.3} (vec={:.2}, fts={:.2}, rec={:.2}, \
             path={:.2})\n{}\n",
            i + 1,
            header.summary,
            label(&header.session_id)?,
            iso8601(header.created_at),
            kind_line(header),
            hit.score,
            c.vec,
            c.bm25,
            c.recency,
            c.path,
            terms_line(&hit.relevance),
        ));
        if hit.relevance.weak {
            out.push_str(&format!(
                "- weak match: little of the query's words, no file it names, no closer in \
                 meaning than unrelated episodes; content not shown (get_episode has it)\n\
                 - episode_id: {}",
                header.id
            ));
            continue;
        }
        out.push_str(&format!(
            "- episode_id: {}\n\n{}",
            header.id,
            for_model(
                &excerpt_within(&hit.content, lengths[i], shares[i], &header.id),
                &header.id
            )
        ));
    }
    Ok(out)
}

/// Most characters of the query a "no episodes match" answer repeats.
const NO_HITS_QUERY_MAX_CHARS: usize = 200;

/// What `recall` says when nothing matched.
pub(crate) fn no_hits(query: &str, excluded_current: bool, tool_name: Option<&str>) -> String {
    // A pasted log as a query is not worth echoing whole: its head names it.
    let shown = truncate_chars(query, NO_HITS_QUERY_MAX_CHARS);
    let mut out = format!("no episodes in this workspace's memory match {shown:?}");
    let chars = query.chars().count();
    if chars > NO_HITS_QUERY_MAX_CHARS {
        out.push_str(&format!(" (the start of a {chars}-character query)"));
    }
    if let Some(tool) = tool_name {
        out.push_str(&format!(" among {} calls", echo(tool)));
    }
    if excluded_current {
        out.push_str(
            " (what the current session did since its last rotation was not searched; set \
             include_current_session to true to search it)",
        );
    }
    out
}

/// The text of a `recall_file` result.
///
/// # Errors
/// Whatever `label` returns.
pub(crate) fn file_text(
    recall: &FileRecall,
    label: &mut dyn FnMut(&str) -> Result<String>,
) -> Result<String> {
    let header = &recall.episode.header;
    let mut out = format!(
        "### {} — {}\n- when: {}\n{}\n- file: {}",
        header.summary,
        label(&header.session_id)?,
        iso8601(header.created_at),
        kind_line(header),
        recall.path.relative
    );
    if recall.path.given != recall.path.relative {
        out.push_str(&format!(" (read as {})", recall.path.given));
    }
    if let Some(part) = &recall.part {
        out.push_str(&format!("\n- part: {part}"));
    }
    if let Some(later) = &recall.passed_over {
        out.push_str(&format!(
            "\n- chosen: the newest whole read of this content; the latest read ({} at {} — {}, \
             episode_id: {}) has the same content hash, but {}",
            later
                .header
                .tool_name
                .as_deref()
                .unwrap_or(later.header.kind.as_str()),
            iso8601(later.header.created_at),
            label(&later.header.session_id)?,
            later.header.id,
            later.part
        ));
    }
    out.push_str(&format!("\n- on disk: {}", disk_line(&recall.disk)));
    if let Some(write) = &recall.later_write {
        out.push_str(&format!(
            "\n- changed later in memory: {} at {} — {} (episode_id: {})",
            write.tool_name.as_deref().unwrap_or(write.kind.as_str()),
            iso8601(write.created_at),
            label(&write.session_id)?,
            write.id
        ));
    }
    out.push_str(&format!(
        "\n- episode_id: {}\n\n{}",
        header.id,
        for_model(&excerpt(&recall.episode.content, &header.id), &header.id)
    ));
    Ok(out)
}

fn disk_line(state: &DiskState) -> String {
    match state {
        DiskState::Unchanged => "unchanged since this read (same content hash)".to_owned(),
        DiskState::Changed => "CHANGED since this read (the content hash differs); read the \
                               file again for its current content"
            .to_owned(),
        DiskState::Deleted => "the file no longer exists".to_owned(),
        DiskState::Unknown(reason) => format!("unknown ({reason})"),
    }
}

/// What `recall_file` says when memory has no read of the file.
pub(crate) fn no_read(path: &str, relative: &str) -> String {
    let (path_shown, relative_shown) = (echo(path), echo(relative));
    if path == relative {
        format!("no earlier read of {path_shown} in this workspace's memory; read the file itself")
    } else {
        format!(
            "no earlier read of {path_shown} (workspace-relative {relative_shown}) in this \
             workspace's memory; read the file itself"
        )
    }
}

/// Most characters of a name, path or field a model passed that an answer repeats.
const ECHO_MAX_CHARS: usize = 200;

/// `text`, which a model passed, as an answer repeats it: whole when short, else its start and
/// its length, so a pasted megabyte does not come back as a megabyte.
pub(crate) fn echo(text: &str) -> Cow<'_, str> {
    echo_chars(text, ECHO_MAX_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_content_keeps_head_and_tail_around_a_marker() {
        assert_eq!(excerpt("short", "ep_1"), "short");
        let long: String = (0..10_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let out = excerpt(&long, "ep_1");
        assert!(out.starts_with(&long[..4000]));
        assert!(out.ends_with(&long[long.len() - 2000..]));
        assert!(out.contains("[codeoid: 4000 characters omitted here; get_episode(\"ep_1\")"));
        let wide = "é".repeat(7000);
        assert!(excerpt(&wide, "ep_2").contains("1000 characters omitted"));
    }

    #[test]
    fn recall_shares_give_short_contents_whole_and_split_the_rest_of_the_budget() {
        // Few, short: everything whole.
        assert_eq!(recall_shares(&[100, 3_000, 50]), vec![100, 3_000, 50]);
        // One long among short ones: it keeps the per-hit cap.
        assert_eq!(recall_shares(&[100, 90_000]), vec![100, MAX_CONTENT_CHARS]);
        // Six long: an equal share each, the budget exactly.
        assert_eq!(recall_shares(&[50_000; 6]), vec![4_000; 6]);
        // What short contents leave goes to the long ones, in whatever order they come.
        let shares = recall_shares(&[10_000, 500, 10_000, 1_500, 10_000, 10_000, 10_000, 10_000]);
        assert_eq!(shares[1], 500);
        assert_eq!(shares[3], 1_500);
        for i in [0, 2, 4, 5, 6, 7] {
            assert!((3_666..=3_667).contains(&shares[i]), "{shares:?}");
        }
        assert!(shares.iter().sum::<usize>() <= RECALL_BUDGET_CHARS);
        // The tool's largest limit stays within the budget; a caller passing far more hits
        // gets the floor for each.
        let twenty = recall_shares(&[8_000; 20]);
        assert_eq!(twenty, vec![1_200; 20]);
        assert_eq!(recall_shares(&[8_000; 40]), vec![MIN_SHARE_CHARS; 40]);
        assert!(recall_shares(&[]).is_empty());
    }

    #[test]
    fn a_shorter_share_keeps_the_same_head_and_tail_proportions() {
        let long: String = (0..10_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let out = excerpt_within(&long, 10_000, 1_200, "ep_3");
        assert!(out.starts_with(&format!(
            "{}\n[codeoid: 8800 characters omitted",
            &long[..800]
        )));
        assert!(out.ends_with(&format!("whole episode]\n{}", &long[long.len() - 400..])));
    }
}
