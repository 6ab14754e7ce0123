//! Fork on a real store file: a real Claude Code session imported, forked at its tip and at a
//! turn, on the same backend and for OpenAI Chat, OpenAI Responses and Gemini; after a rotation;
//! a fork of a fork. The parent is hashed row for row (session, turns, usage, episodes with
//! content, paths, FTS tokens, blobs, vectors) before and after every fork.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use codeoid_core::ErrorKind;
use codeoid_core::canonical::{EpisodeKind, EpisodeStatus, Part, Signature, Thinking, Turn};
use codeoid_core::fork::{self, ForkOptions, HandoffOptions, describe_lineage, lineage_chain};
use codeoid_core::import::{self, ImportOptions};
use codeoid_core::store::{LineageKind, NewSession, Store, TimelineQuery, Workspace};
use codeoid_core::translate::{self, Backend, Format, LossKind, Options};
use serde_json::json;

use crate::store::{at, call, result, usage};
use crate::store_rows::{Scope, assert_same, dump};

/// The largest spotter session: 280 turns, 150 tool calls, thinking signed by Anthropic.
const SESSION: &str = "4d5611e5-241a-462a-8d15-5122611a9569";

fn log() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/evaldata/claude-code-sessions/spotter")
        .join(format!("{SESSION}.jsonl"))
}

/// A real store file holding the real session, with vectors on some of its episodes so the
/// parent check covers that table too.
fn imported() -> (tempfile::TempDir, PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("codeoid.db");
    let store = Store::open(&db).unwrap();
    let summary =
        import::import_into(&store, &log(), &ImportOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(summary.sessions_new, 1);
    let vectors: Vec<(String, Vec<Vec<f32>>)> = store
        .session_episodes(SESSION)
        .unwrap()
        .iter()
        .take(5)
        .map(|h| (h.id.clone(), vec![vec![0.25, -0.5, 1.0]]))
        .collect();
    store.put_vectors("test-model", &vectors).unwrap();
    (dir, db, store)
}

fn parent_rows(db: &Path) -> Vec<String> {
    let rows = dump(db, &Scope::Sessions(&[SESSION]));
    for table in [
        "sessions:",
        "turns:",
        "usage_calls:",
        "episodes:",
        "episodes_fts:",
        "vectors:",
    ] {
        assert!(rows.iter().any(|r| r.starts_with(table)), "no {table} rows");
    }
    rows
}

fn turns_of(store: &Store, id: &str) -> Vec<Turn> {
    store
        .turns(id, ..)
        .unwrap()
        .into_iter()
        .map(|t| t.turn)
        .collect()
}

#[test]
fn a_fork_copies_the_conversation_and_leaves_the_parent_untouched() {
    let (_dir, db, store) = imported();
    // The session was rotated twice: rotation never erases turns, so forks still copy them all.
    store.record_rotation(SESSION, Some("ctx-2"), None).unwrap();
    store.record_rotation(SESSION, Some("ctx-3"), None).unwrap();
    let before = parent_rows(&db);
    let parent = store.session(SESSION).unwrap();
    assert_eq!(parent.rotation_count, 2);
    let parent_turns = turns_of(&store, SESSION);
    assert_eq!(parent_turns.len(), 280);

    let tip = fork::fork(&store, SESSION, None, None, "try another fix").unwrap();
    let mid = fork::fork(&store, SESSION, Some(120), None, "from turn 120").unwrap();
    assert_same(&parent_rows(&db), &before, "parent after two forks");

    assert_eq!(tip.copied_turns, 280);
    assert_eq!(turns_of(&store, &tip.session.id), parent_turns);
    assert_eq!(mid.copied_turns, 121);
    assert_eq!(turns_of(&store, &mid.session.id), parent_turns[..=120]);
    for (forked, at_turn) in [(&tip, 279), (&mid, 120)] {
        assert_eq!(forked.lineage.parent_session_id, SESSION);
        assert_eq!(forked.lineage.parent_name, parent.name);
        assert_eq!(forked.lineage.at_turn, Some(at_turn));
        assert_eq!(forked.lineage.kind, LineageKind::Fork);
        let stored = store.session(&forked.session.id).unwrap();
        assert_eq!(stored.lineage.as_ref(), Some(&forked.lineage), "persisted");
        assert_eq!(
            stored.rotation_count, 0,
            "a fork starts a fresh backing context"
        );
        assert_eq!(stored.workspace_id, parent.workspace_id);
        assert_eq!(
            (stored.provider, stored.model),
            (parent.provider.clone(), parent.model.clone())
        );
        assert_eq!(stored.first_intent, parent.first_intent);
        assert!(
            store.usage(&forked.session.id, ..).unwrap().is_empty(),
            "the parent paid"
        );
        // Not re-chunked: the fork's only episode is the fork marker.
        let episodes = store.session_episodes(&forked.session.id).unwrap();
        assert_eq!(episodes.len(), 1);
        assert_eq!(episodes[0].kind, EpisodeKind::Fork);
        assert_eq!(episodes[0].id, forked.episode_id);
    }

    // The fork's timeline: the fork event first, then the parent's episodes as a prior session.
    let ordinal = store.session_ordinal(SESSION).unwrap();
    let text = store
        .timeline_text(
            &parent.workspace_id,
            Some(&mid.session.id),
            &TimelineQuery {
                limit: 50,
                ..TimelineQuery::default()
            },
        )
        .unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("[current session] fork: fork at turn 120 of "),
        "{first}"
    );
    assert!(
        text.contains(&format!("[prior session #{ordinal}] tool_call: ")),
        "{text}"
    );
    assert!(!text.contains(SESSION), "raw ids never reach the model");
    let shown = store
        .episode_text(&parent.workspace_id, Some(&mid.session.id), &mid.episode_id)
        .unwrap();
    assert!(
        shown.contains(&format!(
            "- forked from: prior session #{ordinal} at turn 120"
        )),
        "{shown}"
    );
    assert!(
        shown.contains("verbatim copy of that conversation's first 121 turns"),
        "{shown}"
    );
    // Seen from the parent, the fork marker names the parent as the current session.
    let from_parent = store
        .episode_text(&parent.workspace_id, Some(SESSION), &mid.episode_id)
        .unwrap();
    assert!(from_parent.contains("- forked from: current session at turn 120"));
    store.integrity_check().unwrap();
}

