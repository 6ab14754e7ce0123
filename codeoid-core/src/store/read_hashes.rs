//! Content hashes of files that live sessions read, recorded just after the read's episode is
//! committed, so `recall_file` can later say whether a file changed on disk since that read.
//!
//! Why after the commit rather than inside it ([`super::StoreOptions::hash_read_files`]):
//! hashing a large file while the write lock is held would stall every other writer, and the
//! file a tool has just read is still what it was a few milliseconds later. Imports never call
//! this: hashing today's file for a read made weeks ago would claim a freshness nobody observed.
//!
//! Invariants: only `read` path rows without a hash are touched, so an existing hash is never
//! overwritten; only files under the session's root are opened; a file that is missing,
//! unreadable or too large simply keeps no hash.

use std::path::{Path, PathBuf};

use rusqlite::params;
use rusqlite::types::Value;

use super::Store;
use super::connection::db_error;
use super::episodes::{file_content_hash, workspace_file};
use crate::error::Result;

/// Parameters bound per `IN (...)` list.
const IN_CHUNK: usize = 500;

impl Store {
    /// Hashes, as they are on disk now, the files that the episodes `episode_ids` read and that
    /// have no hash yet, and stores the hashes. Returns how many path rows got one.
    ///
    /// # Errors
    /// A database error if the read or the write fails. Files that cannot be hashed are skipped.
    pub(crate) fn hash_unhashed_reads(&self, episode_ids: &[String]) -> Result<usize> {
        if episode_ids.is_empty() {
            return Ok(0);
        }
        // (episode pk, ord, file on disk)
        let mut pending: Vec<(i64, i64, PathBuf)> = Vec::new();
        self.read(|conn| {
            for chunk in episode_ids.chunks(IN_CHUNK) {
                let marks = vec!["?"; chunk.len()].join(", ");
                let sql = format!(
                    "SELECT p.episode_pk, p.ord, p.relative, s.root
                     FROM episodes e JOIN episode_paths p ON p.episode_pk = e.pk
                     JOIN sessions s ON s.id = e.session_id
                     WHERE e.id IN ({marks}) AND p.access = 'read' AND p.content_hash IS NULL"
                );
                let values = chunk.iter().map(|id| Value::Text(id.clone()));
                let rows = conn
                    .prepare(&sql)
                    .and_then(|mut stmt| {
                        stmt.query_map(rusqlite::params_from_iter(values), |r| {
                            Ok((
                                r.get::<_, i64>(0)?,
                                r.get::<_, i64>(1)?,
                                r.get::<_, String>(2)?,
                                r.get::<_, String>(3)?,
                            ))
                        })?
                        .collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .map_err(|e| db_error("cannot read the paths of new episodes", e))?;
                for (pk, ord, relative, root) in rows {
                    if let Some(file) = workspace_file(Path::new(&root), &relative) {
                        pending.push((pk, ord, file));
                    }
                }
            }
            Ok(())
        })?;
        let hashes: Vec<(i64, i64, String)> = pending
            .into_iter()
            .filter_map(|(pk, ord, file)| {
                // A vanished or unreadable file just has no hash: the read is still memory.
                file_content_hash(&file)
                    .ok()
                    .flatten()
                    .map(|hash| (pk, ord, hash))
            })
            .collect();
        if hashes.is_empty() {
            return Ok(0);
        }
        let context = "cannot store the hashes of files read";
        self.write(context, |tx| {
            let mut stmt = tx
                .prepare_cached(
                    "UPDATE episode_paths SET content_hash = ?3
                     WHERE episode_pk = ?1 AND ord = ?2 AND content_hash IS NULL",
                )
                .map_err(|e| db_error(context, e))?;
            let mut updated = 0;
            for (pk, ord, hash) in &hashes {
                updated += stmt
                    .execute(params![pk, ord, hash])
                    .map_err(|e| db_error(context, e))?;
            }
            Ok(updated)
        })
    }
}
