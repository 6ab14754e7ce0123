//! The write path: recording canonical turns, and closing a session.
//!
//! Invariants:
//! - One call, one `BEGIN IMMEDIATE` transaction: the turns, their usage ledger rows, the
//!   episodes the chunker derives from them and the chunker's new state are committed together
//!   or not at all. An acknowledged call survives a crash of the process.
//! - Every turn is validated before anything is written; a batch with one bad turn stores
//!   nothing.
//! - A turn whose id the session already has is a no-op reported as a duplicate (re-imports are
//!   idempotent). A turn without an id or timestamp gets one, and is stored with it.
//! - The chunker state is read and written inside the transaction, so two processes appending to
//!   one session serialize correctly. Some turn rows keep the state they met (`chunker_before`,
//!   see `snapshot`) and each derived episode the event that emitted it (`origin_seq`), so a
//!   session's tail can be replaced exactly (see `sync`).
//!
//! - A long batch is prepared on a second thread while the writer writes (see `pipeline`); the
//!   rows are the same as one turn at a time writes.
//!
//! It deliberately does no embedding: nothing slow runs while the write lock is held.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, Transaction, params};

use super::connection::db_error;
use super::prepared::{PreparedEpisode, PreparedTurn};
use super::sessions::{self, LineageKind, Session};
use super::snapshot::keeps_snapshot;
use super::{Store, StoreOptions, episodes, to_millis, usage};
use crate::canonical::{Chunker, Role, Turn, TurnPosition, truncate_chars};
use crate::error::{Error, Result};

/// Longest first intent kept on a session (the rest is in the turns and episodes).
const FIRST_INTENT_MAX_CHARS: usize = 2000;

/// What happened to one recorded turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The turn's id (the one given, or the one the store minted).
    pub turn_id: String,
    /// Its sequence number in the session (for a duplicate: the earlier turn's).
    pub seq: u64,
    /// `true` when the session already had a turn with this id and nothing was written.
    pub duplicate: bool,
    /// Episodes this turn completed, in order (possibly from earlier turns' pending calls).
    pub episode_ids: Vec<String>,
}

pub(crate) fn load_chunker(tx: &Transaction<'_>, session_id: &str) -> Result<Chunker> {
    let state: String = tx
        .prepare_cached("SELECT chunker_state FROM sessions WHERE id = ?1")
        .and_then(|mut stmt| stmt.query_row([session_id], |r| r.get(0)))
        .map_err(|e| {
            db_error(
                &format!("cannot read the state of session {session_id:?}"),
                e,
            )
        })?;
    Chunker::from_state_json(&state)
}

/// The seq of the turn with id `turn_id` in `session_id`, if there is one.
pub(crate) fn seq_of(tx: &Transaction<'_>, session_id: &str, turn_id: &str) -> Result<Option<u64>> {
    tx.prepare_cached("SELECT seq FROM turns WHERE session_id = ?1 AND turn_id = ?2")
        .and_then(|mut stmt| {
            stmt.query_row(params![session_id, turn_id], |r| r.get::<_, i64>(0))
                .optional()
        })
        .map(|seq| seq.map(|s| s as u64))
        .map_err(|e| db_error(&format!("cannot look up turn {turn_id:?}"), e))
}

/// The writable end of a session inside one write transaction: what appending a turn reads and
/// changes. Loaded from the session row, saved back with [`Tip::save`].
pub(crate) struct Tip {
    /// The chunker state after the last turn (and any finish since).
    pub chunker: Chunker,
    /// The next turn's sequence number.
    pub seq: u64,
    /// The latest turn or episode time.
    pub latest: DateTime<Utc>,
    /// The first prompt the person typed.
    pub first_intent: Option<String>,
    /// A finish may have changed the state since the last turn, so the next turn must keep a
    /// snapshot (see `snapshot`).
    pub after_finish: bool,
    /// Where the session's last rotation happened (`sessions.rotated_at_turn`).
    pub rotated_at_turn: u64,
    /// Assistant turns appended at or after `rotated_at_turn` and not yet saved: what
    /// [`Tip::save`] adds to the session's count of them (see `rotation`).
    pub assistant_turns_added: u64,
}

