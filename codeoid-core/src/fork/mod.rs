//! Fork (DESIGN §7): a new, independent session that goes on from a copy of another session's
//! conversation, at its tip or at a given turn, optionally on another backend.
//!
//! [`fork`] (or [`fork_with`] for options) does two things:
//! - In the store ([`Store::fork_session`], one transaction): the new session in the parent's
//!   workspace with lineage `{parent_session_id, parent_name, at_turn}` of kind `Fork`, the
//!   parent's turns `0..=at_turn` copied verbatim (turns from before any rotation included:
//!   rotation never erases canonical turns), the parent's chunker state at that point, and a
//!   `fork` episode on the new session's timeline. The copies are not chunked again: their
//!   episodes stay the parent's and the fork reads them as a prior session's.
//! - For a target backend: a [`Handoff`], the copied conversation ready to send in the target's
//!   native format within a token budget for its context window: the newest turns verbatim,
//!   older ones left in memory and announced by a seed naming the four memory tools, every
//!   translation loss reported. The handoff is planned before anything is written, so a
//!   translation that fails (with `strict`) creates no session.
//!
//! The parent is never written to. Forking a fork works like any fork; [`lineage_chain`] and
//! [`describe_lineage`] follow the chain.
//!
//! This module does not send anything to a provider or choose the target: the caller does.

mod handoff;
mod lineage;

pub use handoff::{
    DEFAULT_BUDGET_FRACTION, Handoff, HandoffOptions, SeedContext, plan as plan_handoff, seed_text,
};
pub use lineage::{Ancestor, MAX_LINEAGE_DEPTH, describe_lineage, lineage_chain};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::{Lineage, NewFork, Session, Store, check_at, session_title};
use crate::translate::Backend;

/// Options of [`fork_with`]. `Default` gives the documented defaults; serde fills missing fields
/// with them (bindings pass partial JSON such as `{"handoff": {"budget_fraction": 0.25}}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ForkOptions {
    /// Id of the new session; `None` mints one.
    pub id: Option<String>,
    /// How to size and translate the handoff to a target backend.
    pub handoff: HandoffOptions,
}

/// What a fork created.
#[derive(Debug, Clone, PartialEq)]
pub struct Forked {
    /// The new session.
    pub session: Session,
    /// Its lineage: `{parent_session_id, parent_name, at_turn}`, kind `Fork`.
    pub lineage: Lineage,
    /// Turns copied from the parent (`at_turn + 1`).
    pub copied_turns: u64,
    /// The `fork` episode on the new session's timeline.
    pub episode_id: String,
    /// The conversation ready for the target backend, when one was given.
    pub handoff: Option<Handoff>,
}

/// Forks session `session_id` at `at_turn` (the sequence number of the last turn to copy; the
/// tip when `None`) into a new session called `name`, for `target` when given; see the module
/// documentation. Uses [`ForkOptions::default`].
///
/// # Errors
/// As [`fork_with`].
pub fn fork(
    store: &Store,
    session_id: &str,
    at_turn: Option<u64>,
    target: Option<Backend>,
    name: &str,
) -> Result<Forked> {
    fork_with(
        store,
        session_id,
        at_turn,
        target.as_ref(),
        name,
        &ForkOptions::default(),
    )
}

/// [`fork`] with options.
///
/// # Errors
/// - [`crate::ErrorKind::InvalidInput`] for a blank name, a parent with no turns, an `at_turn`
///   past the parent's last turn (the message gives the range), a bad budget or context window,
///   or turns the translator rejects. Nothing is written.
/// - [`crate::ErrorKind::NotFound`] when there is no such session.
/// - [`crate::ErrorKind::AlreadyExists`] when `options.id` names an existing session.
/// - [`crate::ErrorKind::Translation`] when `options.handoff.translate.strict` is set and the
///   target cannot carry everything. Nothing is written.
pub fn fork_with(
    store: &Store,
    session_id: &str,
    at_turn: Option<u64>,
    target: Option<&Backend>,
    name: &str,
    options: &ForkOptions,
) -> Result<Forked> {
    if name.trim().is_empty() {
        return Err(Error::invalid_input(
            "fork name is empty; name the new session (it is how the fork is told apart)",
        ));
    }
    let parent = store.session(session_id)?;
    let at = check_at(&parent, at_turn)?;
    let handoff = match target {
        Some(backend) => {
            let turns: Vec<_> = store
                .turns(session_id, 0..=at)?
                .into_iter()
                .map(|t| t.turn)
                .collect();
            let title = session_title(&parent, 80);
            let context = SeedContext {
                parent: &title,
                at_turn: at,
            };
            Some(handoff::plan(&turns, backend, &context, &options.handoff)?)
        }
        None => None,
    };
    let stored = store.fork_session(
        session_id,
        &NewFork {
            name: name.to_owned(),
            at_turn: Some(at),
            id: options.id.clone(),
            provider: target.map(|b| b.provider.clone()),
            model: target.and_then(|b| b.model.clone()),
            created_at: None,
        },
    )?;
    let lineage = stored
        .session
        .lineage
        .clone()
        .ok_or_else(|| Error::internal("a fork was stored without its lineage"))?;
    Ok(Forked {
        session: stored.session,
        lineage,
        copied_turns: stored.copied_turns,
        episode_id: stored.episode_id,
        handoff,
    })
}
