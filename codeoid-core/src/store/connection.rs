//! Opening SQLite connections with codeoid's settings, and turning SQLite failures into
//! [`Error`]s with the right [`ErrorKind`].
//!
//! Settings every connection gets: the busy timeout (so a lock held by another connection or
//! process is waited for, not reported), foreign keys on, and a prepared-statement cache sized for
//! the store's hot paths. Read-write files are opened through the WAL write layer (`wal_writes`);
//! read-only ones (`ReadOnly`) so that they never create a file (`no_create`). Journal mode
//! (`set_wal`) and `synchronous` are set by the store after the file has been recognized as a
//! codeoid store, so a foreign file is never modified.
//!
//! It deliberately does not know the schema.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::error::{Error, ErrorKind, Result};

/// Prepared statements kept per connection: enough for every statement on the write path.
const STATEMENT_CACHE: usize = 64;

/// Page cache of read connections, in KiB (negative `cache_size` means KiB): a search touches
/// the FTS doclists, the docsize table and the episode row of every match. Measured: beyond
/// 16 MiB a bigger cache no longer speeds up searches at 100k episodes, and the pool holds up
/// to 8 readers, so this bounds their memory at 128 MiB.
pub(crate) const READER_CACHE_KIB: i64 = -16 * 1024;

/// Page cache of the writer connection, in KiB. Small on purpose: a commit after a b-tree
/// split scans the writer's whole page cache (SQLite's `balance_nonroot` renumbers pages through
/// the pending-byte page, so the commit's truncate of the cache cannot stop at its end), and at
/// 32 MiB that scan was the largest single cost of a one-turn write (11% of its samples) on a
/// machine with an 8 MiB L3. See `docs/benchmarks.md` ("The writer's page cache").
pub(crate) const WRITER_CACHE_KIB: i64 = -4 * 1024;

/// Page cache of the writer while it writes a long batch (see `pipeline`), in KiB: one commit
/// for hundreds of episodes, whose FTS merges re-read the index pages the batch just wrote.
pub(crate) const BATCH_CACHE_KIB: i64 = -32 * 1024;

/// Creates the folder store `path` goes in, when it has one and it is missing.
///
/// # Errors
/// [`ErrorKind::Io`]; when a component of the folder is a file, the message names that file.
pub(crate) fn create_parent(path: &Path) -> Result<()> {
    let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    std::fs::create_dir_all(parent).map_err(|e| match parent.ancestors().find(|a| a.is_file()) {
        Some(file) => Error::new(
            ErrorKind::Io,
            format!(
                "cannot create the store directory {}: {} is a file, not a directory; open \
                     the store at another path",
                parent.display(),
                file.display()
            ),
        ),
        None => Error::io("create the store directory", parent, e),
    })
}

/// Opens a read-write connection to `path` (created when missing) with the busy timeout and a
/// page cache of `cache_kib` (negative: KiB) applied.
pub(crate) fn open(path: &Path, busy_timeout: Duration, cache_kib: i64) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    // Store files go through the WAL write layer (one write per commit, see `wal_writes`).
    let conn = match super::wal_writes::vfs_name() {
        Some(vfs) => Connection::open_with_flags_and_vfs(path, flags, vfs),
        None => Connection::open_with_flags(path, flags),
    }
    .map_err(|e| open_error(path, e))?;
    // SQLite opens a file it may not write read-only without a word, and the settings below
    // already read the schema, which would leave a -wal and -shm of this process's owner beside
    // another user's store: refuse first.
    if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
        return Err(unwritable(path));
    }
    configure(&conn, busy_timeout, cache_kib).map_err(|e| open_error(path, e))?;
    Ok(conn)
}

/// How the connections of a store opened without write access reach its file (see
/// `read_only`, which chooses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadOnly {
    /// Read-only connections through the existing WAL index (`-shm`), which a writer shares.
    Shared,
    /// `immutable=1`: no locks and no WAL index, for a store closed cleanly; the stamp is the
    /// file as it was found, checked around every read.
    Immutable(super::read_only::Stamp),
}

