//! The store's side of a fork (DESIGN §7): a new session that holds a verbatim copy of another
//! session's turns up to a point and goes on from there independently.
//!
//! [`Store::fork_session`] writes, in one transaction: the new session (in the parent's
//! workspace and checkout root, with lineage `{parent_session_id, parent_name, at_turn}` of kind
//! `Fork`), the parent's turn rows `0..=at_turn` copied byte for byte (with the chunker state
//! each met), the parent's chunker state right after `at_turn`, and a `fork` episode that puts
//! the event on the new session's timeline.
//!
//! Invariants:
//! - The parent is never written to: every row of it is read only.
//! - Copied turns are not chunked again, so their episodes are not duplicated: they stay the
//!   parent's, and the fork sees them as a prior session's. The chunker resumes from the
//!   parent's state at the fork point, so a result recorded in the fork pairs with a call copied
//!   from the parent (and an exchange open at the fork point is completed in the fork).
//! - Rotation never erases turns, so a fork after rotations still copies everything before them.
//! - The copies' usage stays in the turns' JSON (occupancy can be read from the last one) but
//!   is not added to the fork's usage ledger: those calls were made, and paid for, by the parent.
//!
//! It deliberately knows nothing about providers: translating the copy for another backend is
//! the `fork` module's job.

use chrono::{DateTime, Utc};
use rusqlite::params;

use super::connection::db_error;
use super::record::load_chunker;
use super::rotation;
use super::sessions::{self, Lineage, LineageKind, NewSession, Session};
use super::snapshot::state_after;
use super::sync::first_intent_before;
use super::{Store, episodes, fresh_id, to_millis};
use crate::canonical::{
    Episode, EpisodeKind, EpisodeStatus, SUMMARY_MAX_CHARS, episode_id, one_line, truncate_chars,
};
use crate::error::{Error, ErrorKind, Result};

/// What to fork. `name` is required; everything else defaults to the parent's tip and values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewFork {
    /// Name of the new session (not blank).
    pub name: String,
    /// Sequence number of the parent's last turn to copy; `None`: its last turn (the tip).
    pub at_turn: Option<u64>,
    /// Id of the new session; `None` mints `ses_` + 16 hex digits.
    pub id: Option<String>,
    /// Provider the fork continues with. `Some`: this provider and [`NewFork::model`] as given
    /// (`None` there: unknown); `None`: the parent's provider and model.
    pub provider: Option<String>,
    /// Model the fork continues with, read only when `provider` is `Some`.
    pub model: Option<String>,
    /// When the fork happened; `None` means now.
    pub created_at: Option<DateTime<Utc>>,
}

/// What [`Store::fork_session`] created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFork {
    /// The new session, lineage included.
    pub session: Session,
    /// The parent as it was when forked.
    pub parent: Session,
    /// The parent's last copied turn.
    pub at_turn: u64,
    /// Turns copied (`at_turn + 1`).
    pub copied_turns: u64,
    /// The `fork` episode on the new session's timeline.
    pub episode_id: String,
}

/// How a session is named in text a model reads: its name, else its first prompt (each cut to
/// `max` characters), never its id.
pub(crate) fn session_title(session: &Session, max: usize) -> String {
    match (&session.name, &session.first_intent) {
        (Some(name), _) => format!("\"{}\"", one_line(name, max)),
        (None, Some(intent)) => format!("the session that began \"{}\"", one_line(intent, max)),
        (None, None) => "an unnamed session".to_owned(),
    }
}

/// The parent's last turn to copy: `at_turn`, or the tip when it is `None`.
///
/// # Errors
/// [`ErrorKind::InvalidInput`] when the parent has no turns or `at_turn` is past its last one.
pub(crate) fn check_at(parent: &Session, at_turn: Option<u64>) -> Result<u64> {
    let Some(last) = parent.turn_count.checked_sub(1) else {
        return Err(Error::invalid_input(format!(
            "session {:?} has no turns to fork; record a turn first",
            parent.id
        )));
    };
    match at_turn {
        None => Ok(last),
        Some(at) if at <= last => Ok(at),
        Some(at) => Err(Error::invalid_input(format!(
            "at_turn {at} is out of range: session {:?} has turns 0..={last}; omit at_turn to fork \
             at the tip",
            parent.id
        ))),
    }
}

