//! Integration tests of the episode store on real files: recording, reading, the timeline and its
//! text, lexical search, workspaces, faults and bad input. Shared helpers live here; each concept
//! has its own submodule.

mod aggregates;
mod canonical_doc;
mod faults;
mod lexical;
mod live_context;
mod merge;
mod read_only;
mod real_logs;
mod record;
mod render;
mod rotation_count;
mod sync;
mod timeline;
mod workspace;

use crate::support::evaldata;
use chrono::{DateTime, TimeZone, Utc};
use codeoid_core::canonical::{
    CallUsage, Part, Role, ToolCall, ToolResult, ToolResultPart, Turn, Usage,
};
use codeoid_core::store::{NewSession, Session, Store, StoreOptions, Workspace, WorkspaceSource};
use serde_json::Value;

/// A store in a fresh temporary directory, and the directory (keep it alive).
pub fn temp_store() -> (tempfile::TempDir, Store) {
    temp_store_with(StoreOptions::default())
}

/// [`temp_store`] with options.
pub fn temp_store_with(options: StoreOptions) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_with(dir.path().join("codeoid.db"), options).unwrap();
    (dir, store)
}

/// A directory-identified workspace rooted at `root` (need not exist).
pub fn workspace(root: &str) -> Workspace {
    Workspace::from_parts("", root, root, WorkspaceSource::Directory)
}

/// A new session named `name` in `ws`, created at `at` seconds after a fixed epoch.
pub fn session(store: &Store, ws: &Workspace, name: &str, at: i64) -> Session {
    store
        .create_session(
            ws,
            NewSession {
                name: Some(name.to_owned()),
                created_at: Some(time(at)),
                ..NewSession::default()
            },
        )
        .unwrap()
}

/// A fixed instant plus `seconds`.
pub fn time(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_760_000_000 + seconds, 0).unwrap()
}

/// `turn` with an id and a timestamp.
pub fn at(mut turn: Turn, id: &str, seconds: i64) -> Turn {
    turn.id = Some(id.to_owned());
    turn.timestamp = Some(time(seconds));
    turn
}

/// An assistant turn with one tool call.
pub fn call(id: &str, name: &str, input: Value) -> Turn {
    Turn::new(
        Role::Assistant,
        vec![Part::ToolCall(ToolCall {
            id: id.to_owned(),
            provider_id: None,
            name: name.to_owned(),
            input,
        })],
    )
}

/// A user turn with one text tool result.
pub fn result(id: &str, text: &str, is_error: bool) -> Turn {
    Turn::new(
        Role::User,
        vec![Part::ToolResult(ToolResult {
            call_id: id.to_owned(),
            parts: vec![ToolResultPart::Text {
                text: text.to_owned(),
            }],
            is_error,
        })],
    )
}

/// Usage of one call.
pub fn usage(input: u64, output: u64, primary: bool) -> Usage {
    Usage {
        calls: vec![CallUsage {
            input_tokens: input,
            output_tokens: output,
            primary,
            ..CallUsage::default()
        }],
    }
}

/// Makes a file or folder unwritable for this process (permissions, or the immutable attribute
/// when running as root, which ignores permissions). Undone on drop. `None` when neither works
/// here.
pub struct Unwritable {
    path: std::path::PathBuf,
    mode: u32,
    immutable: bool,
}

impl Unwritable {
    pub fn new(path: &std::path::Path) -> Option<Unwritable> {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        let read_only = if path.is_dir() { 0o555 } else { 0o444 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(read_only)).unwrap();
        let mut guard = Unwritable {
            path: path.to_path_buf(),
            mode,
            immutable: false,
        };
        if guard.writable() {
            let ok = std::process::Command::new("chattr")
                .arg("+i")
                .arg(path)
                .status()
                .is_ok_and(|s| s.success());
            guard.immutable = ok;
            if !ok || guard.writable() {
                return None;
            }
        }
        Some(guard)
    }

    fn writable(&self) -> bool {
        if self.path.is_dir() {
            let probe = self.path.join(".probe");
            let ok = std::fs::write(&probe, b"x").is_ok();
            let _ = std::fs::remove_file(&probe);
            ok
        } else {
            std::fs::OpenOptions::new()
                .append(true)
                .open(&self.path)
                .is_ok()
        }
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.immutable {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.path)
                .status();
        }
        let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(self.mode));
    }
}
