//! Episode rows: persisting a chunker [`Episode`] (cap, paths, FTS row, blobs) and reading
//! episodes back, always scoped to a workspace.
//!
//! Invariants:
//! - An episode, its path rows, its FTS row and its blob links are written in the caller's
//!   transaction together; an id that already exists is skipped whole (`INSERT OR IGNORE`), so
//!   re-recording the same turns never duplicates anything.
//! - Content above the cap is stored as the excerpt of [`cap_content`]; the whole content goes to
//!   a raw blob linked with role `content`. Nothing is dropped.
//! - Every read takes the caller's workspace id: an episode of another workspace is
//!   [`crate::ErrorKind::NotFound`], exactly like a missing one.
//! - An episode the chunker derived from turns remembers the event that emitted it
//!   (`origin_seq`: the push of that turn, or a finish just before it). Replacing a session's
//!   tail deletes exactly the episodes emitted from that point on, with every row that hangs off
//!   them (content, paths, FTS, blob links, vectors, blobs nothing else links), and nothing
//!   else: rotations, raw outputs and fork markers have no origin and stay.
//!
//! Ordering and paging live in `timeline`; text for models lives in `render`.

use std::path::{Component, Path, PathBuf};

use chrono::{DateTime, Utc};
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};
use sha2::{Digest, Sha256};

use super::blobs::{self, BlobRef};
use super::connection::db_error;
use super::prepared::PreparedEpisode;
use super::sessions::Session;
use super::{Store, StoreOptions, from_millis, to_millis};
use crate::canonical::{Episode, EpisodeKind, EpisodeStatus, PathAccess, echo_chars};
use crate::error::{Error, Result};

/// Files larger than this are not hashed on read: hashing happens while the write lock is held,
/// and the hash only saves `recall_file` a re-read.
const MAX_HASHED_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Everything about an episode except its content, paths and blobs: what lists and hits carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpisodeHeader {
    /// Episode id: `ep_` + 20 hex digits (16 for raw outputs and in stores written before ids
    /// led with their session); opaque, compare it whole.
    pub id: String,
    /// Workspace it belongs to.
    pub workspace_id: String,
    /// Session it belongs to.
    pub session_id: String,
    /// Sequence number of the turn that completed it (for a raw output: of the turn recorded
    /// next, the one whose tool result carries the output).
    pub turn_seq: u64,
    /// What produced it.
    pub kind: EpisodeKind,
    /// Tool name, for tool calls.
    pub tool_name: Option<String>,
    /// Canonical tool call id, for tool calls.
    pub call_id: Option<String>,
    /// How it ended.
    pub status: EpisodeStatus,
    /// One-line summary.
    pub summary: String,
    /// When it became complete.
    pub created_at: DateTime<Utc>,
    /// Tokens of the stored content (chars / 4).
    pub token_estimate: u64,
}

/// A file path of an episode, as given and relative to the session's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPath {
    /// As it appeared in the tool input.
    pub given: String,
    /// Normalized and relative to the session root (absolute when outside it).
    pub relative: String,
    /// What the tool did with it.
    pub access: PathAccess,
    /// `sha256:<hex>` of the file when the read was recorded (see
    /// [`StoreOptions::hash_read_files`]).
    pub content_hash: Option<String>,
}

/// A whole stored episode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEpisode {
    /// Id, kind, summary, time...
    pub header: EpisodeHeader,
    /// The stored content, byte for byte (an excerpt with a marker when the episode was capped).
    pub content: String,
    /// File paths, in tool-input order.
    pub paths: Vec<StoredPath>,
    /// Raw blobs: `content` (the whole of a capped episode), `stdout`, `stderr` (raw outputs).
    pub blobs: Vec<BlobRef>,
}

pub(crate) const HEADER_COLUMNS: &str = "e.id, e.workspace_id, e.session_id, e.turn_seq, e.kind, \
     e.tool_name, e.call_id, e.status, e.summary, e.created_at, e.token_estimate";

/// How many columns [`HEADER_COLUMNS`] selects: where the columns after them start.
pub(crate) const HEADER_COLUMN_COUNT: usize = 11;

