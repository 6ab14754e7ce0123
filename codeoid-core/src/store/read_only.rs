//! Opening a store without write access: a store on read-only media, in a folder a sandbox
//! mounts read-only, or in a file this process may read but not write.
//!
//! A store in WAL mode is read through its WAL index (`-shm`), which a reader normally creates
//! beside the file. Where that is impossible, the file is read as immutable (no locks, no WAL
//! index), which is only right when nothing is waiting in its WAL: a store closed cleanly has no
//! WAL at all. A store whose WAL still holds commits (its last writer was killed, or is still
//! running elsewhere) cannot be read that way, and the error says so rather than showing a
//! store without its latest turns.
//!
//! Invariant: nothing here writes to the store: no migration, no WAL switch, no checkpoint, and
//! every write of the store's API fails at once with [`ErrorKind::Io`].

use std::path::Path;
use std::sync::{Arc, Mutex};

use super::connection::{self, ReadOnly};
use super::{Store, StoreOptions, schema, validate_options, validate_path};
use crate::error::{Error, ErrorKind, Result};

impl Store {
    /// Opens the existing store at `path` for reading only, with default options otherwise:
    /// [`Store::open_with`] with [`StoreOptions::read_only`] set. For a store this process may
    /// not write (read-only media or mount, another user's file). Every read works as on a store
    /// opened for writing; every write fails with [`ErrorKind::Io`]. Nothing is written to the
    /// file, and no background thread is started. Where the folder cannot take the store's
    /// `-shm` file either, the store is read as its last writer left it when it closed; a writer
    /// that starts while it is open is not seen.
    ///
    /// # Errors
    /// - [`ErrorKind::NotFound`] when `path` does not exist or holds an empty file.
    /// - [`ErrorKind::Io`] when the file cannot be read; when its WAL may hold commits that
    ///   cannot be read without a `-shm` file and the folder cannot take one; when its schema is
    ///   older than this library's (upgrading it needs write access).
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
    let open = |mode| {
        let conn = connection::open_read_only(
            path,
            options.busy_timeout,
            connection::WRITER_CACHE_KIB,
            mode,
        )?;
        let state = schema::inspect(&conn, path)?;
        Ok::<_, Error>((conn, state, mode))
    };
    let (conn, state, mode) = match open(ReadOnly::Shared) {
        Ok(opened) => opened,
        Err(e) if e.kind() == ErrorKind::Io => {
            if !wal_is_empty(path)? {
                return Err(pending_wal(path).with_source(e));
            }
            open(ReadOnly::Immutable)?
        }
        Err(e) => return Err(e),
    };
    check_version(path, state)?;
    Ok(Store {
        merger: None,
        checkpointer: None,
        path: Some(path.to_path_buf()),
        options,
        writer: Arc::new(Mutex::new(conn)),
        readers: Mutex::new(Vec::new()),
        read_only: Some(mode),
    })
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
        Err(e) => return Err(Error::io("read the store", path, e)),
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

/// Whether the store's WAL is missing or empty, so the file alone holds every commit.
fn wal_is_empty(path: &Path) -> Result<bool> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    match std::fs::metadata(&wal) {
        Ok(metadata) => Ok(metadata.len() == 0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(Error::io("read the store's WAL", Path::new(&wal), e)),
    }
}

fn pending_wal(path: &Path) -> Error {
    let shown = path.display();
    Error::new(
        ErrorKind::Io,
        format!(
            "cannot read store {shown} without write access: its WAL ({shown}-wal) may hold commits \
             not yet copied into the file, and reading them needs {shown}-shm, which cannot be created \
             there; open the store once with write access, or copy the store with its -wal file \
             to a writable folder"
        ),
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
