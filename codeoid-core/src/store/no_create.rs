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
use std::ptr;
use std::sync::OnceLock;

use rusqlite::ffi;

use super::wal_writes::{LayerSlot, VfsPtr};

/// The name read-only connections open the store with.
const VFS_NAME: &CStr = c"codeoid-no-create";

/// The default VFS, which every call goes to.
static INNER: OnceLock<VfsPtr> = OnceLock::new();

static LAYER: LayerSlot = LayerSlot::new();

/// The name of this VFS, registered on first use; `None` if SQLite refused it (then the caller
/// must not open a store that might need a WAL file created).
pub(crate) fn vfs_name() -> Option<&'static CStr> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    // SAFETY: called once; `register` reads the default VFS and fills the static slot.
    let registered = *REGISTERED.get_or_init(|| unsafe { register() });
    registered.then_some(VFS_NAME)
}

/// # Safety
/// Must run at most once (it is called through a `OnceLock`).
unsafe fn register() -> bool {
    // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS or NULL; it initializes SQLite.
    let inner = unsafe { ffi::sqlite3_vfs_find(ptr::null()) };
    if inner.is_null() || INNER.set(VfsPtr(inner)).is_err() {
        return false;
    }
    // SAFETY: `inner` is a valid registered VFS.
    let mut vfs = unsafe { *inner };
    // Every method but `xOpen` is the default VFS's own; they read only `pAppData` and
    // `mxPathname` of the struct they receive, which this copy carries.
    vfs.zName = VFS_NAME.as_ptr();
    vfs.pNext = ptr::null_mut();
    vfs.xOpen = Some(open);
    // SAFETY: called once, per this function's contract.
    unsafe { LAYER.register(vfs) }
}

/// Opens `name` through the default VFS; a WAL file is opened read-only and never created.
unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let Some(VfsPtr(inner)) = INNER.get() else {
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
    match unsafe { (**inner).xOpen } {
        Some(inner_open) => unsafe { inner_open(*inner, name, file, flags, out_flags) },
        None => ffi::SQLITE_ERROR,
    }
}
