//! The quality store: every real session recorded once under `target/bench-data`, embedded by
//! the worker with the test model, and the retrievers asked of it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use codeoid_benches::real_sessions::{model_dir, record_copy, workspace};
use codeoid_core::import::ImportedSession;
use codeoid_core::retrieve::{EmbeddingConfig, ModelChoice, RetrievalConfig, Retriever, Weights};
use codeoid_core::store::{DEFAULT_LEXICAL_BUDGET, Store};

/// Bumped when the way the store is built changes (v2: vectors stored as f16; v3: harness-injected
/// turns are context episodes, tool calls anchored on their turn; v4: task notifications are
/// context too, and a long path's summary keeps its end; v5: tool calls indexed by their words,
/// JSON escapes decoded and line-number gutters left out; v6: shell commands that show a file are
/// reads of it, and memory-tool calls name no path; v7: a repeated intent indexed by its head).
const STORE_VERSION: &str = "v7";

fn store_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/bench-data")
        .join(format!("quality-{STORE_VERSION}"))
}

pub(crate) fn retriever(store: &Arc<Store>, weights: Weights, lexical_budget: usize) -> Retriever {
    Retriever::new(
        Arc::clone(store),
        workspace(),
        RetrievalConfig {
            weights,
            lexical_budget,
            ..RetrievalConfig::default()
        },
        EmbeddingConfig {
            model: ModelChoice::Dir(model_dir()),
            ..EmbeddingConfig::default()
        },
    )
    .unwrap()
}

/// The store with every session once, embedded by the worker. Returns it and the session ids.
pub(crate) fn build(sessions: &[ImportedSession]) -> (Arc<Store>, Vec<String>) {
    let dir = store_dir();
    let db = dir.join("codeoid.db");
    let marker = dir.join("complete");
    let ids: Vec<String> = sessions
        .iter()
        .map(|s| format!("copy0:{}", s.session_id))
        .collect();
    if marker.is_file() {
        return (Arc::new(Store::open(&db).unwrap()), ids);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let started = Instant::now();
    let store = Arc::new(Store::open(&db).unwrap());
    assert_eq!(record_copy(&store, sessions, 0), ids);
    let r = retriever(&store, Weights::default(), DEFAULT_LEXICAL_BUDGET);
    r.flush().unwrap();
    let status = r.status();
    let stats = store.workspace_stats(workspace().id()).unwrap();
    assert_eq!(
        status.indexed_episodes as u64 + status.failed_episodes,
        stats.episodes,
        "every episode embedded: {status:?}"
    );
    println!(
        "built the quality store: {} episodes, {} windows, in {:.1?}",
        stats.episodes,
        status.indexed_windows,
        started.elapsed()
    );
    std::fs::write(&marker, stats.episodes.to_string()).unwrap();
    (store, ids)
}
