//! The verbatim episode store: one SQLite file holding workspaces, sessions, the canonical turns
//! of every session, the episodes derived from them (with an FTS5 index), a usage ledger, raw
//! blobs for oversize outputs and a vectors table for the embedding worker.
//!
//! Concurrency: a [`Store`] is `Send + Sync`. Writes go through one connection behind a mutex and
//! always start with `BEGIN IMMEDIATE`, so SQLite's busy handler (the busy timeout) applies when
//! another process holds the write lock; reads use a small pool of connections and see a
//! consistent snapshot (WAL). Several processes may open one file at once.
//!
//! Durability: WAL with `synchronous = NORMAL`. A committed write (an acknowledged
//! [`Store::record_turn`]) survives the process being killed; a power loss may lose the last
//! transactions but never corrupts the file. WAL checkpoints run on a thread of the store's own,
//! never inside a commit (see `checkpoint`), and FTS5 segment merges mostly on another, while the
//! writer is idle (see `idle_merge`).
//!
//! Layout of this module, one concept per file: [`schema`] (DDL, migrations, file checks),
//! `connection` (settings, error mapping), `read_only` (opening without write access) and
//! `no_create` (its VFS, which never creates a file),
//! `wal_writes` (one WAL write per commit), `checkpoint` (background WAL checkpoints),
//! `idle_merge` (FTS5 merges between writes),
//! [`workspace`] (identity), `sessions`, `record` (turns in, the one-transaction write path),
//! `prepared` (what a turn's rows hold, computed before the write), `pipeline` (a batch prepared
//! on a second thread), `sync` (replacing a session's changed tail), `snapshot` (the chunker state any turn met),
//! `fork` (a new session from a copy of another's turns), `turns` (turns out), `episodes`
//! (episode rows and reads), `timeline`, `fts` (identifier-aware indexing, query sanitizing),
//! `search_text` (the words a tool call's content gives the index), `lexical` (lexical search),
//! `blobs`, `usage`, `vectors`, `aggregates` (hot files, recent sessions, counts) and `render`
//! (the text models read); for the retrieval layer, `vector_feed` (the vector index's rows and
//! the embedding queue), `candidates` (completing a candidate set) and `read_hashes` (hashing
//! files a live session read). See `docs/store.md`.
//!
//! The store deliberately does no ranking, embedding or rotation policy: it gives those layers
//! cheap, scoped queries.

mod aggregates;
mod blobs;
mod candidates;
mod checkpoint;
mod connection;
mod doc_counts;
mod episodes;
mod fork;
mod fts;
mod idle_merge;
mod lexical;
mod no_create;
mod pipeline;
mod prepared;
mod read_hashes;
mod read_only;
mod record;
mod render;
mod replaced;
mod rotation;
pub mod schema;
mod search_text;
mod sessions;
mod snapshot;
mod sync;
mod timeline;
mod turns;
mod usage;
mod vector_feed;
mod vectors;
mod vfs_layer;
mod wal_writes;
pub mod workspace;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use rusqlite::{Connection, Transaction, TransactionBehavior};
use sha2::{Digest, Sha256};

use crate::canonical::episode::hex_prefix;
use crate::canonical::{ChunkerConfig, MIN_CAP_BYTES};
use crate::error::{Error, ErrorKind, Result};

