//! The VFS of stores opened read-only: SQLite's default VFS, except that it never creates a
//! WAL file. A read-only connection to a store in WAL mode opens the store's `-wal` with
//! "create" whatever its own flags, so beside a store closed cleanly (or whose writer closed
//! between a check and the open) it would leave a `-wal` owned by this process, which stops
//! the store's owner from writing. Through this VFS the open fails instead, and the caller
//! reads the store another way (see `read_only`). The `-shm` index is kept from being created
//! by the `readonly_shm=1` URI parameter, which the default VFS honours itself.
//!
//! Files are the default VFS's own files: only the open flags of WAL files change.

use std::ffi::{CStr, c_int};

use rusqlite::ffi;

use super::vfs_layer::Layer;

/// The VFS read-only connections open the store with.
static LAYER: Layer = Layer::new(c"codeoid-no-create");

/// The name of this VFS, registered on first use; `None` if SQLite refused it (then the caller
/// must not open a store that might need a WAL file created).
pub(crate) fn vfs_name() -> Option<&'static CStr> {
    LAYER.name(|vfs| vfs.xOpen = Some(open))
}

/// Opens `name` through the default VFS; a WAL file is opened read-only and never created.
unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let Some(inner) = LAYER.inner() else {
        return ffi::SQLITE_ERROR;
    };
    let flags = if flags & ffi::SQLITE_OPEN_WAL != 0 {
        (flags & !(ffi::SQLITE_OPEN_CREATE | ffi::SQLITE_OPEN_READWRITE))
            | ffi::SQLITE_OPEN_READONLY
    } else {
        flags
    };
    // SAFETY: `inner` is the registered default VFS; `file` has room for its file objects (this
    // VFS's `szOsFile` is the default's), and the other arguments are SQLite's, passed on.
    match unsafe { (*inner).xOpen } {
        Some(inner_open) => unsafe { inner_open(inner, name, file, flags, out_flags) },
        None => ffi::SQLITE_ERROR,
    }
}
