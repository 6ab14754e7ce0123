//! Chunker snapshots: the chunker state a turn met, kept on some turn rows and derived for the
//! others, so a session's changed tail can be re-chunked exactly (`sync`) and a fork can resume
//! where its parent was (`fork`).
//!
//! Between two turns only a finish changes the chunker state; otherwise the state a turn meets
//! is the previous turn pushed onto the state the previous turn met. So a turn row keeps its
//! state (`turns.chunker_before`) only when its seq is a multiple of [`SNAPSHOT_EVERY`] or it is
//! the first turn recorded after a finish; the state right after any turn is found by replaying
//! at most [`SNAPSHOT_EVERY`] turns from the nearest snapshot. Writing every state instead cost a
//! sixth of batched ingest throughput (the state holds the prompt and pending call inputs).
//!
//! Invariants: turn 0 of a session recorded with schema 2 always has a snapshot, so a session
//! whose turn 0 has none was (at least partly) recorded before; its states are then replayed
//! from a fresh chunker, which ignores finishes in the middle of such a session, and callers that
//! need exactness refuse it. Replays use the store's current [`ChunkerConfig`]; a store used with
//! different chunker options over time replays with today's.
//!
//! It deliberately writes nothing: recording decides when to keep a snapshot (`record`).

use rusqlite::{Connection, OptionalExtension, params};

use super::connection::db_error;
use crate::canonical::{Chunker, ChunkerConfig, Turn, TurnPosition};
use crate::error::{Error, ErrorKind, Result};

/// A turn whose seq is a multiple of this keeps its chunker state; at most this many turns are
/// replayed to find any state.
pub(crate) const SNAPSHOT_EVERY: u64 = 32;

/// Whether turn `seq` keeps the state it meets; `after_finish` when a finish happened since the
/// previous turn.
pub(crate) fn keeps_snapshot(seq: u64, after_finish: bool) -> bool {
    after_finish || seq % SNAPSHOT_EVERY == 0
}

/// The chunker state right after turn `last` of `session_id` (before any finish after it), and
/// whether it is exact (`false` for sessions recorded before schema 2, replayed from scratch).
pub(crate) fn state_after(
    conn: &Connection,
    config: &ChunkerConfig,
    session_id: &str,
    last: u64,
) -> Result<(Chunker, bool)> {
    let context = format!("cannot read the turns of session {session_id:?}");
    let last_i = i64::try_from(last).unwrap_or(i64::MAX);
    let nearest: Option<(i64, String)> = conn
        .prepare_cached(
            "SELECT seq, chunker_before FROM turns
             WHERE session_id = ?1 AND seq <= ?2 AND chunker_before IS NOT NULL
             ORDER BY seq DESC LIMIT 1",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![session_id, last_i], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(|e| db_error(&context, e))?;
    let exact = match &nearest {
        Some((0, _)) => true,
        // A snapshot after turn 0 with none at turn 0: a session recorded partly before schema 2.
        Some(_) => has_snapshot(conn, session_id, 0)?,
        None => false,
    };
    let (mut chunker, from) = match nearest {
        Some((seq, state)) if exact => (Chunker::from_state_json(&state)?, seq),
        _ => (Chunker::new(), 0),
    };
    let mut stmt = conn
        .prepare_cached(
            "SELECT seq, turn_id, json FROM turns
             WHERE session_id = ?1 AND seq >= ?2 AND seq <= ?3 ORDER BY seq",
        )
        .map_err(|e| db_error(&context, e))?;
    let mut rows = stmt
        .query(params![session_id, from, last_i])
        .map_err(|e| db_error(&context, e))?;
    while let Some(row) = rows.next().map_err(|e| db_error(&context, e))? {
        let read = || -> rusqlite::Result<(i64, String, String)> {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        };
        let (seq, turn_id, json) = read().map_err(|e| db_error(&context, e))?;
        let turn: Turn = serde_json::from_str(&json).map_err(|e| {
            Error::new(
                ErrorKind::Corrupt,
                format!(
                    "turn {seq} of session {session_id:?} no longer parses; the store was \
                     changed by something other than codeoid"
                ),
            )
            .with_source(e)
        })?;
        let Some(at) = turn.timestamp else {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "turn {seq} of session {session_id:?} has no timestamp although the store \
                     always stores one; the store was changed by something other than codeoid"
                ),
            ));
        };
        let position = TurnPosition {
            session_id,
            turn_id: &turn_id,
            seq: seq as u64,
            at,
        };
        // Only the state matters: the episodes were stored when the turn was recorded.
        let _ = chunker.push(&turn, &position, config);
    }
    Ok((chunker, exact))
}

/// Whether turn `seq` of `session_id` keeps the chunker state it met (`false` when there is no
/// such turn).
///
/// # Errors
/// A database error if the read fails.
pub(crate) fn has_snapshot(conn: &Connection, session_id: &str, seq: u64) -> Result<bool> {
    conn.prepare_cached(
        "SELECT chunker_before IS NOT NULL FROM turns WHERE session_id = ?1 AND seq = ?2",
    )
    .and_then(|mut stmt| {
        stmt.query_row(params![session_id, seq as i64], |r| r.get::<_, bool>(0))
            .optional()
    })
    .map(|found| found.unwrap_or(false))
    .map_err(|e| {
        db_error(
            &format!("cannot read the turns of session {session_id:?}"),
            e,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_every_32_turns_and_after_a_finish() {
        assert!(keeps_snapshot(0, false));
        assert!(!keeps_snapshot(1, false));
        assert!(keeps_snapshot(1, true));
        assert!(keeps_snapshot(64, false));
        assert!(!keeps_snapshot(65, false));
    }
}
