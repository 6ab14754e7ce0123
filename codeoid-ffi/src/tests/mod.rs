//! Tests of the C ABI, calling the exported functions exactly as C does: raw pointers, lengths,
//! out-structs, returned error objects. They live inside the crate (not in `tests/`) because the
//! panic test needs the test-only injection hook of [`crate::panic`], which is compiled into test
//! builds only.
//!
//! - `cancel`: the flag that stops a running command or an import from another thread.
//! - `contract`: NULLs, bad UTF-8, lying lengths, bad enum integers, JSON of the wrong shape,
//!   double frees, the error code table.
//! - `flow`: the whole path a harness takes, on a real SQLite file.
//! - `panics`: a panic in every fallible function comes back as `CODEOID_ERROR_PANIC`.
//! - `recall`: recall, the memory tools by name, the tool declarations and the embedding
//!   settings, lexically and (with `CODEOID_TEST_MODEL_DIR`) with the real model.
//! - `threads`: one handle used from many threads at once.

mod cancel;
mod contract;
mod flow;
mod panics;
mod recall;
mod threads;

use std::ffi::{CStr, c_char};

use tempfile::TempDir;

use crate::error::{codeoid_error, codeoid_error_code, codeoid_error_free, codeoid_error_message};
use crate::memory::{codeoid_memory, codeoid_memory_free, codeoid_memory_open};
use crate::strings::{codeoid_string, codeoid_string_free};

/// An error read back from C and freed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CError {
    pub(crate) code: u32,
    pub(crate) message: String,
}

/// Reads and frees the error a function returned: `Ok` for NULL.
pub(crate) fn check(error: *mut codeoid_error) -> Result<(), CError> {
    if error.is_null() {
        return Ok(());
    }
    // SAFETY: a non-NULL error returned by codeoid, freed right after reading.
    let out = unsafe {
        let code = codeoid_error_code(error);
        let message = CStr::from_ptr(codeoid_error_message(error))
            .to_str()
            .expect("error messages are UTF-8")
            .to_string();
        codeoid_error_free(error);
        CError { code, message }
    };
    Err(out)
}

/// The code of the error a function returned (0 for success).
pub(crate) fn code(error: *mut codeoid_error) -> u32 {
    check(error).err().map_or(0, |e| e.code)
}

/// `(ptr, len)` of a Rust string, as C passes text.
pub(crate) fn c(text: &str) -> (*const c_char, usize) {
    (text.as_ptr().cast(), text.len())
}

/// An out-string that frees itself.
pub(crate) struct Out(pub(crate) codeoid_string);

impl Out {
    pub(crate) fn new() -> Out {
        Out(codeoid_string::empty())
    }

    pub(crate) fn ptr(&mut self) -> *mut codeoid_string {
        &mut self.0
    }

    /// The content as text; panics when it is not UTF-8.
    pub(crate) fn text(&self) -> String {
        self.0.to_str().expect("UTF-8 output").to_string()
    }

    /// The content parsed as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.text()).expect("JSON output")
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        // SAFETY: the struct is empty or was filled by codeoid.
        unsafe { codeoid_string_free(&mut self.0) };
    }
}

/// A memory on a fresh SQLite file in a temporary directory, with its own workspace directory.
pub(crate) struct Fixture {
    pub(crate) dir: TempDir,
    pub(crate) memory: *mut codeoid_memory,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        Fixture::with_config(|_| {})
    }

    /// A fixture whose config JSON `edit` may change.
    pub(crate) fn with_config(edit: impl FnOnce(&mut serde_json::Value)) -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let workspace = dir.path().join("project");
        std::fs::create_dir_all(&workspace).expect("workspace dir");
        // No embedding model unless a test asks for one: recall is lexical and no worker thread
        // looks for (or downloads) a model.
        let mut config = serde_json::json!({
            "db_path": dir.path().join("codeoid.db"),
            "workspace_dir": workspace,
            "embeddings": {"enabled": false},
        });
        edit(&mut config);
        let config = config.to_string();
        let (ptr, len) = c(&config);
        let mut memory = std::ptr::null_mut();
        // SAFETY: valid text and out-pointer.
        check(unsafe { codeoid_memory_open(ptr, len, &mut memory) }).expect("open");
        assert!(!memory.is_null());
        Fixture { dir, memory }
    }

    /// The handle as a shared reference, usable from scoped threads.
    pub(crate) fn handle(&self) -> &codeoid_memory {
        // SAFETY: the handle lives until the fixture drops.
        unsafe { &*self.memory }
    }

    /// Starts a session with `id` and returns it.
    pub(crate) fn session(&self, id: &str) -> String {
        let options = serde_json::json!({"id": id, "name": format!("{id} name")}).to_string();
        let (ptr, len) = c(&options);
        let mut out = Out::new();
        // SAFETY: valid handle, text and out-struct.
        check(unsafe {
            crate::sessions::codeoid_memory_start_session(self.memory, ptr, len, out.ptr())
        })
        .expect("start session");
        out.json()["id"].as_str().expect("id").to_string()
    }

    /// Records `turn` in `session` and returns the outcome JSON.
    pub(crate) fn record(&self, session: &str, turn: &serde_json::Value) -> serde_json::Value {
        record_on(self.handle(), session, turn)
    }
}

/// Records `turn` in `session` through the C function.
pub(crate) fn record_on(
    memory: &codeoid_memory,
    session: &str,
    turn: &serde_json::Value,
) -> serde_json::Value {
    let turn = turn.to_string();
    let (sp, sl) = c(session);
    let (tp, tl) = c(&turn);
    let mut out = Out::new();
    // SAFETY: valid handle, text and out-struct.
    check(unsafe {
        crate::sessions::codeoid_memory_record_turn(memory, sp, sl, tp, tl, out.ptr())
    })
    .expect("record turn");
    out.json()
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // SAFETY: the handle came from codeoid_memory_open and is freed once.
        unsafe { codeoid_memory_free(self.memory) };
    }
}

/// A realistic exchange: a prompt, an assistant turn that reads a file, the tool result, and a
/// final answer. `n` makes ids and text unique.
pub(crate) fn exchange(n: usize, input_tokens: u64) -> Vec<serde_json::Value> {
    use serde_json::json;
    vec![
        json!({
            "id": format!("u{n}"),
            "role": "user",
            "parts": [{"type": "text", "text": format!("Why does the migration test {n} fail in store/schema.rs?")}],
        }),
        json!({
            "id": format!("a{n}"),
            "role": "assistant",
            "parts": [
                {"type": "text", "text": "Let me read the schema module first."},
                {"type": "tool_call", "id": format!("toolu_{n}"), "name": "Read",
                 "input": {"file_path": "codeoid-core/src/store/schema.rs"}},
            ],
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {"calls": [{"input_tokens": input_tokens, "output_tokens": 120}]},
        }),
        json!({
            "id": format!("r{n}"),
            "role": "user",
            "parts": [{"type": "tool_result", "call_id": format!("toolu_{n}"),
                       "parts": [{"type": "text", "text": format!("pub const SCHEMA_VERSION: u32 = {n};\nfn migrate_v{n}() {{}}")}]}],
        }),
        json!({
            "id": format!("f{n}"),
            "role": "assistant",
            "parts": [{"type": "text", "text": format!("The migration for version {n} never runs: user_version is set first.")}],
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {"calls": [{"input_tokens": input_tokens + 500, "output_tokens": 60}]},
        }),
    ]
}
