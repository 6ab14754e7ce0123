//! Real sessions for the retrieval benchmarks: every Claude Code log under
//! `../shared/evaldata/claude-code-sessions`, read with codeoid's importer, and helpers to
//! record copies of them into a store (a large workspace with real contents), to find the test
//! model, and to read the process's memory use.

use std::path::{Path, PathBuf};

use codeoid_core::import::{self, ImportedSession};
use codeoid_core::store::{NewSession, Store, Workspace, WorkspaceSource};

/// `<workspace root>/../shared/evaldata`.
pub fn evaldata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/evaldata")
}

/// Every Claude Code session (subagents included) in evaldata, in a stable order.
///
/// # Panics
/// When evaldata cannot be read: the benchmarks need it.
pub fn claude_sessions() -> Vec<ImportedSession> {
    let root = evaldata().join("claude-code-sessions");
    let mut sessions = import::read_path(&root)
        .unwrap_or_else(|e| panic!("cannot import {}: {}", root.display(), e.full_message()))
        .sessions;
    sessions.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    sessions
}

/// The one workspace the benchmarks record into.
pub fn workspace() -> Workspace {
    Workspace::from_parts(
        "",
        "/bench/project",
        "/bench/project",
        WorkspaceSource::Directory,
    )
}

/// Records copy number `copy` of `sessions` (fresh session ids, the same turns) into `store`,
/// finishing each session. Returns the new session ids, in `sessions` order.
///
/// # Panics
/// When the store refuses the turns.
pub fn record_copy(store: &Store, sessions: &[ImportedSession], copy: usize) -> Vec<String> {
    let ws = workspace();
    sessions
        .iter()
        .map(|session| {
            let id = format!("copy{copy}:{}", session.session_id);
            let refused = |e: codeoid_core::Error| -> ! {
                panic!("the store refused session {id}: {}", e.full_message())
            };
            store
                .create_session(
                    &ws,
                    NewSession {
                        id: Some(id.clone()),
                        created_at: session.started_at,
                        ..NewSession::default()
                    },
                )
                .unwrap_or_else(|e| refused(e));
            store
                .record_turns(&id, &session.turns)
                .unwrap_or_else(|e| refused(e));
            store.finish_session(&id).unwrap_or_else(|e| refused(e));
            id
        })
        .collect()
}

/// The test model directory from `CODEOID_TEST_MODEL_DIR`.
///
/// # Panics
/// When the variable is not set.
pub fn model_dir() -> PathBuf {
    std::env::var_os("CODEOID_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "CODEOID_TEST_MODEL_DIR is not set; run with \
                 CODEOID_TEST_MODEL_DIR=$(./scripts/fetch-test-model.sh)"
            )
        })
}

/// `(VmRSS, VmHWM)` of this process in KiB, from `/proc/self/status` (zeros elsewhere).
pub fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The `p`-th percentile (0..=100) of `samples` (sorted in place).
pub fn percentile(samples: &mut [std::time::Duration], p: f64) -> std::time::Duration {
    if samples.is_empty() {
        return std::time::Duration::ZERO;
    }
    samples.sort();
    let rank = ((p / 100.0) * (samples.len() - 1) as f64).round() as usize;
    samples[rank.min(samples.len() - 1)]
}