/// Opens a read-only connection to the existing file `path`, in `mode`, with the busy timeout
/// and a page cache of `cache_kib` applied. Never creates a file: a missing `-wal` or `-shm`
/// that `Shared` needs is an error ([`ErrorKind::Io`]), not a new file.
pub(crate) fn open_read_only(
    path: &Path,
    busy_timeout: Duration,
    cache_kib: i64,
    mode: ReadOnly,
) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let opened = match mode {
        // Never creates the -shm (`readonly_shm`) nor the -wal (the VFS): both must exist.
        ReadOnly::Shared => match super::no_create::vfs_name() {
            Some(vfs) => {
                Connection::open_with_flags_and_vfs(file_uri(path, "readonly_shm=1"), flags, vfs)
            }
            None => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    "SQLite refused codeoid's read-only VFS; a read-only open cannot read a \
                     store with a WAL",
                ));
            }
        },
        ReadOnly::Immutable(_) => Connection::open_with_flags(file_uri(path, "immutable=1"), flags),
    };
    let conn = opened.map_err(|e| open_error(path, e))?;
    // Opened read-only, the connection refuses writes itself: no `query_only` needed.
    configure(&conn, busy_timeout, cache_kib).map_err(|e| open_error(path, e))?;
    Ok(conn)
}

/// The `file:` URI of `path` with the parameters `query`: every byte outside the unreserved
/// set percent-encoded, so `?`, `#` and `%` in a folder's name stay part of the path.
fn file_uri(path: &Path, query: &str) -> String {
    use std::fmt::Write as _;
    // An absolute path gets an empty authority (`file:///x`), so `//x` is not read as host `x`.
    let mut uri = String::from(if path.has_root() { "file://" } else { "file:" });
    for &byte in path.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri.push('?');
    uri.push_str(query);
    uri
}

/// Switches the file to WAL, retrying while another process holds the lock that needs.
pub(crate) fn set_wal(conn: &Connection, path: &Path, busy_timeout: Duration) -> Result<()> {
    let started = std::time::Instant::now();
    loop {
        let result =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0));
        match result {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(Error::new(
                    ErrorKind::Io,
                    format!(
                        "cannot switch store {} to WAL mode (journal mode stayed {mode:?}); keep \
                         the store on a local filesystem",
                        path.display()
                    ),
                ));
            }
            Err(e)
                if matches!(
                    sqlite_code(&e),
                    Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                ) && started.elapsed() < busy_timeout =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(open_error(path, e)),
        }
    }
}

/// Opens a private in-memory database with the same settings.
pub(crate) fn open_in_memory(busy_timeout: Duration) -> Result<Connection> {
    let conn =
        Connection::open_in_memory().map_err(|e| db_error("cannot open an in-memory store", e))?;
    configure(&conn, busy_timeout, WRITER_CACHE_KIB)
        .map_err(|e| db_error("cannot configure an in-memory store", e))?;
    Ok(conn)
}

fn configure(conn: &Connection, busy_timeout: Duration, cache_kib: i64) -> rusqlite::Result<()> {
    conn.busy_timeout(busy_timeout)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // Foreign keys and the cache are per-connection settings and do not write to the file.
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.pragma_update(None, "cache_size", cache_kib)?;
    Ok(())
}

/// An error for a failure while opening or first reading `path`.
pub(crate) fn open_error(path: &Path, e: rusqlite::Error) -> Error {
    let shown = path.display();
    match sqlite_code(&e) {
        Some(ErrorCode::NotADatabase) => Error::new(
            ErrorKind::Corrupt,
            format!(
                "{shown} is not a codeoid store (not an SQLite database); it was left untouched, \
                 open the store at another path"
            ),
        )
        .with_source(e),
        Some(ErrorCode::DatabaseCorrupt) => Error::new(
            ErrorKind::Corrupt,
            format!(
                "store {shown} is corrupt; it was left untouched, restore it from a backup or \
                 move it aside"
            ),
        )
        .with_source(e),
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            Error::new(
                ErrorKind::Io,
                format!(
                    "cannot open store {shown}; check that its directory exists and is writable \
                     (the store also needs to create {shown}-wal and {shown}-shm next to it); a \
                     read-only open can still read it"
                ),
            )
            .with_source(e)
        }
        _ => db_error(&format!("cannot open store {shown}"), e),
    }
}

/// The error of a writing open of a file this process may not write.
pub(crate) fn unwritable(path: &Path) -> Error {
    Error::new(
        ErrorKind::Io,
        format!(
            "cannot write store {}: this process may not write the file (its permissions, an \
             immutable file or read-only media); a read-only open can still read it",
            path.display()
        ),
    )
}

