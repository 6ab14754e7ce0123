//! Lineage: where a session came from, followed up the chain of parents, and rendered for people
//! (the CLI's `timeline`/`stats` header). Models read lineage through the `fork` episode and its
//! `forked from: prior session #N` header instead, which never shows raw ids.
//!
//! Invariants: the walk stops at a session without lineage, at a parent that is not in the store
//! (reported as such, not an error) and at [`MAX_LINEAGE_DEPTH`] links; a cycle (only possible
//! in a store edited by hand) ends the walk instead of looping.

use std::collections::HashSet;

use crate::error::{ErrorKind, Result};
use crate::store::{Lineage, LineageKind, Session, Store};

/// Most links [`lineage_chain`] follows.
pub const MAX_LINEAGE_DEPTH: usize = 64;

/// One link of a session's ancestry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestor {
    /// The link as the child records it.
    pub lineage: Lineage,
    /// The parent, when it is still in the store.
    pub parent: Option<Session>,
}

/// The links from `session_id` upwards: its own parent first, then that parent's, and so on.
/// Empty for a session that descends from nothing.
///
/// # Errors
/// [`ErrorKind::NotFound`] when `session_id` itself does not exist.
pub fn lineage_chain(store: &Store, session_id: &str) -> Result<Vec<Ancestor>> {
    let mut chain = Vec::new();
    let mut seen = HashSet::from([session_id.to_owned()]);
    let mut next = store.session(session_id)?.lineage;
    while let Some(lineage) = next.take() {
        if chain.len() == MAX_LINEAGE_DEPTH {
            break;
        }
        let parent = match store.session(&lineage.parent_session_id) {
            Ok(parent) => Some(parent),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if let Some(parent) = &parent {
            if seen.insert(parent.id.clone()) {
                next = parent.lineage.clone();
            }
        }
        chain.push(Ancestor { lineage, parent });
    }
    Ok(chain)
}

/// One line per link of [`lineage_chain`], for people: `fork of "main" (ses_…) at turn 41 of
/// 120`, `subagent of "main" (ses_…), started at turn 7`, or `fork of ses_… (not in this store)
/// at turn 3`. Print them in order under the session (each line describes the previous line's
/// parent).
///
/// # Errors
/// As [`lineage_chain`].
pub fn describe_lineage(store: &Store, session_id: &str) -> Result<Vec<String>> {
    Ok(lineage_chain(store, session_id)?
        .iter()
        .map(describe)
        .collect())
}

fn describe(link: &Ancestor) -> String {
    let lineage = &link.lineage;
    let id = &lineage.parent_session_id;
    let parent = match (&link.parent, &lineage.parent_name) {
        (Some(p), _) => match &p.name {
            Some(name) => format!("\"{name}\" ({id})"),
            None => id.clone(),
        },
        (None, Some(name)) => format!("\"{name}\" ({id}, not in this store)"),
        (None, None) => format!("{id} (not in this store)"),
    };
    let of = link
        .parent
        .as_ref()
        .map_or_else(String::new, |p| format!(" of {}", p.turn_count));
    match (lineage.kind, lineage.at_turn) {
        (LineageKind::Fork, Some(at)) => format!("fork of {parent} at turn {at}{of}"),
        (LineageKind::Fork, None) => format!("fork of {parent}"),
        (LineageKind::Subagent, Some(at)) => {
            format!("subagent of {parent}, started at turn {at}")
        }
        (LineageKind::Subagent, None) => format!("subagent of {parent}"),
    }
}
