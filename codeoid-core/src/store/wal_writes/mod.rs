//! One `write` per commit to the WAL: a thin SQLite VFS over the platform's default one that
//! gathers a transaction's WAL frames in memory and hands them to the file system together.
//!
//! SQLite appends each page it commits to the WAL as two writes, the frame's 24-byte header and
//! the page, so a commit of 12 pages makes 24 `pwrite` calls, each crossing into the kernel and
//! through the file system's per-call work for the one or two pages it touches. On a one-turn
//! `record_turn` those calls were the largest single cost of the writer after FTS5 (see
//! `docs/benchmarks.md`, "WAL writes gathered per commit"). Here a transaction's contiguous
//! writes to a WAL file are gathered, and go out in writes of up to [`MAX_WRITE`] bytes (one
//! for a typical commit):
//! - right after the page of the commit frame (a frame header whose "database size" field is
//!   not zero; SQLite always ends a commit's frames with one), inside the `xWrite` that completes
//!   it, so an I/O error is reported to the commit that caused it;
//! - before anything that needs the file as written: a read, a sync, a truncate, a size query,
//!   a file control, a close, and a write anywhere but the buffer's end;
//! - when it reaches [`MAX_PENDING`] bytes (long transactions spill pages before they commit).
//!
//! After the commit frame's page, everything is written through until the database file's next
//! shared-memory lock call (the end of the write transaction): what SQLite writes there, the
//! checksum rewrite of frames the transaction overwrote and, under `synchronous = FULL` without
//! power-safe overwrite, padding frames split around a sync at a sector boundary, has no later
//! write to carry it out before the header is published. (In `locking_mode = EXCLUSIVE` there
//! are no such calls, so after the first commit everything is written through.)
//!
//! Invariants:
//! - Another connection or process never reads a frame that is still buffered: readers only
//!   read frames a published wal-index header covers, and every commit's frames are in the file
//!   before its header is published (tests count what is left then: nothing). As a second
//!   guard, the database file's shared-memory lock, barrier and unmap calls flush its WAL's
//!   buffer first, so nothing buffered outlives the write lock either. Only frames of a
//!   rolled-back transaction can still be buffered at an unlock; if writing them fails, the
//!   unlock happens anyway (SQLite ignores its result, and a lock left held would block every
//!   other connection).
//! - An acknowledged commit is in the operating system's hands before `record_turn` returns, as
//!   without this layer: a process killed at any point loses only what it had not committed.
//! - Files are the default VFS's files, bytes and locks unchanged: a store written through this
//!   layer is an ordinary SQLite file that other programs (and other codeoid versions) share.
//!
//! It deliberately changes no other file and no read path: the database file, journals and
//! temporary files pass straight through. This module holds what is gathered and when it goes
//! out; `vfs` the shell around the default VFS (registration, file objects, open and close, the
//! methods passed through).

use std::ffi::{CStr, c_int, c_void};

use rusqlite::ffi;

/// The name connections open the store with.
const VFS_NAME: &CStr = c"codeoid-wal-writes";

/// Bytes a WAL file's buffer may hold before it is written out without waiting for the commit.
const MAX_PENDING: usize = 1 << 20;

/// Most bytes handed to the inner file in one write. SQLite's unix VFS writes at most 128 KiB
/// per call (it masks the length to 17 bits), so a buffer goes out in pieces of this size.
const MAX_WRITE: usize = 64 << 10;

/// Size of a WAL frame header; bytes 4..8 hold the database size after a commit frame.
const FRAME_HEADER: usize = 24;

/// The name to pass to `sqlite3_open_v2` for a store file: this layer registered (once per
/// process) over the default VFS. `None` when it cannot be registered; the store then opens
/// with the default VFS and behaves the same, only with more write calls.
pub(crate) fn vfs_name() -> Option<&'static CStr> {
    vfs::name()
}

