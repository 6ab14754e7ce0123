//! The vectors table, reserved for the embedding worker: per episode, per model, one vector per
//! window (an episode's summary plus content chunks), and how a vector is stored as bytes.
//!
//! Invariants: vectors are keyed by `(model, episode, window)`, so switching models keeps both
//! sets apart and "episodes without vectors for model M" is an index probe per episode. Writing
//! an episode's vectors for a model replaces all its earlier windows for that model.
//!
//! Storage: little-endian IEEE half precision (f16), 2 bytes a value, with the dimension beside.
//! Rows written before that hold f32 (4 bytes a value) and are read as they are: the length
//! tells the two apart. Half precision keeps 11 significant bits (a relative error of at most
//! 2^-11, about 0.05%), well inside what the search index keeps: it quantizes every value to
//! int8. The table takes half the bytes (a 384-dimension vector: 768 bytes, not 1,536).
//!
//! It deliberately does no embedding, normalization or similarity search.

use std::collections::HashSet;

use rusqlite::{OptionalExtension, params};

use super::Store;
use super::connection::db_error;
use crate::error::{Error, ErrorKind, Result};

/// An episode that has no vector yet for some model: what the embedder needs to embed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnembeddedEpisode {
    /// Episode id.
    pub id: String,
    /// Its workspace.
    pub workspace_id: String,
    /// Its summary.
    pub summary: String,
    /// Its stored content.
    pub content: String,
}

/// One stored window vector.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredVector {
    /// Episode id.
    pub episode_id: String,
    /// Window index within the episode (0 first).
    pub window: u32,
    /// The vector.
    pub vector: Vec<f32>,
}

/// Largest magnitude f16 can hold; larger values would be stored as infinity.
const F16_MAX: f32 = 65_504.0;

/// The stored bytes of `vector`: f16, little-endian.
fn to_bytes(vector: &[f32]) -> Vec<u8> {
    vector
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
        .collect()
}

/// Decodes a stored vector of `dim` values into `out` (cleared first): f16, or f32 for rows
/// written before vectors were stored as f16, told apart by the length. `false` when the length
/// fits neither (the row is corrupt).
pub(crate) fn decode(bytes: &[u8], dim: i64, out: &mut Vec<f32>) -> bool {
    out.clear();
    let Some(dim) = usize::try_from(dim).ok().filter(|d| *d > 0) else {
        return false;
    };
    // A corrupt row's dimension may be anything: compare without multiplying it.
    if bytes.len() % dim != 0 {
        return false;
    }
    let width = bytes.len() / dim;
    if width == 2 {
        out.extend(
            bytes
                .chunks_exact(2)
                .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32()),
        );
    } else if width == 4 {
        out.extend(
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
    } else {
        return false;
    }
    true
}

/// The error for a stored vector [`decode`] refused: window `window` of `episode` (as the
/// reader names it) holds `len` bytes for dimension `dim`.
pub(crate) fn undecodable(episode: &str, window: i64, len: usize, dim: i64) -> Error {
    Error::new(
        ErrorKind::Corrupt,
        format!(
            "vector {window} of episode {episode} has {len} bytes for dimension {dim}; delete \
             the store's vectors to re-embed"
        ),
    )
}

impl Store {
    /// Stores, in one transaction, the window vectors of each `(episode id, windows)` in `batch`
    /// for `model`, replacing earlier vectors of those episodes for that model.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidInput`] for an empty model id, an episode with no windows, windows of
    /// different or zero dimension, or a non-finite value; [`ErrorKind::NotFound`] for an
    /// unknown episode (nothing is stored then).
    pub fn put_vectors(&self, model: &str, batch: &[(String, Vec<Vec<f32>>)]) -> Result<()> {
        check_batch(model, batch.iter().map(|(id, w)| (id.as_str(), w)))?;
        self.write(&format!("cannot store vectors for model {model:?}"), |tx| {
            let context = format!("cannot store vectors for model {model:?}");
            for (id, windows) in batch {
                let pk: i64 = tx
                    .prepare_cached("SELECT pk FROM episodes WHERE id = ?1")
                    .and_then(|mut stmt| stmt.query_row([id], |r| r.get(0)).optional())
                    .map_err(|e| db_error(&context, e))?
                    .ok_or_else(|| {
                        Error::not_found(format!("episode {id:?} not found; cannot store vectors"))
                    })?;
                write_windows(tx, model, pk, windows).map_err(|e| db_error(&context, e))?;
            }
            Ok(())
        })
    }

