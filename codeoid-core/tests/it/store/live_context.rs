//! Where a rotated session's live context starts (what recall leaves out of the calling
//! session): looked up through indexes, it is the key a count over all of the session's episodes
//! gives, at every turn of real sessions rotated at many points, raw outputs among them.

use codeoid_core::import;
use codeoid_core::store::{NewSession, RawOutput};
use rusqlite::{OptionalExtension, params};

use super::{temp_store, workspace};
use crate::support::evaldata;

#[test]
fn the_live_context_starts_where_a_count_over_the_whole_session_says() {
    let root = evaldata().join("claude-code-sessions/spotter");
    let sessions = import::read_path(&root).unwrap().sessions;
    let (_dir, store) = temp_store();
    let conn = rusqlite::Connection::open(store.path().unwrap()).unwrap();
    // The definition, read the long way: the first episode of the session at or after the turn
    // its current context began, or one past every key.
    let whole_session = |id: &str| -> Option<i64> {
        let (rotations, from): (i64, i64) = conn
            .query_row(
                "SELECT rotation_count, coalesce(context_started_turn, rotated_at_turn)
                 FROM sessions WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        (rotations > 0).then(|| {
            conn.query_row(
                "SELECT coalesce(
                     (SELECT min(pk) FROM episodes NOT INDEXED
                      WHERE session_id = ?1 AND turn_seq >= ?2),
                     (SELECT coalesce(max(pk), 0) + 1 FROM episodes))",
                params![id, from],
                |r| r.get(0),
            )
            .unwrap()
        })
    };
    let ws = workspace("/w");
    let mut checked = 0;
    for imported in &sessions {
        let s = store
            .create_session(
                &ws,
                NewSession {
                    id: Some(imported.session_id.clone()),
                    ..NewSession::default()
                },
            )
            .unwrap();
        for (i, turn) in imported.turns.iter().enumerate() {
            store.record_turn(&s.id, turn).unwrap();
            if i % 7 == 3 {
                store.rotate_session(&s.id, None, None, None).unwrap();
            }
            if i % 7 == 5 {
                store.take_pending_seed(&s.id).unwrap();
            }
            if i % 11 == 0 {
                let output = RawOutput::new("ls", b"src\n", b"", Some(0));
                store.record_raw_output(&s.id, &output).unwrap();
            }
            let found = store.live_context_start(&s.id).unwrap();
            assert_eq!(found, whole_session(&s.id), "{} after turn {i}", s.id);
            checked += usize::from(found.is_some());
        }
        store.finish_session(&s.id).unwrap();
        assert_eq!(
            store.live_context_start(&s.id).unwrap(),
            whole_session(&s.id)
        );
    }
    assert!(checked > 300, "{checked} rotated positions checked");
    // What the lookup relies on: no episode the chunker emitted is older than its own turn.
    let backwards: Option<String> = conn
        .query_row(
            "SELECT id FROM episodes WHERE origin_seq < turn_seq LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()
        .unwrap();
    assert_eq!(backwards, None);
}
