//! The text a model reads from `timeline` and `get_episode` (DESIGN §3).
//!
//! Formats, pinned by tests:
//! - timeline line: `- [{ISO-8601}] [{label}] {kind}: {summary}  (episode_id: {id})`, newest
//!   first; the page ends with the exact arguments of the next page
//!   (`next page: timeline {"before":"ep_…","limit":20}`) or `(end of timeline)`.
//! - episode: a header in the recall block's style (`### {summary} — {label}`, `- when:`,
//!   `- kind:`, `- episode_id:`...), a blank line, then the stored content byte for byte.
//! - episode page (`get_episode`): the same header plus `- page: characters A–B of N` when the
//!   content does not fit one page, that part of the whole content, and
//!   `[codeoid: characters B–N not shown; next page: get_episode {"episode_id":…,"offset":B}]`.
//!
//! Labels are relative to the calling session: `current session`, or `prior session #N` where N
//! is the session's 1-based position in its workspace. Raw session ids are never shown. Times are
//! UTC with second precision. A `fork` episode's header also names the parent by its label
//! (`- forked from: prior session #N at turn T`).
//!
//! It deliberately does not validate tool arguments (the tools layer does, with the ranges of the
//! tool schemas).

use std::collections::HashMap;

use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::Connection;
use serde_json::json;

use super::blobs::{self, CONTENT_BLOB_ROLE};
use super::episodes::{self, EpisodeHeader, StoredEpisode};
use super::timeline::{self, TimelineQuery};
use super::{Store, sessions};
use crate::canonical::{EpisodeKind, EpisodeStatus};
use crate::error::{Error, Result};

/// ISO-8601 UTC, second precision: `2026-02-12T16:02:23Z`.
pub fn iso8601(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Labels sessions relative to the caller, caching ordinals within one rendering.
struct Labeler<'a> {
    conn: &'a Connection,
    current: Option<&'a str>,
    cache: HashMap<String, String>,
}

impl Labeler<'_> {
    fn label(&mut self, session_id: &str) -> Result<String> {
        if self.current == Some(session_id) {
            return Ok("current session".to_owned());
        }
        if let Some(label) = self.cache.get(session_id) {
            return Ok(label.clone());
        }
        let label = format!(
            "prior session #{}",
            sessions::ordinal(self.conn, session_id)?
        );
        self.cache.insert(session_id.to_owned(), label.clone());
        Ok(label)
    }
}

fn timeline_line(header: &EpisodeHeader, label: &str) -> String {
    format!(
        "- [{}] [{label}] {}: {}  (episode_id: {})",
        iso8601(header.created_at),
        header.kind,
        header.summary,
        header.id
    )
}

impl Store {
    /// The model-facing text of one timeline page of `workspace_id`, labelled relative to
    /// `current_session`.
    ///
    /// # Errors
    /// As [`Store::timeline`].
    pub fn timeline_text(
        &self,
        workspace_id: &str,
        current_session: Option<&str>,
        query: &TimelineQuery,
    ) -> Result<String> {
        self.read(|conn| {
            let page = timeline::page(conn, workspace_id, query)?;
            let mut labeler = Labeler {
                conn,
                current: current_session,
                cache: HashMap::new(),
            };
            let mut out = String::new();
            for header in &page.episodes {
                out.push_str(&timeline_line(header, &labeler.label(&header.session_id)?));
                out.push('\n');
            }
            match (&page.next, page.episodes.is_empty()) {
                (Some(next), _) => {
                    let args = json!({ "before": next.before, "limit": next.limit });
                    out.push_str(&format!("\nnext page: timeline {args}\n"));
                }
                (None, false) => out.push_str("\n(end of timeline)\n"),
                (None, true) if query.before.is_none() && query.offset == 0 => {
                    out.push_str("(no episodes in this workspace yet)\n");
                }
                (None, true) => out.push_str("(no episodes on this page; end of timeline)\n"),
            }
            Ok(out)
        })
    }