    /// [`Store::put_vectors`] for the embedding worker, by key: each episode's vectors are
    /// stored only if the row with that key still holds that id. An episode deleted while it
    /// was being embedded (its session's tail was replaced; a re-derived episode may carry the
    /// same id under a new key) is skipped, so vectors of replaced text never land on its
    /// successor. Returns the keys written.
    ///
    /// # Errors
    /// As [`Store::put_vectors`], except that a missing episode is skipped, not an error.
    pub(crate) fn put_vectors_at(
        &self,
        model: &str,
        batch: &[(i64, &str, Vec<Vec<f32>>)],
    ) -> Result<HashSet<i64>> {
        check_batch(model, batch.iter().map(|(_, id, w)| (*id, w)))?;
        self.write(&format!("cannot store vectors for model {model:?}"), |tx| {
            let context = format!("cannot store vectors for model {model:?}");
            let mut written = HashSet::with_capacity(batch.len());
            for (pk, id, windows) in batch {
                let current = tx
                    .prepare_cached("SELECT 1 FROM episodes WHERE pk = ?1 AND id = ?2")
                    .and_then(|mut stmt| stmt.query_row(params![pk, id], |_| Ok(())).optional())
                    .map_err(|e| db_error(&context, e))?;
                if current.is_some() {
                    write_windows(tx, model, *pk, windows).map_err(|e| db_error(&context, e))?;
                    written.insert(*pk);
                }
            }
            Ok(written)
        })
    }

    /// Up to `limit` episodes (of any workspace, oldest first) that have no vector for `model`.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn episodes_without_vectors(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<UnembeddedEpisode>> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT e.id, e.workspace_id, e.summary, c.content FROM episodes e
                 JOIN episode_contents c ON c.episode_pk = e.pk
                 WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.model = ?1 AND v.episode_pk = e.pk)
                 ORDER BY e.pk LIMIT ?2",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![model, i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
                    Ok(UnembeddedEpisode {
                        id: r.get(0)?,
                        workspace_id: r.get(1)?,
                        summary: r.get(2)?,
                        content: r.get(3)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| db_error(&format!("cannot list episodes without {model:?} vectors"), e))
        })
    }

    /// Calls `f` with every vector of `workspace_id` for `model`, in episode then window order
    /// (streamed: the whole set is never held by the store).
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] when a stored vector's length disagrees with its dimension; any
    /// error `f` returns stops the walk and is returned.
    pub fn for_each_vector(
        &self,
        workspace_id: &str,
        model: &str,
        mut f: impl FnMut(StoredVector) -> Result<()>,
    ) -> Result<()> {
        let context = format!("cannot read {model:?} vectors of {workspace_id}");
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT e.id, v.window_index, v.dim, v.data FROM vectors v
                     JOIN episodes e ON e.pk = v.episode_pk
                     WHERE v.model = ?1 AND e.workspace_id = ?2
                     ORDER BY v.episode_pk, v.window_index",
                )
                .map_err(|e| db_error(&context, e))?;
            let mut rows = stmt
                .query(params![model, workspace_id])
                .map_err(|e| db_error(&context, e))?;
            while let Some(row) = rows.next().map_err(|e| db_error(&context, e))? {
                let read = || -> rusqlite::Result<(String, i64, i64, Vec<u8>)> {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
                };
                let (episode_id, window, dim, data) = read().map_err(|e| db_error(&context, e))?;
                let mut vector = Vec::new();
                if !decode(&data, dim, &mut vector) {
                    return Err(undecodable(&episode_id, window, data.len(), dim));
                }
                f(StoredVector {
                    episode_id,
                    window: window as u32,
                    vector,
                })?;
            }
            Ok(())
        })
    }
}

