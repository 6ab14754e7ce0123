//! FTS5 segments are merged while the writer is idle, so that commits do not merge them.

use std::time::{Duration, Instant};

use codeoid_core::canonical::Turn;

use super::{session, temp_store, workspace};

fn segments(path: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(
        "SELECT count(DISTINCT segid) FROM episodes_fts_idx",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn segments_left_by_one_turn_commits_are_merged_once_the_writer_is_idle() {
    let (_dir, store) = temp_store();
    let path = store.path().unwrap().to_path_buf();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    // Thirty commits; each but the first closes the previous prompt's episode, a segment each.
    // FTS5 alone merges level 0 only once it holds 16 segments (or in 64-leaf quanta), which
    // leaves 14 here.
    for i in 0..30 {
        store
            .record_turn(
                &s.id,
                &Turn::user_text(format!("prompt {i} about parser{i}")),
            )
            .unwrap();
    }
    let waited = Instant::now();
    let mut left = segments(&path);
    while left > 6 && waited.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
        left = segments(&path);
    }
    // Idle merging leaves fewer than 4 segments (`usermerge`) on each of at most two levels.
    assert!(left <= 6, "{left} segments after {:?}", waited.elapsed());
    let hits = store
        .lexical_search(ws.id(), "parser17", &Default::default(), 10)
        .unwrap();
    assert_eq!(hits.len(), 1);
    // Writes go on while and after it merges.
    store
        .record_turn(&s.id, &Turn::user_text("one more prompt"))
        .unwrap();
    store.integrity_check().unwrap();
}