pub(crate) fn header_from_row(row: &Row<'_>) -> rusqlite::Result<EpisodeHeader> {
    let invalid = |index: usize, e: Error| {
        rusqlite::Error::FromSqlConversionFailure(index, Type::Text, Box::new(e))
    };
    Ok(EpisodeHeader {
        id: row.get(0)?,
        workspace_id: row.get(1)?,
        session_id: row.get(2)?,
        turn_seq: row.get::<_, i64>(3)? as u64,
        kind: EpisodeKind::parse(&row.get::<_, String>(4)?).map_err(|e| invalid(4, e))?,
        tool_name: row.get(5)?,
        call_id: row.get(6)?,
        status: EpisodeStatus::parse(&row.get::<_, String>(7)?).map_err(|e| invalid(7, e))?,
        summary: row.get(8)?,
        created_at: from_millis(row.get(9)?),
        token_estimate: row.get::<_, i64>(10)? as u64,
    })
}

/// `sha256:<hex>` of the file at `path`, or `None` when it is missing, not a regular file or too
/// large to hash.
///
/// # Errors
/// [`crate::ErrorKind::Io`] when the file exists but cannot be read.
pub fn file_content_hash(path: &Path) -> Result<Option<String>> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() <= MAX_HASHED_FILE_BYTES => {}
        _ => return Ok(None),
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io("read", path, e))?;
    let digest = Sha256::digest(&bytes);
    Ok(Some(format!(
        "sha256:{}",
        crate::canonical::episode::hex_prefix(&digest, 32)
    )))
}

/// The file a recorded read names, when it lies under the session's `root` (`relative` is the
/// stored path, relative to it): only workspace files are hashed. An absolute path is outside
/// the workspace and a leading `..` escapes it; neither is opened, so a path a model names
/// (`/proc/kmsg`, a device, someone else's file) is never read by the store.
pub(crate) fn workspace_file(root: &Path, relative: &str) -> Option<PathBuf> {
    let path = Path::new(relative);
    let escapes = path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)));
    (!escapes).then(|| root.join(path))
}

/// `counters` name of how many episodes tail replacements have deleted, store-wide.
pub(crate) const EPISODES_DELETED: &str = "episodes_deleted";

/// Persists `episode` of `session` inside `tx`; `origin` is the chunker event that emitted it
/// (`None` for episodes not derived from turns); `extra_blobs` are `(role, blob id)` links to
/// blobs already stored. Returns the id, or `None` when an episode with that id already exists.
///
/// # Errors
/// A database error naming the episode and session.
pub(crate) fn insert(
    tx: &Transaction<'_>,
    session: &Session,
    episode: &Episode,
    origin: Option<u64>,
    options: &StoreOptions,
    extra_blobs: &[(&str, &str)],
) -> Result<Option<String>> {
    let prepared = PreparedEpisode::new(episode.clone(), session, options);
    insert_prepared(tx, session, &prepared, origin, extra_blobs)
}

/// [`insert`] of an episode prepared beforehand (see `prepared`).
///
/// # Errors
/// A database error naming the episode and session.
pub(crate) fn insert_prepared(
    tx: &Transaction<'_>,
    session: &Session,
    prepared: &PreparedEpisode,
    origin: Option<u64>,
    extra_blobs: &[(&str, &str)],
) -> Result<Option<String>> {
    let episode = &prepared.episode;
    let context = || {
        format!(
            "cannot store episode {} of session {:?}",
            episode.id, session.id
        )
    };
    let content = prepared.stored_content();
    let created = to_millis(episode.created_at);
    let inserted = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO episodes (pk, id, workspace_id, session_id, turn_seq, kind,
                 tool_name, call_id, status, summary, created_at, token_estimate, origin_seq)
             VALUES (max(coalesce((SELECT max(pk) FROM episodes), 0),
                         coalesce((SELECT value FROM counters WHERE name = 'episode_pk_floor'), 0))
                     + 1,
                     ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                episode.id,
                session.workspace_id,
                session.id,
                episode.turn_seq as i64,
                episode.kind.as_str(),
                episode.tool_name,
                episode.call_id,
                episode.status.as_str(),
                episode.summary,
                created,
                prepared.token_estimate as i64,
                origin.map(|o| o as i64),
            ])
        })
        .map_err(|e| db_error(&context(), e))?;
    if inserted == 0 {
        return Ok(None);
    }
    let pk = tx.last_insert_rowid();
    tx.prepare_cached("INSERT INTO episode_contents (episode_pk, content) VALUES (?1, ?2)")
        .and_then(|mut stmt| stmt.execute(params![pk, content]))
        .map_err(|e| db_error(&context(), e))?;
    insert_paths(tx, session, prepared, pk, created).map_err(|e| db_error(&context(), e))?;
    prepared
        .fts
        .insert(
            tx,
            pk,
            &episode.summary,
            content,
            episode.tool_name.as_deref(),
        )
        .map_err(|e| db_error(&context(), e))?;
    if let Some(capped) = &prepared.capped {
        blobs::put(tx, &capped.blob_id, episode.content.as_bytes())?;
        blobs::link(tx, pk, blobs::CONTENT_BLOB_ROLE, &capped.blob_id)?;
    }
    for (role, blob_id) in extra_blobs {
        blobs::link(tx, pk, role, blob_id)?;
    }
    Ok(Some(episode.id.clone()))
}

