//! The text a model reads from `timeline` and `get_episode` (DESIGN §3).
//!
//! Formats, pinned by tests:
//! - timeline line: `- [{ISO-8601}] [{label}] {kind}: {summary}  (episode_id: {id})`, newest
//!   first; the page ends with the exact arguments of the next page
//!   (`next page: timeline {"before":"ep_…","limit":20}`) or `(end of timeline)`.
//! - episode: a header in the recall block's style (`### {summary} — {label}`, `- when:`,
//!   `- kind:`, `- episode_id:`...), a blank line, then the stored content byte for byte.
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

use super::episodes::{self, EpisodeHeader};
use super::timeline::{self, TimelineQuery};
use super::{Store, sessions};
use crate::canonical::{EpisodeKind, EpisodeStatus};
use crate::error::Result;

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
    /// [`crate::ErrorKind::NotFound`] when the episode does not exist in this workspace.
    pub fn episode_text(
        &self,
        workspace_id: &str,
        current_session: Option<&str>,
        id: &str,
    ) -> Result<String> {
        self.read(|conn| {
            let episode = episodes::fetch(conn, workspace_id, id)?;
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
            out.push_str("\n\n");
            out.push_str(&episode.content);
            Ok(out)
        })
    }
}