pub use aggregates::{HotFile, RecentSession, WorkspaceRecord, WorkspaceStats};
pub use blobs::{BlobRef, RawOutput};
pub(crate) use doc_counts::DocCounts;
pub use episodes::{EpisodeHeader, StoredEpisode, StoredPath, file_content_hash};
pub use fork::{NewFork, StoredFork};
pub(crate) use fork::{check_at, session_title};
pub use fts::match_expression;
pub(crate) use lexical::LexicalMatches;
pub use lexical::{
    DEFAULT_LEXICAL_BUDGET, LexicalFilters, LexicalHit, MAX_LEXICAL_K, MIN_LEXICAL_BUDGET,
};
pub use record::Recorded;
pub use render::iso8601;
pub use rotation::{Rotation, RotationBookkeeping};
pub use sessions::{Lineage, LineageKind, NewSession, Session, SessionUpdate};
pub use sync::Synced;
pub use timeline::{MAX_TIMELINE_LIMIT, TimelinePage, TimelineQuery};
pub use turns::StoredTurn;
pub use usage::{UsageRow, UsageTotals};
pub(crate) use vector_feed::{EpisodeMeta, QueuedEpisode};
pub use vectors::{StoredVector, UnembeddedEpisode};
pub use workspace::{Workspace, WorkspaceSource, relative_path, workspace_id};

/// Environment variable that overrides [`default_path`].
pub const DB_ENV: &str = "CODEOID_DB";

/// Default cap on one episode's content: larger content is kept whole in a raw blob.
pub const DEFAULT_MAX_EPISODE_BYTES: usize = 1024 * 1024;

/// Read connections kept open for reuse.
const READER_POOL: usize = 8;

/// Shortest wait, when opening a store that needs a migration, for another process migrating
/// it at the same moment (a schema migration copies tables: 5 s for a 100,000-episode store).
const MIGRATION_BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// Settings of a [`Store`]. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreOptions {
    /// How long a write waits for another connection's lock before failing with
    /// [`ErrorKind::Busy`] (default 5 s; at most `i32::MAX` milliseconds, about 24.8 days).
    /// Opening a store that needs a schema migration waits at least 2 minutes, for another
    /// process migrating the same file.
    pub busy_timeout: Duration,
    /// Episode content above this many bytes is stored as head + marker + tail, with the whole
    /// content in a raw blob (default 1 MiB; at least [`MIN_CAP_BYTES`]).
    pub max_episode_bytes: usize,
    /// What the chunker puts into episodes.
    pub chunker: ChunkerConfig,
    /// Hash files that a tool read (when they exist under the session root) as the read is
    /// recorded, so `recall_file` can tell whether they changed since. Meant for live sessions;
    /// off by default because an import would hash today's file, not the one that was read.
    pub hash_read_files: bool,
    /// Open an existing store for reading only (default off): for a store on read-only media or
    /// a read-only mount, or a file this process may not write. Every write then fails with
    /// [`ErrorKind::Io`]; see [`Store::open_read_only`].
    pub read_only: bool,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            busy_timeout: Duration::from_secs(5),
            max_episode_bytes: DEFAULT_MAX_EPISODE_BYTES,
            chunker: ChunkerConfig::default(),
            hash_read_files: false,
            read_only: false,
        }
    }
}

/// The episode store. `Send + Sync`: share it with `Arc` across threads.
pub struct Store {
    /// Stopped (and joined) first: fields drop in declaration order, and it holds the writer.
    merger: Option<idle_merge::IdleMerger>,
    /// Stopped (and joined) before the connections close.
    checkpointer: Option<Arc<checkpoint::Checkpointer>>,
    path: Option<PathBuf>,
    options: StoreOptions,
    /// Shared with the merge thread, which merges FTS segments on it while no write runs.
    writer: Arc<Mutex<Connection>>,
    readers: Mutex<Vec<Connection>>,
    /// How connections open the file when the store was opened without write access
    /// ([`Store::open_read_only`]); `None` for a store that writes.
    read_only: Option<connection::ReadOnly>,
}

/// The default store file: `$CODEOID_DB` when set and non-empty, else `codeoid.db` in the
/// platform data directory (`~/.local/share/codeoid` on Linux).
///
/// # Errors
/// [`ErrorKind::Io`] when neither is available (no home directory).
pub fn default_path() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(DB_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    directories::ProjectDirs::from("", "", "codeoid")
        .map(|dirs| dirs.data_dir().join("codeoid.db"))
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Io,
                "cannot find the platform data directory (is HOME set?); set CODEOID_DB to the \
                 store file",
            )
        })
}