fn insert_paths(
    tx: &Transaction<'_>,
    session: &Session,
    prepared: &PreparedEpisode,
    pk: i64,
    created: i64,
) -> rusqlite::Result<()> {
    if prepared.paths.is_empty() {
        return Ok(());
    }
    let mut stmt = tx.prepare_cached(
        "INSERT INTO episode_paths (episode_pk, ord, workspace_id, given, relative, access,
             content_hash, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for (ord, (path, row)) in prepared
        .episode
        .paths
        .iter()
        .zip(&prepared.paths)
        .enumerate()
    {
        stmt.execute(params![
            pk,
            ord as i64,
            session.workspace_id,
            path.path,
            row.relative,
            path.access.as_str(),
            row.content_hash,
            created
        ])?;
    }
    Ok(())
}

/// Deletes the episodes of `session_id` that the chunker emitted at or after event `from_origin`
/// (see the module invariants), with their content, paths, FTS rows, blob links and vectors, and
/// the raw blobs no other episode links. Returns how many episodes were deleted.
pub(crate) fn delete_derived(
    tx: &Transaction<'_>,
    session_id: &str,
    from_origin: u64,
) -> Result<u64> {
    let context = format!("cannot remove the replaced episodes of session {session_id:?}");
    let from = i64::try_from(from_origin).unwrap_or(i64::MAX);
    // The dependent tables first: they are found through the episode rows.
    const DOOMED: &str = "SELECT pk FROM episodes WHERE session_id = ?1 AND origin_seq >= ?2";
    let blob_ids: Vec<String> = tx
        .prepare_cached(&format!(
            "SELECT DISTINCT blob_id FROM episode_blobs WHERE episode_pk IN ({DOOMED})"
        ))
        .and_then(|mut stmt| {
            stmt.query_map(params![session_id, from], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|e| db_error(&context, e))?;
    super::replaced::remember(tx, session_id, from)?;
    // Keys are never reused (schema V3): remember the largest one deleted.
    tx.prepare_cached(&format!(
        "INSERT INTO counters (name, value)
         SELECT 'episode_pk_floor', m FROM (SELECT max(pk) AS m FROM ({DOOMED}))
         WHERE m IS NOT NULL
         ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)"
    ))
    .and_then(|mut stmt| stmt.execute(params![session_id, from]))
    .map_err(|e| db_error(&context, e))?;
    for table in [
        "episodes_fts WHERE rowid",
        "episode_contents WHERE episode_pk",
        "episode_paths WHERE episode_pk",
        "episode_blobs WHERE episode_pk",
        "vectors WHERE episode_pk",
    ] {
        tx.prepare_cached(&format!("DELETE FROM {table} IN ({DOOMED})"))
            .and_then(|mut stmt| stmt.execute(params![session_id, from]))
            .map_err(|e| db_error(&context, e))?;
    }
    let deleted = tx
        .prepare_cached("DELETE FROM episodes WHERE session_id = ?1 AND origin_seq >= ?2")
        .and_then(|mut stmt| stmt.execute(params![session_id, from]))
        .map_err(|e| db_error(&context, e))?;
    // Counted, so an in-memory vector index of another process notices that it holds episodes
    // that are gone (see `vector_feed::episodes_deleted`).
    if deleted > 0 {
        tx.prepare_cached(&format!(
            "INSERT INTO counters (name, value) VALUES ('{EPISODES_DELETED}', ?1)
             ON CONFLICT (name) DO UPDATE SET value = value + excluded.value"
        ))
        .and_then(|mut stmt| stmt.execute([deleted as i64]))
        .map_err(|e| db_error(&context, e))?;
    }
    for blob_id in blob_ids {
        blobs::delete_unlinked(tx, &blob_id)?;
    }
    Ok(deleted as u64)
}

/// The episode `id` of `workspace_id`, whole.
pub(crate) fn fetch(conn: &Connection, workspace_id: &str, id: &str) -> Result<StoredEpisode> {
    if id.is_empty() {
        return Err(Error::invalid_input(
            "episode id is empty; use an episode_id from recall or timeline output (`ep_…`)",
        ));
    }
    let context = || format!("cannot read episode {:?}", shown_id(id));
    let sql = format!(
        "SELECT {HEADER_COLUMNS}, c.content, e.pk FROM episodes e
         JOIN episode_contents c ON c.episode_pk = e.pk
         WHERE e.id = ?1 AND e.workspace_id = ?2"
    );
    let found = conn
        .prepare_cached(&sql)
        .and_then(|mut stmt| {
            stmt.query_row(params![id, workspace_id], |row| {
                Ok((
                    header_from_row(row)?,
                    row.get::<_, String>(11)?,
                    row.get::<_, i64>(12)?,
                ))
            })
            .optional()
        })
        .map_err(|e| db_error(&context(), e))?;
    let Some((header, content, pk)) = found else {
        return Err(super::replaced::missing(conn, workspace_id, id));
    };
    let paths = paths_of(conn, pk).map_err(|e| db_error(&context(), e))?;
    let blobs = blobs::refs_of(conn, pk)?;
    Ok(StoredEpisode {
        header,
        content,
        paths,
        blobs,
    })
}

pub(crate) fn not_found(workspace_id: &str, id: &str) -> Error {
    Error::not_found(format!(
        "episode {:?} not found in workspace {workspace_id}; use an episode_id from recall or \
         timeline output",
        shown_id(id)
    ))
}

/// Longest id a message repeats whole: a real one is 23 characters, a pasted page is not.
const SHOWN_ID_CHARS: usize = 64;

/// `id` for a message: whole when it is short, else its start and its length.
pub(crate) fn shown_id(id: &str) -> std::borrow::Cow<'_, str> {
    echo_chars(id, SHOWN_ID_CHARS)
}

pub(crate) fn paths_of(conn: &Connection, pk: i64) -> rusqlite::Result<Vec<StoredPath>> {
    let mut stmt = conn.prepare_cached(
        "SELECT given, relative, access, content_hash FROM episode_paths
         WHERE episode_pk = ?1 ORDER BY ord",
    )?;
    let rows = stmt.query_map([pk], path_from_row)?;
    rows.collect()
}

/// A path row read from `given, relative, access, content_hash` at the start of `row`.
pub(crate) fn path_from_row(row: &Row<'_>) -> rusqlite::Result<StoredPath> {
    path_at(row, 0)
}

/// A path row read from `given, relative, access, content_hash` starting at column `first`.
pub(crate) fn path_at(row: &Row<'_>, first: usize) -> rusqlite::Result<StoredPath> {
    let access: String = row.get(first + 2)?;
    Ok(StoredPath {
        given: row.get(first)?,
        relative: row.get(first + 1)?,
        access: PathAccess::parse(&access).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(first + 2, Type::Text, Box::new(e))
        })?,
        content_hash: row.get(first + 3)?,
    })
}

impl Store {
    /// The episode `id`, if it belongs to `workspace_id`: header, exact stored content, paths
    /// and blob references.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when it does not exist or belongs to another workspace;
    /// [`crate::ErrorKind::InvalidInput`] when `id` is empty.
    pub fn episode(&self, workspace_id: &str, id: &str) -> Result<StoredEpisode> {
        self.read(|conn| fetch(conn, workspace_id, id))
    }

    /// The episodes of session `session_id` in the order they were stored.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when there is no such session.
    pub fn session_episodes(&self, session_id: &str) -> Result<Vec<EpisodeHeader>> {
        self.read(|conn| {
            super::sessions::require(conn, session_id)?;
            let sql = format!(
                "SELECT {HEADER_COLUMNS} FROM episodes e WHERE e.session_id = ?1 ORDER BY e.pk"
            );
            conn.prepare_cached(&sql)
                .and_then(|mut stmt| {
                    stmt.query_map([session_id], header_from_row)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| db_error(&format!("cannot list episodes of {session_id:?}"), e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_column_count_is_the_header_columns() {
        assert_eq!(HEADER_COLUMNS.split(',').count(), HEADER_COLUMN_COUNT);
    }
}
