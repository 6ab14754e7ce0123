//! Tail replacement: making a session's stored turns equal the turns its log holds now, for logs
//! that are re-read while they grow (a harness still writing, an import run every few minutes).
//!
//! A log that grows does not only gain turns at the end: the last turns change too. Claude Code
//! writes one line per content block, so a response cut mid-way later gains blocks and usage; a
//! results turn cut between two results later gains the second one; a Gemini CLI message is
//! rewritten as it streams. Recording by id alone would keep the first, partial version forever.
//!
//! [`Store::sync_turns`] compares the given turns with the stored ones position by position and
//! replaces everything from the first difference on, inside one transaction: the changed turns
//! and every turn after them, their usage rows, and the episodes the chunker emitted from that
//! point (found through `episodes.origin_seq`, with their content, paths, FTS rows, blob links
//! and vectors). The chunker resumes from the state right after the last kept turn (see
//! `snapshot`), so the result is exactly what recording the final turns once would have stored.
//!
//! Invariants:
//! - Turns before the first difference, and every episode not derived from replaced turns
//!   (rotations, raw outputs, fork markers, episodes of earlier turns), are never touched.
//! - Given turns that are a prefix of the stored ones (an older copy of the log) remove nothing.
//! - A finish the session had at its tip is undone before turns are appended (its cancelled
//!   placeholders and flushed answer are deleted and the chunker state before it is restored),
//!   because the log says the conversation went on: a late result pairs with its call exactly
//!   as if the log had been read whole.
//! - Re-syncing the same turns writes nothing.
//!
//! It deliberately does not read logs (see `import::into_store`) or decide when a session is
//! over: the caller says whether to finish.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, Transaction, params};

use super::connection::db_error;
use super::record::{Tip, first_intent_of, is_subagent, load_chunker, seq_of, validate_batch};
use super::rotation::{self, rotated_at_turn};
use super::sessions::{self, Session};
use super::snapshot::{has_snapshot, state_after};
use super::{Store, episodes, from_millis, replaced, to_millis};
use crate::canonical::{Chunker, Turn, TurnPosition};
use crate::error::{Error, ErrorKind, Result};

/// What [`Store::sync_turns`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Synced {
    /// Given turns that were already stored exactly so.
    pub unchanged: u64,
    /// Stored turns removed because the log changed them (or a turn before them).
    pub removed: u64,
    /// Turns written: new ones and the new versions of removed ones.
    pub added: u64,
    /// Episodes deleted with the removed turns or with an undone finish.
    pub episodes_removed: u64,
    /// Episodes written, in order.
    pub episode_ids: Vec<String>,
    /// `true` when this call closed the session.
    pub finished: bool,
}

impl Synced {
    /// `true` when the call wrote nothing.
    pub fn is_noop(&self) -> bool {
        self.removed == 0 && self.added == 0 && self.episodes_removed == 0 && !self.finished
    }
}

/// `true` when `incoming` is the turn stored as `stored_json` under `stored_id`. A missing id
/// or timestamp in `incoming` matches the one the store filled in.
fn same_turn(incoming: &Turn, stored_id: &str, stored_json: &str) -> Result<bool> {
    if incoming.id.as_deref().is_some_and(|id| id != stored_id) {
        return Ok(false);
    }
    let json = if incoming.id.is_some() && incoming.timestamp.is_some() {
        serde_json::to_string(incoming)
    } else {
        let stored = parse_stored(stored_json, stored_id)?;
        let mut filled = incoming.clone();
        filled.id = Some(stored_id.to_owned());
        filled.timestamp = filled.timestamp.or(stored.timestamp);
        serde_json::to_string(&filled)
    }
    .map_err(|e| Error::internal("cannot serialize a turn to compare it").with_source(e))?;
    Ok(json == stored_json)
}

fn parse_stored(json: &str, turn_id: &str) -> Result<Turn> {
    serde_json::from_str(json).map_err(|e| {
        Error::new(
            ErrorKind::Corrupt,
            format!(
                "stored turn {turn_id:?} no longer parses; the store was changed by something \
                 other than codeoid"
            ),
        )
        .with_source(e)
    })
}

/// The first position in `first_seq..first_seq + turns.len()` (capped at `stored`) where the
/// stored turn differs from the given one; the cap when none does.
fn first_difference(
    tx: &Transaction<'_>,
    session_id: &str,
    first_seq: u64,
    turns: &[Turn],
    stored: u64,
) -> Result<u64> {
    let end = stored.min(first_seq + turns.len() as u64);
    if first_seq >= end {
        return Ok(end);
    }
    let context = format!("cannot compare the turns of session {session_id:?}");
    let mut stmt = tx
        .prepare_cached(
            "SELECT seq, turn_id, json FROM turns
             WHERE session_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq",
        )
        .map_err(|e| db_error(&context, e))?;
    let mut rows = stmt
        .query(params![session_id, first_seq as i64, end as i64])
        .map_err(|e| db_error(&context, e))?;
    let mut expected = first_seq;
    while let Some(row) = rows.next().map_err(|e| db_error(&context, e))? {
        let read = || -> rusqlite::Result<(i64, String, String)> {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        };
        let (seq, turn_id, json) = read().map_err(|e| db_error(&context, e))?;
        let seq = seq as u64;
        if seq != expected {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "session {session_id:?} has no turn {expected} (found {seq} next); the store \
                     was changed by something other than codeoid"
                ),
            ));
        }
        if !same_turn(&turns[(seq - first_seq) as usize], &turn_id, &json)? {
            return Ok(seq);
        }
        expected += 1;
    }
    Ok(end)
}