impl Tip {
    /// The tip of `session` as stored.
    pub(crate) fn load(tx: &Transaction<'_>, session: &Session) -> Result<Tip> {
        let (state, rotated_at_turn): (String, i64) = tx
            .prepare_cached("SELECT chunker_state, rotated_at_turn FROM sessions WHERE id = ?1")
            .and_then(|mut stmt| stmt.query_row([&session.id], |r| Ok((r.get(0)?, r.get(1)?))))
            .map_err(|e| {
                db_error(
                    &format!("cannot read the state of session {:?}", session.id),
                    e,
                )
            })?;
        Ok(Tip {
            chunker: Chunker::from_state_json(&state)?,
            seq: session.turn_count,
            latest: session.last_activity_at,
            first_intent: session.first_intent.clone(),
            after_finish: session.finished_at.is_some(),
            rotated_at_turn: rotated_at_turn.max(0) as u64,
            assistant_turns_added: 0,
        })
    }

    /// Appends `turn` as turn `self.seq` of `session`: the turn row with the chunker state it
    /// meets, its usage rows, the episodes it completes. The caller has ruled out a known id.
    pub(crate) fn append(
        &mut self,
        tx: &Transaction<'_>,
        store: &Store,
        session: &Session,
        turn: &Turn,
    ) -> Result<Recorded> {
        let prepared = self.prepare(session, store.options(), turn)?;
        write_turn(tx, session, &prepared)
    }

    /// Advances the tip past `turn` and returns its rows, without touching the database: the
    /// first half of [`Tip::append`] (see `prepared`).
    pub(crate) fn prepare(
        &mut self,
        session: &Session,
        options: &StoreOptions,
        turn: &Turn,
    ) -> Result<PreparedTurn> {
        let (mut prepared, stored) = PreparedTurn::stamp(&session.id, self.seq, turn)?;
        if keeps_snapshot(self.seq, self.after_finish) {
            prepared.chunker_before = Some(self.chunker.to_state_json());
        }
        let position = TurnPosition {
            session_id: &session.id,
            turn_id: &prepared.turn_id,
            seq: self.seq,
            at: prepared.at,
        };
        let episodes = self.chunker.push(&stored, &position, &options.chunker);
        self.latest = self.latest.max(prepared.at);
        prepared.episodes = episodes
            .into_iter()
            .map(|episode| {
                self.latest = self.latest.max(episode.created_at);
                PreparedEpisode::new(episode, session, options)
            })
            .collect();
        if self.first_intent.is_none() {
            self.first_intent = first_intent_of(&stored, is_subagent(session));
        }
        if prepared.role == Role::Assistant && self.seq >= self.rotated_at_turn {
            self.assistant_turns_added += 1;
        }
        self.seq += 1;
        self.after_finish = false;
        Ok(prepared)
    }

    /// Closes the exchange at the tip (see [`Chunker::finish`]): its episodes are emitted by a
    /// finish before turn `self.seq`. `at` is the time a cancelled placeholder may need.
    pub(crate) fn finish(
        &mut self,
        tx: &Transaction<'_>,
        store: &Store,
        session: &Session,
        at: DateTime<Utc>,
    ) -> Result<Vec<String>> {
        let position = TurnPosition {
            session_id: &session.id,
            turn_id: "",
            seq: self.seq.saturating_sub(1),
            at,
        };
        let episodes: Vec<PreparedEpisode> = self
            .chunker
            .finish(&position)
            .into_iter()
            .map(|episode| {
                self.latest = self.latest.max(episode.created_at);
                PreparedEpisode::new(episode, session, store.options())
            })
            .collect();
        self.after_finish = true;
        insert_episodes(tx, session, &episodes, self.seq)
    }

