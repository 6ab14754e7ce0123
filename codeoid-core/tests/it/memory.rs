//! Integration tests of the `Memory` façade on real store files: rotation wired through the
//! store (occupancy from primary calls only, the guard, seeds handed out once, the timeline
//! event), the workspace index over SQLite, compressed command runs that keep raw bytes, and
//! workspace scoping.

use std::collections::HashSet;
use std::time::Duration;

use codeoid_core::canonical::{
    CallUsage, Part, Role, ToolCall, ToolResult, ToolResultPart, Turn, Usage,
};
use codeoid_core::retrieve::RecallQuery;
use codeoid_core::rotate::Reason;
use codeoid_core::store::{NewSession, TimelineQuery};
use codeoid_core::{ErrorKind, Memory, MemoryConfig};

use crate::support::{evaldata, tool_calls, tool_results};
use crate::tools::lexical_config;

/// A memory over a fresh store file, bound to a fresh workspace directory.
fn memory_with(config: MemoryConfig) -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("project");
    std::fs::create_dir_all(&workspace).unwrap();
    let config = MemoryConfig {
        db_path: Some(dir.path().join("codeoid.db")),
        workspace_dir: Some(workspace),
        ..config
    };
    let memory = Memory::open(config).unwrap();
    (dir, memory)
}

/// A lexical-only memory (no embedding worker reaching for a model): these tests are about
/// recording, rotation and scoping, not vectors.
fn memory() -> (tempfile::TempDir, Memory) {
    memory_with(lexical_config())
}

fn assistant(text: &str, primary_tokens: u64, subagent_tokens: &[u64]) -> Turn {
    let mut calls = vec![CallUsage {
        input_tokens: 2,
        cache_read_tokens: primary_tokens.saturating_sub(2),
        output_tokens: 50,
        ..CallUsage::default()
    }];
    calls.extend(subagent_tokens.iter().map(|&t| CallUsage {
        input_tokens: t,
        primary: false,
        ..CallUsage::default()
    }));
    let mut turn = Turn::assistant_text(text);
    turn.model = Some("claude-sonnet-4-5-20250929".into());
    turn.usage = Some(Usage { calls });
    turn
}

fn session(memory: &Memory, name: &str) -> String {
    memory
        .start_session(NewSession {
            name: Some(name.into()),
            model: Some("claude-sonnet-4-5-20250929".into()),
            ..NewSession::default()
        })
        .unwrap()
        .id
}

#[test]
fn subagent_tokens_never_rotate_but_the_primary_hard_limit_does() {
    let (_dir, memory) = memory();
    let s = session(&memory, "parser port");
    for i in 0..6 {
        memory
            .record_turn(&s, &Turn::user_text(format!("step {i}")))
            .unwrap();
        // 150k primary, 800k across subagents: 75% of a 200k window, no rotation.
        let out = memory
            .record_turn(&s, &assistant("working", 150_000, &[400_000, 400_000]))
            .unwrap();
        let decision = out.decision.unwrap();
        assert!(!decision.should_rotate, "{decision:?}");
        assert_eq!(decision.tokens, Some(150_000));
        assert!(out.rotation.is_none());
    }
    memory
        .record_turn(&s, &Turn::user_text("now port the lexer too"))
        .unwrap();
    let out = memory
        .record_turn(&s, &assistant("deep in it", 195_000, &[]))
        .unwrap();
    let decision = out.decision.unwrap();
    assert!(decision.should_rotate);
    assert_eq!(decision.reason, Reason::HardThreshold);
    let rotation = out
        .rotation
        .expect("the hard net fires with auto-rotation off");
    assert_eq!(rotation.count, 1);
    assert!(
        rotation
            .seed
            .text
            .contains("---\nnow port the lexer too\n---"),
        "{}",
        rotation.seed.text
    );
    assert!(
        rotation
            .seed
            .text
            .contains("Rotation #1 of this session (\"parser port\")")
    );

    let stored = memory.session(&s).unwrap();
    assert_eq!(stored.rotation_count, 1);
    assert_eq!(
        stored.backing_context_id.as_deref(),
        Some(rotation.backing_context_id.as_str())
    );
    // What the caller is told is the time as stored, to the millisecond.
    assert_eq!(stored.last_rotation_at, Some(rotation.at));

    // The seed is handed out exactly once.
    assert_eq!(memory.take_seed(&s).unwrap(), Some(rotation.seed.clone()));
    assert_eq!(memory.take_seed(&s).unwrap(), None);

    // The timeline shows the rotation event.
    let page = memory.timeline(&TimelineQuery::default()).unwrap();
    assert!(page.episodes.iter().any(|e| e.id == rotation.episode_id));
}

