//! Reads that complete a retrieval candidate set: headers of episodes the vector index found,
//! the BM25 score of episodes the lexical top-k left out, and the episodes that touched given
//! paths (the path filter of the vector channel).
//!
//! Invariants: scoped to one workspace like every read; BM25 scores are computed by the same
//! FTS5 `bm25()` call with the same column weights as [`Store::lexical_search`], over the same
//! sanitized and pruned query (common words dropped the same way), so the two channels' lexical
//! scores are the same numbers (FTS5's statistics are table-wide, so restricting the rows does
//! not change a row's score).
//!
//! It deliberately does no normalization or fusion.

use std::collections::{HashMap, HashSet};

use rusqlite::params_from_iter;
use rusqlite::types::Value;

use super::Store;
use super::connection::db_error;
use super::episodes::{EpisodeHeader, HEADER_COLUMNS, header_from_row};
use super::fts::{BM25_WEIGHTS, pruned_expression};
use crate::error::Result;

/// Parameters bound per `IN (...)` list.
const IN_CHUNK: usize = 500;

impl Store {
    /// The headers of the episodes `pks` that belong to `workspace_id`, by primary key.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub(crate) fn headers_by_pk(
        &self,
        workspace_id: &str,
        pks: &[i64],
    ) -> Result<HashMap<i64, EpisodeHeader>> {
        let mut out = HashMap::with_capacity(pks.len());
        self.read(|conn| {
            for chunk in pks.chunks(IN_CHUNK) {
                let marks = vec!["?"; chunk.len()].join(", ");
                // `+e.workspace_id` keeps SQLite off the workspace index: without statistics it takes
                // `workspace_id = ?` for a handful of rows and would scan (and sort) the whole workspace
                // instead of looking the listed episodes up.
                let sql = format!(
                    "SELECT {HEADER_COLUMNS}, e.pk FROM episodes e
                     WHERE +e.workspace_id = ? AND e.pk IN ({marks})"
                );
                let values = std::iter::once(Value::Text(workspace_id.to_owned()))
                    .chain(chunk.iter().map(|&pk| Value::Integer(pk)));
                let rows = conn
                    .prepare(&sql)
                    .and_then(|mut stmt| {
                        stmt.query_map(params_from_iter(values), |r| {
                            Ok((r.get::<_, i64>(11)?, header_from_row(r)?))
                        })?
                        .collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .map_err(|e| db_error("cannot read episode headers", e))?;
                out.extend(rows);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// `-bm25()` of `query` (any text, sanitized as [`Store::lexical_search`] does) for each of
    /// the episodes `ids` of `workspace_id` that match it; episodes that do not match are absent.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub(crate) fn lexical_scores(
        &self,
        workspace_id: &str,
        query: &str,
        ids: &[&str],
    ) -> Result<HashMap<String, f64>> {
        let mut out = HashMap::new();
        if ids.is_empty() {
            return Ok(out);
        }
        self.read(|conn| {
            let context = || format!("cannot score episodes of {workspace_id}");
            let Some(expression) =
                pruned_expression(conn, query).map_err(|e| db_error(&context(), e))?
            else {
                return Ok(());
            };
            for chunk in ids.chunks(IN_CHUNK) {
                let marks = vec!["?"; chunk.len()].join(", ");
                // One MATCH pass, with the FTS table forced to the outer loop (CROSS JOIN) and
                // the wanted rows checked on the episodes side. Letting the planner drive FTS5
                // by `rowid IN (...)` instead runs one FTS5 query per row, and bm25() recomputes
                // every phrase's document count over the whole index for each: hundreds of
                // milliseconds per recall on a thousand episodes, far worse at 100,000.
                let sql = format!(
                    "SELECT e.id, -bm25(episodes_fts, {BM25_WEIGHTS})
                     FROM episodes_fts CROSS JOIN episodes e ON e.pk = episodes_fts.rowid
                     WHERE episodes_fts MATCH ? AND e.workspace_id = ? AND e.id IN ({marks})"
                );
                let values = [expression.as_str(), workspace_id]
                    .into_iter()
                    .chain(chunk.iter().copied());
                let rows = conn
                    .prepare(&sql)
                    .and_then(|mut stmt| {
                        stmt.query_map(params_from_iter(values), |r| {
                            Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
                        })?
                        .collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .map_err(|e| db_error(&context(), e))?;
                out.extend(rows);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The primary keys of `workspace_id`'s episodes that touched any of `relatives`
    /// (workspace-relative paths, see [`super::relative_path`]).
    ///
    /// # Errors
    /// A database error if the read fails.
    pub(crate) fn episodes_touching(
        &self,
        workspace_id: &str,
        relatives: &[String],
    ) -> Result<HashSet<i64>> {
        let mut out = HashSet::new();
        self.read(|conn| {
            for chunk in relatives.chunks(IN_CHUNK) {
                let marks = vec!["?"; chunk.len()].join(", ");
                let sql = format!(
                    "SELECT episode_pk FROM episode_paths
                     WHERE workspace_id = ? AND relative IN ({marks})"
                );
                let values = std::iter::once(workspace_id).chain(chunk.iter().map(String::as_str));
                let rows = conn
                    .prepare(&sql)
                    .and_then(|mut stmt| {
                        stmt.query_map(params_from_iter(values), |r| r.get::<_, i64>(0))?
                            .collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .map_err(|e| db_error("cannot find episodes by path", e))?;
                out.extend(rows);
            }
            Ok(())
        })?;
        Ok(out)
    }
}
