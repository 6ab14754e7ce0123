//! Opening a store without write access: a store on read-only media, in a folder a sandbox
//! mounts read-only, or in a file this process may read but not write (another user's store).
//!
//! Nothing is ever created beside the store: a `-wal` or `-shm` left there under this process's
//! owner would stop the store's owner from writing. Connections never create the index
//! (`readonly_shm=1`) nor the WAL (the `no_create` VFS). How the file is read depends on what
//! lies beside it:
//! - **A WAL index (`-shm`) exists**: a writer is running, was killed, or closed while a reader
//!   was connected. The store is read through the index and the WAL, so a live writer's commits
//!   are seen as they land. If that open fails (the writer closed and took its files along
//!   between the look and the open, or this process may not read the index), the files are
//!   looked at again.
//! - **No WAL frames** (no WAL, or one without frames): the file holds every commit. It is read
//!   as immutable (no locks, no index). Such a reader checks before and after every read that
//!   no WAL frames appeared and the file is unchanged; once a writer has started, reads fail
//!   with a clear error instead of mixing pages of two states of the store (or reporting a
//!   read that the writer broke off as corruption).
//! - **WAL frames, and no index**: commits may be waiting in the WAL, and reading them needs an
//!   index this process may not create. Refused, rather than showing a store without its latest
//!   turns.
//!
//! A connection that may not write the WAL index cannot rebuild it either. SQLite answers
//! `SQLITE_READONLY_RECOVERY` when a read finds the index's header inconsistent (a writer was
//! updating it, and had let go of its lock by the time the reader looked) while a writer holds
//! the store; every read transaction here therefore opens its snapshot first, retrying that
//! answer within the busy timeout, as SQLite's busy handler does for locks.
//!
//! Invariant: nothing is written or created: no migration, no WAL switch, no checkpoint, and
//! every write of the store's API fails at once with [`ErrorKind::Io`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rusqlite::Connection;

use super::connection::{self, ReadOnly};
use super::{Store, StoreOptions, in_read_tx, schema, validate_options, validate_path};
use crate::error::{Error, ErrorKind, Result};

/// Size of a WAL file's header; a WAL no longer than this holds no frame.
const WAL_HEADER: u64 = 32;

/// Longest pause between two looks at a WAL index this process may not rebuild.
const INDEX_RETRY_MAX_PAUSE: Duration = Duration::from_millis(10);

impl Store {
    /// Opens the existing store at `path` for reading only, with default options otherwise:
    /// [`Store::open_with`] with [`StoreOptions::read_only`] set. For a store this process may
    /// not write (read-only media or mount, another user's file). Every read works as on a store
    /// opened for writing; every write fails with [`ErrorKind::Io`]. Nothing is written to the
    /// store or created beside it, and no background thread is started. A store closed cleanly
    /// is read as its last writer left it; if a writer starts while it is open, later reads fail
    /// with [`ErrorKind::Io`] saying to open it again.
    ///
    /// # Errors
    /// - [`ErrorKind::NotFound`] when `path` does not exist or holds an empty file.
    /// - [`ErrorKind::Io`] when the store cannot be read (permissions); when its WAL holds
    ///   frames and no `-shm` index exists to read them through; when its schema is older than
    ///   this library's (upgrading it needs write access).
    /// - [`ErrorKind::Corrupt`] and [`ErrorKind::SchemaTooNew`] as for [`Store::open_with`].
    /// - [`ErrorKind::InvalidInput`] for a path that names no file (or a folder).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(
            path,
            StoreOptions {
                read_only: true,
                ..StoreOptions::default()
            },
        )
    }

    /// Whether this store was opened with [`Store::open_read_only`]: its writes fail.
    pub fn is_read_only(&self) -> bool {
        self.read_only.is_some()
    }

    /// The error a write (described by `context`) gets on a store opened read-only.
    pub(super) fn refused_write(&self, context: &str) -> Error {
        let shown = self
            .path
            .as_deref()
            .map_or_else(String::new, |p| format!(" {}", p.display()));
        Error::new(
            ErrorKind::Io,
            format!(
                "{context}: store{shown} was opened read-only; open it with write access to \
                 record"
            ),
        )
    }
}

/// [`Store::open_read_only`] with `options` (whose `read_only` is set).
pub(super) fn open(path: &Path, options: StoreOptions) -> Result<Store> {
    validate_path(path)?;
    validate_options(&options)?;
    check_file(path)?;
    let (conn, mode) = connect(path, &options)?;
    let store = Store {
        merger: None,
        checkpointer: None,
        path: Some(path.to_path_buf()),
        options,
        writer: Arc::new(Mutex::new(conn)),
        readers: Mutex::new(Vec::new()),
        read_only: Some(mode),
    };
    // What was read above must not have changed under an immutable connection either.
    store.check_unchanged()?;
    Ok(store)
}