/// Calls the inner file's method `$name` with `$args`, or returns `$missing` when the inner
/// VFS does not have it (older method-table versions).
macro_rules! forward {
    ($file:expr, $name:ident, $missing:expr $(, $arg:expr)*) => {{
        let file: &mut File = $file;
        // SAFETY: the file is open, so its inner file is.
        match unsafe { inner_methods(file) }.$name {
            // SAFETY: forwarding the caller's arguments to the inner file, as SQLite would.
            Some(method) => unsafe { method(file.inner $(, $arg)*) },
            None => $missing,
        }
    }};
}

/// [`forward!`] once `$flush` (the file's own buffer, or its WAL's) has gone out; a failed
/// flush is returned instead.
macro_rules! forward_flushed {
    ($flush:ident, $file:expr, $name:ident, $missing:expr $(, $arg:expr)*) => {{
        let file: &mut File = $file;
        match $flush(file) {
            ffi::SQLITE_OK => forward!(file, $name, $missing $(, $arg)*),
            rc => rc,
        }
    }};
}

mod vfs;

use vfs::{File, Frame, Kind, inner_methods, layer_file};

/// Writes a WAL file's buffer out, in pieces of at most [`MAX_WRITE`] bytes; the buffer is
/// emptied whatever the outcome, and a failure is returned (SQLite then fails the statement and
/// rolls the transaction back).
fn flush(file: &mut File) -> c_int {
    let mut rc = ffi::SQLITE_OK;
    let mut at = file.pending_at;
    let pending = std::mem::take(&mut file.pending);
    for piece in pending.chunks(MAX_WRITE) {
        tally(0, 1);
        if injected_failure() {
            rc = ffi::SQLITE_IOERR_WRITE;
            break;
        }
        // Pieces are at most MAX_WRITE bytes, well within a c_int.
        let len = piece.len() as c_int;
        let data = piece.as_ptr().cast::<c_void>();
        rc = forward!(file, xWrite, ffi::SQLITE_IOERR_WRITE, data, len, at);
        if rc != ffi::SQLITE_OK {
            break;
        }
        at += i64::from(len);
    }
    // Keep the allocation for the next commit.
    file.pending = pending;
    file.pending.clear();
    rc
}

/// Flushes the WAL of database file `file`, if it has one open: the second guard, on the
/// database file's shared-memory calls.
fn flush_peer_wal(file: &mut File) -> c_int {
    if file.kind != Kind::Database || file.peer.is_null() {
        return ffi::SQLITE_OK;
    }
    // SAFETY: a linked WAL unlinks itself when it closes, so a non-null peer is open.
    let wal = unsafe { &mut *file.peer };
    if !wal.pending.is_empty() {
        tally_late();
    }
    flush(wal)
}

unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward_flushed!(
        flush,
        unsafe { layer_file(file) },
        xRead,
        ffi::SQLITE_IOERR_READ,
        buf,
        amount,
        offset
    )
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    let this = unsafe { layer_file(file) };
    let len = usize::try_from(amount).unwrap_or(0);
    if this.kind != Kind::Wal || len == 0 || buf.is_null() {
        return forward!(this, xWrite, ffi::SQLITE_IOERR_WRITE, buf, amount, offset);
    }
    tally(1, 0);
    // SAFETY: SQLite passes `amount` readable bytes at `buf`.
    let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
    if this.committed {
        // Past the commit's last frame (padding for a sync, the checksum rewrite): through.
        tally(0, 1);
        return forward!(this, xWrite, ffi::SQLITE_IOERR_WRITE, buf, amount, offset);
    }
    let frame = this.page_after.take();
    if len == FRAME_HEADER {
        this.page_after = Some(Frame {
            page_at: offset + FRAME_HEADER as i64,
            commits: bytes[4..8] != [0; 4],
        });
    }
    let ends_commit = frame.is_some_and(|f| f.commits && f.page_at == offset);
    let extends = offset == this.pending_at + this.pending.len() as i64;
    if !this.pending.is_empty() && (!extends || this.pending.len() + len > MAX_PENDING) {
        let rc = flush(this);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    if this.pending.is_empty() {
        this.pending_at = offset;
    }
    this.pending.extend_from_slice(bytes);
    if ends_commit {
        this.committed = true;
        return flush(this);
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward_flushed!(
        flush,
        unsafe { layer_file(file) },
        xTruncate,
        ffi::SQLITE_IOERR_TRUNCATE,
        size
    )
}

unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward_flushed!(
        flush,
        unsafe { layer_file(file) },
        xSync,
        ffi::SQLITE_IOERR_FSYNC,
        flags
    )
}