#[test]
fn the_guard_counts_every_assistant_turn_and_rotation_repeats_every_five() {
    let (_dir, memory) = memory();
    let s = session(&memory, "long haul");
    memory
        .record_turn(&s, &Turn::user_text("keep going"))
        .unwrap();
    let mut rotated_at = Vec::new();
    for turn in 0..23 {
        let out = memory
            .record_turn(&s, &assistant("more", 196_000, &[]))
            .unwrap();
        if out.rotation.is_some() {
            rotated_at.push(turn);
        }
    }
    // Turns are 0-based: the 5th, 10th, 15th and 20th assistant turns rotate.
    assert_eq!(rotated_at, vec![4, 9, 14, 19]);
    assert_eq!(memory.session(&s).unwrap().rotation_count, 4);
}

#[test]
fn manual_rotation_is_refused_before_the_guard_and_allowed_after() {
    let (_dir, memory) = memory();
    let s = session(&memory, "manual");
    memory
        .record_turn(&s, &Turn::user_text("refactor the store"))
        .unwrap();
    memory
        .record_turn(&s, &assistant("on it", 1_000, &[]))
        .unwrap();
    let err = memory.rotate(&s, Some("ctx-new")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RotationRefused);
    assert!(err.message().contains("4 more turn"), "{err}");
    assert_eq!(memory.session(&s).unwrap().rotation_count, 0);
    for _ in 0..4 {
        memory
            .record_turn(&s, &assistant("still on it", 1_000, &[]))
            .unwrap();
    }
    let rotation = memory.rotate(&s, Some("ctx-new")).unwrap();
    assert_eq!(rotation.backing_context_id, "ctx-new");
    assert_eq!(
        memory.session(&s).unwrap().backing_context_id.as_deref(),
        Some("ctx-new")
    );
    // The guard starts again after a rotation.
    assert_eq!(
        memory.rotate(&s, None).unwrap_err().kind(),
        ErrorKind::RotationRefused
    );
}

#[test]
fn an_unnamed_session_s_seed_names_it_by_its_first_prompt_not_its_id() {
    let (_dir, memory) = memory();
    let s = memory
        .start_session(NewSession {
            model: Some("claude-sonnet-4-5-20250929".into()),
            ..NewSession::default()
        })
        .unwrap()
        .id;
    memory
        .record_turn(&s, &Turn::user_text("port the   parser\nto nom"))
        .unwrap();
    for _ in 0..5 {
        memory
            .record_turn(&s, &assistant("working", 1_000, &[]))
            .unwrap();
    }
    memory
        .record_turn(&s, &Turn::user_text("keep going"))
        .unwrap();
    let rotation = memory.rotate(&s, None).unwrap();
    assert!(
        rotation
            .seed
            .text
            .contains("Rotation #1 of this session (\"port the parser to nom\")."),
        "{}",
        rotation.seed.text
    );
    assert!(!rotation.seed.text.contains(&s), "{}", rotation.seed.text);
    let event = memory.episode(&rotation.episode_id).unwrap();
    assert!(
        event.content.contains("session \"port the parser to nom\""),
        "{}",
        event.content
    );
}

/// Recall leaves out the caller's own live context only: after a rotation, what the session did
/// before it is out of the model's context and must be found again; what it did since is not.
#[test]
fn recall_from_a_rotated_session_finds_its_episodes_from_before_the_rotation() {
    let (_dir, memory) = memory();
    let s = session(&memory, "rotated");
    let recall = |memory: &Memory| {
        let query = RecallQuery::new("zebrafish telemetry quirk").limit(10);
        let hits = memory.recall(Some(&s), &query).unwrap();
        hits.into_iter()
            .map(|h| h.content)
            .collect::<Vec<_>>()
            .join("\n")
    };
    memory
        .record_turn(&s, &Turn::user_text("look into the zebrafish telemetry"))
        .unwrap();
    memory
        .record_turn(
            &s,
            &assistant(
                "before: the zebrafish telemetry quirk is a clock skew",
                1_000,
                &[],
            ),
        )
        .unwrap();
    memory.record_turn(&s, &Turn::user_text("go on")).unwrap();
    // Before any rotation the whole session is live: none of it is recalled to itself, though
    // the episode is there.
    assert_eq!(recall(&memory), "");
    let mut all = RecallQuery::new("zebrafish telemetry quirk").limit(10);
    all.include_current_session = true;
    let hits = memory.recall(Some(&s), &all).unwrap();
    assert!(
        hits.iter()
            .any(|h| h.content.contains("before: the zebrafish"))
    );
    for _ in 0..4 {
        memory
            .record_turn(&s, &assistant("more work", 1_000, &[]))
            .unwrap();
    }
    memory.rotate(&s, None).unwrap();
    memory
        .record_turn(
            &s,
            &Turn::user_text("continue with the zebrafish telemetry"),
        )
        .unwrap();
    memory
        .record_turn(
            &s,
            &assistant("after: the zebrafish telemetry quirk is fixed", 1_000, &[]),
        )
        .unwrap();
    // The next prompt completes the exchange, so its episode exists.
    memory.record_turn(&s, &Turn::user_text("thanks")).unwrap();
    let found = recall(&memory);
    assert!(found.contains("before: the zebrafish"), "{found}");
    assert!(!found.contains("after: the zebrafish"), "{found}");
    // Asked for explicitly, the live part comes back too.
    let hits = memory.recall(Some(&s), &all).unwrap();
    assert!(
        hits.iter()
            .any(|h| h.content.contains("after: the zebrafish"))
    );
    // The rotation event is on the timeline, but never a search result, even when its words
    // are the query.
    let page = memory.timeline(&TimelineQuery::default()).unwrap();
    assert!(
        page.episodes
            .iter()
            .any(|e| e.summary.starts_with("rotation #1"))
    );
    let mut meta = RecallQuery::new("rotation of this session's backing context rotated");
    meta.include_current_session = true;
    let hits = memory.recall(Some(&s), &meta).unwrap();
    assert!(
        hits.iter()
            .all(|h| !h.header.summary.starts_with("rotation #")),
        "{:?}",
        hits.iter().map(|h| &h.header.summary).collect::<Vec<_>>()
    );
}

