//! The timeline: a workspace's episodes newest first, paged by offset/limit, with a `before`
//! anchor that keeps a walk stable while new episodes arrive (DESIGN §3).
//!
//! Invariants: the order is `created_at` descending, then insertion order descending, so it is
//! total and deterministic. With `before`, a page starts just older than that episode; the next
//! page's query is always `{before: last episode of this page, limit}`, so walking with it visits
//! every episode that existed when the walk started exactly once. An anchor that a tail
//! replacement removed since keeps its place (see `replaced`).
//!
//! It deliberately holds no text formatting (see `render`).

use rusqlite::{Connection, params};

use super::connection::db_error;
use super::episodes::{self, EpisodeHeader, HEADER_COLUMNS, header_from_row};
use super::{Store, replaced};
use crate::error::{Error, Result};

/// Largest page the store serves (the model-facing tool allows less).
pub const MAX_TIMELINE_LIMIT: u64 = 1000;

/// Which page of the timeline to read. `Default` is the newest 20.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineQuery {
    /// Episodes to skip (after the `before` anchor, when there is one).
    pub offset: u64,
    /// Episodes per page, 1..=[`MAX_TIMELINE_LIMIT`].
    pub limit: u64,
    /// Start just older than this episode.
    pub before: Option<String>,
}

impl Default for TimelineQuery {
    fn default() -> Self {
        TimelineQuery {
            offset: 0,
            limit: 20,
            before: None,
        }
    }
}

/// One page of the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelinePage {
    /// Episodes, newest first.
    pub episodes: Vec<EpisodeHeader>,
    /// The query for the next (older) page, or `None` at the end.
    pub next: Option<TimelineQuery>,
}

/// Reads one page inside the caller's read transaction.
pub(crate) fn page(
    conn: &Connection,
    workspace_id: &str,
    query: &TimelineQuery,
) -> Result<TimelinePage> {
    if query.limit == 0 || query.limit > MAX_TIMELINE_LIMIT {
        return Err(Error::invalid_input(format!(
            "timeline limit {} is out of range; use 1..={MAX_TIMELINE_LIMIT}",
            query.limit
        )));
    }
    let context = || format!("cannot read the timeline of {workspace_id}");
    let offset = i64::try_from(query.offset).unwrap_or(i64::MAX);
    let fetch = query.limit as i64 + 1;
    let rows = match &query.before {
        Some(before) => {
            // An anchor a tail replacement removed since still marks its place.
            let anchor =
                replaced::place(conn, workspace_id, before).map_err(|e| db_error(&context(), e))?;
            let Some((created, pk)) = anchor else {
                return Err(episodes::not_found(workspace_id, before));
            };
            let sql = format!(
                "SELECT {HEADER_COLUMNS} FROM episodes e
                 WHERE e.workspace_id = ?1 AND (e.created_at, e.pk) < (?2, ?3)
                 ORDER BY e.created_at DESC, e.pk DESC LIMIT ?4 OFFSET ?5"
            );
            conn.prepare_cached(&sql).and_then(|mut stmt| {
                stmt.query_map(
                    params![workspace_id, created, pk, fetch, offset],
                    header_from_row,
                )?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
        }
        None => {
            let sql = format!(
                "SELECT {HEADER_COLUMNS} FROM episodes e WHERE e.workspace_id = ?1
                 ORDER BY e.created_at DESC, e.pk DESC LIMIT ?2 OFFSET ?3"
            );
            conn.prepare_cached(&sql).and_then(|mut stmt| {
                stmt.query_map(params![workspace_id, fetch, offset], header_from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
        }
    };
    let mut episodes = rows.map_err(|e| db_error(&context(), e))?;
    let more = episodes.len() as u64 > query.limit;
    episodes.truncate(query.limit as usize);
    let next = match (more, episodes.last()) {
        (true, Some(last)) => Some(TimelineQuery {
            offset: 0,
            limit: query.limit,
            before: Some(last.id.clone()),
        }),
        _ => None,
    };
    Ok(TimelinePage { episodes, next })
}

impl Store {
    /// One page of `workspace_id`'s timeline, newest first.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] for a limit outside 1..=[`MAX_TIMELINE_LIMIT`];
    /// [`crate::ErrorKind::NotFound`] when `before` names no episode of this workspace (one a
    /// tail replacement removed still anchors the page).
    pub fn timeline(&self, workspace_id: &str, query: &TimelineQuery) -> Result<TimelinePage> {
        self.read(|conn| page(conn, workspace_id, query))
    }
}