fn target(format: Format, model: &str) -> Backend {
    Backend::new(format).with_model(model)
}

#[test]
fn a_fork_for_another_backend_hands_over_the_newest_turns_and_announces_the_rest() {
    let (_dir, db, store) = imported();
    let before = parent_rows(&db);
    let parent_turns = turns_of(&store, SESSION);
    let calls: HashSet<String> = parent_turns
        .iter()
        .flat_map(|t| &t.parts)
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some(c.id.clone()),
            _ => None,
        })
        .collect();
    for backend in [
        target(Format::OpenaiChat, "gpt-4.1"),
        target(Format::OpenaiResponses, "gpt-5"),
        target(Format::Gemini, "gemini-2.5-pro"),
    ] {
        // A small window, so most of the session must stay in memory.
        let options = ForkOptions {
            handoff: HandoffOptions {
                context_window: Some(40_000),
                ..HandoffOptions::default()
            },
            ..ForkOptions::default()
        };
        let name = format!("on {}", backend.format);
        let forked =
            fork::fork_with(&store, SESSION, None, Some(&backend), &name, &options).unwrap();
        let handoff = forked.handoff.clone().unwrap();
        assert_eq!(handoff.budget_tokens, 20_000, "half the window by default");
        assert!(handoff.window.fits, "{:?}", handoff.window);
        let omitted = handoff.omitted_turns();
        assert!(omitted > 100, "{omitted}");
        assert_eq!(handoff.window.start, omitted);
        let seed = handoff.seed.clone().unwrap();
        for needle in [
            "recall(query)",
            "recall_file(path)",
            "timeline(offset?, limit?)",
            "get_episode(episode_id)",
            &format!("Its {omitted} oldest turns"),
            &format!("The {} most recent turns follow verbatim", 280 - omitted),
        ] {
            assert!(seed.contains(needle), "{needle:?} not in {seed}");
        }
        // Newest turns verbatim, nothing silently lost: the sent turns are the parent's tail
        // with the seed opening the first one.
        let sent = &handoff.turns;
        assert_eq!(sent.len(), 280 - omitted);
        assert_eq!(sent[1..], parent_turns[omitted + 1..]);
        assert_eq!(sent[0].parts[0], Part::Text { text: seed.clone() });
        assert_eq!(sent[0].parts[1..], parent_turns[omitted].parts[..]);
        // No result is sent without its call.
        let sent_calls: HashSet<&str> = sent
            .iter()
            .flat_map(|t| &t.parts)
            .filter_map(|p| match p {
                Part::ToolCall(c) => Some(c.id.as_str()),
                _ => None,
            })
            .collect();
        for part in sent.iter().flat_map(|t| &t.parts) {
            if let Part::ToolResult(r) = part {
                if calls.contains(&r.call_id) {
                    assert!(sent_calls.contains(r.call_id.as_str()), "{}", r.call_id);
                }
            }
        }
        // Native format, readable back; Anthropic's signed thinking cannot go to another
        // provider and is reported.
        let messages = handoff.messages.as_array().unwrap();
        assert!(!messages.is_empty());
        let again = translate::to_messages(sent, &backend, &Options::default()).unwrap();
        assert_eq!(again.value, handoff.messages);
        assert_eq!(again.losses, handoff.losses);
        let back = translate::from_messages(&handoff.messages, &backend, &Options::default())
            .unwrap()
            .value;
        assert!(back.turns[0].text().contains("<fork_context>"));
        let has_thinking = sent
            .iter()
            .flat_map(|t| &t.parts)
            .any(|p| matches!(p, Part::Thinking(_)));
        if has_thinking {
            assert!(
                handoff.losses.iter().any(|l| l.kind == LossKind::Dropped),
                "{:?}",
                handoff.losses
            );
        }
        let body = handoff
            .to_request(Some("You are a coding agent."), &[], &Options::default())
            .unwrap();
        assert!(body.value.is_object());

        let stored = store.session(&forked.session.id).unwrap();
        assert_eq!(stored.provider.as_deref(), Some(backend.provider.as_str()));
        assert_eq!(stored.model, backend.model);
        let marker = store
            .episode(&stored.workspace_id, &forked.episode_id)
            .unwrap();
        assert!(
            marker.header.summary.starts_with(&format!(
                "fork at turn 279 on {} {}",
                backend.provider,
                backend.model.as_deref().unwrap()
            )),
            "{}",
            marker.header.summary
        );
    }
    // The default budget of a large window keeps everything and needs no seed.
    let whole = fork::fork(
        &store,
        SESSION,
        None,
        Some(target(Format::Gemini, "gemini-2.5-pro")),
        "whole",
    )
    .unwrap()
    .handoff
    .unwrap();
    assert_eq!((whole.omitted_turns(), whole.seed), (0, None));
    assert_eq!(whole.turns, parent_turns);
    assert_same(
        &parent_rows(&db),
        &before,
        "parent after cross-backend forks",
    );
}