/// A caller's own `exclude_session_id` and the live-context exclusion are independent.
/// A turn of the assistant calling `tool` with `input` (call id `id`), with usage.
fn assistant_call(id: &str, tool: &str, input: serde_json::Value) -> Turn {
    let mut turn = assistant("", 1_000, &[]);
    turn.parts = vec![Part::ToolCall(ToolCall {
        id: id.into(),
        provider_id: None,
        name: tool.into(),
        input,
    })];
    turn
}

/// The user turn answering call `id` with `output`.
fn tool_output(id: &str, output: &str) -> Turn {
    Turn::new(
        Role::User,
        vec![Part::ToolResult(ToolResult {
            call_id: id.into(),
            parts: vec![ToolResultPart::Text {
                text: output.into(),
            }],
            is_error: false,
        })],
    )
}

#[test]
fn what_the_old_context_did_after_a_rotation_is_recalled_from_the_fresh_one() {
    let (_dir, memory) = memory();
    let s = session(&memory, "mid-loop");
    let found = |memory: &Memory| {
        let query = RecallQuery::new("zebraquux loader crash").limit(10);
        let hits = memory.recall(Some(&s), &query).unwrap();
        hits.into_iter()
            .map(|h| h.content)
            .collect::<Vec<_>>()
            .join("\n")
    };
    memory
        .record_turn(&s, &Turn::user_text("find the zebraquux loader crash"))
        .unwrap();
    for i in 0..5 {
        memory
            .record_turn(
                &s,
                &assistant_call(
                    &format!("c{i}"),
                    "Read",
                    serde_json::json!({"file_path": format!("f{i}.py")}),
                ),
            )
            .unwrap();
        memory
            .record_turn(&s, &tool_output(&format!("c{i}"), "nothing here"))
            .unwrap();
    }
    // The rotation is decided on the assistant turn that makes a call: its result, and the rest
    // of the tool loop, are recorded in the old context, which the harness replaces only once
    // the model has answered.
    memory
        .record_turn(
            &s,
            &assistant_call("c5", "Read", serde_json::json!({"file_path": "loader.py"})),
        )
        .unwrap();
    memory.rotate(&s, None).unwrap();
    memory
        .record_turn(
            &s,
            &tool_output(
                "c5",
                "def load(): raise ZebraquuxLoaderCrash  # zebraquux loader crash",
            ),
        )
        .unwrap();
    memory
        .record_turn(
            &s,
            &assistant("the zebraquux loader crash comes from load()", 1_000, &[]),
        )
        .unwrap();
    // The fresh context starts: its first message carries the seed.
    let seed = memory.take_seed(&s).unwrap().unwrap();
    memory
        .record_turn(&s, &Turn::user_text(format!("{}\n\nfix it", seed.text)))
        .unwrap();
    memory
        .record_turn(&s, &assistant_call("c6", "Edit", serde_json::json!({"file_path": "loader.py", "note": "zebraquux loader crash fixed in the fresh context"})))
        .unwrap();
    memory
        .record_turn(&s, &tool_output("c6", "edited"))
        .unwrap();
    let text = found(&memory);
    assert!(text.contains("raise ZebraquuxLoaderCrash"), "{text}");
    assert!(text.contains("comes from load()"), "{text}");
    // What the fresh context holds is live: not recalled to it.
    assert!(!text.contains("fixed in the fresh context"), "{text}");
    // The prompt under the seed is the exchange's intent, not the seed.
    let edit = memory
        .recall(Some(&s), &{
            let mut q = RecallQuery::new("fixed in the fresh context").limit(3);
            q.include_current_session = true;
            q
        })
        .unwrap();
    assert!(
        edit[0].content.starts_with("# User intent\nfix it\n"),
        "{}",
        edit[0].content
    );
}

