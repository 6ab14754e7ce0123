//! `codeoid_error`: the error a fallible function returns, with a stable numeric code and the
//! full message.
//!
//! Codes 1..=999 are the core's [`ErrorKind::code`]s, one per kind, copied here as header macros
//! (a test proves every kind has one and that they agree). Codes from 1000 on belong to the C ABI
//! alone: a NULL where a pointer is required, text that is not UTF-8, and a panic caught at the
//! boundary. Codes are never reused; `docs/errors.md` is the table.
//!
//! An error is an owned object returned by value, not thread-local "last error" state: callers
//! whose calls hop between OS threads (Go's goroutines) cannot read another call's error.

use std::ffi::{CString, c_char};

use codeoid_core::{Error, ErrorKind};

use crate::panic::quiet;

/// The caller passed something malformed: bad JSON, a JSON value of the wrong shape, an unknown
/// enum value, an empty id, an out-of-range number.
pub const CODEOID_ERROR_INVALID_INPUT: u32 = 1;
/// A session, episode, blob or file that the caller named does not exist in this workspace.
pub const CODEOID_ERROR_NOT_FOUND: u32 = 2;
/// The thing the caller wants to create already exists with different contents.
pub const CODEOID_ERROR_ALREADY_EXISTS: u32 = 3;
/// SQLite reported a failure that is not one of the more specific kinds.
pub const CODEOID_ERROR_DATABASE: u32 = 4;
/// Another process kept the database locked for longer than the busy timeout.
pub const CODEOID_ERROR_BUSY: u32 = 5;
/// The file is not a codeoid store (corrupt, truncated, or another application's database).
pub const CODEOID_ERROR_CORRUPT: u32 = 6;
/// The store was written by a newer codeoid whose schema this library does not know.
pub const CODEOID_ERROR_SCHEMA_TOO_NEW: u32 = 7;
/// A filesystem operation failed.
pub const CODEOID_ERROR_IO: u32 = 8;
/// No embedding model could be found or downloaded.
pub const CODEOID_ERROR_MODEL_UNAVAILABLE: u32 = 9;
/// An embedding model was found but could not be loaded or run.
pub const CODEOID_ERROR_MODEL: u32 = 10;
/// A conversation cannot be expressed in the requested provider format.
pub const CODEOID_ERROR_TRANSLATION: u32 = 11;
/// A session log could not be imported as a whole.
pub const CODEOID_ERROR_IMPORT: u32 = 12;
/// A rotation was requested but the policy refuses it; the message says why.
pub const CODEOID_ERROR_ROTATION_REFUSED: u32 = 13;
/// A bug in codeoid: an invariant did not hold.
pub const CODEOID_ERROR_INTERNAL: u32 = 14;
/// A pointer argument that must not be NULL was NULL (C ABI only).
pub const CODEOID_ERROR_NULL_ARGUMENT: u32 = 1000;
/// A text argument was not valid UTF-8 (C ABI only).
pub const CODEOID_ERROR_INVALID_UTF8: u32 = 1001;
/// codeoid panicked; the panic was caught at the boundary and nothing unwound into the caller.
/// A bug: please report it with the message (C ABI only).
pub const CODEOID_ERROR_PANIC: u32 = 1002;
/// The call's `codeoid_cancel` flag was already raised when it began: nothing was done (C ABI
/// only).
pub const CODEOID_ERROR_CANCELLED: u32 = 1003;

/// The codes that exist only at the C ABI, with their names.
pub(crate) const FFI_CODES: [(u32, &str); 4] = [
    (CODEOID_ERROR_NULL_ARGUMENT, "null_argument"),
    (CODEOID_ERROR_INVALID_UTF8, "invalid_utf8"),
    (CODEOID_ERROR_PANIC, "panic"),
    (CODEOID_ERROR_CANCELLED, "cancelled"),
];

/// An error returned by a codeoid function. Opaque: read it with `codeoid_error_code` and
/// `codeoid_error_message`, destroy it with `codeoid_error_free`.
#[derive(Debug)]
pub struct codeoid_error {
    code: u32,
    message: CString,
}

/// A failure inside the library, before it crosses the boundary as a [`codeoid_error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) code: u32,
    pub(crate) message: String,
}

/// The result of a function body.
pub(crate) type FfiResult<T> = Result<T, Failure>;

impl Failure {
    /// `CODEOID_ERROR_NULL_ARGUMENT` naming the argument.
    pub(crate) fn null_argument(name: &str) -> Failure {
        Failure {
            code: CODEOID_ERROR_NULL_ARGUMENT,
            message: format!("argument `{name}` is NULL; pass a valid pointer"),
        }
    }

    /// `CODEOID_ERROR_INVALID_UTF8` naming the argument and where the bad bytes start.
    pub(crate) fn invalid_utf8(name: &str, error: std::str::Utf8Error) -> Failure {
        Failure {
            code: CODEOID_ERROR_INVALID_UTF8,
            message: format!(
                "argument `{name}` is not valid UTF-8 (invalid bytes at offset {}); pass UTF-8 text",
                error.valid_up_to()
            ),
        }
    }

