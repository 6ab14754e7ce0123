//! Store-side helpers shared by the store benches: the bench workspace, the episodes a batch
//! made, and waiting for the store's idle FTS merges to settle.

use std::time::{Duration, Instant};

use codeoid_core::store::{Store, Workspace, WorkspaceSource};

pub(crate) fn workspace() -> Workspace {
    Workspace::from_parts("", "/bench/repo", "/bench/repo", WorkspaceSource::Directory)
}

pub(crate) fn episodes_of(outcomes: &[codeoid_core::store::Recorded]) -> usize {
    outcomes.iter().map(|r| r.episode_ids.len()).sum()
}

/// Waits until the store's idle FTS merging (which starts after the last write) has stopped
/// changing the index, so that what is measured next does not share the machine with it: FTS5's
/// structure record, which every merge step rewrites, stays the same for half a second.
pub(crate) fn settle(store: &Store) {
    let path = store.path().expect("a store file");
    let conn = rusqlite::Connection::open(path).expect("store opens");
    let structure = || -> Vec<u8> {
        conn.query_row(
            "SELECT block FROM episodes_fts_data WHERE id = 10",
            [],
            |r| r.get(0),
        )
        .expect("the FTS structure record")
    };
    let started = Instant::now();
    let (mut last, mut since) = (structure(), Instant::now());
    while since.elapsed() < Duration::from_millis(500) {
        std::thread::sleep(Duration::from_millis(50));
        let now = structure();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
    let segments: i64 = conn
        .query_row(
            "SELECT count(DISTINCT segid) FROM episodes_fts_idx",
            [],
            |r| r.get(0),
        )
        .expect("segments");
    println!(
        "store: FTS merges settled at {segments} segments in {:.1?}",
        started.elapsed()
    );
}
