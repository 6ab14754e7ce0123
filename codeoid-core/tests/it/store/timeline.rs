//! The timeline: newest first, offset/limit, and `before` walks that do not shift while
//! episodes arrive.

use std::collections::HashSet;

use codeoid_core::ErrorKind;
use codeoid_core::canonical::Turn;
use codeoid_core::store::{Store, TimelineQuery};

use super::{at, session, temp_store, workspace};

/// Records `n` prompt+answer exchanges in `session`, at seconds `start..start+n` (finished, so
/// each becomes a user_turn episode).
fn exchanges(store: &Store, session_id: &str, start: i64, n: i64) {
    let mut turns = Vec::new();
    for i in start..start + n {
        turns.push(at(
            Turn::user_text(format!("question {i}")),
            &format!("u{i}"),
            i,
        ));
        turns.push(at(
            Turn::assistant_text(format!("answer {i}")),
            &format!("a{i}"),
            i,
        ));
    }
    store.record_turns(session_id, &turns).unwrap();
    store.finish_session(session_id).unwrap();
}

#[test]
fn pages_are_newest_first_with_offset_and_limit() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    exchanges(&store, &s.id, 0, 10);
    let page = store
        .timeline(
            ws.id(),
            &TimelineQuery {
                offset: 2,
                limit: 3,
                before: None,
            },
        )
        .unwrap();
    let summaries: Vec<_> = page.episodes.iter().map(|h| h.summary.as_str()).collect();
    assert_eq!(summaries, ["question 7", "question 6", "question 5"]);
    let next = page.next.unwrap();
    assert_eq!(next.before.as_deref(), Some(page.episodes[2].id.as_str()));
    assert_eq!((next.offset, next.limit), (0, 3));
    let last = store
        .timeline(
            ws.id(),
            &TimelineQuery {
                offset: 8,
                limit: 5,
                before: None,
            },
        )
        .unwrap();
    assert_eq!(last.episodes.len(), 2);
    assert!(last.next.is_none());
    assert!(
        store
            .timeline(workspace("/empty").id(), &TimelineQuery::default())
            .unwrap()
            .episodes
            .is_empty()
    );
}

#[test]
fn ties_in_time_keep_insertion_order() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    // Three errors in one turn: same timestamp, inserted in part order.
    let turn = Turn::new(
        codeoid_core::canonical::Role::Assistant,
        (0..3)
            .map(|i| codeoid_core::canonical::Part::Error {
                message: format!("e{i}"),
            })
            .collect(),
    );
    store.record_turn(&s.id, &at(turn, "t", 5)).unwrap();
    let page = store.timeline(ws.id(), &TimelineQuery::default()).unwrap();
    let summaries: Vec<_> = page.episodes.iter().map(|h| h.summary.as_str()).collect();
    assert_eq!(summaries, ["e2", "e1", "e0"]);
}

#[test]
fn a_before_walk_visits_every_episode_once_while_new_ones_arrive() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    exchanges(&store, &s.id, 0, 50);
    let existing: HashSet<String> = store
        .session_episodes(&s.id)
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(existing.len(), 50);

    let mut seen = Vec::new();
    let mut query = TimelineQuery {
        offset: 0,
        limit: 7,
        before: None,
    };
    let mut arriving = 1000;
    loop {
        let page = store.timeline(ws.id(), &query).unwrap();
        seen.extend(page.episodes.iter().map(|h| h.id.clone()));
        // New episodes land between pages: the walk must not shift.
        exchanges(&store, &s.id, arriving, 2);
        arriving += 2;
        match page.next {
            Some(next) => query = next,
            None => break,
        }
    }
    let first_page_time = seen.len();
    let unique: HashSet<String> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), first_page_time, "no episode twice");
    assert_eq!(
        unique, existing,
        "exactly the episodes that existed when the walk began"
    );
}

#[test]
fn bad_pages_are_clear_errors() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let err = store
        .timeline(
            ws.id(),
            &TimelineQuery {
                offset: 0,
                limit: 0,
                before: None,
            },
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("limit 0"), "{err}");
    let err = store
        .timeline(
            ws.id(),
            &TimelineQuery {
                offset: 0,
                limit: 5,
                before: Some("ep_missing".into()),
            },
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.message().contains("ep_missing"));
}
