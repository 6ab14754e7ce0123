//! The VFS shell of the WAL write layer: registering it over the default VFS (a
//! `vfs_layer::Layer`), the file
//! objects it allocates around the default VFS's files, opening and closing them, and the
//! methods it passes straight through. What is gathered and when it goes out is the parent
//! module's.

use std::ffi::{CStr, c_int, c_void};
use std::ptr;

use rusqlite::ffi;

use crate::store::vfs_layer::Layer;

use super::{
    VFS_NAME, file_control, file_size_of, flush, read, shm_barrier, shm_lock, shm_unmap, sync,
    truncate, write,
};

/// The WAL write layer over the default VFS.
static LAYER: Layer = Layer::new(VFS_NAME);

/// The layer's name, registered on first use; `None` if SQLite refused it.
pub(super) fn name() -> Option<&'static CStr> {
    LAYER.name(|vfs| {
        vfs.szOsFile = file_size(vfs.szOsFile);
        vfs.xOpen = Some(open);
    })
}

/// What a file opened through this layer is, for where it buffers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A main database file: its shared-memory calls flush its WAL's buffer.
    Database,
    /// A WAL file: contiguous writes are buffered.
    Wal,
    /// Anything else (journals, temporary files): passed through.
    Other,
}

/// The file object SQLite allocates (`szOsFile` bytes) for each open file: this header, then
/// the inner VFS's file at [`inner_offset`].
#[repr(C)]
pub(super) struct File {
    /// Must stay first: SQLite reads `pMethods` through a `*mut sqlite3_file`.
    pub(super) base: ffi::sqlite3_file,
    pub(super) inner: *mut ffi::sqlite3_file,
    pub(super) kind: Kind,
    /// Database: its open WAL file; WAL: its database file (null when not linked).
    pub(super) peer: *mut File,
    /// WAL only: bytes written to SQLite but not yet to the inner file, starting at `pending_at`.
    pub(super) pending: Vec<u8>,
    pub(super) pending_at: i64,
    /// WAL only: the commit's last frame is written; later writes until the database file's
    /// next shared-memory lock call go through.
    pub(super) committed: bool,
    /// WAL only: the frame whose header was the last write, if any.
    pub(super) page_after: Option<Frame>,
}

/// A WAL frame whose header was just written.
#[derive(Clone, Copy)]
pub(super) struct Frame {
    /// Where its page goes.
    pub(super) page_at: i64,
    /// Whether it is a commit frame: writing its page ends the commit's frames.
    pub(super) commits: bool,
}

/// Offset of the inner file inside the allocation (8-byte aligned, as SQLite aligns files).
const fn inner_offset() -> usize {
    std::mem::size_of::<File>().next_multiple_of(8)
}

fn file_size(inner: c_int) -> c_int {
    let total = inner_offset() + usize::try_from(inner).unwrap_or(0);
    c_int::try_from(total).unwrap_or(c_int::MAX)
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size_of),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

/// The inner file's method table.
///
/// # Safety
/// `file.inner` must be an open inner file.
pub(super) unsafe fn inner_methods(file: &File) -> &ffi::sqlite3_io_methods {
    // SAFETY: an open inner file has a non-null method table for as long as it is open.
    unsafe { &*(*file.inner).pMethods }
}