unsafe extern "C" fn file_size_of(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward_flushed!(
        flush,
        unsafe { layer_file(file) },
        xFileSize,
        ffi::SQLITE_IOERR_FSTAT,
        size
    )
}

unsafe extern "C" fn file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    forward_flushed!(
        flush,
        unsafe { layer_file(file) },
        xFileControl,
        ffi::SQLITE_NOTFOUND,
        op,
        arg
    )
}

unsafe extern "C" fn shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    let this = unsafe { layer_file(file) };
    let flushed = flush_peer_wal(this);
    if !this.peer.is_null() {
        // A lock or unlock ends a write transaction or begins one: gathering resumes.
        // SAFETY: a linked WAL unlinks itself when it closes, so a non-null peer is open.
        unsafe { (*this.peer).committed = false };
    }
    // An unlock always happens: SQLite ignores its result, and a lock left held would block
    // every other connection. What can still be buffered at an unlock is only frames of a
    // transaction that rolled back, which no reader will ever ask for.
    if flushed != ffi::SQLITE_OK && flags & ffi::SQLITE_SHM_UNLOCK == 0 {
        return flushed;
    }
    forward!(this, xShmLock, ffi::SQLITE_IOERR_SHMLOCK, offset, n, flags)
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: SQLite only calls this on files this layer opened.
    let this = unsafe { layer_file(file) };
    // Every commit's frames went out with its last one, so nothing is buffered when SQLite
    // publishes a header (tests count it); writing late would still beat publishing frames that
    // are not in the file.
    let _ = flush_peer_wal(this);
    forward!(this, xShmBarrier, ());
}

unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    // SAFETY: SQLite only calls this on files this layer opened.
    let this = unsafe { layer_file(file) };
    // As for an unlock: always forwarded (SQLite ignores the result), whatever the flush gave.
    let _ = flush_peer_wal(this);
    forward!(this, xShmUnmap, ffi::SQLITE_OK, delete)
}

/// What tests observe of this layer on their thread: WAL writes SQLite asked for, writes made to
/// the inner file, and flushes the second guard found something to write (none expected); and
/// a switch that makes buffered writes fail.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Observed {
    asked: usize,
    made: usize,
    late: usize,
    fail_writes: bool,
}

#[cfg(test)]
thread_local! {
    static OBSERVED: std::cell::Cell<Observed> = const {
        std::cell::Cell::new(Observed { asked: 0, made: 0, late: 0, fail_writes: false })
    };
}

#[cfg(test)]
fn observe(change: impl FnOnce(&mut Observed)) -> Observed {
    OBSERVED.with(|cell| {
        let mut now = cell.get();
        change(&mut now);
        cell.set(now);
        now
    })
}

#[cfg(test)]
fn tally(asked: usize, made: usize) {
    observe(|o| {
        o.asked += asked;
        o.made += made;
    });
}

#[cfg(test)]
fn tally_late() {
    observe(|o| o.late += 1);
}

#[cfg(test)]
fn injected_failure() -> bool {
    observe(|_| {}).fail_writes
}

#[cfg(not(test))]
fn tally(_asked: usize, _made: usize) {}

#[cfg(not(test))]
fn tally_late() {}

#[cfg(not(test))]
fn injected_failure() -> bool {
    false
}

#[cfg(test)]
mod tests;
