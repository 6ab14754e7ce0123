//! Rotation over the store: recording a turn evaluates the policy, a rotation persists the
//! count, the new backing context and the seed in one transaction, and the seed is handed out
//! exactly once.
//!
//! The policy (`crate::rotate`) is pure. Its state is rebuilt from the store on every call: the
//! rotation count and pending seed are columns, and the turns since the last rotation are counted
//! from the recorded assistant turns, so the guard advances in every configuration and cannot
//! drift from what was recorded.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Memory;
use crate::canonical::{Role, Turn};
use crate::error::{Error, ErrorKind, Result};
use crate::rotate::{Anchor, ContextWindow, Decision, RotationState, SeedBlock, SeedSource};
use crate::store::{Recorded, RotationBookkeeping, Session};

/// Turns scanned backwards for the rotation anchor before falling back to the whole session.
const ANCHOR_SCAN_TURNS: u64 = 400;

/// What [`Memory::record_turn`] did.
#[derive(Debug, Clone, Serialize)]
pub struct TurnOutcome {
    /// The stored turn and the episodes it completed.
    #[serde(serialize_with = "serialize_recorded")]
    pub recorded: Recorded,
    /// The rotation policy's verdict on this turn (assistant turns only).
    pub decision: Option<Decision>,
    /// The rotation the policy triggered, if any: the harness replaces its backing context and
    /// starts the next message with [`Memory::take_seed`].
    pub rotation: Option<RotationOutcome>,
    /// Why a rotation the thresholds asked for could not happen (no user prompt to anchor on).
    pub rotation_refused: Option<String>,
}

/// A rotation that happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RotationOutcome {
    /// The session's rotation count after it (1 for the first).
    pub count: u64,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// The `rotation` event in the timeline.
    pub episode_id: String,
    /// The new backing context id (the caller's, or a fresh `ctx_…` id).
    pub backing_context_id: String,
    /// The seed the next message starts with (also kept pending for [`Memory::take_seed`]).
    pub seed: SeedBlock,
}

fn serialize_recorded<S: serde::Serializer>(r: &Recorded, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut st = s.serialize_struct("Recorded", 4)?;
    st.serialize_field("turn_id", &r.turn_id)?;
    st.serialize_field("seq", &r.seq)?;
    st.serialize_field("duplicate", &r.duplicate)?;
    st.serialize_field("episode_ids", &r.episode_ids)?;
    st.end()
}

impl Memory {
    /// Records one turn of session `session_id` and, for an assistant turn, asks the rotation
    /// policy about it. When the policy says so (the hard threshold always, the soft one with
    /// auto-rotation on, never before the turn guard), the session is rotated at once and the
    /// outcome carries the rotation.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when the session is not in this workspace;
    /// [`ErrorKind::InvalidInput`] for an invalid turn (nothing is written); database errors.
    pub fn record_turn(&self, session_id: &str, turn: &Turn) -> Result<TurnOutcome> {
        let session = self.session(session_id)?;
        let recorded = self.store.record_turn(session_id, turn)?;
        self.after_live_record(&recorded.episode_ids);
        let mut outcome = TurnOutcome {
            recorded,
            decision: None,
            rotation: None,
            rotation_refused: None,
        };
        if turn.role != Role::Assistant || outcome.recorded.duplicate {
            return Ok(outcome);
        }
        let book = self.store.rotation_bookkeeping(session_id)?;
        let mut state = state_before_latest(&book);
        let window = self.window_for(&session, &book, turn.model.as_deref())?;
        let decision = self
            .rotation
            .observe(&mut state, turn.usage.as_ref(), &window);
        if decision.should_rotate {
            match self.rotate_with(&session, &mut state, None) {
                Ok(rotation) => outcome.rotation = Some(rotation),
                Err(e) if e.kind() == ErrorKind::RotationRefused => {
                    outcome.rotation_refused = Some(e.message().to_string());
                }
                Err(e) => return Err(e),
            }
        }
        outcome.decision = Some(decision);
        Ok(outcome)
    }

    /// The policy's verdict on the session's latest assistant turn, without changing anything.
    /// A session with no assistant turn yet gets a `no_signal` decision.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when the session is not in this workspace.
    pub fn rotation_decision(&self, session_id: &str) -> Result<Decision> {
        let session = self.session(session_id)?;
        let book = self.store.rotation_bookkeeping(session_id)?;
        let latest = self.latest_assistant_turn(&session)?;
        let mut state = state_before_latest(&book);
        let model = latest.as_ref().and_then(|t| t.model.as_deref());
        let window = self.window_for(&session, &book, model)?;
        let usage = latest.as_ref().and_then(|t| t.usage.as_ref());
        Ok(self.rotation.observe(&mut state, usage, &window))
    }

    /// Rotates session `session_id` now (a manual rotation): keeps its id, turns and memory,
    /// increments and persists the rotation count, records the time, the new backing context id
    /// (`backing_context_id`, or a fresh one) and a `rotation` event in the timeline, and leaves
    /// the seed pending for the next message.
    ///
    /// # Errors
    /// [`ErrorKind::RotationRefused`] before the turn guard (the message says how many turns
    /// remain) or when no user prompt exists to anchor the seed; [`ErrorKind::NotFound`] when the
    /// session is not in this workspace.
    pub fn rotate(
        &self,
        session_id: &str,
        backing_context_id: Option<&str>,
    ) -> Result<RotationOutcome> {
        let session = self.session(session_id)?;
        let book = self.store.rotation_bookkeeping(session_id)?;
        let mut state = RotationState {
            rotation_count: u32::try_from(book.rotation_count).unwrap_or(u32::MAX),
            turns_since_rotation: u32::try_from(book.assistant_turns_since_rotation)
                .unwrap_or(u32::MAX),
            pending_seed: None,
        };
        self.rotate_with(&session, &mut state, backing_context_id)
    }

