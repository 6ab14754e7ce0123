//! Rotation bookkeeping of a session: recording a rotation (count, backing context, time and the
//! `rotation` episode, in one transaction) and what the rotation policy needs persisted between
//! turns.
//!
//! The policy itself (`crate::rotate`) is pure; this file stores its inputs and outputs:
//! - the number of assistant turns since the last rotation (those at or after `rotated_at_turn`,
//!   where the last rotation happened) is kept in the session row (schema version 7) by every
//!   write that adds or removes turns, in its transaction: appending adds what it appended
//!   (`Tip::save`), a tail replacement and a fork count the rows again ([`recount`]) and a
//!   rotation starts again from none. Reading it costs the same in a session of forty thousand
//!   turns as in one of four;
//! - the pending seed is opaque JSON written in the same transaction as the rotation and taken
//!   (read and cleared) atomically, so the first message after a rotation carries it exactly once,
//!   even with several processes sharing the store;
//! - where the current backing context began (the turn count when the last seed was taken),
//!   which is where recall's view of the session's live context starts;
//! - a per-session context-window override.
//!
//! It does not decide anything: thresholds and seeds live in `crate::rotate`.

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, Transaction, params};

use super::Store;
use super::connection::db_error;
use super::sessions::{not_found, require};
use super::{episodes, from_millis, to_millis};
use crate::canonical::{Episode, EpisodeKind, EpisodeStatus, episode_id, one_line};
use crate::error::{Error, ErrorKind, Result};

/// The most characters of the session's name or first prompt a rotation event repeats.
const NAME_MAX_CHARS: usize = 200;

/// The key of the first episode of session `?1` at or after turn `?2`, or one past every key
/// when there is none. An episode the chunker emitted has `origin_seq >= turn_seq` (the push of
/// its own turn or of a later one emitted it), so its half reads `episodes_by_origin` from turn
/// `?2` on; the episodes nothing emitted (rotations, raw outputs, fork markers) have an index of
/// their own. Neither half reads the session's earlier episodes: the lookup costs the same at
/// any session length.
const LIVE_CONTEXT_START: &str = "
    SELECT coalesce(
        (SELECT min(pk) FROM (
             SELECT min(pk) AS pk FROM episodes
             WHERE session_id = ?1 AND origin_seq >= ?2 AND turn_seq >= ?2
             UNION ALL
             SELECT min(pk) FROM episodes
             WHERE session_id = ?1 AND origin_seq IS NULL AND turn_seq >= ?2)),
        (SELECT coalesce(max(pk), 0) + 1 FROM episodes))";

/// The outcome of [`Store::record_rotation`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotation {
    /// The session's rotation count after this rotation (1 for the first).
    pub count: u64,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// The `rotation` episode written to the timeline.
    pub episode_id: String,
}

/// What the rotation policy needs to know about a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotationBookkeeping {
    /// Rotations so far.
    pub rotation_count: u64,
    /// Assistant turns recorded since the last rotation (or since the session started).
    pub assistant_turns_since_rotation: u64,
    /// The session's context-window override, if one was set.
    pub context_window: Option<u64>,
    /// The seed the next message must carry (JSON written by the caller), if not yet taken.
    pub pending_seed: Option<String>,
}

impl Store {
    /// Records a rotation of session `id`'s backing context: increments its rotation count, sets
    /// the new backing context id and the time, and writes a `rotation` episode to the timeline,
    /// all in one transaction. `at` defaults to now.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when there is no such session.
    pub fn record_rotation(
        &self,
        id: &str,
        backing_context_id: Option<&str>,
        at: Option<DateTime<Utc>>,
    ) -> Result<Rotation> {
        let context = format!("cannot record a rotation of session {id:?}");
        self.write(&context, |tx| {
            rotate_in(tx, self, id, backing_context_id, at, None)
        })
    }

