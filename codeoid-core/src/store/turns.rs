//! Reading canonical turns back, in order: the source of truth for replay and fork.
//!
//! Invariants: turns come back exactly as recorded (with the id and timestamp the store filled in
//! when they were missing), ordered by their sequence number, which is dense from 0.
//!
//! Writing turns lives in `record`, with the chunker and episodes, because it must be one
//! transaction.

use std::ops::{Bound, RangeBounds};

use rusqlite::params;

use super::connection::db_error;
use super::{Store, sessions};
use crate::canonical::Turn;
use crate::error::{Error, ErrorKind, Result};

/// A recorded turn and its position.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTurn {
    /// Sequence number within the session (0-based, dense).
    pub seq: u64,
    /// The turn, with its id and timestamp always set.
    pub turn: Turn,
}

/// `range` as a half-open `[start, end)` pair of SQLite integers.
pub(crate) fn seq_bounds(range: impl RangeBounds<u64>) -> (i64, i64) {
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let start = match range.start_bound() {
        Bound::Included(&n) => clamp(n),
        Bound::Excluded(&n) => clamp(n).saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&n) => clamp(n).saturating_add(1),
        Bound::Excluded(&n) => clamp(n),
        Bound::Unbounded => i64::MAX,
    };
    (start, end)
}

impl Store {
    /// The turns of session `session_id` whose sequence numbers are in `range`, in order.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when there is no such session; [`ErrorKind::Corrupt`] when a
    /// stored turn no longer parses.
    pub fn turns(&self, session_id: &str, range: impl RangeBounds<u64>) -> Result<Vec<StoredTurn>> {
        self.turns_where(session_id, range, None)
    }

    /// The turns of session `session_id` in `range` whose stored JSON contains `text`, in
    /// order: a cheap filter before parsing (`"\"toolu_01…\""` finds the turns that name a call
    /// id), so a search through many turns parses only the few that can matter.
    ///
    /// # Errors
    /// As [`Store::turns`].
    pub fn turns_mentioning(
        &self,
        session_id: &str,
        range: impl RangeBounds<u64>,
        text: &str,
    ) -> Result<Vec<StoredTurn>> {
        self.turns_where(session_id, range, Some(text))
    }

    fn turns_where(
        &self,
        session_id: &str,
        range: impl RangeBounds<u64>,
        mentioning: Option<&str>,
    ) -> Result<Vec<StoredTurn>> {
        let (start, end) = seq_bounds(range);
        self.read(|conn| {
            sessions::require(conn, session_id)?;
            let rows = conn
                .prepare_cached(
                    "SELECT seq, json FROM turns
                     WHERE session_id = ?1 AND seq >= ?2 AND seq < ?3
                       AND (?4 IS NULL OR instr(json, ?4) > 0)
                     ORDER BY seq",
                )
                .and_then(|mut stmt| {
                    stmt.query_map(params![session_id, start, end, mentioning], |r| {
                        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| db_error(&format!("cannot read turns of {session_id:?}"), e))?;
            rows.into_iter()
                .map(|(seq, json)| {
                    let turn = serde_json::from_str(&json).map_err(|e| {
                        Error::new(
                            ErrorKind::Corrupt,
                            format!(
                                "turn {seq} of session {session_id:?} no longer parses; the store \
                                 was changed by something other than codeoid"
                            ),
                        )
                        .with_source(e)
                    })?;
                    Ok(StoredTurn {
                        seq: seq as u64,
                        turn,
                    })
                })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_half_open() {
        assert_eq!(seq_bounds(..), (0, i64::MAX));
        assert_eq!(seq_bounds(2..5), (2, 5));
        assert_eq!(seq_bounds(2..=5), (2, 6));
        assert_eq!(seq_bounds(u64::MAX..), (i64::MAX, i64::MAX));
    }
}