#[test]
fn a_strict_fork_that_would_lose_something_creates_nothing() {
    let (_dir, db, store) = imported();
    let before = dump(&db, &Scope::All);
    let options = ForkOptions {
        handoff: HandoffOptions {
            translate: Options {
                strict: true,
                ..Options::default()
            },
            ..HandoffOptions::default()
        },
        ..ForkOptions::default()
    };
    let backend = target(Format::OpenaiChat, "gpt-4.1");
    let err =
        fork::fork_with(&store, SESSION, None, Some(&backend), "strict", &options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Translation);
    assert_same(&dump(&db, &Scope::All), &before, "after a refused fork");
}

/// A session: prompt, read (answered), rotation, prompt, edit call left pending.
fn small_session(store: &Store, ws: &Workspace) -> String {
    let s = store
        .create_session(
            ws,
            NewSession {
                id: Some("ses_parent".into()),
                name: Some("parent".into()),
                provider: Some("anthropic".into()),
                model: Some("claude-sonnet-4-5".into()),
                ..NewSession::default()
            },
        )
        .unwrap();
    let mut read = at(
        call("c1", "Read", json!({"file_path": "src/lib.rs"})),
        "a1",
        2,
    );
    read.usage = Some(usage(1000, 50, true));
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("Fix the parser"), "u1", 1),
                read,
                at(result("c1", "fn parse() {}", false), "r1", 3),
            ],
        )
        .unwrap();
    store.record_rotation(&s.id, Some("ctx-2"), None).unwrap();
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("Now make parse return a Result"), "u2", 4),
                at(
                    call("c2", "Edit", json!({"file_path": "src/lib.rs"})),
                    "a2",
                    5,
                ),
            ],
        )
        .unwrap();
    s.id
}