    /// The model-facing text of episode `id` of `workspace_id`: a short header, then the stored
    /// content byte for byte.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when the episode does not exist in this workspace;
    /// [`crate::ErrorKind::InvalidInput`] when `id` is empty.
    pub fn episode_text(
        &self,
        workspace_id: &str,
        current_session: Option<&str>,
        id: &str,
    ) -> Result<String> {
        self.read(|conn| {
            let episode = episodes::fetch(conn, workspace_id, id)?;
            let mut out = episode_header(conn, current_session, &episode)?;
            out.push_str("\n\n");
            out.push_str(&episode.content);
            Ok(out)
        })
    }

    /// One page of episode `id` as `get_episode` shows it: at most `max_chars` characters of
    /// its whole content from character `offset` on, under the same header as
    /// [`Store::episode_text`]. The whole content is paged: a capped episode's is read from its
    /// `content` blob, so its middle, which the stored excerpt leaves out, is reachable too. A
    /// page that does not reach the end ends at a line break when one falls in its second half,
    /// and closes with the exact arguments of the next page; a header line
    /// `- page: characters A–B of N` says which part is shown, and content shown without one is
    /// whole. Content that fits one page from offset 0 renders exactly as
    /// [`Store::episode_text`], except a capped episode's: its whole content is shown in place of
    /// the stored excerpt.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when the episode does not exist in this workspace;
    /// [`crate::ErrorKind::InvalidInput`] when `id` is empty, `offset` is at or past the end of a
    /// non-empty content (past 0 for an empty one), or `max_chars` is 0.
    pub fn episode_page_text(
        &self,
        workspace_id: &str,
        current_session: Option<&str>,
        id: &str,
        offset: u64,
        max_chars: usize,
    ) -> Result<String> {
        if max_chars == 0 {
            return Err(Error::invalid_input(
                "a page of an episode must show at least 1 character",
            ));
        }
        self.read(|conn| {
            let mut episode = episodes::fetch(conn, workspace_id, id)?;
            let mut out = episode_header(conn, current_session, &episode)?;
            let whole = whole_content(conn, &mut episode)?;
            let page = page_of(&whole, offset, max_chars).ok_or_else(|| {
                Error::invalid_input(format!(
                    "offset {offset} is past the end of episode {id}, whose content has {} \
                     characters; pages start at offset 0",
                    whole.chars().count()
                ))
            })?;
            if page.start_char > 0 || page.next.is_some() {
                out.push_str(&format!(
                    "\n- page: characters {}–{} of {}",
                    page.start_char, page.end_char, page.total_chars
                ));
            }
            out.push_str("\n\n");
            out.push_str(&whole[page.bytes.clone()]);
            if let Some(next) = page.next {
                let args = json!({ "episode_id": episode.header.id, "offset": next });
                out.push_str(&format!(
                    "\n[codeoid: characters {next}–{} not shown; next page: get_episode {args}]",
                    page.total_chars
                ));
            }
            Ok(out)
        })
    }
}

/// The header `get_episode` shows above an episode's content (no trailing newline).
fn episode_header(
    conn: &Connection,
    current_session: Option<&str>,
    episode: &StoredEpisode,
) -> Result<String> {
    let mut labeler = Labeler {
        conn,
        current: current_session,
        cache: HashMap::new(),
    };
    let header = &episode.header;
    let label = labeler.label(&header.session_id)?;
    let mut out = format!(
        "### {} — {label}\n- when: {}\n- kind: {}",
        header.summary,
        iso8601(header.created_at),
        header.kind
    );
    if let Some(tool) = &header.tool_name {
        out.push_str(&format!(" ({tool})"));
    }
    if header.status != EpisodeStatus::Ok {
        out.push_str(&format!("\n- status: {}", header.status.as_str()));
    }
    if header.kind == EpisodeKind::Fork {
        // The parent's label depends on who reads it, so it is rendered, not stored.
        let lineage = sessions::find(conn, &header.session_id)?.and_then(|s| s.lineage);
        if let Some(lineage) = lineage {
            let parent = match sessions::find(conn, &lineage.parent_session_id)? {
                Some(_) => labeler.label(&lineage.parent_session_id)?,
                None => "a session no longer in memory".to_owned(),
            };
            let at = lineage
                .at_turn
                .map_or_else(String::new, |t| format!(" at turn {t}"));
            out.push_str(&format!("\n- forked from: {parent}{at}"));
        }
    }
    out.push_str(&format!("\n- episode_id: {}", header.id));
    for blob in &episode.blobs {
        out.push_str(&format!(
            "\n- raw {}: {} ({} bytes)",
            blob.role, blob.blob_id, blob.len
        ));
    }
    Ok(out)
}

