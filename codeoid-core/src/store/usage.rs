//! The usage ledger: one row per model call of each turn (`Turn.usage.calls`), primary flag kept.
//!
//! Invariants: rows are written in the transaction that records their turn, keyed by
//! `(session, turn seq, call index)`; token counts above `i64::MAX` are clamped (SQLite integers
//! are signed). Occupancy is computed from these rows by the rotation layer; subagent calls keep
//! `primary = false` so they never count towards it.
//!
//! It deliberately does not de-duplicate usage repeated across log lines: importers do that
//! before building turns.

use std::ops::RangeBounds;

use chrono::{DateTime, Utc};
use rusqlite::{Transaction, params};

use super::connection::db_error;
use super::turns::seq_bounds;
use super::{Store, sessions, to_millis};
use crate::canonical::{CallUsage, Usage};
use crate::error::Result;

/// One ledger row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRow {
    /// Sequence number of the turn the call produced.
    pub turn_seq: u64,
    /// Position of the call in the turn's `usage.calls`.
    pub call_index: u64,
    /// The call's usage, as recorded.
    pub call: CallUsage,
}

/// Sums over a session's ledger.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageTotals {
    /// Model calls recorded.
    pub calls: u64,
    /// Of which primary-conversation calls.
    pub primary_calls: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache-read input tokens.
    pub cache_read_tokens: u64,
    /// Cache-creation input tokens.
    pub cache_creation_tokens: u64,
}

fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Writes the ledger rows of turn `seq`, a turn just inserted: its rows cannot exist yet (the
/// turn's own row is unique, and replacing a tail deletes the tail's rows first).
///
/// A plain `INSERT` on purpose. `INSERT OR REPLACE` into this table, whose rows reference a
/// session, needs a statement journal, so SQLite opens a savepoint for it, and FTS5 writes its
/// pending terms out as a new segment at every savepoint: with usage on every assistant turn,
/// a batch of real turns wrote a segment (and merges) per turn instead of one per transaction.
pub(crate) fn insert(
    tx: &Transaction<'_>,
    session_id: &str,
    seq: u64,
    usage: &Usage,
    at: DateTime<Utc>,
) -> Result<()> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO usage_calls (session_id, turn_seq, call_index, is_primary,
                 input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, model,
                 request_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )
        .map_err(|e| db_error("cannot write the usage ledger", e))?;
    for (index, call) in usage.calls.iter().enumerate() {
        stmt.execute(params![
            session_id,
            clamp(seq),
            index as i64,
            call.primary,
            clamp(call.input_tokens),
            clamp(call.output_tokens),
            clamp(call.cache_read_tokens),
            clamp(call.cache_creation_tokens),
            call.model,
            call.request_id,
            to_millis(at)
        ])
        .map_err(|e| db_error(&format!("cannot write the usage of turn {seq}"), e))?;
    }
    Ok(())
}

impl Store {
    /// Ledger rows of session `session_id` for the turns in `turns`, in turn and call order.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when there is no such session.
    pub fn usage(&self, session_id: &str, turns: impl RangeBounds<u64>) -> Result<Vec<UsageRow>> {
        let (start, end) = seq_bounds(turns);
        self.read(|conn| {
            sessions::require(conn, session_id)?;
            conn.prepare_cached(
                "SELECT turn_seq, call_index, is_primary, input_tokens, output_tokens,
                     cache_read_tokens, cache_creation_tokens, model, request_id
                 FROM usage_calls
                 WHERE session_id = ?1 AND turn_seq >= ?2 AND turn_seq < ?3
                 ORDER BY turn_seq, call_index",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![session_id, start, end], |r| {
                    Ok(UsageRow {
                        turn_seq: r.get::<_, i64>(0)? as u64,
                        call_index: r.get::<_, i64>(1)? as u64,
                        call: CallUsage {
                            primary: r.get(2)?,
                            input_tokens: r.get::<_, i64>(3)? as u64,
                            output_tokens: r.get::<_, i64>(4)? as u64,
                            cache_read_tokens: r.get::<_, i64>(5)? as u64,
                            cache_creation_tokens: r.get::<_, i64>(6)? as u64,
                            model: r.get(7)?,
                            request_id: r.get(8)?,
                        },
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| db_error(&format!("cannot read the usage of {session_id:?}"), e))
        })
    }

    /// Totals of session `session_id`'s ledger.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when there is no such session.
    pub fn usage_totals(&self, session_id: &str) -> Result<UsageTotals> {
        self.read(|conn| {
            sessions::require(conn, session_id)?;
            conn.prepare_cached(
                "SELECT count(*), total(is_primary), total(input_tokens), total(output_tokens),
                     total(cache_read_tokens), total(cache_creation_tokens)
                 FROM usage_calls WHERE session_id = ?1",
            )
            .and_then(|mut stmt| {
                stmt.query_row([session_id], |r| {
                    // total() is a float so large sums cannot overflow; counts fit easily.
                    let n = |i: usize| r.get::<_, f64>(i).map(|v| v as u64);
                    Ok(UsageTotals {
                        calls: r.get::<_, i64>(0)? as u64,
                        primary_calls: n(1)?,
                        input_tokens: n(2)?,
                        output_tokens: n(3)?,
                        cache_read_tokens: n(4)?,
                        cache_creation_tokens: n(5)?,
                    })
                })
            })
            .map_err(|e| db_error(&format!("cannot sum the usage of {session_id:?}"), e))
        })
    }
}
