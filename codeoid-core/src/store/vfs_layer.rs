//! A VFS layered over SQLite's default one: registered once per process under its own name,
//! never as the default, with the default VFS's own methods except those the layer replaces
//! (its `xOpen`, and `szOsFile` when its files wrap the default's). The WAL write layer
//! (`wal_writes`) and the VFS of read-only stores (`no_create`) are two such layers.
//!
//! The default VFS's methods other than `xOpen` receive the layer's struct, which carries the
//! default's `pAppData` and `mxPathname`, all they read of it.

use std::cell::UnsafeCell;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::OnceLock;

use rusqlite::ffi;

/// A VFS layer, for a `static`: its name, the default VFS it forwards to, and the registered
/// struct itself, in static memory rather than a leaked allocation (leak checkers such as
/// valgrind report those); SQLite owns the struct's `pNext` once it is registered.
pub(in crate::store) struct Layer {
    name: &'static CStr,
    inner: OnceLock<VfsPtr>,
    registered: OnceLock<bool>,
    slot: UnsafeCell<MaybeUninit<ffi::sqlite3_vfs>>,
}

// SAFETY: `slot` is written once, inside `registered`'s one-time initialization and before
// SQLite sees it; afterwards only SQLite touches it, under its own mutex. `inner` and
// `registered` are thread-safe cells.
unsafe impl Sync for Layer {}

/// A pointer to the default VFS, which SQLite keeps for the whole process.
struct VfsPtr(*mut ffi::sqlite3_vfs);
// SAFETY: SQLite VFS objects are process-wide and thread-safe by contract, never freed.
unsafe impl Send for VfsPtr {}
// SAFETY: as above.
unsafe impl Sync for VfsPtr {}

impl Layer {
    /// A layer named `name`, not registered yet.
    pub(in crate::store) const fn new(name: &'static CStr) -> Layer {
        Layer {
            name,
            inner: OnceLock::new(),
            registered: OnceLock::new(),
            slot: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// The layer's name, registering it on the first call: a copy of the default VFS under
    /// this name, with `adapt` applied (later calls ignore `adapt`). `None` when SQLite has
    /// no default VFS or refused the layer; the caller then opens files without it.
    pub(in crate::store) fn name(
        &'static self,
        adapt: impl FnOnce(&mut ffi::sqlite3_vfs),
    ) -> Option<&'static CStr> {
        let registered = *self.registered.get_or_init(|| self.register(adapt));
        registered.then_some(self.name)
    }

    /// The default VFS the layer forwards to; `None` before it is registered.
    pub(in crate::store) fn inner(&self) -> Option<*mut ffi::sqlite3_vfs> {
        self.inner.get().map(|VfsPtr(vfs)| *vfs)
    }

    /// Runs once, inside `registered`'s initialization.
    fn register(&'static self, adapt: impl FnOnce(&mut ffi::sqlite3_vfs)) -> bool {
        // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS or NULL; it initializes SQLite.
        let inner = unsafe { ffi::sqlite3_vfs_find(ptr::null()) };
        if inner.is_null() || self.inner.set(VfsPtr(inner)).is_err() {
            return false;
        }
        // SAFETY: `inner` is a valid registered VFS.
        let mut vfs = unsafe { *inner };
        vfs.zName = self.name.as_ptr();
        vfs.pNext = ptr::null_mut();
        adapt(&mut vfs);
        let slot = self.slot.get().cast::<ffi::sqlite3_vfs>();
        // SAFETY: this runs once per layer and nothing has read the slot yet.
        unsafe { slot.write(vfs) };
        // SAFETY: the slot is static, so it lives for the process; 0 = not the default VFS.
        unsafe { ffi::sqlite3_vfs_register(slot, 0) == ffi::SQLITE_OK }
    }
}