impl Store {
    /// Opens (creating when missing) the store at `path` with default options.
    ///
    /// # Errors
    /// See [`Store::open_with`].
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(path, StoreOptions::default())
    }

    /// Opens (creating when missing, along with its directory) the store at `path`; with
    /// `options.read_only`, opens the existing store for reading only (see
    /// [`Store::open_read_only`]).
    ///
    /// # Errors
    /// - [`ErrorKind::Io`] naming the path when the directory cannot be created or written.
    /// - [`ErrorKind::Corrupt`] when the file is not an SQLite database or belongs to another
    ///   application; [`ErrorKind::SchemaTooNew`] when a newer codeoid wrote it. In both cases
    ///   the file is left untouched.
    /// - [`ErrorKind::InvalidInput`] when `options.max_episode_bytes` is below
    ///   [`MIN_CAP_BYTES`].
    /// - With `options.read_only`, the errors of [`Store::open_read_only`].
    pub fn open_with(path: impl AsRef<Path>, options: StoreOptions) -> Result<Store> {
        let path = path.as_ref();
        if options.read_only {
            return read_only::open(path, options);
        }
        validate_path(path)?;
        validate_options(&options)?;
        connection::create_parent(path)?;
        let mut conn = connection::open(path, options.busy_timeout, connection::WRITER_CACHE_KIB)?;
        // SQLite opens a file it may not write read-only without a word; reading it now would
        // leave a -wal and -shm of this process's owner beside another user's store.
        let state = schema::inspect(&conn, path)?;
        // Only now, with the file known to be ours (or empty), may anything write to it.
        connection::set_wal(&conn, path, options.busy_timeout)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| connection::open_error(path, e))?;
        // Checkpoints run on the checkpointer's thread, not inside a commit (see `checkpoint`);
        // its WAL hook replaces SQLite's automatic checkpoint.
        conn.pragma_update(None, "wal_autocheckpoint", 0)
            .map_err(|e| connection::open_error(path, e))?;
        if state
            != (schema::FileState::Codeoid {
                version: schema::SCHEMA_VERSION,
            })
        {
            // Another process may be migrating this file: its transaction holds the write lock
            // for as long as the migration takes (seconds for a large store, longer than any
            // commit), so this one waits longer than writes do before reporting Busy.
            conn.busy_timeout(options.busy_timeout.max(MIGRATION_BUSY_TIMEOUT))
                .map_err(|e| connection::open_error(path, e))?;
            schema::migrate(&mut conn)?;
            conn.busy_timeout(options.busy_timeout)
                .map_err(|e| connection::open_error(path, e))?;
            // A migration's pages (a whole table's copy, for v4) are all in the WAL, and
            // automatic checkpoints are off: copy them now, at open, rather than inside the first
            // write's backstop, and give the file system the WAL's space back.
            if let schema::FileState::Codeoid { .. } = state {
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .map_err(|e| connection::open_error(path, e))?;
            }
        }
        let checkpointer = Arc::new(checkpoint::Checkpointer::start(path, options.busy_timeout)?);
        checkpointer
            .watch(&mut conn)
            .map_err(|e| connection::open_error(path, e))?;
        let writer = Arc::new(Mutex::new(conn));
        let merger = idle_merge::IdleMerger::start(
            Arc::clone(&writer),
            Arc::clone(&checkpointer),
            options.busy_timeout,
        )?;
        Ok(Store {
            merger: Some(merger),
            checkpointer: Some(checkpointer),
            path: Some(path.to_path_buf()),
            options,
            writer,
            readers: Mutex::new(Vec::new()),
            read_only: None,
        })
    }

    /// A private in-memory store (one connection), for unit tests and throwaway use.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidInput`] for bad options (`read_only` among them);
    /// [`ErrorKind::Database`] if SQLite fails.
    pub fn open_in_memory_with(options: StoreOptions) -> Result<Store> {
        validate_options(&options)?;
        if options.read_only {
            return Err(Error::invalid_input(
                "read_only is set for an in-memory store, which starts empty and has nothing to \
                 read; give a store file, or drop read_only",
            ));
        }
        let mut conn = connection::open_in_memory(options.busy_timeout)?;
        schema::migrate(&mut conn)?;
        Ok(Store {
            merger: None,
            checkpointer: None,
            path: None,
            options,
            writer: Arc::new(Mutex::new(conn)),
            readers: Mutex::new(Vec::new()),
            read_only: None,
        })
    }

    /// [`Store::open_in_memory_with`] default options.
    ///
    /// # Errors
    /// [`ErrorKind::Database`] if SQLite fails.
    pub fn open_in_memory() -> Result<Store> {
        Store::open_in_memory_with(StoreOptions::default())
    }

    /// The store file, or `None` for an in-memory store.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &StoreOptions {
        &self.options
    }

    /// Runs `PRAGMA integrity_check`.
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] with SQLite's report when the check finds problems.
    pub fn integrity_check(&self) -> Result<()> {
        let report: Vec<String> = self.read(|conn| {
            // SQLite's FTS5 checks its index against the segment list it last read on this
            // connection, and only a query on the table re-reads that list: without one, a
            // check after another connection's merge reports segments that no longer exist.
            // The query runs in the check's own read transaction, so both see one snapshot.
            conn.query_row(
                "SELECT count(*) FROM episodes_fts WHERE rowid = 0",
                [],
                |_| Ok(()),
            )
            .map_err(|e| connection::db_error("cannot run the integrity check", e))?;
            let mut stmt = conn
                .prepare("PRAGMA integrity_check")
                .map_err(|e| connection::db_error("cannot run the integrity check", e))?;
            let rows = stmt
                .query_map([], |r| r.get::<_, String>(0))
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
                .map_err(|e| connection::db_error("cannot run the integrity check", e))?;
            Ok(rows)
        })?;
        if report == ["ok"] {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "integrity check failed: {}; restore the store from a backup",
                    report.join("; ")
                ),
            ))
        }
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction on the writer connection and commits.
    /// `context` describes the operation for error messages.
    fn write<T>(&self, context: &str, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        if self.read_only.is_some() {
            return Err(self.refused_write(context));
        }
        let _write = self
            .merger
            .as_ref()
            .map(idle_merge::IdleMerger::write_begins);
        let mut conn = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| connection::db_error(context, e))?;
        let value = f(&tx)?;
        tx.commit().map_err(|e| connection::db_error(context, e))?;
        if let Some(checkpointer) = &self.checkpointer {
            checkpointer.after_commit(&conn);
        }
        drop(conn);
        if let Some(merger) = &self.merger {
            merger.after_commit();
        }
        Ok(value)
    }

    /// Runs `f` on a read connection inside one read transaction (a consistent snapshot).
    fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let Some(path) = &self.path else {
            let conn = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
            return in_read_tx(&conn, f);
        };
        let pooled = self
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => self.open_reader(path)?,
        };
        // A store read as immutable fails rather than read pages of two states of the store;
        // a read that a writer broke off (SQLite: "malformed") says so too.
        let result = self.check_unchanged().and_then(|()| {
            let read = in_read_tx(&conn, |conn| {
                self.open_snapshot(conn)?;
                f(conn)
            });
            self.check_unchanged().and(read)
        });
        let mut pool = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        if pool.len() < READER_POOL {
            pool.push(conn);
        }
        result
    }

    /// A new read connection to `path`, opened the way this store's file allows.
    fn open_reader(&self, path: &Path) -> Result<Connection> {
        let (timeout, cache) = (self.options.busy_timeout, connection::READER_CACHE_KIB);
        if let Some(mode) = self.read_only {
            return read_only::open_connection(path, mode, timeout, cache);
        }
        let conn = connection::open(path, timeout, cache)?;
        conn.pragma_update(None, "query_only", true)
            .map_err(|e| connection::open_error(path, e))?;
        Ok(conn)
    }
}

