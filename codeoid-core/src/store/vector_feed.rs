//! Reads and writes that feed the retrieval layer's in-memory vector index and its background
//! embedding worker: every stored vector of a workspace with the metadata the index filters on,
//! the workspace's episodes in insertion order past a cursor (the embedding queue), the texts and
//! the stored vectors of given episodes, dropping vectors of models no longer in use, and what
//! tells the index that episodes it holds were deleted (a count, and the keys that remain).
//!
//! Invariants: every read is scoped to one workspace; episodes are walked by primary key, which
//! only grows and is never reused (schema V3 keeps a floor above deleted keys), so a cursor
//! (`after_pk`) never skips an episode that was committed before the read; vectors are decoded by
//! `vectors::decode`, the one reader of the stored format (f16, or f32 in older rows).
//!
//! These are crate-internal: primary keys are the compact keys the index uses and never leave
//! the crate. It deliberately does no embedding, quantization or scoring.

use std::collections::{HashMap, HashSet};

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter};

use super::connection::db_error;
use super::episodes::EPISODES_DELETED;
use super::vectors::{decode, undecodable};
use super::{Store, from_millis, to_millis};
use crate::error::Result;
use chrono::{DateTime, Utc};

/// Parameters bound per `IN (...)` list: far below SQLite's 32,766 limit.
const IN_CHUNK: usize = 500;

/// `counters` names of the last use of each model: this prefix and the model id.
const MODEL_USE_PREFIX: &str = "model_used:";

/// What the vector index keeps about an episode besides its vectors: enough to apply recall
/// filters (session, tool, time) without touching SQLite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EpisodeMeta {
    /// Primary key: the index's key for the episode.
    pub pk: i64,
    /// Episode id.
    pub id: String,
    /// Its session.
    pub session_id: String,
    /// Its tool, for tool calls.
    pub tool_name: Option<String>,
    /// When it was completed.
    pub created_at: DateTime<Utc>,
    /// A rotation event: bookkeeping, never embedded or searched by meaning.
    pub rotation: bool,
}

