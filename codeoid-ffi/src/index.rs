//! The workspace index block (DESIGN §4) for a system prompt. The core rebuilds it on a
//! schedule and keeps it byte-identical in between, so prompt caching keeps working; this layer
//! only copies it out.

use std::ffi::c_char;

use crate::args::{handle, optional_text, out};
use crate::error::codeoid_error;
use crate::memory::codeoid_memory;
use crate::panic::boundary;
use crate::strings::codeoid_string;

/// Writes the workspace index block, as seen from `session_id` (optional: NULL lists no session
/// as current), into `*out_text`. The text is empty for an empty workspace, when the index is
/// switched off, or when memory is disabled.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_NOT_FOUND` (`session_id` is not in this workspace), database errors.
/// Thread-safe.
///
/// # Safety
/// `memory` is NULL or a live handle; `session_id` is NULL or points at `session_id_len`
/// readable bytes; `out_text` is NULL or points at a `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_memory_workspace_index(
    memory: *const codeoid_memory,
    session_id: *const c_char,
    session_id_len: usize,
    out_text: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_memory_workspace_index", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let memory = unsafe { handle(memory, "memory") }?;
        // SAFETY: as above.
        let session = unsafe { optional_text(session_id, session_id_len, "session_id") }?;
        // SAFETY: as above.
        let out_text = unsafe { out(out_text, "out_text") }?;
        let text = memory.inner.workspace_index(session)?;
        *out_text = codeoid_string::from_string(text);
        Ok(())
    })
}