fn in_read_tx<T>(conn: &Connection, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
    conn.execute_batch("BEGIN")
        .map_err(|e| connection::db_error("cannot start a read", e))?;
    let result = f(conn);
    // A read transaction has nothing to commit; ending it releases the snapshot either way.
    let end = conn.execute_batch("COMMIT");
    match (result, end) {
        (Ok(v), Ok(())) => Ok(v),
        (Err(e), _) => Err(e),
        (Ok(_), Err(e)) => Err(connection::db_error("cannot end a read", e)),
    }
}

/// The longest busy timeout SQLite takes: `i32::MAX` milliseconds, about 24.8 days.
const MAX_BUSY_TIMEOUT: Duration = Duration::from_millis(i32::MAX as u64);

fn validate_options(options: &StoreOptions) -> Result<()> {
    if options.busy_timeout > MAX_BUSY_TIMEOUT {
        return Err(Error::invalid_input(format!(
            "busy_timeout of {} ms is too long; SQLite takes at most {} ms (about 24 days)",
            options.busy_timeout.as_millis(),
            MAX_BUSY_TIMEOUT.as_millis()
        )));
    }
    if options.max_episode_bytes < MIN_CAP_BYTES {
        return Err(Error::invalid_input(format!(
            "max_episode_bytes {} is too small; use at least {MIN_CAP_BYTES}",
            options.max_episode_bytes
        )));
    }
    Ok(())
}

