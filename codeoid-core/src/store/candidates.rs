//! Reads that complete a retrieval candidate set: headers of episodes the vector index found and
//! the episodes that touched given paths (the path filter of the vector channel).
//!
//! Invariants: scoped to one workspace like every read. The BM25 score of vector candidates is
//! not read here: the lexical search returns the score of every match it scored (see
//! `lexical`), so one FTS5 pass serves both channels.
//!
//! It deliberately does no normalization or fusion.

use std::collections::{HashMap, HashSet};

use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

use super::Store;
use super::connection::db_error;
use super::episodes::{EpisodeHeader, HEADER_COLUMNS, header_from_row};
use crate::error::Result;

/// Parameters bound per `IN (...)` list.
const IN_CHUNK: usize = 500;

/// The headers of the episodes `pks` that belong to `workspace_id`, by primary key, read on
/// `conn`.
pub(crate) fn headers_in(
    conn: &Connection,
    workspace_id: &str,
    pks: &[i64],
) -> rusqlite::Result<HashMap<i64, EpisodeHeader>> {
    let mut out = HashMap::with_capacity(pks.len());
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
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(values), |r| {
            Ok((r.get::<_, i64>(11)?, header_from_row(r)?))
        })?;
        for row in rows {
            let (pk, header) = row?;
            out.insert(pk, header);
        }
    }
    Ok(out)
}

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
        self.read(|conn| {
            headers_in(conn, workspace_id, pks)
                .map_err(|e| db_error("cannot read episode headers", e))
        })
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
