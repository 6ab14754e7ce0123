//! The count of assistant turns since a session's last rotation, which the rotation policy reads
//! after every assistant turn: it equals the count of the stored turns through every path that
//! adds or removes turns (one at a time, batched, a tail replacement across the rotation point, a
//! fork), and a rotation resets it.

use codeoid_core::canonical::{Role, Turn};
use codeoid_core::store::{NewFork, Store};
use serde_json::json;

use super::{at, call, result, session, temp_store, workspace};

/// Exchange `i`: a prompt, a tool call, its result and an answer (two assistant turns), with ids
/// `tag`-`i`-….
fn exchange(tag: &str, i: usize) -> Vec<Turn> {
    let id = |part: &str| format!("{tag}-{i}-{part}");
    let seconds = (i * 4) as i64;
    let call_id = id("call");
    vec![
        at(
            Turn::user_text(format!("task {tag} {i}")),
            &id("u"),
            seconds,
        ),
        at(
            call(
                &call_id,
                "Read",
                json!({"file_path": format!("src/{i}.rs")}),
            ),
            &id("a"),
            seconds + 1,
        ),
        at(
            result(&call_id, "fn main() {}", false),
            &id("r"),
            seconds + 2,
        ),
        at(
            Turn::assistant_text(format!("done {i}")),
            &id("f"),
            seconds + 3,
        ),
    ]
}

/// What the store holds as the count: assistant turns at or after `from` among the session's
/// stored turns, counted from the turns read back.
fn counted(store: &Store, session_id: &str, from: u64) -> u64 {
    store
        .turns(session_id, from..)
        .unwrap()
        .iter()
        .filter(|t| t.turn.role == Role::Assistant)
        .count() as u64
}

fn since_rotation(store: &Store, session_id: &str) -> u64 {
    store
        .rotation_bookkeeping(session_id)
        .unwrap()
        .assistant_turns_since_rotation
}

#[test]
fn the_count_follows_every_path_that_adds_or_removes_turns() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    assert_eq!(since_rotation(&store, &s.id), 0);

    // One turn at a time, then a batch.
    for turn in exchange("one", 0) {
        store.record_turn(&s.id, &turn).unwrap();
    }
    assert_eq!(since_rotation(&store, &s.id), 2);
    let batch: Vec<Turn> = (1..4).flat_map(|i| exchange("batch", i)).collect();
    store.record_turns(&s.id, &batch).unwrap();
    assert_eq!(since_rotation(&store, &s.id), 8);
    // A duplicate turn adds nothing.
    store.record_turn(&s.id, &batch[1]).unwrap();
    assert_eq!(since_rotation(&store, &s.id), 8);

    // A rotation resets it; what follows counts from there.
    let rotated_at = store.session(&s.id).unwrap().turn_count;
    store
        .rotate_session(&s.id, Some("ctx-1"), None, None)
        .unwrap();
    assert_eq!(since_rotation(&store, &s.id), 0);
    store.record_turns(&s.id, &exchange("after", 4)).unwrap();
    assert_eq!(since_rotation(&store, &s.id), 2);
    assert_eq!(
        since_rotation(&store, &s.id),
        counted(&store, &s.id, rotated_at)
    );

    // A tail replacement from before the rotation point: the turns it removes on both sides of
    // the rotation leave the count, the ones it writes after the point join it.
    let stored = store.turns(&s.id, ..).unwrap();
    let keep = (rotated_at - 2) as usize;
    let mut log: Vec<Turn> = stored[..keep].iter().map(|t| t.turn.clone()).collect();
    log.extend((5..8).flat_map(|i| exchange("rewritten", i)));
    let synced = store.sync_turns(&s.id, 0, &log, false).unwrap();
    assert_eq!(synced.removed, 6);
    assert_eq!(
        since_rotation(&store, &s.id),
        counted(&store, &s.id, rotated_at)
    );
    assert_eq!(since_rotation(&store, &s.id), 5);

    // A fork has not rotated: every assistant turn it copies counts.
    let fork = store
        .fork_session(
            &s.id,
            &NewFork {
                name: "fork".into(),
                at_turn: Some(9),
                ..NewFork::default()
            },
        )
        .unwrap();
    assert_eq!(since_rotation(&store, &fork.session.id), 5);
    assert_eq!(
        since_rotation(&store, &fork.session.id),
        counted(&store, &fork.session.id, 0)
    );
    // The parent's count is its own.
    assert_eq!(since_rotation(&store, &s.id), 5);
}

#[test]
fn the_count_survives_reopening_and_a_second_rotation() {
    let (dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    store.record_turns(&s.id, &exchange("x", 0)).unwrap();
    store.rotate_session(&s.id, None, None, None).unwrap();
    store.record_turns(&s.id, &exchange("x", 1)).unwrap();
    store.record_turns(&s.id, &exchange("x", 2)).unwrap();
    drop(store);

    let store = Store::open(dir.path().join("codeoid.db")).unwrap();
    assert_eq!(since_rotation(&store, &s.id), 4);
    let book = store.rotation_bookkeeping(&s.id).unwrap();
    assert_eq!(book.rotation_count, 1);
    store.rotate_session(&s.id, None, None, None).unwrap();
    assert_eq!(since_rotation(&store, &s.id), 0);
    store.record_turn(&s.id, &exchange("x", 3)[1]).unwrap();
    assert_eq!(since_rotation(&store, &s.id), 1);
}