#[test]
fn an_explicit_session_exclusion_holds_next_to_the_live_context_one() {
    let (_dir, memory) = memory();
    let (a, b, c) = (
        session(&memory, "a"),
        session(&memory, "b"),
        session(&memory, "c"),
    );
    for (s, word) in [(&a, "from-a"), (&b, "from-b"), (&c, "from-c")] {
        memory
            .record_turn(s, &Turn::user_text(format!("kestrel migration {word}")))
            .unwrap();
        memory
            .record_turn(s, &assistant(&format!("kestrel done {word}"), 1_000, &[]))
            .unwrap();
        memory.record_turn(s, &Turn::user_text("next")).unwrap();
    }
    let mut query = RecallQuery::new("kestrel migration").limit(20);
    query.filters.exclude_session_id = Some(b.clone());
    let hits = memory.recall(Some(&a), &query).unwrap();
    let sessions: HashSet<&str> = hits.iter().map(|h| h.header.session_id.as_str()).collect();
    assert_eq!(sessions, HashSet::from([c.as_str()]), "{hits:?}");
}

#[test]
fn without_memory_the_seed_is_the_generic_notice() {
    let (_dir, memory) = memory_with(MemoryConfig {
        memory_enabled: false,
        ..lexical_config()
    });
    let s = session(&memory, "plain");
    memory
        .record_turn(&s, &Turn::user_text("secret plan"))
        .unwrap();
    for _ in 0..5 {
        memory
            .record_turn(&s, &assistant("ok", 199_000, &[]))
            .unwrap();
    }
    let seed = memory.take_seed(&s).unwrap().unwrap();
    assert!(!seed.text.contains("secret plan"));
    assert!(seed.text.contains("session memory is disabled"));
    assert_eq!(memory.workspace_index(Some(&s)).unwrap(), "");
}