/// A connection in the mode the files beside `path` call for, its schema checked. A shared
/// open that fails (the writer closed and took its files along between the look and the open,
/// or this process may not read the index) is followed by a second look.
fn connect(path: &Path, options: &StoreOptions) -> Result<(Connection, ReadOnly)> {
    let connect_in = |mode| {
        let cache = connection::WRITER_CACHE_KIB;
        let conn = open_connection(path, mode, options.busy_timeout, cache)
            .map_err(|e| unreadable(path, mode, e))?;
        let state = in_read_tx(&conn, |conn| {
            open_snapshot(conn, mode, path, options.busy_timeout)?;
            schema::inspect(conn, path)
        })
        .map_err(|e| unreadable(path, mode, e))?;
        check_version(path, state)?;
        Ok::<_, Error>((conn, mode))
    };
    let beside = Beside::of(path)?;
    if beside.shm {
        match connect_in(ReadOnly::Shared) {
            Ok(connected) => return Ok(connected),
            Err(e) if e.kind() == ErrorKind::Io && !Beside::of(path)?.wal_frames => {}
            Err(e) if e.kind() == ErrorKind::Io && !Beside::of(path)?.shm => {
                return Err(pending_wal(path));
            }
            Err(e) => return Err(e),
        }
    } else if beside.wal_frames {
        return Err(pending_wal(path));
    }
    // No WAL frames: the file holds every commit.
    connect_in(ReadOnly::Immutable(Stamp::of(path)?))
}

impl Store {
    /// For a store read as immutable: fails when the store changed since it was found (WAL
    /// frames appeared, or a checkpoint wrote the file), so no read mixes pages of two states.
    pub(super) fn check_unchanged(&self) -> Result<()> {
        let (Some(ReadOnly::Immutable(stamp)), Some(path)) = (self.read_only, &self.path) else {
            return Ok(());
        };
        if !Beside::wal_frames(path)? && Stamp::of(path)? == stamp {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::Io,
            format!(
                "store {} changed since it was opened read-only (a writer started); open it \
                 again to read it",
                path.display()
            ),
        ))
    }

    /// Opens the snapshot of the read transaction just begun on `conn` (see the module's
    /// documentation); does nothing on a store opened for writing.
    ///
    /// # Errors
    /// As [`open_snapshot`].
    pub(super) fn open_snapshot(&self, conn: &Connection) -> Result<()> {
        match (self.read_only, &self.path) {
            (Some(mode), Some(path)) => open_snapshot(conn, mode, path, self.options.busy_timeout),
            _ => Ok(()),
        }
    }
}

/// Opens the snapshot of the read transaction just begun on `conn`, a connection in `mode` to
/// `path`, waiting (see [`waiting_for_index`]) for the index of a shared one.
///
/// # Errors
/// As [`waiting_for_index`]; what SQLite answers otherwise, as [`connection::db_error`]
/// classifies it.
fn open_snapshot(
    conn: &Connection,
    mode: ReadOnly,
    path: &Path,
    busy_timeout: Duration,
) -> Result<()> {
    waiting_for_index(mode, path, busy_timeout, || {
        conn.prepare_cached("PRAGMA schema_version")
            .and_then(|mut stmt| stmt.query_row([], |_| Ok(())))
            .map_err(|e| connection::db_error("cannot start a read", e))
    })
}

/// A read-only connection in `mode` to `path` (see [`connection::open_read_only`]); opening one
/// reads the schema, so a shared one waits for the index as [`waiting_for_index`] does.
///
/// # Errors
/// As [`waiting_for_index`] and [`connection::open_read_only`].
pub(super) fn open_connection(
    path: &Path,
    mode: ReadOnly,
    busy_timeout: Duration,
    cache_kib: i64,
) -> Result<Connection> {
    waiting_for_index(mode, path, busy_timeout, || {
        connection::open_read_only(path, busy_timeout, cache_kib, mode)
    })
}

/// Runs `attempt`, a step on a connection in `mode` to `path` that reads it, again while SQLite
/// answers that the WAL index needs a rebuild this connection may not do, for up to
/// `busy_timeout`. Only shared connections read through the index.
///
/// # Errors
/// [`ErrorKind::Busy`] when the index stayed inconsistent for the whole busy timeout; the error
/// of `attempt` otherwise.
fn waiting_for_index<T>(
    mode: ReadOnly,
    path: &Path,
    busy_timeout: Duration,
    mut attempt: impl FnMut() -> Result<T>,
) -> Result<T> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match attempt() {
            Err(e) if mode == ReadOnly::Shared && index_needs_rebuild(&e) => {
                let left = busy_timeout.saturating_sub(started.elapsed());
                if left.is_zero() {
                    return Err(index_stayed_inconsistent(path, busy_timeout, e));
                }
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(INDEX_RETRY_MAX_PAUSE);
            }
            done => return done,
        }
    }
}