    /// Takes the seed the next message of session `session_id` must start with: `Some` exactly
    /// once after each rotation, `None` otherwise.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when the session is not in this workspace;
    /// [`ErrorKind::Corrupt`] when the stored seed no longer parses.
    pub fn take_seed(&self, session_id: &str) -> Result<Option<SeedBlock>> {
        self.session(session_id)?;
        let Some(json) = self.store.take_pending_seed(session_id)? else {
            return Ok(None);
        };
        serde_json::from_str(&json).map(Some).map_err(|e| {
            Error::new(
                ErrorKind::Corrupt,
                format!("the pending seed of session {session_id:?} does not parse"),
            )
            .with_source(e)
        })
    }

    /// Sets (or clears) session `session_id`'s context window, overriding the model table. Use it
    /// when the harness runs a model in a smaller window than the provider offers.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidInput`] for a zero or absurd window; [`ErrorKind::NotFound`] when the
    /// session is not in this workspace.
    pub fn set_context_window(&self, session_id: &str, tokens: Option<u64>) -> Result<()> {
        self.session(session_id)?;
        if let Some(tokens) = tokens {
            ContextWindow::overridden(tokens)?;
        }
        self.store.set_context_window(session_id, tokens)
    }

    fn window_for(
        &self,
        session: &Session,
        book: &RotationBookkeeping,
        turn_model: Option<&str>,
    ) -> Result<ContextWindow> {
        let model = turn_model.or(session.model.as_deref());
        self.rotation.window(model, book.context_window)
    }

    fn rotate_with(
        &self,
        session: &Session,
        state: &mut RotationState,
        backing_context_id: Option<&str>,
    ) -> Result<RotationOutcome> {
        let anchor = if self.config.memory_enabled {
            self.anchor(session)?
        } else {
            None
        };
        let session_name = session.display_name();
        let source = if self.config.memory_enabled {
            SeedSource::Memory {
                workspace: &self.workspace_name,
                session_name,
                anchor: anchor.as_ref(),
            }
        } else {
            SeedSource::MemoryDisabled
        };
        let decided_at_count = u64::from(state.rotation_count);
        let rotation = self.rotation.rotate(state, source)?;
        let seed_json = serde_json::to_string(&rotation.seed)
            .map_err(|e| Error::internal("cannot serialize a seed block").with_source(e))?;
        let backing = backing_context_id.map_or_else(
            || crate::store::fresh_id("ctx_", &session.id),
            str::to_string,
        );
        let stored = self.store.rotate_session_from(
            &session.id,
            decided_at_count,
            Some(&backing),
            None,
            Some(&seed_json),
        )?;
        Ok(RotationOutcome {
            count: stored.count,
            at: stored.at,
            episode_id: stored.episode_id,
            backing_context_id: backing,
            seed: rotation.seed,
        })
    }

    /// The last user prompt of the session (tool results and compaction summaries skipped).
    fn anchor(&self, session: &Session) -> Result<Option<Anchor>> {
        let start = session.turn_count.saturating_sub(ANCHOR_SCAN_TURNS);
        let recent: Vec<Turn> = self
            .store
            .turns(&session.id, start..)?
            .into_iter()
            .map(|t| t.turn)
            .collect();
        if let Some(anchor) = Anchor::from_turns(&recent) {
            return Ok(Some(anchor));
        }
        if start == 0 {
            return Ok(None);
        }
        let all: Vec<Turn> = self
            .store
            .turns(&session.id, ..start)?
            .into_iter()
            .map(|t| t.turn)
            .collect();
        Ok(Anchor::from_turns(&all))
    }

    /// The session's latest assistant turn, if any.
    pub(super) fn latest_assistant_turn(&self, session: &Session) -> Result<Option<Turn>> {
        Ok(self
            .turns_from_latest_assistant(session)?
            .into_iter()
            .next())
    }

    /// The session's latest assistant turn followed by every turn recorded after it (the
    /// results answering its calls so far); empty when the session has no assistant turn.
    /// Windows grow from the newest two turns (where it almost always is) to 64, so the common
    /// case parses two turns, not 64.
    pub(super) fn turns_from_latest_assistant(&self, session: &Session) -> Result<Vec<Turn>> {
        let mut end = session.turn_count;
        let mut window = 2;
        // Newest first, until the assistant turn is reached.
        let mut newest_first = Vec::new();
        while end > 0 {
            let start = end.saturating_sub(window);
            window = (window * 2).min(64);
            for stored in self.store.turns(&session.id, start..end)?.into_iter().rev() {
                let found = stored.turn.role == Role::Assistant;
                newest_first.push(stored.turn);
                if found {
                    newest_first.reverse();
                    return Ok(newest_first);
                }
            }
            end = start;
        }
        Ok(Vec::new())
    }
}

/// The policy state just before the latest assistant turn was observed: `observe` advances the
/// counter itself, and the store already counts the latest turn.
fn state_before_latest(book: &RotationBookkeeping) -> RotationState {
    RotationState {
        rotation_count: u32::try_from(book.rotation_count).unwrap_or(u32::MAX),
        turns_since_rotation: u32::try_from(book.assistant_turns_since_rotation.saturating_sub(1))
            .unwrap_or(u32::MAX),
        pending_seed: None,
    }
}