    /// The rotation bookkeeping of session `id`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when there is no such session.
    pub fn rotation_bookkeeping(&self, id: &str) -> Result<RotationBookkeeping> {
        let context = format!("cannot read the rotation state of session {id:?}");
        self.read(|conn| {
            let row = conn
                .prepare_cached(
                    "SELECT rotation_count, assistant_turns_since_rotation, context_window,
                         pending_seed
                     FROM sessions WHERE id = ?1",
                )
                .and_then(|mut stmt| {
                    stmt.query_row([id], |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, i64>(1)?,
                            r.get::<_, Option<i64>>(2)?,
                            r.get::<_, Option<String>>(3)?,
                        ))
                    })
                    .optional()
                })
                .map_err(|e| db_error(&context, e))?;
            let (count, since, window, seed) = row.ok_or_else(|| not_found(id))?;
            Ok(RotationBookkeeping {
                rotation_count: count.max(0) as u64,
                assistant_turns_since_rotation: since.max(0) as u64,
                context_window: window.map(|w| w.max(0) as u64),
                pending_seed: seed,
            })
        })
    }

    /// Where session `id`'s live context starts, as an episode key: the key of the first
    /// episode recorded since its current backing context began (or, when there is none yet,
    /// one past every key so far); `None` when the session never rotated (all of its episodes
    /// are live). Recall leaves out the calling session's live episodes only: what came before
    /// is no longer in the model's context and must stay findable.
    ///
    /// The backing context begins when the seed of the last rotation is taken
    /// ([`Store::take_pending_seed`]), which is when the harness builds the fresh context's first
    /// message: turns recorded after a rotation but before that (the rest of a tool loop the
    /// harness finished in the old context) are not in the fresh context, so they are not live.
    /// Until a seed is first taken the rotation itself is the boundary.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when there is no such session.
    pub fn live_context_start(&self, id: &str) -> Result<Option<i64>> {
        let context = format!("cannot read where session {id:?}'s live context starts");
        self.read(|conn| {
            let row: Option<(i64, i64)> = conn
                .prepare_cached(
                    "SELECT rotation_count, coalesce(context_started_turn, rotated_at_turn)
                     FROM sessions WHERE id = ?1",
                )
                .and_then(|mut stmt| {
                    stmt.query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
                        .optional()
                })
                .map_err(|e| db_error(&context, e))?;
            let (count, context_started_turn) = row.ok_or_else(|| not_found(id))?;
            if count == 0 {
                return Ok(None);
            }
            conn.prepare_cached(LIVE_CONTEXT_START)
                .and_then(|mut stmt| {
                    stmt.query_row(params![id, context_started_turn], |r| r.get(0))
                })
                .map(Some)
                .map_err(|e| db_error(&context, e))
        })
    }

    /// Rotates session `id`: increments its rotation count, records the time and the new backing
    /// context id, resets the turns-since-rotation mark, leaves `pending_seed` (JSON) for the next
    /// message and writes a `rotation` episode the timeline shows, all in one transaction.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when there is no such session.
    pub fn rotate_session(
        &self,
        id: &str,
        backing_context_id: Option<&str>,
        at: Option<DateTime<Utc>>,
        pending_seed: Option<&str>,
    ) -> Result<Rotation> {
        let context = format!("cannot record a rotation of session {id:?}");
        self.write(&context, |tx| {
            rotate_in(tx, self, id, backing_context_id, at, pending_seed)
        })
    }

    /// [`Store::rotate_session`] only while the session has been rotated `expected_count` times,
    /// checked in the same transaction: a rotation decided on a count that another writer has
    /// changed since (two processes recording one session) is refused, so one decision never
    /// rotates a session twice or replaces the other writer's pending seed.
    ///
    /// # Errors
    /// As [`Store::rotate_session`]; [`ErrorKind::RotationRefused`] when the count differs.
    pub fn rotate_session_from(
        &self,
        id: &str,
        expected_count: u64,
        backing_context_id: Option<&str>,
        at: Option<DateTime<Utc>>,
        pending_seed: Option<&str>,
    ) -> Result<Rotation> {
        let context = format!("cannot record a rotation of session {id:?}");
        self.write(&context, |tx| {
            let now = require(tx, id)?.rotation_count;
            if now != expected_count {
                return Err(Error::new(
                    ErrorKind::RotationRefused,
                    format!(
                        "session {id:?} was rotated by another writer since this rotation was \
                         decided (rotation {now} now, {expected_count} then); its seed is the \
                         one pending"
                    ),
                ));
            }
            rotate_in(tx, self, id, backing_context_id, at, pending_seed)
        })
    }

    /// Takes the pending seed of session `id`: returns it and clears it in one transaction, so it
    /// is handed out exactly once. Taking a seed marks where the session's new backing context
    /// begins (see [`Store::live_context_start`]).
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when there is no such session.
    pub fn take_pending_seed(&self, id: &str) -> Result<Option<String>> {
        let context = format!("cannot take the pending seed of session {id:?}");
        self.write(&context, |tx| {
            let seed: Option<Option<String>> = tx
                .prepare_cached("SELECT pending_seed FROM sessions WHERE id = ?1")
                .and_then(|mut stmt| stmt.query_row([id], |r| r.get(0)).optional())
                .map_err(|e| db_error(&context, e))?;
            let seed = seed.ok_or_else(|| not_found(id))?;
            if seed.is_some() {
                tx.execute(
                    "UPDATE sessions SET pending_seed = NULL, context_started_turn = turn_count
                     WHERE id = ?1",
                    [id],
                )
                .map_err(|e| db_error(&context, e))?;
            }
            Ok(seed)
        })
    }

    /// Sets (or with `None` clears) session `id`'s context-window override, in tokens.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] for a zero window; [`crate::ErrorKind::NotFound`] when
    /// there is no such session.
    pub fn set_context_window(&self, id: &str, tokens: Option<u64>) -> Result<()> {
        if tokens == Some(0) {
            return Err(Error::invalid_input(format!(
                "context window 0 for session {id:?} is not a window; pass a token count or none"
            )));
        }
        let stored = tokens.map(|t| i64::try_from(t).unwrap_or(i64::MAX));
        let context = format!("cannot set the context window of session {id:?}");
        self.write(&context, |tx| {
            let changed = tx
                .execute(
                    "UPDATE sessions SET context_window = ?2 WHERE id = ?1",
                    params![id, stored],
                )
                .map_err(|e| db_error(&context, e))?;
            if changed == 0 {
                return Err(not_found(id));
            }
            Ok(())
        })
    }
}