/// Checks a batch before anything is written: a model id, one or more windows of one non-zero
/// dimension per episode, finite values within f16's range.
fn check_batch<'a>(
    model: &str,
    batch: impl Iterator<Item = (&'a str, &'a Vec<Vec<f32>>)>,
) -> Result<()> {
    if model.trim().is_empty() {
        return Err(Error::invalid_input(
            "vector model id is empty; name the model",
        ));
    }
    for (id, windows) in batch {
        let dim = windows.first().map_or(0, Vec::len);
        if dim == 0 || windows.iter().any(|w| w.len() != dim) {
            return Err(Error::invalid_input(format!(
                "vectors of episode {id:?} must be one or more windows of one non-zero dimension"
            )));
        }
        if windows.iter().flatten().any(|v| !v.is_finite()) {
            return Err(Error::invalid_input(format!(
                "vectors of episode {id:?} contain NaN or infinity; check the model output"
            )));
        }
        if windows.iter().flatten().any(|v| v.abs() > F16_MAX) {
            return Err(Error::invalid_input(format!(
                "vectors of episode {id:?} hold a value beyond ±65,504, which their f16 storage \
                 cannot keep; normalize the model output"
            )));
        }
    }
    Ok(())
}

/// Replaces episode `pk`'s vectors of `model` with `windows`.
fn write_windows(
    tx: &rusqlite::Transaction<'_>,
    model: &str,
    pk: i64,
    windows: &[Vec<f32>],
) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM vectors WHERE model = ?1 AND episode_pk = ?2")?
        .execute(params![model, pk])?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO vectors (model, episode_pk, window_index, dim, data)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (window, vector) in windows.iter().enumerate() {
        insert.execute(params![
            model,
            pk,
            window as i64,
            vector.len() as i64,
            to_bytes(vector)
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    fn values(dim: usize) -> Vec<f32> {
        (0..dim).map(|i| ((i as f32) * 0.37).sin() * 0.2).collect()
    }

    #[test]
    fn vectors_are_stored_as_f16_and_read_back_within_its_precision() {
        let vector = values(384);
        let bytes = to_bytes(&vector);
        assert_eq!(bytes.len(), 768);
        let mut back = Vec::new();
        assert!(decode(&bytes, 384, &mut back));
        assert_eq!(back.len(), 384);
        for (a, b) in vector.iter().zip(&back) {
            // 11 significant bits; below f16's normal range the absolute step is 2^-24.
            assert!(
                (a - b).abs() <= a.abs() / 2048.0 + 6e-8,
                "{a} read back as {b}"
            );
        }
    }

    #[test]
    fn rows_written_as_f32_are_read_exactly_and_other_lengths_are_corrupt() {
        let vector = values(8);
        let f32_bytes: Vec<u8> = vector.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut back = vec![9.0];
        assert!(decode(&f32_bytes, 8, &mut back));
        assert_eq!(back, vector);
        assert!(!decode(&f32_bytes, 7, &mut back));
        assert!(back.is_empty(), "a failed decode leaves nothing behind");
        assert!(!decode(&f32_bytes[..6], 8, &mut back));
        assert!(!decode(&[], 0, &mut back));
        assert!(!decode(&f32_bytes, -8, &mut back));
        assert!(!decode(&f32_bytes, i64::MAX, &mut back));
        assert!(
            !decode(&f32_bytes, 32, &mut back),
            "one byte per value is no format"
        );
    }

    #[test]
    fn values_f16_cannot_hold_are_refused_before_anything_is_written() {
        let windows = vec![vec![0.5, 70_000.0]];
        let err = check_batch("m", [("ep_1", &windows)].into_iter()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("65,504"), "{}", err.message());
        let fine = vec![vec![0.5, -65_504.0]];
        check_batch("m", [("ep_1", &fine)].into_iter()).unwrap();
    }

    #[test]
    fn a_thousand_vectors_take_a_fifth_of_a_page_each() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", false).unwrap();
        super::super::schema::migrate(&mut conn).unwrap();
        let pages = |conn: &Connection| -> i64 {
            conn.query_row("PRAGMA page_count", [], |r| r.get(0))
                .unwrap()
        };
        let start = pages(&conn);
        let tx = conn.transaction().unwrap();
        for pk in 0..1000 {
            write_windows(&tx, "minilm@1", pk, &[values(384)]).unwrap();
        }
        tx.commit().unwrap();
        // 768 bytes each: five to a 4 KiB page, plus the key and episode indexes. As f32 (1,536
        // bytes, two to a page) the same rows took about 600 pages.
        let used = pages(&conn) - start;
        assert!(used < 300, "{used} pages for 1,000 vectors");
    }
}