/// Whether SQLite refused a read because the WAL index needs a rebuild this connection may not
/// do (`SQLITE_READONLY_RECOVERY`).
fn index_needs_rebuild(e: &Error) -> bool {
    let source = std::error::Error::source(e).and_then(|s| s.downcast_ref::<rusqlite::Error>());
    matches!(
        source,
        Some(rusqlite::Error::SqliteFailure(inner, _))
            if inner.extended_code == rusqlite::ffi::SQLITE_READONLY_RECOVERY
    )
}

fn index_stayed_inconsistent(path: &Path, waited: Duration, e: Error) -> Error {
    let shown = path.display();
    Error::new(
        ErrorKind::Busy,
        format!(
            "cannot read store {shown}: its WAL index ({shown}-shm) stayed inconsistent for the \
             busy timeout ({} ms), and only a connection with write access may rebuild it; \
             retry once its writer commits again, or open the store once with write access",
            waited.as_millis()
        ),
    )
    .with_source(e)
}

/// The store file's size and modification time: what a writer's checkpoint changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(path: &Path) -> Result<Stamp> {
        let metadata = std::fs::metadata(path).map_err(|e| Error::io("read", path, e))?;
        Ok(Stamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
        })
    }
}

/// What lies beside a store file.
struct Beside {
    /// A `-shm` WAL index exists.
    shm: bool,
    /// A `-wal` exists and holds at least one frame.
    wal_frames: bool,
}

impl Beside {
    fn of(path: &Path) -> Result<Beside> {
        Ok(Beside {
            shm: size_of(&sibling(path, "-shm"))?.is_some(),
            wal_frames: Beside::wal_frames(path)?,
        })
    }

    /// Whether a `-wal` beside `path` holds at least one frame (all a check around a read needs).
    fn wal_frames(path: &Path) -> Result<bool> {
        Ok(size_of(&sibling(path, "-wal"))?.is_some_and(|len| len > WAL_HEADER))
    }
}

/// The length of `file`, `None` when it does not exist.
fn size_of(file: &Path) -> Result<Option<u64>> {
    match std::fs::metadata(file) {
        Ok(metadata) => Ok(Some(metadata.len())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("inspect", file, e)),
    }
}

/// `path` with `suffix` appended to its file name (`codeoid.db` → `codeoid.db-wal`).
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Refuses a path that does not hold a store to read: missing, a folder, or an empty file.
fn check_file(path: &Path) -> Result<()> {
    let shown = path.display();
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!(
                    "no store at {shown}; a read-only open never creates one, open it with write \
                     access first"
                ),
            ));
        }
        Err(e) => return Err(Error::io("inspect", path, e)),
    };
    if metadata.is_dir() {
        return Err(Error::invalid_input(format!(
            "{shown} is a directory; the store is a file (such as {})",
            path.join("codeoid.db").display()
        )));
    }
    if metadata.len() == 0 {
        return Err(Error::new(
            ErrorKind::NotFound,
            format!("{shown} is empty: no store was written there yet"),
        ));
    }
    Ok(())
}

fn pending_wal(path: &Path) -> Error {
    let shown = path.display();
    Error::new(
        ErrorKind::Io,
        format!(
            "cannot read store {shown} without write access: its WAL ({shown}-wal) holds \
             commits that may not be in the file yet, and reading them needs a WAL index \
             ({shown}-shm), which is missing; open the store once with write access, or copy the \
             store with its -wal file to a folder this process may write"
        ),
    )
}

/// The error of a read-only open that SQLite refused. An [`ErrorKind::Io`] failure becomes one
/// that names what must be readable (and not the internal URI of an immutable open); other
/// kinds (corrupt, foreign, newer files) keep their own messages.
fn unreadable(path: &Path, mode: ReadOnly, e: Error) -> Error {
    if e.kind() != ErrorKind::Io {
        return e;
    }
    let shown = path.display();
    let what = match mode {
        ReadOnly::Shared => format!("it, {shown}-wal and its WAL index {shown}-shm"),
        ReadOnly::Immutable(_) => "it".to_owned(),
    };
    Error::new(
        ErrorKind::Io,
        format!("cannot read store {shown}; check that this process may read {what}"),
    )
}

/// Accepts only a store at this library's schema version: an older one needs a migration.
fn check_version(path: &Path, state: schema::FileState) -> Result<()> {
    match state {
        schema::FileState::Codeoid {
            version: schema::SCHEMA_VERSION,
        } => Ok(()),
        schema::FileState::Codeoid { version } => Err(Error::new(
            ErrorKind::Io,
            format!(
                "store {} has schema version {version} and this codeoid reads version {}; \
                 upgrading it needs write access, open it once with write access",
                path.display(),
                schema::SCHEMA_VERSION
            ),
        )),
        schema::FileState::Fresh => Err(Error::new(
            ErrorKind::NotFound,
            format!(
                "{} holds an empty database: no store was written there yet",
                path.display()
            ),
        )),
    }
}