/// An error for a failed operation described by `context` (lowercase, naming what was being
/// done), classified by SQLite's result code.
pub(crate) fn db_error(context: &str, e: rusqlite::Error) -> Error {
    // Every table is STRICT and every text written is checked UTF-8, so a value of the wrong
    // type or invalid text can only come from damage to the file.
    if matches!(
        e,
        rusqlite::Error::Utf8Error(..)
            | rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::InvalidColumnType(..)
    ) {
        return Error::new(
            ErrorKind::Corrupt,
            format!(
                "{context}: the store holds a value it never writes (invalid text or a wrong \
                 type), so its file is damaged; restore it from a backup or move it aside"
            ),
        )
        .with_source(e);
    }
    let kind = match sqlite_code(&e) {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            return Error::new(
                ErrorKind::Busy,
                format!(
                    "{context}: the store stayed locked by another connection for longer than \
                     the busy timeout; retry, or raise StoreOptions::busy_timeout"
                ),
            )
            .with_source(e);
        }
        // A full or failing disk is named, where SQLite's own text ("disk I/O error") reads
        // like a fault of the store; the write that failed was rolled back.
        Some(ErrorCode::DiskFull | ErrorCode::SystemIoFailure) => {
            let what = if sqlite_code(&e) == Some(ErrorCode::DiskFull) {
                "the disk holding the store is full"
            } else {
                "the disk holding the store failed a read or write (it may be full, failing, \
                 or the store's files were removed)"
            };
            return Error::new(
                ErrorKind::Io,
                format!(
                    "{context}: {what}; what was stored before is kept, free space or fix the \
                     disk and retry"
                ),
            )
            .with_source(e);
        }
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => ErrorKind::Corrupt,
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            ErrorKind::Io
        }
        _ => ErrorKind::Database,
    };
    Error::new(kind, context.to_owned()).with_source(e)
}

/// SQLite's primary result code of `e`, when it came from SQLite.
pub(crate) fn sqlite_code(e: &rusqlite::Error) -> Option<ErrorCode> {
    match e {
        rusqlite::Error::SqliteFailure(inner, _) => Some(inner.code),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: i32) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    #[test]
    fn codes_map_to_kinds() {
        let busy = db_error("cannot record turn", failure(rusqlite::ffi::SQLITE_BUSY));
        assert_eq!(busy.kind(), ErrorKind::Busy);
        assert!(
            busy.message()
                .starts_with("cannot record turn: the store stayed locked")
        );
        let corrupt = db_error("x", failure(rusqlite::ffi::SQLITE_CORRUPT));
        assert_eq!(corrupt.kind(), ErrorKind::Corrupt);
        let full = db_error("x", failure(rusqlite::ffi::SQLITE_FULL));
        assert_eq!(full.kind(), ErrorKind::Io);
        assert!(
            full.message()
                .starts_with("x: the disk holding the store is full")
        );
        let shm = open_error(Path::new("/x/y.db"), failure(4874)); // SQLITE_IOERR_SHMSIZE
        assert_eq!(shm.kind(), ErrorKind::Io);
        assert!(
            shm.message()
                .starts_with("cannot open store /x/y.db: the disk holding the store failed"),
            "{}",
            shm.message()
        );
        let garbled = db_error(
            "cannot read the timeline",
            rusqlite::Error::Utf8Error(0, String::from_utf8(vec![0xff]).unwrap_err().utf8_error()),
        );
        assert_eq!(garbled.kind(), ErrorKind::Corrupt);
        assert!(
            garbled.message().contains("damaged"),
            "{}",
            garbled.message()
        );
        let other = db_error("x", failure(rusqlite::ffi::SQLITE_CONSTRAINT));
        assert_eq!(other.kind(), ErrorKind::Database);
        let not_db = open_error(Path::new("/x/y.db"), failure(rusqlite::ffi::SQLITE_NOTADB));
        assert_eq!(not_db.kind(), ErrorKind::Corrupt);
        assert!(not_db.message().contains("/x/y.db"));
    }

    #[test]
    fn file_uris_keep_every_byte_of_the_path() {
        assert_eq!(
            file_uri(Path::new("/data/a b/c?d#e%f.db"), "immutable=1"),
            "file:///data/a%20b/c%3Fd%23e%25f.db?immutable=1"
        );
        assert_eq!(
            file_uri(Path::new("//tmp/x.db"), "immutable=1"),
            "file:////tmp/x.db?immutable=1"
        );
        assert_eq!(
            file_uri(Path::new("rel/é.db"), "readonly_shm=1"),
            "file:rel/%C3%A9.db?readonly_shm=1"
        );
    }
}