/// The layer's view of a file SQLite passes in.
///
/// # Safety
/// `file` must be a `File` this layer opened (SQLite only calls `METHODS` on those).
pub(super) unsafe fn layer_file<'a>(file: *mut ffi::sqlite3_file) -> &'a mut File {
    // SAFETY: per the contract, `file` points at a live `File`.
    unsafe { &mut *file.cast::<File>() }
}

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let Some(inner_vfs) = LAYER.inner() else {
        return ffi::SQLITE_ERROR;
    };
    // SAFETY: SQLite allocated `szOsFile` bytes at `file`: room for a `File` and the inner file.
    let inner = unsafe { file.cast::<u8>().add(inner_offset()) }.cast::<ffi::sqlite3_file>();
    // SAFETY: `file` is writable and suitably aligned for `File` (SQLite aligns to 8).
    unsafe {
        ptr::write(
            file.cast::<File>(),
            File {
                base: ffi::sqlite3_file {
                    pMethods: ptr::null(),
                },
                inner,
                kind: Kind::Other,
                peer: ptr::null_mut(),
                pending: Vec::new(),
                pending_at: 0,
                committed: false,
                page_after: None,
            },
        );
    }
    // SAFETY: the inner VFS opens its file in the space reserved for it.
    let rc = match unsafe { (*inner_vfs).xOpen } {
        Some(inner_open) => unsafe { inner_open(inner_vfs, name, inner, flags, out_flags) },
        None => ffi::SQLITE_ERROR,
    };
    // SAFETY: written above.
    let this = unsafe { layer_file(file) };
    // SAFETY: the inner open set its methods, or left them null when there is nothing to close.
    let inner_open = !unsafe { (*inner).pMethods.is_null() };
    if rc != ffi::SQLITE_OK || !inner_open {
        // This file's methods stay null, so SQLite will not close it: close the inner file
        // (which a failed open may still expect) and drop what was written here.
        if inner_open {
            let _ = forward!(this, xClose, ffi::SQLITE_OK);
        }
        // SAFETY: `this` was initialized above and is not used again.
        unsafe { ptr::drop_in_place(this) };
        return if rc == ffi::SQLITE_OK {
            ffi::SQLITE_CANTOPEN
        } else {
            rc
        };
    }
    this.kind = if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        Kind::Database
    } else if flags & ffi::SQLITE_OPEN_WAL != 0 {
        Kind::Wal
    } else {
        Kind::Other
    };
    if this.kind == Kind::Wal && !name.is_null() {
        // SAFETY: `name` is the WAL name SQLite passed to xOpen, for which this returns the
        // database's file object (opened through this VFS, so a `File`, when its methods say so).
        let database = unsafe { ffi::sqlite3_database_file_object(name) };
        if !database.is_null() && unsafe { (*database).pMethods } == &raw const METHODS {
            // SAFETY: checked above: a `File` of this layer.
            let database = unsafe { layer_file(database) };
            // A database file has one WAL open at a time (its pager's).
            debug_assert!(
                database.peer.is_null(),
                "a second WAL for one database file"
            );
            database.peer = this;
            this.peer = database;
        }
    }
    this.base.pMethods = &raw const METHODS;
    ffi::SQLITE_OK
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite calls this once on a file this layer opened.
    let this = unsafe { layer_file(file) };
    let flushed = flush(this);
    if !this.peer.is_null() {
        // SAFETY: linked files unlink each other on close, so the peer is open.
        unsafe { (*this.peer).peer = ptr::null_mut() };
    }
    let closed = forward!(this, xClose, ffi::SQLITE_OK);
    // SAFETY: nothing uses the file after xClose.
    unsafe { ptr::drop_in_place(this) };
    if flushed != ffi::SQLITE_OK {
        flushed
    } else {
        closed
    }
}

unsafe extern "C" fn lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward!(unsafe { layer_file(file) }, xLock, ffi::SQLITE_OK, level)
}

unsafe extern "C" fn unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward!(unsafe { layer_file(file) }, xUnlock, ffi::SQLITE_OK, level)
}

unsafe extern "C" fn check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward!(
        unsafe { layer_file(file) },
        xCheckReservedLock,
        ffi::SQLITE_OK,
        out
    )
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward!(unsafe { layer_file(file) }, xSectorSize, 4096)
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward!(unsafe { layer_file(file) }, xDeviceCharacteristics, 0)
}

unsafe extern "C" fn shm_map(
    file: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    let this = unsafe { layer_file(file) };
    forward!(
        this,
        xShmMap,
        ffi::SQLITE_IOERR_SHMMAP,
        region,
        size,
        extend,
        out
    )
}

unsafe extern "C" fn fetch(
    file: *mut ffi::sqlite3_file,
    offset: i64,
    amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: `out` is a valid out-pointer; no mapping (null) means "read instead".
    unsafe { *out = ptr::null_mut() };
    // SAFETY: SQLite only calls this on files this layer opened.
    forward!(
        unsafe { layer_file(file) },
        xFetch,
        ffi::SQLITE_OK,
        offset,
        amount,
        out
    )
}

unsafe extern "C" fn unfetch(
    file: *mut ffi::sqlite3_file,
    offset: i64,
    page: *mut c_void,
) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward!(
        unsafe { layer_file(file) },
        xUnfetch,
        ffi::SQLITE_OK,
        offset,
        page
    )
}