/// The chunker state the first new turn meets when the turns from `diverged` on are replaced:
/// the state right after turn `diverged - 1`, before any finish (a finish there emitted episodes
/// with origin `diverged`, which the replacement deletes too).
fn resume_state(
    tx: &Transaction<'_>,
    store: &Store,
    session: &Session,
    diverged: u64,
) -> Result<Chunker> {
    let Some(last) = diverged.checked_sub(1) else {
        // Every turn is replaced: a fresh chunker is exact, but the episodes of a session
        // recorded before schema 2 carry no origin, so deleting the replaced ones would miss
        // them and leave them beside their re-derived copies.
        if session.turn_count > 0 && !has_snapshot(tx, &session.id, 0)? {
            return Err(recorded_before_v2(session, diverged));
        }
        return Ok(Chunker::new());
    };
    if diverged == session.turn_count && session.finished_at.is_none() {
        // Nothing finished the session since its last turn: its state is that turn's.
        return load_chunker(tx, &session.id);
    }
    let (chunker, exact) = state_after(tx, &store.options().chunker, &session.id, last)?;
    if exact {
        return Ok(chunker);
    }
    if diverged == session.turn_count {
        // Appending to a session recorded before schema 2: its finish episodes have no origin
        // and stay, so the state they left stays too.
        return load_chunker(tx, &session.id);
    }
    Err(recorded_before_v2(session, diverged))
}

/// The refusal to replace turns from `diverged` on in a session recorded before schema 2.
fn recorded_before_v2(session: &Session, diverged: u64) -> Error {
    Error::invalid_input(format!(
        "session {:?} was recorded before schema version 2 and keeps no chunker snapshots, so \
         its changed tail (from turn {diverged}) cannot be replaced; import the log into a new \
         session",
        session.id
    ))
}

/// The latest time of anything left in the session: its start, turns, episodes, rotation.
fn latest_activity(tx: &Transaction<'_>, session: &Session) -> Result<DateTime<Utc>> {
    let latest: Option<i64> = tx
        .prepare_cached(
            "SELECT max(coalesce((SELECT max(created_at) FROM turns WHERE session_id = ?1), 0),
                        coalesce((SELECT max(created_at) FROM episodes WHERE session_id = ?1), 0))",
        )
        .and_then(|mut stmt| stmt.query_row([&session.id], |r| r.get(0)).optional())
        .map_err(|e| db_error(&format!("cannot date session {:?}", session.id), e))?
        .flatten();
    let mut at = session.created_at;
    if let Some(ms) = latest {
        at = at.max(from_millis(ms));
    }
    if let Some(rotated) = session.last_rotation_at {
        at = at.max(rotated);
    }
    Ok(at)
}

/// The first intent among the kept turns `0..kept` of `session`, read in order until one
/// qualifies (see [`first_intent_of`]).
pub(crate) fn first_intent_before(
    tx: &Transaction<'_>,
    session: &Session,
    kept: u64,
) -> Result<Option<String>> {
    let session_id = session.id.as_str();
    let subagent = is_subagent(session);
    let context = format!("cannot read the turns of session {session_id:?}");
    let mut stmt = tx
        .prepare_cached(
            "SELECT turn_id, json FROM turns WHERE session_id = ?1 AND seq < ?2 ORDER BY seq",
        )
        .map_err(|e| db_error(&context, e))?;
    let mut rows = stmt
        .query(params![session_id, kept as i64])
        .map_err(|e| db_error(&context, e))?;
    while let Some(row) = rows.next().map_err(|e| db_error(&context, e))? {
        let turn_id: String = row.get(0).map_err(|e| db_error(&context, e))?;
        let json: String = row.get(1).map_err(|e| db_error(&context, e))?;
        if let Some(intent) = first_intent_of(&parse_stored(&json, &turn_id)?, subagent) {
            return Ok(Some(intent));
        }
    }
    Ok(None)
}

fn set_finished(tx: &Transaction<'_>, session_id: &str, at: Option<DateTime<Utc>>) -> Result<()> {
    tx.prepare_cached("UPDATE sessions SET finished_at = ?2 WHERE id = ?1")
        .and_then(|mut stmt| stmt.execute(params![session_id, at.map(to_millis)]))
        .map_err(|e| db_error(&format!("cannot update session {session_id:?}"), e))?;
    Ok(())
}

fn check_unique_ids(turns: &[Turn]) -> Result<()> {
    let mut seen = HashSet::with_capacity(turns.len());
    for (index, turn) in turns.iter().enumerate() {
        if let Some(id) = &turn.id {
            if !seen.insert(id.as_str()) {
                return Err(Error::invalid_input(format!(
                    "turn id {id:?} appears twice (again at index {index}); a log's turn ids must \
                     be unique for its turns to be compared by position"
                )));
            }
        }
    }
    Ok(())
}