#[test]
fn a_session_window_override_changes_occupancy() {
    let (_dir, memory) = memory();
    let s = session(&memory, "small window");
    memory.set_context_window(&s, Some(100_000)).unwrap();
    memory.record_turn(&s, &Turn::user_text("go")).unwrap();
    let out = memory
        .record_turn(&s, &assistant("x", 50_000, &[]))
        .unwrap();
    let decision = out.decision.unwrap();
    assert_eq!(decision.window.tokens, 100_000);
    assert!((decision.occupancy.unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(memory.rotation_decision(&s).unwrap().tokens, Some(50_000));
    assert_eq!(
        memory.set_context_window(&s, Some(0)).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
}

#[test]
fn missing_usage_is_no_signal_and_never_rotates() {
    let (_dir, memory) = memory();
    let s = session(&memory, "no usage");
    memory.record_turn(&s, &Turn::user_text("hi")).unwrap();
    for _ in 0..8 {
        let out = memory
            .record_turn(&s, &Turn::assistant_text("hello"))
            .unwrap();
        let decision = out.decision.unwrap();
        assert_eq!(decision.reason, Reason::NoSignal);
        assert!(!decision.should_rotate);
    }
    let fresh = session(&memory, "empty");
    assert_eq!(
        memory.rotation_decision(&fresh).unwrap().reason,
        Reason::NoSignal
    );
    assert_eq!(
        memory.rotation_decision("nope").unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn workspace_index_is_empty_then_byte_stable() {
    let (_dir, memory) = memory();
    assert_eq!(memory.workspace_index(None).unwrap(), "");
    let s = session(&memory, "indexing");
    memory
        .record_turn(&s, &Turn::user_text("explain the chunker"))
        .unwrap();
    memory
        .record_turn(&s, &Turn::assistant_text("it pairs calls and results"))
        .unwrap();
    memory.finish_session(&s).unwrap();
    let first = memory.workspace_index(Some(&s)).unwrap();
    assert!(first.starts_with("# Memory Index — project\n"), "{first}");
    assert!(first.contains("explain the chunker"), "{first}");
    assert!(first.contains("`recall(\"<topic>\")`"), "{first}");
    // New episodes within the minimum interval do not change the text.
    memory
        .record_turn(&s, &Turn::user_text("and the store?"))
        .unwrap();
    memory
        .record_turn(&s, &Turn::assistant_text("sqlite"))
        .unwrap();
    memory.finish_session(&s).unwrap();
    assert_eq!(memory.workspace_index(Some(&s)).unwrap(), first);
}

#[test]
fn run_keeps_raw_output_and_passes_stderr_and_exit_code() {
    let (_dir, memory) = memory();
    let s = session(&memory, "shell");
    // 400 lines of `ls`-like output (over the 1 KiB pass-through limit) and a failing exit.
    let command = "for i in $(seq 1 400); do echo src/module_$i.rs; done; echo oops >&2; exit 3";
    let out = memory.run(&s, command).unwrap();
    assert_eq!(out.exit_code, 3);
    assert_eq!(out.stderr, b"oops\n");
    let id = out.episode_id.clone().unwrap();
    let episode = memory.episode(&id).unwrap();
    let stdout_blob = episode.blobs.iter().find(|b| b.role == "stdout").unwrap();
    let raw = memory.blob(&stdout_blob.blob_id).unwrap();
    let expected: String = (1..=400).map(|i| format!("src/module_{i}.rs\n")).collect();
    assert_eq!(raw, expected.as_bytes());
    let shown = String::from_utf8(out.stdout).unwrap();
    if out.compressed.is_some() {
        assert!(shown.contains(&format!("get_episode(\"{id}\")")), "{shown}");
        assert!(shown.len() < expected.len());
    } else {
        assert_eq!(shown, expected);
    }
}

#[test]
fn a_run_s_own_timeout_replaces_the_configured_one() {
    let (_dir, memory) = memory_with(MemoryConfig {
        run_timeout: Some(Duration::from_millis(300)),
        ..lexical_config()
    });
    let s = session(&memory, "shell");
    // Longer than the configured limit, allowed by this call's own (or by none).
    for timeout in [Some(Duration::from_secs(60)), None, Some(Duration::ZERO)] {
        let out = memory
            .run_with_timeout(&s, "sleep 1; echo finished", timeout)
            .unwrap();
        assert!(!out.timed_out, "{timeout:?}");
        assert_eq!(
            (out.stdout.as_slice(), out.exit_code),
            (&b"finished\n"[..], 0)
        );
    }
    assert!(memory.run(&s, "sleep 1; echo finished").unwrap().timed_out);
    // Shorter than the configured limit: this call's wins.
    let (_dir, patient) = memory_with(MemoryConfig {
        run_timeout: Some(Duration::from_secs(60)),
        ..lexical_config()
    });
    let s = session(&patient, "shell");
    let started = std::time::Instant::now();
    let out = patient
        .run_with_timeout(
            &s,
            "echo started; sleep 30",
            Some(Duration::from_millis(300)),
        )
        .unwrap();
    assert!(out.timed_out);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(out.stdout.starts_with(b"started\n"));
    let stored = patient.episode(out.episode_id.as_deref().unwrap()).unwrap();
    assert!(
        stored.content.contains("started"),
        "what it printed is stored"
    );
}

#[test]
fn another_workspace_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("codeoid.db");
    let open = |name: &str| {
        let ws = dir.path().join(name);
        std::fs::create_dir_all(&ws).unwrap();
        Memory::open(MemoryConfig {
            db_path: Some(db.clone()),
            workspace_dir: Some(ws),
            ..lexical_config()
        })
        .unwrap()
    };
    let a = open("a");
    let b = open("b");
    let s = session(&a, "mine");
    a.record_turn(&s, &Turn::user_text("private")).unwrap();
    a.record_turn(&s, &Turn::assistant_text("noted")).unwrap();
    a.finish_session(&s).unwrap();
    let id = a.timeline(&TimelineQuery::default()).unwrap().episodes[0]
        .id
        .clone();
    assert!(a.episode(&id).is_ok());
    assert_eq!(b.episode(&id).unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(b.session(&s).unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(
        b.record_turn(&s, &Turn::user_text("x")).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    // Another workspace's session (or a typo) is not a session to label or filter by: an error,
    // not a page labelled against nothing or a recall that quietly matches nothing.
    let page = TimelineQuery::default();
    assert_eq!(
        b.timeline_text(Some(&s), &page).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        a.episode_text(Some("no-such-session"), &id)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    assert!(a.episode_text(Some(&s), &id).is_ok());
    for filter in [true, false] {
        let mut query = RecallQuery::new("private");
        if filter {
            query.filters.session_id = Some("no-such-session".into());
        } else {
            query.filters.exclude_session_id = Some("no-such-session".into());
        }
        assert_eq!(
            a.recall(None, &query).unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }
    let mut mine = RecallQuery::new("private");
    mine.filters.session_id = Some(s.clone());
    assert!(a.recall(None, &mine).is_ok());
}

/// Issue 4's end-to-end replay: a long real Claude Code session, turn by turn with its real
/// usage, against a 60k window. Rotations must fire exactly where the raw numbers say, each seed
/// must anchor on the right prompt, and every episode from before a rotation stays reachable.
#[test]
fn replaying_a_real_session_rotates_exactly_where_the_numbers_say() {
    let log =
        evaldata().join("claude-code-sessions/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl");
    let imported = codeoid_core::import::read_path(&log).unwrap();
    let main = imported
        .sessions
        .iter()
        .find(|s| s.kind == codeoid_core::import::SessionKind::Main)
        .unwrap();
    let (_dir, memory) = memory();
    let s = session(&memory, "replay");
    let window = 60_000u64;
    memory.set_context_window(&s, Some(window)).unwrap();

    // Expected rotation points from the raw numbers alone: integer arithmetic on the largest
    // primary call, the 97% hard limit, and the 5-turn guard counting assistant turns.
    let mut expected = Vec::new();
    let mut since = 0u64;
    let mut last_prompt: Option<String> = None;
    let mut expected_anchors = Vec::new();
    for (index, turn) in main.turns.iter().enumerate() {
        // A prompt the person typed: not a compaction summary, not text the harness wrote
        // (a background task's notification).
        if turn.role == Role::User
            && turn.is_user_prompt()
            && !turn.meta.contains_key("compaction_summary")
            && !turn.meta.contains_key("is_meta")
        {
            last_prompt = Some(turn.text());
        }
        if turn.role != Role::Assistant {
            continue;
        }
        since += 1;
        let tokens = turn.usage.as_ref().and_then(|u| {
            u.calls
                .iter()
                .filter(|c| c.primary)
                .map(|c| c.input_tokens + c.cache_read_tokens + c.cache_creation_tokens)
                .max()
        });
        if let Some(tokens) = tokens {
            if since >= 5 && tokens * 100 >= window * 97 && last_prompt.is_some() {
                expected.push(index);
                expected_anchors.push(last_prompt.clone().unwrap());
                since = 0;
            }
        }
    }
    assert!(
        expected.len() >= 3,
        "the session must exercise rotation: {expected:?}"
    );

    let mut fired = Vec::new();
    let mut episodes_before = Vec::new();
    for (index, turn) in main.turns.iter().enumerate() {
        let out = memory.record_turn(&s, turn).unwrap();
        if let Some(rotation) = out.rotation {
            fired.push(index);
            let anchor = &expected_anchors[fired.len() - 1];
            let shown: String = anchor.chars().take(1500).collect();
            assert!(
                rotation.seed.text.contains(shown.trim()),
                "rotation {} anchor",
                fired.len()
            );
            assert_eq!(memory.take_seed(&s).unwrap(), Some(rotation.seed));
            episodes_before = all_episode_ids(&memory);
            assert_tools_reach(&memory, &s, &episodes_before, anchor);
        }
    }
    assert_eq!(fired, expected);
    assert!(
        episodes_before.len() > 50,
        "by the last rotation the tools' timeline walk spans several pages"
    );
    // Every episode that existed at the last rotation is still reachable by id and timeline.
    let now: HashSet<String> = all_episode_ids(&memory).into_iter().collect();
    for id in &episodes_before {
        assert!(now.contains(id));
        assert!(memory.episode(id).is_ok());
    }
}

/// After a rotation, the model's own tools reach what came before it: `get_episode` returns
/// every earlier episode, the `timeline` tool walks all of them page by page, and `recall` of
/// the anchored request finds an episode of this session.
fn assert_tools_reach(memory: &Memory, session: &str, before: &[String], anchor: &str) {
    for id in before {
        let args = serde_json::json!({ "episode_id": id }).to_string();
        let out = memory.call_tool(Some(session), "get_episode", &args);
        assert!(!out.is_error, "get_episode({id}): {}", out.text);
        assert!(out.text.contains(id.as_str()), "{}", out.text);
    }
    let mut walked = HashSet::new();
    let mut args = serde_json::json!({ "limit": 50 });
    loop {
        let out = memory.call_tool(Some(session), "timeline", &args.to_string());
        assert!(!out.is_error, "{}", out.text);
        walked.extend(out.text.match_indices("episode_id: ep_").map(|(at, _)| {
            let id = &out.text[at + 12..];
            let end = 3 + id[3..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(id.len() - 3);
            id[..end].to_string()
        }));
        // The page names the exact arguments of the next one, as the model would pass them.
        let Some(next) = out.text.split("next page: timeline ").nth(1) else {
            break;
        };
        args = serde_json::from_str(next.trim()).unwrap();
    }
    for id in before {
        assert!(walked.contains(id), "the timeline tool never showed {id}");
    }
    let query: String = anchor
        .split_whitespace()
        .take(12)
        .collect::<Vec<_>>()
        .join(" ");
    let args = serde_json::json!({ "query": query, "include_current_session": true });
    let out = memory.call_tool(Some(session), "recall", &args.to_string());
    assert!(
        !out.is_error && out.text.contains("episode_id: ep_"),
        "{}",
        out.text
    );
}

/// Walks the whole timeline with `before` and returns every episode id once.
fn all_episode_ids(memory: &Memory) -> Vec<String> {
    let mut ids = Vec::new();
    let mut query = TimelineQuery {
        limit: 60,
        ..TimelineQuery::default()
    };
    loop {
        let page = memory.timeline(&query).unwrap();
        ids.extend(page.episodes.iter().map(|e| e.id.clone()));
        match page.next {
            Some(next) => {
                query = TimelineQuery {
                    before: next.before,
                    limit: next.limit,
                    offset: 0,
                }
            }
            None => break,
        }
    }
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "timeline walk repeated an episode");
    ids
}

#[test]
fn a_tool_result_part_never_counts_as_a_prompt_for_the_anchor() {
    let (_dir, memory) = memory();
    let s = session(&memory, "anchor");
    memory
        .record_turn(&s, &Turn::user_text("the real request"))
        .unwrap();
    let mut call = Turn::new(
        Role::Assistant,
        vec![Part::ToolCall(codeoid_core::canonical::ToolCall {
            id: "c1".into(),
            provider_id: None,
            name: "Read".into(),
            input: serde_json::json!({"file_path": "src/lib.rs"}),
        })],
    );
    call.usage = assistant("", 10, &[]).usage;
    memory.record_turn(&s, &call).unwrap();
    memory
        .record_turn(
            &s,
            &Turn::new(
                Role::User,
                vec![Part::ToolResult(codeoid_core::canonical::ToolResult {
                    call_id: "c1".into(),
                    parts: vec![codeoid_core::canonical::ToolResultPart::Text {
                        text: "fn main() {}".into(),
                    }],
                    is_error: false,
                })],
            ),
        )
        .unwrap();
    for _ in 0..4 {
        memory
            .record_turn(&s, &assistant("reading", 10, &[]))
            .unwrap();
    }
    let rotation = memory.rotate(&s, None).unwrap();
    assert!(
        rotation.seed.text.contains("---\nthe real request\n---"),
        "{}",
        rotation.seed.text
    );
}

/// A provider's own usage object, or an Anthropic response passed whole, reaches the rotation
/// policy with cached input counted once.
#[test]
fn provider_usage_objects_reach_the_rotation_policy() {
    use codeoid_core::translate::{Backend, Format, read_usage};
    use serde_json::json;
    let (_dir, memory) = memory();
    let s = session(&memory, "usage");
    memory.record_turn(&s, &Turn::user_text("go")).unwrap();
    // The whole response, as the Anthropic SDK returns it: no separate usage argument.
    let anthropic = Backend::new(Format::Anthropic).with_model("claude-sonnet-4-5");
    let response = json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 12, "output_tokens": 30, "cache_read_input_tokens": 90_000,
                  "cache_creation_input_tokens": 500}
    });
    let out = memory
        .record_message(&s, response.clone(), &anthropic, None)
        .unwrap();
    let decision = out.decision.expect("an assistant turn gets a decision");
    assert_eq!(decision.tokens, Some(90_512), "{decision:?}");
    // A retry of the same response is recorded once: the message id names the turn.
    assert_eq!(out.recorded.turn_id, "msg_01");
    let again = memory
        .record_message(&s, response, &anthropic, None)
        .unwrap();
    assert!(again.recorded.duplicate);
    // OpenAI's usage counts cached tokens inside prompt_tokens.
    let chat = Backend::new(Format::OpenaiChat).with_model("gpt-5");
    let usage = read_usage(
        &json!({"prompt_tokens": 100_012, "completion_tokens": 30, "total_tokens": 100_042,
                "prompt_tokens_details": {"cached_tokens": 100_000}}),
        Some(Format::OpenaiChat),
    )
    .unwrap();
    let out = memory
        .record_message(
            &s,
            json!({"role": "assistant", "content": "ok"}),
            &chat,
            Some(usage),
        )
        .unwrap();
    assert_eq!(out.decision.unwrap().tokens, Some(100_012));
    let stored = memory.store().turns(&s, ..).unwrap();
    let call = &stored.last().unwrap().turn.usage.as_ref().unwrap().calls[0];
    assert_eq!((call.input_tokens, call.cache_read_tokens), (12, 100_000));
}

#[test]
fn a_whole_anthropic_response_names_its_model_for_the_window() {
    use codeoid_core::translate::{Backend, Format};
    let (_dir, memory) = memory();
    // Neither the session nor the backend knows the model: only the response does.
    let s = memory.start_session(NewSession::default()).unwrap().id;
    memory.record_turn(&s, &Turn::user_text("go")).unwrap();
    let response = serde_json::json!({
        "id": "msg_02", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 150_000, "output_tokens": 30}
    });
    let out = memory
        .record_message(&s, response, &Backend::new(Format::Anthropic), None)
        .unwrap();
    let decision = out.decision.unwrap();
    assert_eq!(decision.window.tokens, 200_000, "{decision:?}");
    assert!(!decision.window.is_assumed(), "{decision:?}");
    let stored = memory.store().turns(&s, ..).unwrap();
    assert_eq!(
        stored.last().unwrap().turn.model.as_deref(),
        Some("claude-sonnet-4-5-20250929")
    );
}

/// Gemini messages recorded one at a time and as lists, from several threads: every call
/// without an id gets an id of its own in the session, and every response pairs with its call.
#[test]
fn provider_messages_get_session_unique_call_ids_and_pair_with_their_calls() {
    use codeoid_core::translate::{Backend, Format};
    use serde_json::json;
    let (_dir, memory) = memory();
    let s = session(&memory, "gemini");
    let gemini = Backend::new(Format::Gemini).with_model("gemini-2.5-pro");
    let call = |path: &str| json!({"role": "model", "parts": [{"functionCall": {"name": "Read", "args": {"file_path": path}}}]});
    let response = |path: &str| json!({"role": "user", "parts": [{"functionResponse": {"name": "Read", "response": {"output": path}}}]});
    memory
        .record_message(
            &s,
            json!({"role": "user", "parts": [{"text": "read"}]}),
            &gemini,
            None,
        )
        .unwrap();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let (memory, s, gemini) = (&memory, &s, &gemini);
            scope.spawn(move || {
                for n in 0..5 {
                    let path = format!("{t}/{n}.rs");
                    memory.record_message(s, call(&path), gemini, None).unwrap();
                }
            });
        }
    });
    for path in ["a.rs", "b.rs"] {
        memory
            .record_messages(&s, &json!([call(path), response(path)]), &gemini)
            .unwrap();
    }
    let turns: Vec<Turn> = memory
        .store()
        .turns(&s, ..)
        .unwrap()
        .into_iter()
        .map(|t| t.turn)
        .collect();
    let calls: Vec<&str> = tool_calls(&turns).iter().map(|c| c.id.as_str()).collect();
    assert_eq!(calls.len(), 22);
    assert_eq!(calls.iter().collect::<HashSet<_>>().len(), 22, "{calls:?}");
    let results: Vec<&str> = tool_results(&turns)
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(
        results,
        calls[20..],
        "each list's response answers its own call"
    );
    // A response recorded alone pairs with the latest call of its name.
    memory
        .record_message(&s, call("c.rs"), &gemini, None)
        .unwrap();
    let out = memory
        .record_message(&s, response("c.rs"), &gemini, None)
        .unwrap();
    let [episode] = &out.recorded.episode_ids[..] else {
        panic!("{out:?}")
    };
    assert_eq!(
        memory.episode(episode).unwrap().header.summary,
        "Read(c.rs)"
    );
    // Parallel calls of one name in one model content, their responses recorded one message
    // at a time: each response answers the first call no earlier response answered.
    let parallel = json!({"role": "model", "parts": [
        {"functionCall": {"name": "Read", "args": {"file_path": "d.rs"}}},
        {"functionCall": {"name": "Read", "args": {"file_path": "e.rs"}}},
        {"functionCall": {"name": "Grep", "args": {"pattern": "fn"}}}
    ]});
    memory.record_message(&s, parallel, &gemini, None).unwrap();
    let grep = json!({"role": "user", "parts": [{"functionResponse": {"name": "Grep", "response": {"output": "x"}}}]});
    let mut summaries = Vec::new();
    for message in [response("d.rs"), grep, response("e.rs")] {
        let out = memory.record_message(&s, message, &gemini, None).unwrap();
        for id in &out.recorded.episode_ids {
            summaries.push(memory.episode(id).unwrap().header.summary);
        }
    }
    assert_eq!(summaries, ["Read(d.rs)", "Grep(fn)", "Read(e.rs)"]);
    // Bad input names the problem and records nothing.
    let before = memory.session(&s).unwrap().turn_count;
    let err = memory
        .record_message(&s, json!({"role": "model", "parts": "x"}), &gemini, None)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert_eq!(memory.session(&s).unwrap().turn_count, before);
}

#[test]
fn a_workspace_directory_that_does_not_exist_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let err = Memory::open(MemoryConfig {
        db_path: Some(dir.path().join("codeoid.db")),
        workspace_dir: Some(dir.path().join("no-such-checkout")),
        ..lexical_config()
    })
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.message().contains("no-such-checkout"), "{err}");
}

