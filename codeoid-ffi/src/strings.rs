//! `codeoid_string`: the owned buffer every variable-size result comes out in.
//!
//! The struct is passed by pointer as an out-parameter; on success codeoid fills it with a heap
//! buffer of `len` bytes followed by a NUL (so `ptr` can be used as a C string when the content
//! has no NUL of its own). `codeoid_string_free` takes the struct by pointer, frees the buffer
//! and resets the struct to `{NULL, 0}`, so freeing twice, or freeing a zero-initialized struct
//! that a failed call left untouched, is safe.
//!
//! Text is UTF-8 unless a function says otherwise (`codeoid_memory_blob` returns raw bytes).

use std::ffi::c_char;

use crate::panic::quiet;

/// An owned, NUL-terminated buffer returned by codeoid. `ptr[len]` is always `'\0'`; `ptr` is
/// NULL only in a struct that holds nothing (zero-initialized, or already freed).
///
/// Initialize it to `{0}` (`codeoid_string s = {0};`) before passing it as an out-parameter:
/// a failing call leaves it untouched, and `codeoid_string_free` on an all-zero struct is a
/// no-op. Never pass a struct that still owns a buffer: it would be overwritten and leak.
#[repr(C)]
#[derive(Debug)]
pub struct codeoid_string {
    /// The bytes, followed by a NUL. Owned by the struct until `codeoid_string_free`.
    pub ptr: *mut c_char,
    /// Number of bytes before the terminating NUL.
    pub len: usize,
}

impl codeoid_string {
    /// An empty struct that owns nothing.
    pub const fn empty() -> codeoid_string {
        codeoid_string {
            ptr: std::ptr::null_mut(),
            len: 0,
        }
    }

    /// The bytes, for Rust callers (tests and benches).
    pub fn as_bytes(&self) -> &[u8] {
        if self.ptr.is_null() {
            return &[];
        }
        // SAFETY: a non-NULL ptr comes from `from_bytes` and points at `len + 1` live bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }

    /// The content as text, for Rust callers; `None` when it is not UTF-8 (a blob).
    pub fn to_str(&self) -> Option<&str> {
        std::str::from_utf8(self.as_bytes()).ok()
    }

    /// Copies `bytes` into a new NUL-terminated heap buffer.
    pub(crate) fn from_bytes(bytes: &[u8]) -> codeoid_string {
        let mut buffer = Vec::with_capacity(bytes.len() + 1);
        buffer.extend_from_slice(bytes);
        buffer.push(0);
        let len = bytes.len();
        let ptr = Box::into_raw(buffer.into_boxed_slice()).cast::<c_char>();
        codeoid_string { ptr, len }
    }

    /// Moves `text` into a new NUL-terminated heap buffer.
    pub(crate) fn from_string(text: String) -> codeoid_string {
        let mut buffer = text.into_bytes();
        let len = buffer.len();
        buffer.push(0);
        let ptr = Box::into_raw(buffer.into_boxed_slice()).cast::<c_char>();
        codeoid_string { ptr, len }
    }
}

/// Frees the buffer `string` owns and resets it to `{NULL, 0}`. Does nothing when `string` is
/// NULL or holds nothing, so calling it twice on the same struct is safe.
///
/// Thread-safety: do not free one struct from two threads at once.
///
/// # Safety
/// `string` is NULL or points at a `codeoid_string` that is all zero or was filled by codeoid
/// (and not modified by the caller since).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_string_free(string: *mut codeoid_string) {
    quiet((), || {
        // SAFETY: the caller passes NULL or a valid struct; as_mut handles NULL.
        let Some(string) = (unsafe { string.as_mut() }) else {
            return;
        };
        if string.ptr.is_null() {
            return;
        }
        let whole = std::ptr::slice_from_raw_parts_mut(string.ptr.cast::<u8>(), string.len + 1);
        // SAFETY: ptr and len + 1 describe the boxed slice that `from_bytes`/`from_string`
        // leaked, and the struct was not freed yet (a freed struct has a NULL ptr).
        drop(unsafe { Box::from_raw(whole) });
        *string = codeoid_string::empty();
    });
}