    /// Writes the tip back to the session row. When the turn count changed, the session was
    /// resumed (or its tail rewritten) and is no longer finished: `finished_at` is cleared, so
    /// it stays set only while no turn follows the finish. A caller that finishes sets it after.
    /// The assistant turns appended since the last save are added to the session's count.
    pub(crate) fn save(&mut self, tx: &Transaction<'_>, session_id: &str) -> Result<()> {
        tx.prepare_cached(
            "UPDATE sessions SET turn_count = ?2, chunker_state = ?3,
                 last_activity_at = ?4, first_intent = ?5,
                 finished_at = CASE WHEN turn_count = ?2 THEN finished_at END,
                 assistant_turns_since_rotation = assistant_turns_since_rotation + ?6
             WHERE id = ?1",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                session_id,
                self.seq as i64,
                self.chunker.to_state_json(),
                to_millis(self.latest),
                self.first_intent,
                self.assistant_turns_added as i64
            ])
        })
        .map_err(|e| db_error(&format!("cannot update session {session_id:?}"), e))?;
        self.assistant_turns_added = 0;
        Ok(())
    }
}

/// The first intent `turn` of a session provides: a prompt the person typed
/// ([`Turn::is_person_prompt`]), or, in a `subagent` session, the brief it was given
/// (`meta.sidechain`), which is all such a session has for a first prompt (its list line would
/// otherwise read "no prompt recorded"). In any other session a brief is another lane's.
pub(crate) fn first_intent_of(turn: &Turn, subagent: bool) -> Option<String> {
    let brief = subagent
        && turn.meta_flag("sidechain")
        && turn.is_user_prompt()
        && !turn.meta_flag("is_meta")
        && !turn.meta_flag("compaction_summary");
    (turn.is_person_prompt() || brief).then(|| truncate_chars(&turn.text(), FIRST_INTENT_MAX_CHARS))
}

/// Whether `session` is a subagent's (its lineage says so).
pub(crate) fn is_subagent(session: &Session) -> bool {
    session
        .lineage
        .as_ref()
        .is_some_and(|l| l.kind == LineageKind::Subagent)
}