impl Store {
    /// Makes turns `first_seq..` of session `session_id` equal `turns`, as its log holds them
    /// now, in one transaction; see the module documentation for what is replaced.
    ///
    /// `first_seq` lets a long log be synced in batches (`0`, then the batch size, ...): turns
    /// before it are not compared. When `finish` is set the session is closed afterwards, as by
    /// [`Store::finish_session`] but dated at its last activity, unless it already is; a later
    /// sync that brings more turns undoes that finish. Without `finish`, `finished_at` is cleared
    /// whenever turns are written.
    ///
    /// # Errors
    /// - [`ErrorKind::InvalidInput`] when a turn fails [`Turn::validate`], two given turns share
    ///   an id, a new turn's id belongs to an earlier turn of the session, `first_seq` is past
    ///   the session's end, or a changed turn was recorded before schema version 2. Nothing is
    ///   written.
    /// - [`ErrorKind::NotFound`] when there is no such session.
    /// - [`ErrorKind::Busy`] when another process kept the store locked past the busy timeout.
    pub fn sync_turns(
        &self,
        session_id: &str,
        first_seq: u64,
        turns: &[Turn],
        finish: bool,
    ) -> Result<Synced> {
        validate_batch(turns)?;
        check_unique_ids(turns)?;
        let context = format!("cannot sync turns of session {session_id:?}");
        self.write(&context, |tx| {
            let session = sessions::require(tx, session_id)?;
            let stored = session.turn_count;
            if first_seq > stored {
                return Err(Error::invalid_input(format!(
                    "first_seq {first_seq} is past the end of session {session_id:?}, which has \
                     {stored} turns; sync from a position in 0..={stored}"
                )));
            }
            let end = first_seq + turns.len() as u64;
            let diverged = first_difference(tx, session_id, first_seq, turns, stored)?;
            let mut outcome = Synced {
                unchanged: diverged - first_seq,
                ..Synced::default()
            };
            if diverged == stored.min(end) && end <= stored {
                // Nothing new or changed; an older, shorter copy of the log removes nothing.
                if finish {
                    let mut tip = Tip::load(tx, &session)?;
                    let mut probe = tip.chunker.clone();
                    let position = TurnPosition {
                        session_id,
                        turn_id: "",
                        seq: stored.saturating_sub(1),
                        at: tip.latest,
                    };
                    let _ = probe.finish(&position);
                    if probe != tip.chunker {
                        outcome.episode_ids = tip.finish(tx, self, &session, tip.latest)?;
                        tip.save(tx, session_id)?;
                        set_finished(tx, session_id, Some(tip.latest))?;
                        outcome.finished = true;
                        replaced::forget_returned(tx, session_id)?;
                    }
                }
                return Ok(outcome);
            }
            let chunker = resume_state(tx, self, &session, diverged)?;
            if diverged < stored {
                for table in [
                    "turns WHERE session_id = ?1 AND seq",
                    "usage_calls WHERE session_id = ?1 AND turn_seq",
                ] {
                    tx.prepare_cached(&format!("DELETE FROM {table} >= ?2"))
                        .and_then(|mut stmt| stmt.execute(params![session_id, diverged as i64]))
                        .map_err(|e| db_error(&context, e))?;
                }
                outcome.removed = stored - diverged;
                rotation::recount(tx, session_id)?;
            }
            outcome.episodes_removed = episodes::delete_derived(tx, session_id, diverged)?;
            let first_intent = match &session.first_intent {
                Some(_) if diverged < stored => first_intent_before(tx, &session, diverged)?,
                kept => kept.clone(),
            };
            let mut tip = Tip {
                chunker,
                seq: diverged,
                latest: latest_activity(tx, &session)?,
                first_intent,
                // The resumed state is what replaying the kept turns gives: no snapshot needed.
                after_finish: false,
                rotated_at_turn: rotated_at_turn(tx, session_id)?,
                assistant_turns_added: 0,
            };
            let tail: Vec<&Turn> = turns[(diverged - first_seq) as usize..].iter().collect();
            for turn in &tail {
                if let Some(id) = &turn.id {
                    if let Some(earlier) = seq_of(tx, session_id, id)? {
                        return Err(Error::invalid_input(format!(
                            "turn id {id:?} is already turn {earlier} of session {session_id:?}; \
                             a log's turn ids must be unique"
                        )));
                    }
                }
            }
            for recorded in tip.append_all(tx, self, &session, &tail)? {
                outcome.episode_ids.extend(recorded.episode_ids);
                outcome.added += 1;
            }
            let finished_at = if finish {
                let at = tip.latest;
                outcome
                    .episode_ids
                    .extend(tip.finish(tx, self, &session, at)?);
                outcome.finished = true;
                Some(tip.latest)
            } else {
                None
            };
            tip.save(tx, session_id)?;
            set_finished(tx, session_id, finished_at)?;
            replaced::forget_returned(tx, session_id)?;
            Ok(outcome)
        })
    }
}