/// One episode of the embedding queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueuedEpisode {
    /// Metadata for the index.
    pub meta: EpisodeMeta,
    /// `true` when vectors of the queried model already exist (another process, or an earlier
    /// run, embedded it): load them instead of embedding again.
    pub has_vectors: bool,
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store {
    /// How many episodes tail replacements have deleted so far, store-wide. When it moves, an
    /// in-memory vector index may hold episodes that are gone.
    ///
    /// # Errors
    /// A database error.
    pub(crate) fn episodes_deleted(&self) -> Result<i64> {
        self.read(|conn| {
            conn.prepare_cached("SELECT coalesce(max(value), 0) FROM counters WHERE name = ?1")
                .and_then(|mut stmt| stmt.query_row([EPISODES_DELETED], |r| r.get(0)))
                .map_err(|e| db_error("cannot read the count of deleted episodes", e))
        })
    }

    /// The keys of every episode of `workspace_id`.
    ///
    /// # Errors
    /// A database error.
    pub(crate) fn episode_keys(&self, workspace_id: &str) -> Result<HashSet<i64>> {
        self.read(|conn| {
            conn.prepare_cached("SELECT pk FROM episodes WHERE workspace_id = ?1")
                .and_then(|mut stmt| {
                    stmt.query_map([workspace_id], |r| r.get(0))?
                        .collect::<rusqlite::Result<HashSet<i64>>>()
                })
                .map_err(|e| db_error(&format!("cannot list the episodes of {workspace_id}"), e))
        })
    }

    /// Calls `f(meta, window, vector)` for every vector of `workspace_id` made by `model`, in
    /// episode then window order, streamed (the whole set is never held here). `meta` is the
    /// same value for all windows of one episode.
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] when a stored vector's length disagrees with its dimension; any
    /// error `f` returns stops the walk and is returned.
    pub(crate) fn scan_vectors(
        &self,
        workspace_id: &str,
        model: &str,
        mut f: impl FnMut(&EpisodeMeta, u32, &[f32]) -> Result<()>,
    ) -> Result<()> {
        let context = format!("cannot read {model:?} vectors of {workspace_id}");
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT e.pk, e.id, e.session_id, e.tool_name, e.created_at,
                            v.window_index, v.dim, v.data, e.kind = 'rotation'
                     FROM vectors v JOIN episodes e ON e.pk = v.episode_pk
                     WHERE v.model = ?1 AND e.workspace_id = ?2
                     ORDER BY v.episode_pk, v.window_index",
                )
                .map_err(|e| db_error(&context, e))?;
            let mut rows = stmt
                .query(params![model, workspace_id])
                .map_err(|e| db_error(&context, e))?;
            let mut meta: Option<EpisodeMeta> = None;
            let mut vector = Vec::new();
            while let Some(row) = rows.next().map_err(|e| db_error(&context, e))? {
                let pk: i64 = row.get(0).map_err(|e| db_error(&context, e))?;
                if meta.as_ref().is_none_or(|m| m.pk != pk) {
                    let read = || -> rusqlite::Result<EpisodeMeta> {
                        Ok(EpisodeMeta {
                            pk,
                            id: row.get(1)?,
                            session_id: row.get(2)?,
                            tool_name: row.get(3)?,
                            created_at: from_millis(row.get(4)?),
                            rotation: row.get(8)?,
                        })
                    };
                    meta = Some(read().map_err(|e| db_error(&context, e))?);
                }
                let window: i64 = row.get(5).map_err(|e| db_error(&context, e))?;
                let dim: i64 = row.get(6).map_err(|e| db_error(&context, e))?;
                let data = row
                    .get_ref(7)
                    .and_then(|v| v.as_blob().map_err(rusqlite::Error::from))
                    .map_err(|e| db_error(&context, e))?;
                if !decode(data, dim, &mut vector) {
                    return Err(undecodable(&format!("#{pk}"), window, data.len(), dim));
                }
                if let Some(meta) = &meta {
                    f(meta, u32::try_from(window).unwrap_or(u32::MAX), &vector)?;
                }
            }
            Ok(())
        })
    }

    /// Up to `limit` episodes of `workspace_id` with a primary key above `after_pk`, oldest
    /// first, each flagged with whether `model` vectors exist for it.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub(crate) fn episodes_after(
        &self,
        workspace_id: &str,
        model: &str,
        after_pk: i64,
        limit_rows: usize,
    ) -> Result<Vec<QueuedEpisode>> {
        self.read(|conn| {
            // `+e.workspace_id`: a range of the primary key, not the workspace index. Taking
            // `workspace_id = ?` for a handful of rows (no statistics), SQLite read and sorted
            // the whole workspace for every page, so a backfill was quadratic.
            conn.prepare_cached(
                "SELECT e.pk, e.id, e.session_id, e.tool_name, e.created_at,
                        EXISTS (SELECT 1 FROM vectors v WHERE v.model = ?2 AND v.episode_pk = e.pk),
                        e.kind = 'rotation'
                 FROM episodes e WHERE +e.workspace_id = ?1 AND e.pk > ?3
                 ORDER BY e.pk LIMIT ?4",
            )
            .and_then(|mut stmt| {
                stmt.query_map(
                    params![workspace_id, model, after_pk, limit(limit_rows)],
                    |r| {
                        Ok(QueuedEpisode {
                            meta: EpisodeMeta {
                                pk: r.get(0)?,
                                id: r.get(1)?,
                                session_id: r.get(2)?,
                                tool_name: r.get(3)?,
                                created_at: from_millis(r.get(4)?),
                                rotation: r.get(6)?,
                            },
                            has_vectors: r.get(5)?,
                        })
                    },
                )?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| {
                db_error(
                    &format!("cannot list episodes of {workspace_id} to embed"),
                    e,
                )
            })
        })
    }

    /// The largest episode primary key of `workspace_id` (0 when it has none): everything
    /// committed so far is at or below it.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub(crate) fn max_episode_pk(&self, workspace_id: &str) -> Result<i64> {
        self.read(|conn| {
            conn.prepare_cached("SELECT coalesce(max(pk), 0) FROM episodes WHERE workspace_id = ?1")
                .and_then(|mut stmt| stmt.query_row([workspace_id], |r| r.get(0)))
                .map_err(|e| db_error(&format!("cannot read the episodes of {workspace_id}"), e))
        })
    }

    /// `(summary, content)` of each episode in `pks` (of `workspace_id`), for embedding.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub(crate) fn episode_texts(
        &self,
        workspace_id: &str,
        pks: &[i64],
    ) -> Result<HashMap<i64, (String, String)>> {
        let mut out = HashMap::with_capacity(pks.len());
        self.read(|conn| {
            for chunk in pks.chunks(IN_CHUNK) {
                let marks = vec!["?"; chunk.len()].join(", ");
                // `+e.workspace_id` keeps SQLite off the workspace index: without statistics it takes
                // `workspace_id = ?` for a handful of rows and would scan (and sort) the whole workspace
                // instead of looking the listed episodes up.
                let sql = format!(
                    "SELECT e.pk, e.summary, c.content FROM episodes e
                     JOIN episode_contents c ON c.episode_pk = e.pk
                     WHERE +e.workspace_id = ? AND e.pk IN ({marks})"
                );
                let values = std::iter::once(Value::Text(workspace_id.to_owned()))
                    .chain(chunk.iter().map(|&pk| Value::Integer(pk)));
                let rows = conn
                    .prepare(&sql)
                    .and_then(|mut stmt| {
                        stmt.query_map(params_from_iter(values), |r| {
                            Ok((r.get::<_, i64>(0)?, (r.get(1)?, r.get(2)?)))
                        })?
                        .collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .map_err(|e| db_error("cannot read episodes to embed", e))?;
                out.extend(rows);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The `model` vectors of each episode in `ids` (of `workspace_id`), windows in order.
    /// Episodes without vectors are absent from the map.
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] for a vector whose length disagrees with its dimension.
    pub(crate) fn vectors_of(
        &self,
        workspace_id: &str,
        model: &str,
        ids: &[&str],
    ) -> Result<HashMap<String, Vec<Vec<f32>>>> {
        let mut out: HashMap<String, Vec<Vec<f32>>> = HashMap::with_capacity(ids.len());
        let context = format!("cannot read {model:?} vectors of {workspace_id}");
        self.read(|conn| {
            for chunk in ids.chunks(IN_CHUNK) {
                let marks = vec!["?"; chunk.len()].join(", ");
                // `+e.workspace_id` keeps SQLite off the workspace index: without statistics it takes
                // `workspace_id = ?` for a handful of rows and would scan (and sort) the whole workspace
                // instead of looking the listed episodes up.
                let sql = format!(
                    "SELECT e.id, e.pk, v.window_index, v.dim, v.data
                     FROM episodes e CROSS JOIN vectors v ON v.model = ? AND v.episode_pk = e.pk
                     WHERE +e.workspace_id = ? AND e.id IN ({marks})
                     ORDER BY e.pk, v.window_index"
                );
                let values = [model, workspace_id]
                    .into_iter()
                    .chain(chunk.iter().copied());
                let mut stmt = conn.prepare(&sql).map_err(|e| db_error(&context, e))?;
                let mut rows = stmt
                    .query(params_from_iter(values))
                    .map_err(|e| db_error(&context, e))?;
                while let Some(row) = rows.next().map_err(|e| db_error(&context, e))? {
                    let read = || -> rusqlite::Result<(String, i64, i64, i64)> {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
                    };
                    let (id, pk, window, dim) = read().map_err(|e| db_error(&context, e))?;
                    let data = row
                        .get_ref(4)
                        .and_then(|v| v.as_blob().map_err(rusqlite::Error::from))
                        .map_err(|e| db_error(&context, e))?;
                    let mut vector = Vec::new();
                    if !decode(data, dim, &mut vector) {
                        return Err(undecodable(&format!("#{pk}"), window, data.len(), dim));
                    }
                    out.entry(id).or_default().push(vector);
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Records that a worker uses `model` on this store now (the newest time wins), so that
    /// [`Store::drop_stale_vectors`] of another process keeps its vectors.
    ///
    /// # Errors
    /// A database error if the write fails.
    pub(crate) fn note_model_use(&self, model: &str, at: DateTime<Utc>) -> Result<()> {
        let context = format!("cannot record the use of model {model:?}");
        self.write(&context, |tx| {
            tx.execute(
                "INSERT INTO counters (name, value) VALUES (?1, ?2)
                 ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)",
                params![format!("{MODEL_USE_PREFIX}{model}"), to_millis(at)],
            )
            .map(|_| ())
            .map_err(|e| db_error(&context, e))
        })
    }

    /// Deletes up to `limit` vectors of `workspace_id`'s episodes made by a model other than
    /// `keep_model` that no worker has used since `used_since` (see [`Store::note_model_use`];
    /// a model never noted counts as unused), in one short transaction. Returns how many were
    /// deleted; call again until it returns 0, so a large deletion never holds the write lock
    /// for long.
    ///
    /// # Errors
    /// A database error if the write fails.
    pub(crate) fn drop_stale_vectors(
        &self,
        workspace_id: &str,
        keep_model: &str,
        used_since: DateTime<Utc>,
        limit_rows: usize,
    ) -> Result<u64> {
        let context = format!("cannot drop old vectors of {workspace_id}");
        self.write(&context, |tx| {
            tx.execute(
                "DELETE FROM vectors WHERE (model, episode_pk, window_index) IN
                     (SELECT v.model, v.episode_pk, v.window_index
                      FROM vectors v JOIN episodes e ON e.pk = v.episode_pk
                      WHERE v.model <> ?2 AND e.workspace_id = ?1
                        AND coalesce((SELECT c.value FROM counters c
                                      WHERE c.name = ?4 || v.model), 0) < ?5
                      LIMIT ?3)",
                params![
                    workspace_id,
                    keep_model,
                    limit(limit_rows),
                    MODEL_USE_PREFIX,
                    to_millis(used_since)
                ],
            )
            .map(|n| n as u64)
            .map_err(|e| db_error(&context, e))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::canonical::Turn;
    use crate::store::{NewSession, Store, Workspace, WorkspaceSource};

    /// The embedding worker walks keys upward from a cursor: a re-derived episode must get a
    /// key above every key it may already have passed, even when the replaced episodes held
    /// the largest ones.
    #[test]
    fn replacing_a_tail_never_reuses_episode_keys() {
        let store = Store::open_in_memory().unwrap();
        let ws = Workspace::from_parts("", "repo", "/repo", WorkspaceSource::Directory);
        let s = store.create_session(&ws, NewSession::default()).unwrap();
        let turns = vec![
            Turn::user_text("first question"),
            Turn::assistant_text("first answer"),
            Turn::user_text("second question"),
            Turn::assistant_text("second answer"),
        ];
        store.sync_turns(&s.id, 0, &turns, true).unwrap();
        let cursor = store.max_episode_pk(ws.id()).unwrap();
        assert!(cursor > 0);
        let mut revised = turns.clone();
        revised[3] = Turn::assistant_text("second answer, revised");
        let out = store.sync_turns(&s.id, 0, &revised, true).unwrap();
        assert!(out.episodes_removed >= 1, "{out:?}");
        let fresh = store
            .episodes_after(ws.id(), "any-model", cursor, 100)
            .unwrap();
        assert!(
            !fresh.is_empty(),
            "the re-derived episodes must lie past the cursor"
        );
        let texts = store
            .episode_texts(
                ws.id(),
                &fresh.iter().map(|q| q.meta.pk).collect::<Vec<_>>(),
            )
            .unwrap();
        assert!(
            format!("{texts:?}").contains("second answer, revised"),
            "{texts:?}"
        );
    }

    /// Vectors computed for an episode that was deleted meanwhile never land on another row.
    #[test]
    fn vectors_are_stored_only_where_key_and_id_still_match() {
        let store = Store::open_in_memory().unwrap();
        let ws = Workspace::from_parts("", "repo", "/repo", WorkspaceSource::Directory);
        let s = store.create_session(&ws, NewSession::default()).unwrap();
        let turns = vec![
            Turn::user_text("a question"),
            Turn::assistant_text("an answer"),
        ];
        store.sync_turns(&s.id, 0, &turns, true).unwrap();
        let queued = store.episodes_after(ws.id(), "m", 0, 10).unwrap();
        let (pk, id) = (queued[0].meta.pk, queued[0].meta.id.as_str());
        let windows = vec![vec![0.5f32; 4]];
        let stale = [(pk, "ep_0000000000000000", windows.clone())];
        assert!(store.put_vectors_at("m", &stale).unwrap().is_empty());
        let gone = [(pk + 1000, id, windows.clone())];
        assert!(store.put_vectors_at("m", &gone).unwrap().is_empty());
        let current = [(pk, id, windows)];
        assert_eq!(
            store.put_vectors_at("m", &current).unwrap(),
            std::collections::HashSet::from([pk])
        );
        assert!(store.episodes_after(ws.id(), "m", 0, 10).unwrap()[0].has_vectors);
    }
}