#[test]
fn a_fork_after_a_rotation_carries_everything_and_pairs_a_result_with_a_copied_call() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("codeoid.db");
    let store = Store::open(&db).unwrap();
    let ws = Workspace::resolve("/nonexistent/fork-project").unwrap();
    let parent = small_session(&store, &ws);
    // The parent ends: its pending edit is cancelled there.
    store.finish_session(&parent).unwrap();
    let before = dump(&db, &Scope::Sessions(&["ses_parent"]));

    let forked = fork::fork(&store, &parent, None, None, "retry").unwrap();
    assert_eq!(
        forked.copied_turns, 5,
        "turns from before the rotation are copied too"
    );
    let copy = store.session(&forked.session.id).unwrap();
    assert_eq!((copy.rotation_count, copy.turn_count), (0, 5));
    // The result arrives in the fork: it pairs with the call copied from the parent.
    let done = store
        .record_turn(&copy.id, &at(result("c2", "edited", false), "r2", 6))
        .unwrap();
    assert_eq!(done.seq, 5);
    assert_eq!(done.episode_ids.len(), 1);
    let episode = store.episode(ws.id(), &done.episode_ids[0]).unwrap();
    assert_eq!(episode.header.status, EpisodeStatus::Ok);
    assert_eq!(episode.header.call_id.as_deref(), Some("c2"));
    assert_eq!(
        episode.content,
        "# User intent\nNow make parse return a Result\n\n# Tool: Edit\n\n## Input\n{\n  \
         \"file_path\": \"src/lib.rs\"\n}\n\n## Result\nedited"
    );
    assert_same(
        &dump(&db, &Scope::Sessions(&["ses_parent"])),
        &before,
        "parent after the fork and the fork's own turn",
    );

    // At a turn before the rotation: only those turns, and the state there (nothing pending).
    let early = fork::fork(&store, &parent, Some(2), None, "early").unwrap();
    assert_eq!(early.copied_turns, 3);
    let next = store
        .record_turn(
            &early.session.id,
            &at(Turn::user_text("Different idea"), "u9", 7),
        )
        .unwrap();
    assert!(next.episode_ids.iter().all(|id| {
        store.episode(ws.id(), id).unwrap().header.status != EpisodeStatus::Cancelled
    }));
}

#[test]
fn a_session_that_reuses_call_ids_forks_onto_every_backend() {
    // A harness that numbers calls per request: call_0 for a Read, answered, then call_0 again
    // for a Bash, answered. Translation used to refuse the whole conversation.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("codeoid.db")).unwrap();
    let ws = Workspace::resolve("/nonexistent/fork-reused-ids").unwrap();
    let s = store
        .create_session(
            &ws,
            NewSession {
                id: Some("ses_reused".into()),
                name: Some("reused".into()),
                ..NewSession::default()
            },
        )
        .unwrap();
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("Read a.rs, then build"), "u1", 1),
                at(
                    call("call_0", "Read", json!({"file_path": "a.rs"})),
                    "a1",
                    2,
                ),
                at(result("call_0", "fn a() {}", false), "r1", 3),
                at(
                    call("call_0", "Bash", json!({"command": "cargo build"})),
                    "a2",
                    4,
                ),
                at(result("call_0", "ok", false), "r2", 5),
            ],
        )
        .unwrap();
    for format in Format::ALL {
        let backend = Backend::new(format);
        let name = format!("on {format}");
        let forked = fork::fork(&store, &s.id, None, Some(backend), &name).unwrap();
        let handoff = forked.handoff.unwrap();
        let dump = handoff.messages.to_string();
        assert!(dump.contains("call_0-2"), "{format}: {dump}");
        let changed: Vec<String> = handoff
            .losses
            .iter()
            .filter(|l| l.kind == LossKind::Changed)
            .map(|l| l.location.to_string())
            .collect();
        assert_eq!(changed, ["turn 3 part 0", "turn 4 part 0"], "{format}");
    }
}

#[test]
fn a_fork_onto_anthropic_inside_a_tool_loop_without_its_thinking_says_to_disable_thinking() {
    // A GPT-5 session in the middle of a tool loop: its reasoning cannot go to Anthropic, so
    // the last assistant message would start with tool_use, which Anthropic rejects when the
    // next request enables extended thinking.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("codeoid.db")).unwrap();
    let ws = Workspace::resolve("/nonexistent/fork-thinking").unwrap();
    let s = store
        .create_session(
            &ws,
            NewSession {
                id: Some("ses_gpt".into()),
                name: Some("on gpt".into()),
                provider: Some("openai".into()),
                model: Some("gpt-5".into()),
                ..NewSession::default()
            },
        )
        .unwrap();
    let mut thought = call("c1", "Read", json!({"file_path": "a.rs"}));
    thought.parts.insert(
        0,
        Part::Thinking(Thinking {
            text: "Read it first.".into(),
            signature: Some(Signature {
                provider: "openai".into(),
                model: Some("gpt-5".into()),
                value: "gAAAAB".into(),
            }),
            redacted: false,
        }),
    );
    thought.provider = Some("openai".into());
    let mut answer = Turn::assistant_text("a.rs defines a().");
    answer.provider = Some("openai".into());
    store
        .record_turns(
            &s.id,
            &[
                at(Turn::user_text("What is in a.rs?"), "u1", 1),
                at(thought, "a1", 2),
                at(result("c1", "fn a() {}", false), "r1", 3),
                at(answer, "a2", 4),
            ],
        )
        .unwrap();
    let claude = target(Format::Anthropic, "claude-sonnet-4-5");
    // At the results (the next request continues the loop) and at the call in flight.
    for at_turn in [2, 1] {
        let forked = fork::fork(&store, &s.id, Some(at_turn), Some(claude.clone()), "x").unwrap();
        let handoff = forked.handoff.unwrap();
        assert!(handoff.needs_thinking_off(), "{:#?}", handoff.losses);
        let flagged: Vec<String> = handoff
            .losses
            .iter()
            .filter(|l| l.kind == LossKind::NeedsThinkingOff)
            .map(|l| l.location.to_string())
            .collect();
        assert_eq!(flagged, ["turn 1"], "at turn {at_turn}");
        assert_eq!(handoff.messages[1]["content"][0]["type"], "tool_use");
    }
    // Where the loop has ended, the next request opens a new turn: nothing to disable.
    let forked = fork::fork(&store, &s.id, Some(3), Some(claude), "after").unwrap();
    let handoff = forked.handoff.unwrap();
    assert!(!handoff.needs_thinking_off(), "{:#?}", handoff.losses);
    assert!(
        handoff
            .losses
            .iter()
            .any(|l| l.kind == LossKind::Dropped && l.location.to_string() == "turn 1 part 0"),
        "the reasoning is still left out: {:#?}",
        handoff.losses
    );
}