/// An episode's whole content: the stored content (taken out of `episode`), or for a capped
/// episode its `content` blob (the stored content is then an excerpt).
fn whole_content(conn: &Connection, episode: &mut StoredEpisode) -> Result<String> {
    match episode.blobs.iter().find(|b| b.role == CONTENT_BLOB_ROLE) {
        Some(blob) => {
            let bytes = blobs::bytes(conn, &blob.blob_id)?;
            // Content blobs hold a string's bytes; a hand-edited file is shown, not refused.
            Ok(String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
        }
        None => Ok(std::mem::take(&mut episode.content)),
    }
}

/// Which part of a content one page shows.
#[derive(Debug, PartialEq, Eq)]
struct Page {
    /// Byte range of the page in the content.
    bytes: std::ops::Range<usize>,
    /// Character offsets of the page: `[start_char, end_char)`.
    start_char: u64,
    end_char: u64,
    /// Characters in the whole content.
    total_chars: u64,
    /// Where the next page starts, when this one does not reach the end.
    next: Option<u64>,
}

/// The page of `content` starting at character `offset` with at most `max_chars` characters,
/// cut after its last line break when that falls in the page's second half. `None` when
/// `offset` is at or past the end of a non-empty content.
fn page_of(content: &str, offset: u64, max_chars: usize) -> Option<Page> {
    let total_chars = content.chars().count() as u64;
    if offset > total_chars || (offset == total_chars && total_chars > 0) {
        return None;
    }
    let byte_at = |from: usize, chars: u64| {
        content[from..]
            .char_indices()
            .nth(chars as usize)
            .map_or(content.len(), |(at, _)| from + at)
    };
    let start = byte_at(0, offset);
    // The rest fits: no walk to find where the page would end.
    let mut end = if total_chars - offset <= max_chars as u64 {
        content.len()
    } else {
        byte_at(start, max_chars as u64)
    };
    let mut end_char = offset.saturating_add(max_chars as u64).min(total_chars);
    if end < content.len() {
        let half = byte_at(start, (max_chars / 2) as u64);
        if let Some(newline) = content[half..end].rfind('\n') {
            let cut = half + newline + 1;
            end_char -= content[cut..end].chars().count() as u64;
            end = cut;
        }
    }
    Some(Page {
        bytes: start..end,
        start_char: offset,
        end_char,
        total_chars,
        next: (end < content.len()).then_some(end_char),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(content: &str, offset: u64, max: usize) -> Option<(&str, u64, Option<u64>)> {
        page_of(content, offset, max).map(|p| (&content[p.bytes], p.end_char, p.next))
    }

    #[test]
    fn pages_end_at_a_line_break_in_their_second_half() {
        let content = "aaaa\nbbbb\ncccc\n";
        assert_eq!(shown(content, 0, 12), Some(("aaaa\nbbbb\n", 10, Some(10))));
        assert_eq!(shown(content, 10, 12), Some(("cccc\n", 15, None)));
        // The only break is in the first half: cut at the size.
        assert_eq!(
            shown("a\nbbbbbbbbbb", 0, 8),
            Some(("a\nbbbbbb", 8, Some(8)))
        );
    }

    #[test]
    fn offsets_and_sizes_count_characters() {
        let content = "é日本\n✓é";
        assert_eq!(shown(content, 1, 2), Some(("日本", 3, Some(3))));
        assert_eq!(shown(content, 4, 10), Some(("✓é", 6, None)));
    }

    #[test]
    fn an_offset_at_or_past_the_end_has_no_page() {
        assert_eq!(shown("abc", 3, 10), None);
        assert_eq!(shown("abc", 4, 10), None);
        assert_eq!(shown("abc", u64::MAX, 10), None);
        assert_eq!(shown("", 0, 10), Some(("", 0, None)));
        assert_eq!(shown("", 1, 10), None);
    }

    #[test]
    fn a_page_size_of_usize_max_shows_the_rest() {
        assert_eq!(shown("abc", 1, usize::MAX), Some(("bc", 3, None)));
        assert_eq!(shown("abc", 0, usize::MAX), Some(("abc", 3, None)));
    }
}
