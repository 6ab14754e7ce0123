//! Shell-output compression, end to end: golden fixtures of real command output, facts, failures
//! in the middle of build logs, edge cases, the runner, the Claude Code hook, and a replay of
//! recorded Claude Code sessions.

mod build_logs;
mod edge_cases;
mod golden;
mod hook;
mod properties;
mod runner;
mod session;

use std::path::PathBuf;

/// The workspace root: the parent of `codeoid-core`.
pub(crate) fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap()
}

/// `fixtures/compress` in the workspace.
pub(crate) fn fixtures_dir() -> PathBuf {
    workspace_root().join("fixtures").join("compress")
}