#[test]
fn a_subagent_sees_itself_as_current_in_the_index_but_not_among_recent_sessions() {
    use codeoid_core::store::{Lineage, LineageKind};
    let (_dir, memory) = memory();
    let parent = session(&memory, "parent");
    memory
        .record_turn(&parent, &Turn::user_text("port the parser to nom"))
        .unwrap();
    memory
        .record_turn(&parent, &Turn::assistant_text("porting it"))
        .unwrap();
    let sub = memory
        .start_session(NewSession {
            lineage: Some(Lineage {
                parent_session_id: parent.clone(),
                parent_name: None,
                at_turn: None,
                kind: LineageKind::Subagent,
            }),
            ..NewSession::default()
        })
        .unwrap()
        .id;
    memory
        .record_turn(&sub, &Turn::user_text("find every caller of parse_expr"))
        .unwrap();
    memory
        .record_turn(&sub, &Turn::assistant_text("three callers"))
        .unwrap();
    memory.finish_session(&parent).unwrap();
    memory.finish_session(&sub).unwrap();
    let seen_by_parent = memory.workspace_index(Some(&parent)).unwrap();
    assert!(
        seen_by_parent.contains("[current] port the parser to nom"),
        "{seen_by_parent}"
    );
    assert!(!seen_by_parent.contains("parse_expr"), "{seen_by_parent}");
    let seen_by_sub = memory.workspace_index(Some(&sub)).unwrap();
    assert!(
        seen_by_sub.contains("[current] find every caller of parse_expr"),
        "{seen_by_sub}"
    );
}

#[test]
fn a_memory_store_path_opens_a_private_store() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::open(MemoryConfig {
        db_path: Some(":memory:".into()),
        workspace_dir: Some(dir.path().to_path_buf()),
        ..lexical_config()
    })
    .unwrap();
    let s = session(&memory, "throwaway");
    memory.record_turn(&s, &Turn::user_text("hello")).unwrap();
    assert_eq!(memory.session(&s).unwrap().turn_count, 1);
    assert!(memory.store().path().is_none());
    assert!(!dir.path().join(":memory:").exists());
}
