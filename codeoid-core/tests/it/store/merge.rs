//! FTS5 segments are merged while the writer is idle, so that commits do not merge them.

use std::time::{Duration, Instant};

use codeoid_core::canonical::Turn;

use super::{session, temp_store, workspace};
use crate::support::fts_segments;

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
    let mut left = fts_segments(&path);
    while left > 6 && waited.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
        left = fts_segments(&path);
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

#[test]
fn a_batch_of_turns_with_usage_writes_its_index_once_at_commit() {
    use codeoid_core::canonical::{CallUsage, Usage};
    let (_dir, store) = temp_store();
    let path = store.path().unwrap().to_path_buf();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    // Every assistant turn of a real log carries usage. A statement that needs a statement
    // journal (`INSERT OR REPLACE` into a table with a foreign key did) makes SQLite open a
    // savepoint, and FTS5 writes its pending terms out as a segment at every savepoint: a
    // segment per turn, and merges on the write path, where one per transaction is enough.
    let mut turns = vec![Turn::user_text("index the parser")];
    for i in 0..6 {
        let mut asked = super::call(
            &format!("c{i}"),
            "Bash",
            serde_json::json!({"command": "ls"}),
        );
        asked.usage = Some(Usage {
            calls: vec![CallUsage {
                input_tokens: 100 + i,
                output_tokens: 10,
                ..CallUsage::default()
            }],
        });
        turns.push(asked);
        turns.push(super::result(
            &format!("c{i}"),
            &format!("parser{i}.rs"),
            false,
        ));
    }
    store.record_turns(&s.id, &turns).unwrap();
    assert_eq!(fts_segments(&path), 1, "one segment for one transaction");
    assert_eq!(store.usage(&s.id, ..).unwrap().len(), 6);
    let hits = store
        .lexical_search(ws.id(), "parser3", &Default::default(), 10)
        .unwrap();
    assert_eq!(hits.len(), 1);
}

#[test]
fn no_write_makes_fts5_write_more_than_one_segment() {
    use codeoid_core::canonical::{CallUsage, Usage};
    use codeoid_core::store::{NewFork, RawOutput};
    let (_dir, store) = temp_store();
    let path = store.path().unwrap().to_path_buf();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    // Each write below is one transaction that writes FTS rows (several, for most); a statement
    // in it that opened a savepoint would flush the pending rows into a segment of their own.
    // Idle merging only ever lowers the count between writes.
    let check = |what: &str, write: &dyn Fn()| {
        let before = fts_segments(&path);
        write();
        let after = fts_segments(&path);
        assert!(after <= before + 1, "{what}: {before} → {after} segments");
    };
    let exchange = |n: usize| {
        let mut turns = vec![Turn::user_text(format!("step {n}: build the lexer{n}"))];
        for i in 0..3 {
            let id = format!("c{n}_{i}");
            let mut asked = super::call(&id, "Bash", serde_json::json!({"command": "make"}));
            asked.usage = Some(Usage {
                calls: vec![CallUsage::default()],
            });
            turns.push(asked);
            turns.push(super::result(&id, &format!("lexer{n}_{i}.rs built"), false));
        }
        turns
    };
    check("record_turns", &|| {
        store.record_turns(&s.id, &exchange(0)).unwrap();
    });
    check("record_turn", &|| {
        store
            .record_turn(&s.id, &Turn::user_text("and then?"))
            .unwrap();
    });
    check("record_raw_output", &|| {
        let raw = RawOutput::new("make", b"lexer built\n", b"warning: x\n", Some(0));
        store.record_raw_output(&s.id, &raw).unwrap();
    });
    check("rotate_session", &|| {
        store
            .rotate_session(&s.id, Some("ctx-2"), None, None)
            .unwrap();
    });
    check("sync_turns replacing the tail", &|| {
        let count = store.session(&s.id).unwrap().turn_count;
        let mut tail = exchange(1);
        tail.truncate(3);
        store.sync_turns(&s.id, count - 3, &tail, true).unwrap();
    });
    check("record_turns after a rotation", &|| {
        store.record_turns(&s.id, &exchange(2)).unwrap();
    });
    check("finish_session", &|| {
        store.finish_session(&s.id).unwrap();
    });
    check("fork_session", &|| {
        let fork = NewFork {
            name: "try another way".to_owned(),
            ..NewFork::default()
        };
        store.fork_session(&s.id, &fork).unwrap();
    });
    store.integrity_check().unwrap();
}