/// Where session `id`'s last rotation happened: its turn count then (0 before any).
///
/// # Errors
/// A database error; [`ErrorKind::NotFound`] when there is no such session.
pub(crate) fn rotated_at_turn(tx: &Transaction<'_>, id: &str) -> Result<u64> {
    tx.prepare_cached("SELECT rotated_at_turn FROM sessions WHERE id = ?1")
        .and_then(|mut stmt| stmt.query_row([id], |r| r.get::<_, i64>(0)).optional())
        .map_err(|e| {
            db_error(
                &format!("cannot read the rotation state of session {id:?}"),
                e,
            )
        })?
        .map(|at| at.max(0) as u64)
        .ok_or_else(|| not_found(id))
}

/// Counts session `id`'s assistant turns since its last rotation again, from its turns: after a
/// write that removed turns or copied them in (a tail replacement, a fork) or moved the rotation
/// mark (a rotation, where none is past it yet). Costs a read of every turn since the rotation,
/// so the append path keeps the count itself.
///
/// # Errors
/// A database error.
pub(crate) fn recount(tx: &Transaction<'_>, id: &str) -> Result<()> {
    tx.prepare_cached(
        "UPDATE sessions SET assistant_turns_since_rotation = (
             SELECT count(*) FROM turns
             WHERE session_id = ?1 AND seq >= sessions.rotated_at_turn AND role = 'assistant')
         WHERE id = ?1",
    )
    .and_then(|mut stmt| stmt.execute([id]))
    .map_err(|e| db_error(&format!("cannot count the turns of session {id:?}"), e))?;
    Ok(())
}

/// Rotates session `id` inside `tx`: increments its rotation count, sets the backing context and
/// time, marks the turn the rotation happened at, stores `pending_seed` (JSON) and writes the
/// `rotation` episode. Shared by [`Store::record_rotation`] and [`Store::rotate_session`].
pub(crate) fn rotate_in(
    tx: &Transaction<'_>,
    store: &Store,
    id: &str,
    backing_context_id: Option<&str>,
    at: Option<DateTime<Utc>>,
    pending_seed: Option<&str>,
) -> Result<Rotation> {
    // The time as the store keeps it (milliseconds), so what the caller is told equals the
    // session's `last_rotation_at` and every binding prints it the same way.
    let at = from_millis(to_millis(at.unwrap_or_else(Utc::now)));
    let context = format!("cannot record a rotation of session {id:?}");
    let session = require(tx, id)?;
    let count = session.rotation_count + 1;
    tx.execute(
        "UPDATE sessions SET rotation_count = ?2, last_rotation_at = ?3,
             backing_context_id = ?4, last_activity_at = max(last_activity_at, ?3),
             rotated_at_turn = turn_count, pending_seed = ?5
         WHERE id = ?1",
        params![
            id,
            count as i64,
            to_millis(at),
            backing_context_id,
            pending_seed
        ],
    )
    .map_err(|e| db_error(&context, e))?;
    recount(tx, id)?;
    let name = one_line(session.display_name(), NAME_MAX_CHARS);
    let episode = Episode {
        id: episode_id(id, &format!("rotation\0{count}")),
        kind: EpisodeKind::Rotation,
        tool_name: None,
        call_id: None,
        status: EpisodeStatus::Ok,
        summary: format!("rotation #{count} of this session's backing context"),
        content: format!(
            "Rotation #{count} of session \"{name}\": the backing context was replaced \
             to stay below the compaction ceiling. Earlier turns remain in memory \
             verbatim (recall, timeline, get_episode)."
        ),
        paths: Vec::new(),
        created_at: at,
        turn_seq: session.turn_count.saturating_sub(1),
        repeats_intent: false,
    };
    let inserted = episodes::insert(tx, &session, &episode, None, store.options(), &[])?;
    Ok(Rotation {
        count,
        at,
        episode_id: inserted.unwrap_or(episode.id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_context_start_reads_indexes_only() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {LIVE_CONTEXT_START}"))
            .unwrap()
            .query_map(params!["ses", 7], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let episodes: Vec<&String> = plan
            .iter()
            .filter(|step| step.contains("episodes"))
            .collect();
        assert!(
            episodes.iter().any(|s| s.contains("episodes_by_origin"))
                && episodes.iter().any(|s| s.contains("episodes_unoriginated")),
            "{plan:#?}"
        );
        // No step reads the session's episodes one by one through another index.
        assert!(
            !episodes.iter().any(|s| s.contains("episodes_by_session")),
            "{plan:#?}"
        );
    }
}
