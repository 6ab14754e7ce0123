//! `codeoid_cancel`: a flag a caller raises to stop a long call on another thread, the C form of
//! a Ctrl-C or a Go `context.Context`. Created with `codeoid_cancel_new`, raised with
//! `codeoid_cancel_request` (from any thread, or from a signal handler: it only stores to an
//! atomic), read by the calls that accept one (`codeoid_memory_run_cancellable`,
//! `codeoid_memory_import_cancellable`), destroyed with `codeoid_cancel_free`.
//!
//! Once raised it stays raised until `codeoid_cancel_reset` lowers it: a call given a raised flag
//! does nothing. A harness whose `SIGINT` handler raises a flag keeps one flag for the life of
//! the process (never freeing what a handler may still reach) and lowers it before each call it
//! lets a Ctrl-C stop.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::panic::quiet;

/// A cancellation flag shared between the thread running a call and the thread (or signal
/// handler) that stops it. Opaque; create it with `codeoid_cancel_new`, destroy it with
/// `codeoid_cancel_free` once no call uses it.
pub struct codeoid_cancel {
    requested: AtomicBool,
}

impl codeoid_cancel {
    /// Whether the call reading this flag should go on.
    pub(crate) fn keep_going(&self) -> bool {
        !self.requested.load(Ordering::Acquire)
    }
}

/// A new flag, not raised, to free with `codeoid_cancel_free`. Returns NULL only if codeoid
/// panicked (it does not allocate anything that can fail short of memory exhaustion, which
/// aborts).
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn codeoid_cancel_new() -> *mut codeoid_cancel {
    quiet(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(codeoid_cancel {
            requested: AtomicBool::new(false),
        }))
    })
}

/// Raises the flag: a call reading it stops at its next check (a running command within about
/// 0.1 s, an import before its next file), and every later call given this flag does nothing
/// (`CODEOID_ERROR_CANCELLED`) until `codeoid_cancel_reset`. Raising it twice is the same as
/// once; NULL does nothing.
///
/// Thread-safe and async-signal-safe (an atomic store, nothing else), so a `SIGINT` handler
/// may call it.
///
/// # Safety
/// `cancel` is NULL or a live flag from `codeoid_cancel_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_cancel_request(cancel: *const codeoid_cancel) {
    // No panic boundary: an atomic store cannot panic, and a boundary's bookkeeping is not
    // async-signal-safe.
    // SAFETY: the caller guarantees NULL or a live flag; as_ref handles NULL.
    if let Some(cancel) = unsafe { cancel.as_ref() } {
        cancel.requested.store(true, Ordering::Release);
    }
}

/// Lowers the flag, so that the next call given it runs: a harness that keeps one flag for the
/// life of the process (the one its `SIGINT` handler raises) lowers it before each call, which
/// forgets a Ctrl-C that came between calls. Lowering it while a call reads it lets that call go
/// on. NULL does nothing.
///
/// Thread-safe and async-signal-safe (an atomic store).
///
/// # Safety
/// `cancel` is NULL or a live flag from `codeoid_cancel_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_cancel_reset(cancel: *const codeoid_cancel) {
    // No panic boundary, as for codeoid_cancel_request.
    // SAFETY: the caller guarantees NULL or a live flag; as_ref handles NULL.
    if let Some(cancel) = unsafe { cancel.as_ref() } {
        cancel.requested.store(false, Ordering::Release);
    }
}

/// Whether the flag was raised; false for NULL.
///
/// Thread-safe.
///
/// # Safety
/// `cancel` is NULL or a live flag from `codeoid_cancel_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_cancel_requested(cancel: *const codeoid_cancel) -> bool {
    quiet(false, || {
        // SAFETY: the caller guarantees NULL or a live flag; as_ref handles NULL.
        unsafe { cancel.as_ref() }.is_some_and(|c| !c.keep_going())
    })
}

/// Destroys a flag. NULL does nothing. It must not run while a call still reads the flag, nor
/// while a signal handler may still raise it.
///
/// # Safety
/// `cancel` is NULL or a live flag from `codeoid_cancel_new`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_cancel_free(cancel: *mut codeoid_cancel) {
    quiet((), || {
        if !cancel.is_null() {
            // SAFETY: a live flag from codeoid_cancel_new, given up by the caller.
            drop(unsafe { Box::from_raw(cancel) });
        }
    });
}
