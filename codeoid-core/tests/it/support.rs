//! What many test modules share: where the real session logs are, the tool calls and results
//! of a list of turns, and how many FTS5 segments a store file holds.

use std::path::{Path, PathBuf};

use codeoid_core::canonical::{Part, ToolCall, ToolResult, Turn};

/// `../shared/evaldata` beside the checkout: real, MIT-licensed agent logs, read in place.
pub fn evaldata() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/evaldata");
    dir.canonicalize().unwrap_or(dir)
}

/// How many FTS5 index segments the store file at `path` holds.
pub fn fts_segments(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(
        "SELECT count(DISTINCT segid) FROM episodes_fts_idx",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// Every tool call of `turns`, in order.
pub fn tool_calls(turns: &[Turn]) -> Vec<&ToolCall> {
    turns
        .iter()
        .flat_map(|t| &t.parts)
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// Every tool result of `turns`, in order.
pub fn tool_results(turns: &[Turn]) -> Vec<&ToolResult> {
    turns
        .iter()
        .flat_map(|t| &t.parts)
        .filter_map(|p| match p {
            Part::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect()
}