/// The path that asks for a private in-memory store, as in `sqlite3`: `Memory::open` and the
/// bindings take it for [`Store::open_in_memory`]; [`Store::open_with`] refuses it.
pub const IN_MEMORY: &str = ":memory:";

/// Refuses the paths that name no file: SQLite would open an empty one as a temporary
/// database and `:memory:` as a private one, neither shared by the store's connections.
fn validate_path(path: &Path) -> Result<()> {
    if path.as_os_str().is_empty() {
        return Err(Error::invalid_input(
            "the store path is empty; expected a file path such as codeoid.db",
        ));
    }
    if path.as_os_str() == IN_MEMORY {
        return Err(Error::invalid_input(
            "the store path is \":memory:\", which is not a file; use Store::open_in_memory for a \
             private in-memory store, or give a file path",
        ));
    }
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(Error::invalid_input(format!(
            "the store path {:?} holds a NUL byte, which no file name can; give a file path",
            path.display().to_string()
        )));
    }
    Ok(())
}

/// Milliseconds since the Unix epoch: how the store keeps time.
pub(crate) fn to_millis(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

/// The inverse of [`to_millis`]; out-of-range values clamp to the epoch rather than fail.
pub(crate) fn from_millis(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or(DateTime::<Utc>::UNIX_EPOCH)
}

/// A fresh, unpredictable-enough id: `prefix` + 16 hex digits. Used for ids nobody supplied
/// (sessions, turns, raw outputs); uniqueness, not secrecy, is the point.
pub(crate) fn fresh_id(prefix: &str, salt: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut hasher = Sha256::new();
    hasher.update(nanos.to_le_bytes());
    hasher.update(std::process::id().to_le_bytes());
    hasher.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    hasher.update(salt.as_bytes());
    format!("{prefix}{}", hex_prefix(&hasher.finalize(), 8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Store>();
    }

    #[test]
    fn small_caps_are_refused() {
        let options = StoreOptions {
            max_episode_bytes: 10,
            ..StoreOptions::default()
        };
        let err = Store::open_in_memory_with(options).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("max_episode_bytes 10"));
    }

    #[test]
    fn fresh_ids_differ_and_millis_round_trip() {
        assert_ne!(fresh_id("ses_", "a"), fresh_id("ses_", "a"));
        let now = from_millis(to_millis(Utc::now()));
        assert_eq!(from_millis(to_millis(now)), now);
    }
}