/// Persists `episodes` of `session`, emitted by chunker event `origin`; returns the ids
/// actually inserted.
fn insert_episodes(
    tx: &Transaction<'_>,
    session: &Session,
    episodes: &[PreparedEpisode],
    origin: u64,
) -> Result<Vec<String>> {
    let mut ids = Vec::with_capacity(episodes.len());
    for episode in episodes {
        if let Some(id) = episodes::insert_prepared(tx, session, episode, Some(origin), &[])? {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Writes a turn [`Tip::prepare`] made: the turn row, its usage rows, its episodes (emitted by
/// the push of this turn).
pub(crate) fn write_turn(
    tx: &Transaction<'_>,
    session: &Session,
    prepared: &PreparedTurn,
) -> Result<Recorded> {
    let session_id = session.id.as_str();
    tx.prepare_cached(
        "INSERT INTO turns (session_id, seq, turn_id, role, created_at, json, chunker_before)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            session_id,
            prepared.seq as i64,
            prepared.turn_id,
            prepared.role.as_str(),
            to_millis(prepared.at),
            prepared.json,
            prepared.chunker_before
        ])
    })
    .map_err(|e| db_error(&format!("cannot record turns of session {session_id:?}"), e))?;
    if let Some(turn_usage) = &prepared.usage {
        usage::insert(tx, session_id, prepared.seq, turn_usage, prepared.at)?;
    }
    Ok(Recorded {
        turn_id: prepared.turn_id.clone(),
        seq: prepared.seq,
        duplicate: false,
        episode_ids: insert_episodes(tx, session, &prepared.episodes, prepared.seq)?,
    })
}

/// `turns` validated, with the batch index in the message when there are several.
pub(crate) fn validate_batch(turns: &[Turn]) -> Result<()> {
    for (index, turn) in turns.iter().enumerate() {
        turn.validate().map_err(|e| {
            if turns.len() == 1 {
                e
            } else {
                Error::new(
                    e.kind(),
                    format!("turn {index} of the batch: {}", e.message()),
                )
            }
        })?;
    }
    Ok(())
}

impl Store {
    /// Records one canonical turn of session `session_id` with its usage and the episodes it
    /// completes, in one transaction. See [`Store::record_turns`].
    ///
    /// # Errors
    /// As [`Store::record_turns`].
    pub fn record_turn(&self, session_id: &str, turn: &Turn) -> Result<Recorded> {
        self.record_turns(session_id, std::slice::from_ref(turn))?
            .into_iter()
            .next()
            .ok_or_else(|| Error::internal("recording one turn produced no outcome"))
    }

    /// Records `turns` of session `session_id`, in order, in one transaction: the fast path for
    /// importers. Returns one [`Recorded`] per turn.
    ///
    /// # Errors
    /// - [`crate::ErrorKind::InvalidInput`] naming the turn (by index in the batch) that fails
    ///   [`Turn::validate`]; nothing is stored.
    /// - [`crate::ErrorKind::NotFound`] when there is no such session.
    /// - [`crate::ErrorKind::Busy`] when another process kept the store locked past the busy
    ///   timeout.
    pub fn record_turns(&self, session_id: &str, turns: &[Turn]) -> Result<Vec<Recorded>> {
        validate_batch(turns)?;
        let context = format!("cannot record turns of session {session_id:?}");
        self.write(&context, |tx| {
            let session = sessions::require(tx, session_id)?;
            let mut tip = Tip::load(tx, &session)?;
            // Which turns the session already has, before any is appended (an id may repeat
            // within the batch: its first occurrence is the one appended).
            let mut earlier = Vec::with_capacity(turns.len());
            let mut batch_ids = HashMap::new();
            let mut next_seq = tip.seq;
            for turn in turns {
                let known = match turn.id.as_deref() {
                    Some(id) => match batch_ids.get(id) {
                        Some(&seq) => Some(seq),
                        None => seq_of(tx, session_id, id)?,
                    },
                    None => None,
                };
                if known.is_none() {
                    if let Some(id) = turn.id.as_deref() {
                        batch_ids.insert(id, next_seq);
                    }
                    next_seq += 1;
                }
                earlier.push(known);
            }
            let fresh: Vec<&Turn> = turns
                .iter()
                .zip(&earlier)
                .filter_map(|(turn, known)| known.is_none().then_some(turn))
                .collect();
            let mut appended = tip.append_all(tx, self, &session, &fresh)?.into_iter();
            let mut outcomes = Vec::with_capacity(turns.len());
            for (turn, known) in turns.iter().zip(earlier) {
                let outcome = match (known, &turn.id) {
                    (Some(seq), Some(turn_id)) => Recorded {
                        turn_id: turn_id.clone(),
                        seq,
                        duplicate: true,
                        episode_ids: Vec::new(),
                    },
                    _ => appended.next().ok_or_else(|| {
                        Error::internal("a batch appended fewer turns than it was given")
                    })?,
                };
                outcomes.push(outcome);
            }
            if tip.seq != session.turn_count {
                tip.save(tx, session_id)?;
            }
            Ok(outcomes)
        })
    }

    /// Closes session `session_id`: tool calls still waiting for a result become `cancelled`
    /// episodes and buffered assistant text (a final answer) is stored, so the last call and the
    /// last answer of a session are never lost. Recording more turns afterwards is allowed (a
    /// resumed session): the finish's episodes stay and `finished_at` is cleared. Returns the ids
    /// of the episodes this wrote.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when there is no such session.
    pub fn finish_session(&self, session_id: &str) -> Result<Vec<String>> {
        let context = format!("cannot finish session {session_id:?}");
        self.write(&context, |tx| {
            let session = sessions::require(tx, session_id)?;
            let mut tip = Tip::load(tx, &session)?;
            let now = Utc::now();
            let ids = tip.finish(tx, self, &session, session.last_activity_at.max(now))?;
            tip.save(tx, session_id)?;
            tx.execute(
                "UPDATE sessions SET finished_at = ?2 WHERE id = ?1",
                params![session_id, to_millis(now)],
            )
            .map_err(|e| db_error(&context, e))?;
            Ok(ids)
        })
    }
}