fn fork_episode(fork: &Session, parent: &Session, at: u64, at_time: DateTime<Utc>) -> Episode {
    let title = session_title(parent, 80);
    let backend = match (&fork.provider, &fork.model) {
        _ if fork.provider == parent.provider && fork.model == parent.model => String::new(),
        (Some(p), Some(m)) => format!(" on {p} {m}"),
        (Some(p), None) => format!(" on {p}"),
        (None, _) => String::new(),
    };
    Episode {
        id: episode_id(&fork.id, "fork"),
        kind: EpisodeKind::Fork,
        tool_name: None,
        call_id: None,
        status: EpisodeStatus::Ok,
        // The backend before the title, so a long title is what gets cut.
        summary: one_line(
            &format!(
                "fork at turn {at}{backend} of {}",
                session_title(parent, 40)
            ),
            SUMMARY_MAX_CHARS,
        ),
        content: format!(
            "Fork of {title} at turn {at} (of {} then), continued{backend}. This session \"{}\" goes on \
             from a verbatim copy of that conversation's first {} turns; their episodes stay \
             with the parent, in memory as a prior session (recall, timeline, get_episode).",
            parent.turn_count,
            truncate_chars(fork.name.as_deref().unwrap_or_default(), 80),
            at + 1
        ),
        paths: Vec::new(),
        created_at: at_time,
        turn_seq: at,
        repeats_intent: false,
    }
}

impl Store {
    /// Forks session `parent_id` as described by `fork`; see the module documentation.
    ///
    /// # Errors
    /// - [`ErrorKind::InvalidInput`] for a blank name or id, a parent with no turns, or an
    ///   `at_turn` past the parent's last turn (the message gives the valid range).
    /// - [`ErrorKind::NotFound`] when there is no such parent session.
    /// - [`ErrorKind::AlreadyExists`] when `fork.id` names an existing session.
    pub fn fork_session(&self, parent_id: &str, fork: &NewFork) -> Result<StoredFork> {
        if fork.name.trim().is_empty() {
            return Err(Error::invalid_input(
                "fork name is empty; name the new session (it is how the fork is told apart)",
            ));
        }
        if fork.id.as_deref().is_some_and(|id| id.trim().is_empty()) {
            return Err(Error::invalid_input(
                "fork session id is empty; omit it to let the store mint one",
            ));
        }
        let context = format!("cannot fork session {parent_id:?}");
        self.write(&context, |tx| {
            let parent = sessions::require(tx, parent_id)?;
            let at = check_at(&parent, fork.at_turn)?;
            let id = fork
                .id
                .clone()
                .unwrap_or_else(|| fresh_id("ses_", &parent.id));
            if sessions::find(tx, &id)?.is_some() {
                return Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!("session {id:?} already exists; pick another id for the fork"),
                ));
            }
            let created = fork.created_at.unwrap_or_else(Utc::now);
            let new = NewSession {
                id: Some(id.clone()),
                name: Some(fork.name.clone()),
                provider: fork.provider.clone().or_else(|| parent.provider.clone()),
                model: match &fork.provider {
                    Some(_) => fork.model.clone(),
                    None => parent.model.clone(),
                },
                created_at: Some(created),
                lineage: Some(Lineage {
                    parent_session_id: parent.id.clone(),
                    parent_name: parent.name.clone(),
                    at_turn: Some(at),
                    kind: LineageKind::Fork,
                }),
                backing_context_id: None,
            };
            let root = parent.root.to_string_lossy();
            sessions::insert(tx, &id, &parent.workspace_id, &root, &new, created)?;
            tx.prepare_cached(
                "INSERT INTO turns (session_id, seq, turn_id, role, created_at, json,
                     chunker_before)
                 SELECT ?1, seq, turn_id, role, created_at, json, chunker_before FROM turns
                 WHERE session_id = ?2 AND seq <= ?3 ORDER BY seq",
            )
            .and_then(|mut stmt| stmt.execute(params![id, parent.id, at as i64]))
            .map_err(|e| db_error(&context, e))?;
            // After turn `at`, before any finish: a finish is the parent's own ending, not part
            // of the conversation the fork goes on with. For a parent recorded before schema 2
            // the state is replayed from its first turn (finishes in its middle are ignored).
            let chunker = if at + 1 == parent.turn_count && parent.finished_at.is_none() {
                load_chunker(tx, &parent.id)?
            } else {
                state_after(tx, &self.options().chunker, &parent.id, at)?.0
            };
            let first_intent = first_intent_before(tx, &parent, at + 1)?;
            tx.prepare_cached(
                "UPDATE sessions SET turn_count = ?2, chunker_state = ?3, first_intent = ?4
                 WHERE id = ?1",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    id,
                    (at + 1) as i64,
                    chunker.to_state_json(),
                    first_intent
                ])
            })
            .map_err(|e| db_error(&context, e))?;
            rotation::recount(tx, &id)?;
            let session = sessions::require(tx, &id)?;
            let episode = fork_episode(&session, &parent, at, created);
            let episode_id = episodes::insert(tx, &session, &episode, None, self.options(), &[])?
                .unwrap_or(episode.id);
            tx.execute(
                "UPDATE sessions SET last_activity_at = max(last_activity_at, ?2) WHERE id = ?1",
                params![id, to_millis(created)],
            )
            .map_err(|e| db_error(&context, e))?;
            Ok(StoredFork {
                session: sessions::require(tx, &id)?,
                parent,
                at_turn: at,
                copied_turns: at + 1,
                episode_id,
            })
        })
    }
}
