//! Arguments from C, checked before any work is done: handles and out-parameters must not be
//! NULL, text must be UTF-8, JSON must parse into the expected shape, enum integers must be
//! known. Each check names the argument in its error, so the message tells the caller which one
//! to fix.
//!
//! What cannot be checked is the caller's responsibility and documented in the header: a
//! pointer to freed or foreign memory, or a length longer than the buffer behind the pointer.

use std::ffi::c_char;

use serde::de::DeserializeOwned;

use crate::error::{Failure, FfiResult};

/// `ptr` as a shared reference, or `CODEOID_ERROR_NULL_ARGUMENT` naming `name`.
///
/// # Safety
/// `ptr` is NULL or points at a live `T` that outlives `'a`.
pub(crate) unsafe fn handle<'a, T>(ptr: *const T, name: &str) -> FfiResult<&'a T> {
    // SAFETY: guaranteed by the caller; as_ref handles NULL.
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::null_argument(name))
}

/// `ptr` as an out-parameter, or `CODEOID_ERROR_NULL_ARGUMENT` naming `name`.
///
/// # Safety
/// `ptr` is NULL or points at writable memory for a `T` that outlives `'a`.
pub(crate) unsafe fn out<'a, T>(ptr: *mut T, name: &str) -> FfiResult<&'a mut T> {
    // SAFETY: guaranteed by the caller; as_mut handles NULL.
    unsafe { ptr.as_mut() }.ok_or_else(|| Failure::null_argument(name))
}

/// The `len` bytes at `ptr`; NULL is an error even with `len == 0`. A zero length with a
/// non-NULL pointer is the empty slice.
///
/// # Safety
/// When non-NULL, `ptr` points at `len` readable bytes that outlive `'a`.
pub(crate) unsafe fn bytes<'a>(ptr: *const c_char, len: usize, name: &str) -> FfiResult<&'a [u8]> {
    // SAFETY: forwarded to the caller's guarantee.
    unsafe { optional_bytes(ptr, len, name) }?.ok_or_else(|| Failure::null_argument(name))
}

/// Like [`bytes`], but NULL means "not given".
///
/// # Safety
/// As [`bytes`].
pub(crate) unsafe fn optional_bytes<'a>(
    ptr: *const c_char,
    len: usize,
    name: &str,
) -> FfiResult<Option<&'a [u8]>> {
    if ptr.is_null() {
        return Ok(None);
    }
    if len > isize::MAX as usize {
        return Err(Failure::invalid_input(format!(
            "argument `{name}` has length {len}, more than any buffer can hold; pass the byte \
             length of the text"
        )));
    }
    // SAFETY: ptr is non-NULL and the caller guarantees `len` readable bytes behind it; the
    // length fits in isize.
    Ok(Some(unsafe {
        std::slice::from_raw_parts(ptr.cast::<u8>(), len)
    }))
}

/// The UTF-8 text `(ptr, len)`; NULL is `CODEOID_ERROR_NULL_ARGUMENT`, bad bytes are
/// `CODEOID_ERROR_INVALID_UTF8`.
///
/// # Safety
/// As [`bytes`].
pub(crate) unsafe fn text<'a>(ptr: *const c_char, len: usize, name: &str) -> FfiResult<&'a str> {
    // SAFETY: forwarded to the caller's guarantee.
    let raw = unsafe { bytes(ptr, len, name) }?;
    std::str::from_utf8(raw).map_err(|e| Failure::invalid_utf8(name, e))
}

/// Like [`text`], but NULL means "not given".
///
/// # Safety
/// As [`bytes`].
pub(crate) unsafe fn optional_text<'a>(
    ptr: *const c_char,
    len: usize,
    name: &str,
) -> FfiResult<Option<&'a str>> {
    // SAFETY: forwarded to the caller's guarantee.
    match unsafe { optional_bytes(ptr, len, name) }? {
        None => Ok(None),
        Some(raw) => std::str::from_utf8(raw)
            .map(Some)
            .map_err(|e| Failure::invalid_utf8(name, e)),
    }
}

/// Parses the JSON text `json` (the argument `name`) as a `T`, whose shape `what` describes. The
/// message names the field that failed (`as_of`, `filters.since`, `filters.paths[0]`), not only
/// where in the text it was.
pub(crate) fn parse_json<T: DeserializeOwned>(json: &str, name: &str, what: &str) -> FfiResult<T> {
    let mut reader = serde_json::Deserializer::from_str(json);
    let parsed = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
        let field = e.path().to_string();
        let at = if field == "." {
            String::new()
        } else {
            format!(" at `{field}`")
        };
        (at, e.into_inner())
    });
    parsed
        .and_then(|value| reader.end().map(|()| value).map_err(|e| (String::new(), e)))
        .map_err(|(at, e)| {
            Failure::invalid_input(format!(
                "argument `{name}` is not {what}{at}: {e}; see docs/ffi.md for the JSON shapes"
            ))
        })
}

/// Parses optional JSON: NULL (not given) is `T::default()`.
pub(crate) fn parse_optional_json<T: DeserializeOwned + Default>(
    json: Option<&str>,
    name: &str,
    what: &str,
) -> FfiResult<T> {
    json.map_or_else(|| Ok(T::default()), |j| parse_json(j, name, what))
}