#[test]
fn a_fork_of_a_fork_has_a_lineage_chain() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("codeoid.db")).unwrap();
    let ws = Workspace::resolve("/nonexistent/fork-chain").unwrap();
    let parent = small_session(&store, &ws);
    let first = fork::fork(&store, &parent, Some(2), None, "first").unwrap();
    store
        .record_turn(&first.session.id, &at(Turn::user_text("Go on"), "u3", 8))
        .unwrap();
    let second = fork::fork(&store, &first.session.id, None, None, "second").unwrap();
    assert_eq!(second.copied_turns, 4);
    assert_eq!(second.lineage.parent_session_id, first.session.id);
    assert_eq!(second.lineage.parent_name.as_deref(), Some("first"));
    let chain = lineage_chain(&store, &second.session.id).unwrap();
    assert_eq!(chain.len(), 2);
    assert_eq!(chain[1].lineage.parent_session_id, parent);
    let lines = describe_lineage(&store, &second.session.id).unwrap();
    assert_eq!(
        lines,
        [
            format!("fork of \"first\" ({}) at turn 3 of 4", first.session.id),
            "fork of \"parent\" (ses_parent) at turn 2 of 5".to_owned(),
        ]
    );
    assert!(describe_lineage(&store, &parent).unwrap().is_empty());
    // The second fork's timeline shows both ancestors' episodes as prior sessions.
    let text = store
        .timeline_text(ws.id(), Some(&second.session.id), &TimelineQuery::default())
        .unwrap();
    assert!(
        text.contains("[prior session #1]") && text.contains("[prior session #2]"),
        "{text}"
    );
}

#[test]
fn bad_forks_are_clear_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("codeoid.db");
    let store = Store::open(&db).unwrap();
    let ws = Workspace::resolve("/nonexistent/fork-errors").unwrap();
    let parent = small_session(&store, &ws);
    let empty = store.create_session(&ws, NewSession::default()).unwrap();
    let before = dump(&db, &Scope::All);

    let err = fork::fork(&store, &parent, Some(5), None, "x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("at_turn 5 is out of range"), "{err}");
    assert!(err.message().contains("0..=4"), "{err}");
    let err = fork::fork(&store, "ses_nope", None, None, "x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.message().contains("ses_nope"), "{err}");
    let err = fork::fork(&store, &parent, None, None, "  ").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("fork name is empty"), "{err}");
    let err = fork::fork(&store, &empty.id, None, None, "x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("no turns to fork"), "{err}");
    let taken = ForkOptions {
        id: Some(parent.clone()),
        ..ForkOptions::default()
    };
    let err = fork::fork_with(&store, &parent, None, None, "x", &taken).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    let tiny = ForkOptions {
        handoff: HandoffOptions {
            budget_fraction: 2.0,
            ..HandoffOptions::default()
        },
        ..ForkOptions::default()
    };
    let backend = Backend::new(Format::Gemini);
    let err = fork::fork_with(&store, &parent, None, Some(&backend), "x", &tiny).unwrap_err();
    assert!(err.message().contains("budget_fraction 2"), "{err}");
    assert_same(&dump(&db, &Scope::All), &before, "after refused forks");
}
