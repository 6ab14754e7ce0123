//! Episodes a tail replacement removed (`sync_turns`: a log that changed was imported again),
//! remembered by id with where each stood in its workspace's timeline. A timeline walk anchored
//! on one (`before`) goes on from that place, and reading one says it was replaced instead of
//! that it never existed.
//!
//! Invariants: a row is written in the transaction that deletes its episode. Episode ids are
//! deterministic, so most re-derived episodes take their old ids back; their rows are dropped
//! at the end of the same sync, and a live episode always wins over a row here.

use chrono::Utc;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::connection::db_error;
use super::episodes::{not_found, shown_id};
use super::to_millis;
use crate::error::{Error, Result};

/// Remembers the episodes of `session_id` that the chunker emitted at or after event
/// `from_origin`, which the caller is about to delete.
pub(crate) fn remember(tx: &Transaction<'_>, session_id: &str, from_origin: i64) -> Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO replaced_episodes
             (id, workspace_id, session_id, created_at, pk, replaced_at)
         SELECT id, workspace_id, session_id, created_at, pk, ?3 FROM episodes
         WHERE session_id = ?1 AND origin_seq >= ?2",
    )
    .and_then(|mut stmt| stmt.execute(params![session_id, from_origin, to_millis(Utc::now())]))
    .map_err(|e| db_error("cannot remember the replaced episodes", e))?;
    Ok(())
}

/// Forgets the replaced episodes of `session_id` whose ids a live episode holds again.
pub(crate) fn forget_returned(tx: &Transaction<'_>, session_id: &str) -> Result<()> {
    tx.prepare_cached(
        "DELETE FROM replaced_episodes WHERE session_id = ?1
         AND id IN (SELECT id FROM episodes WHERE session_id = ?1)",
    )
    .and_then(|mut stmt| stmt.execute([session_id]))
    .map_err(|e| db_error("cannot tidy the replaced episodes", e))?;
    Ok(())
}

/// Where episode `id` of `workspace_id` stands in the timeline, `(created_at, pk)`: a live
/// episode's place, else a replaced one's. `None` when neither exists.
pub(crate) fn place(
    conn: &Connection,
    workspace_id: &str,
    id: &str,
) -> rusqlite::Result<Option<(i64, i64)>> {
    conn.prepare_cached(
        "SELECT created_at, pk FROM (
             SELECT 0 AS live_first, created_at, pk FROM episodes
             WHERE id = ?1 AND workspace_id = ?2
             UNION ALL
             SELECT 1, created_at, pk FROM replaced_episodes WHERE id = ?1 AND workspace_id = ?2
         ) ORDER BY live_first LIMIT 1",
    )?
    .query_row(params![id, workspace_id], |r| Ok((r.get(0)?, r.get(1)?)))
    .optional()
}

/// The error for episode `id`, which `workspace_id` does not hold: that it was replaced, when
/// it was, else plain not found.
pub(crate) fn missing(conn: &Connection, workspace_id: &str, id: &str) -> Error {
    let session = conn
        .prepare_cached(
            "SELECT session_id FROM replaced_episodes WHERE id = ?1 AND workspace_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![id, workspace_id], |r| r.get::<_, String>(0))
                .optional()
        });
    match session {
        Ok(Some(session)) => Error::not_found(format!(
            "episode {:?} was removed when session {session:?} was re-derived from that point \
             on (its log changed, or grew past a point where it had been finished); find what \
             took its place with timeline or recall",
            shown_id(id)
        )),
        Ok(None) => not_found(workspace_id, id),
        Err(e) => db_error(&format!("cannot read episode {:?}", shown_id(id)), e),
    }
}