    /// `CODEOID_ERROR_INVALID_INPUT` with `message`.
    pub(crate) fn invalid_input(message: impl Into<String>) -> Failure {
        Failure {
            code: CODEOID_ERROR_INVALID_INPUT,
            message: message.into(),
        }
    }

    /// `CODEOID_ERROR_PANIC` for a panic in `function` with the panic's message.
    pub(crate) fn panic(function: &str, what: &str) -> Failure {
        Failure {
            code: CODEOID_ERROR_PANIC,
            message: format!(
                "{function} panicked: {what}; this is a bug in codeoid, please report it"
            ),
        }
    }

    /// `CODEOID_ERROR_CANCELLED`: `function` was given a flag already raised.
    pub(crate) fn cancelled(function: &str) -> Failure {
        Failure {
            code: CODEOID_ERROR_CANCELLED,
            message: format!(
                "{function} was given a cancel flag that was already raised, so nothing was \
                 done; lower it with codeoid_cancel_reset (or pass a new flag) for the next call"
            ),
        }
    }

    /// Moves the failure to the heap for C.
    pub(crate) fn into_raw(self) -> *mut codeoid_error {
        // C reads the message as a NUL-terminated string: a NUL inside (from user text quoted
        // in the message) would cut it short, so it is spelled out instead.
        let text = self.message.replace('\0', "\\0");
        let message = CString::new(text).unwrap_or_default();
        Box::into_raw(Box::new(codeoid_error {
            code: self.code,
            message,
        }))
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure {
            code: error.kind().code(),
            message: error.full_message(),
        }
    }
}

/// The stable code of `error` (see the `CODEOID_ERROR_*` macros and `docs/errors.md`). Returns 0
/// for NULL, which is never a code.
///
/// # Safety
/// `error` is NULL or an error returned by codeoid and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_error_code(error: *const codeoid_error) -> u32 {
    quiet(0, || {
        // SAFETY: the caller passes NULL or a live error; as_ref handles NULL.
        unsafe { error.as_ref() }.map_or(0, |e| e.code)
    })
}

/// The full message of `error` (the message and every cause, separated by `: `) as a
/// NUL-terminated UTF-8 string owned by the error: valid until `codeoid_error_free(error)`, not
/// to be freed by the caller. Returns an empty string for NULL.
///
/// # Safety
/// `error` is NULL or an error returned by codeoid and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_error_message(error: *const codeoid_error) -> *const c_char {
    quiet(c"".as_ptr(), || {
        // SAFETY: the caller passes NULL or a live error; as_ref handles NULL.
        match unsafe { error.as_ref() } {
            Some(e) => e.message.as_ptr(),
            None => c"".as_ptr(),
        }
    })
}

/// Destroys `error`. `codeoid_error_free(NULL)` does nothing. Freeing an error twice is
/// undefined behaviour (set your pointer to NULL after freeing it).
///
/// # Safety
/// `error` is NULL or an error returned by codeoid and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_error_free(error: *mut codeoid_error) {
    quiet((), || {
        if !error.is_null() {
            // SAFETY: a non-NULL error came from Failure::into_raw (Box::into_raw) and the
            // caller guarantees it was not freed yet.
            drop(unsafe { Box::from_raw(error) });
        }
    });
}

/// The snake_case name of error code `code` (`"not_found"`, `"null_argument"`...) as a static
/// NUL-terminated string (do not free it), or NULL for a number that is not a code. Bindings use
/// it to name their exception classes and sentinel errors.
///
/// Thread-safe; cannot fail.
#[unsafe(no_mangle)]
pub extern "C" fn codeoid_error_code_name(code: u32) -> *const c_char {
    quiet(std::ptr::null(), || match code_name(code) {
        Some(name) => name.as_ptr(),
        None => std::ptr::null(),
    })
}

/// The name of `code` as a static C string.
fn code_name(code: u32) -> Option<&'static std::ffi::CStr> {
    let name = ErrorKind::from_code(code)
        .map(ErrorKind::name)
        .or_else(|| {
            FFI_CODES
                .iter()
                .find(|(c, _)| *c == code)
                .map(|(_, name)| *name)
        })?;
    NAMES
        .iter()
        .find(|n| n.to_bytes() == name.as_bytes())
        .copied()
}

/// Every code name as a C string, so `codeoid_error_code_name` can hand out static pointers.
/// A test proves each core kind and FFI code is here.
const NAMES: [&std::ffi::CStr; 18] = [
    c"invalid_input",
    c"not_found",
    c"already_exists",
    c"database",
    c"busy",
    c"corrupt",
    c"schema_too_new",
    c"io",
    c"model_unavailable",
    c"model",
    c"translation",
    c"import",
    c"rotation_refused",
    c"internal",
    c"null_argument",
    c"invalid_utf8",
    c"panic",
    c"cancelled",
];
