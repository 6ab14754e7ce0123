//! The model-facing text of timeline and get_episode (DESIGN §3), pinned byte for byte.

use codeoid_core::ErrorKind;
use codeoid_core::canonical::Turn;
use codeoid_core::store::{RawOutput, TimelineQuery};
use serde_json::json;

use super::{at, call, result, session, temp_store, workspace};

#[test]
fn timeline_text_labels_sessions_and_ends_with_the_next_page() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let first = session(&store, &ws, "first", 0);
    let second = session(&store, &ws, "second", 100);
    store
        .record_turns(
            &first.id,
            &[
                at(Turn::user_text("set up   CI"), "u", 10),
                at(Turn::assistant_text("Done."), "a", 11),
            ],
        )
        .unwrap();
    store.finish_session(&first.id).unwrap();
    store
        .record_turns(
            &second.id,
            &[
                at(Turn::user_text("run tests"), "u", 200),
                at(
                    call("c", "Bash", json!({"command": "cargo test"})),
                    "a",
                    201,
                ),
                at(result("c", "ok", false), "r", 202),
            ],
        )
        .unwrap();
    let ids: Vec<String> = store
        .timeline(ws.id(), &TimelineQuery::default())
        .unwrap()
        .episodes
        .into_iter()
        .map(|h| h.id)
        .collect();

    let text = store
        .timeline_text(
            ws.id(),
            Some(&second.id),
            &TimelineQuery {
                offset: 0,
                limit: 1,
                before: None,
            },
        )
        .unwrap();
    assert_eq!(
        text,
        format!(
            "- [2025-10-09T08:56:42Z] [current session] tool_call: Bash(cargo test)  (episode_id: {})\n\
             \nnext page: timeline {{\"before\":\"{}\",\"limit\":1}}\n",
            ids[0], ids[0]
        )
    );
    let text = store
        .timeline_text(
            ws.id(),
            Some(&second.id),
            &TimelineQuery {
                offset: 0,
                limit: 1,
                before: Some(ids[0].clone()),
            },
        )
        .unwrap();
    assert_eq!(
        text,
        format!(
            "- [2025-10-09T08:53:31Z] [prior session #1] user_turn: set up CI  (episode_id: {})\n\
             \n(end of timeline)\n",
            ids[1]
        )
    );
    // Another caller sees the second session as prior too; no caller labels everything prior.
    let text = store
        .timeline_text(ws.id(), None, &TimelineQuery::default())
        .unwrap();
    assert!(text.contains("[prior session #2] tool_call"), "{text}");
    assert!(
        !text.contains(&second.id),
        "raw session ids are never shown"
    );
    assert_eq!(
        store
            .timeline_text(workspace("/none").id(), None, &TimelineQuery::default())
            .unwrap(),
        "(no episodes in this workspace yet)\n"
    );
}

#[test]
fn episode_text_has_a_header_then_the_exact_content() {
    let (_dir, store) = temp_store();
    let ws = workspace("/w");
    let s = session(&store, &ws, "s", 0);
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("read it"), "u", 1),
                at(call("c", "Read", json!({"file_path": "/w/a.rs"})), "a", 2),
                at(result("c", "no such file", true), "r", 3),
            ],
        )
        .unwrap();
    let id = store.session_episodes(&s.id).unwrap().remove(0).id;
    let stored = store.episode(ws.id(), &id).unwrap();
    let text = store.episode_text(ws.id(), Some(&s.id), &id).unwrap();
    assert_eq!(
        text,
        format!(
            "### Read(/w/a.rs) — current session\n- when: 2025-10-09T08:53:23Z\n- kind: tool_call (Read)\n\
             - status: failed\n- episode_id: {id}\n\n{}",
            stored.content
        )
    );
    let raw = store
        .record_raw_output(&s.id, &RawOutput::new("ls", b"a\n", b"", Some(0)))
        .unwrap();
    let text = store.episode_text(ws.id(), None, &raw).unwrap();
    assert!(text.contains("— prior session #1\n"), "{text}");
    assert!(text.contains("\n- raw stdout: blob_"), "{text}");
    let err = store
        .episode_text(workspace("/x").id(), None, &id)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}
