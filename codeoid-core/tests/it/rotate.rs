//! Rotation through the public API: the turn counter in every configuration, and a replay of
//! real Claude Code sessions whose rotation points are recomputed here from the raw log numbers.

use std::collections::HashSet;

use crate::support::evaldata;
use codeoid_core::ErrorKind;
use codeoid_core::canonical::{CallUsage, Part, Role, ToolResult, ToolResultPart, Turn, Usage};
use codeoid_core::rotate::{
    Anchor, ContextWindow, Reason, RotationConfig, RotationPolicy, RotationState, SeedKind,
    SeedSource,
};
use serde_json::{Value, json};

fn primary(tokens: u64) -> CallUsage {
    CallUsage {
        input_tokens: 2,
        cache_read_tokens: tokens - 2,
        // Spelled out: the derived `Default` of `CallUsage` is a non-primary call.
        primary: true,
        ..CallUsage::default()
    }
}

fn one_call(tokens: u64) -> Usage {
    Usage {
        calls: vec![primary(tokens)],
    }
}

/// The reference implementation advanced its turn counter only on the memory-off path, which
/// silently disabled rotation with memory on. Here every configuration must count every turn and
/// rotate again after exactly `min_turns` turns.
#[test]
fn the_turn_counter_advances_in_every_configuration() {
    let window = ContextWindow::overridden(100_000).unwrap();
    let anchor = Anchor::from_text("keep refactoring").unwrap();
    for auto_rotate in [false, true] {
        for memory in [true, false] {
            let label = format!("auto={auto_rotate} memory={memory}");
            let policy = RotationPolicy::new(RotationConfig {
                auto_rotate,
                ..RotationConfig::default()
            })
            .unwrap();
            let mut state = RotationState::default();
            let source = if memory {
                SeedSource::Memory {
                    workspace: "ws",
                    session_name: "main",
                    anchor: Some(&anchor),
                }
            } else {
                SeedSource::MemoryDisabled
            };
            // Quiet turns, a turn without usage, and a subagent-only turn all count.
            for _ in 0..3 {
                policy.observe(&mut state, Some(&one_call(10_000)), &window);
            }
            policy.observe(&mut state, None, &window);
            let subagent_only = Usage {
                calls: vec![CallUsage {
                    primary: false,
                    ..primary(99_000)
                }],
            };
            policy.observe(&mut state, Some(&subagent_only), &window);
            assert_eq!(state.turns_since_rotation, 5, "{label}");

            let mut rotations = Vec::new();
            for turn in 0..23 {
                let d = policy.observe(&mut state, Some(&one_call(99_000)), &window);
                if d.should_rotate {
                    assert_eq!(d.reason, Reason::HardThreshold, "{label}");
                    let rotation = policy.rotate(&mut state, source).unwrap();
                    let seed = state.take_pending_seed().unwrap();
                    assert_eq!(seed, rotation.seed, "{label}");
                    let kind = if memory {
                        SeedKind::Memory
                    } else {
                        SeedKind::Generic
                    };
                    assert_eq!(seed.kind, kind, "{label}");
                    rotations.push(turn);
                } else {
                    assert_eq!(d.reason, Reason::TooSoon, "{label} turn {turn}");
                }
            }
            assert_eq!(rotations, vec![0, 5, 10, 15, 20], "{label}");
            assert_eq!(state.rotation_count, 5, "{label}");
            assert_eq!(state.turns_since_rotation, 2, "{label}");
        }
    }
}

#[test]
fn the_issue_examples_hold_through_the_public_api() {
    let window = RotationPolicy::new(RotationConfig::default())
        .unwrap()
        .window(Some("claude-sonnet-4-5-20250929"), None)
        .unwrap();
    assert_eq!(window.tokens, 200_000);
    for auto_rotate in [false, true] {
        let policy = RotationPolicy::new(RotationConfig {
            auto_rotate,
            ..RotationConfig::default()
        })
        .unwrap();
        let mut state = RotationState {
            turns_since_rotation: 10,
            ..RotationState::default()
        };
        let mut calls = vec![primary(150_000)];
        calls.extend((0..8).map(|_| CallUsage {
            primary: false,
            ..primary(100_000)
        }));
        let d = policy.observe(&mut state, Some(&Usage { calls }), &window);
        assert!(
            !d.should_rotate,
            "800k of subagent calls must not rotate: {d:?}"
        );
        let d = policy.observe(&mut state, Some(&one_call(195_000)), &window);
        assert_eq!((d.should_rotate, d.reason), (true, Reason::HardThreshold));
    }
}

#[test]
fn manual_rotation_is_refused_before_the_guard_with_a_reason() {
    let policy = RotationPolicy::new(RotationConfig::default()).unwrap();
    let mut state = RotationState::default();
    let err = policy.check_guard(&state).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RotationRefused);
    assert!(err.message().contains("0 of the 5"), "{}", err.message());
    let window = ContextWindow::overridden(200_000).unwrap();
    for _ in 0..5 {
        policy.observe(&mut state, Some(&one_call(1_000)), &window);
    }
    policy.check_guard(&state).unwrap();
    let rotation = policy
        .rotate(&mut state, SeedSource::MemoryDisabled)
        .unwrap();
    assert_eq!(rotation.number, 1);
    assert!(
        policy
            .rotate(&mut state, SeedSource::MemoryDisabled)
            .is_err()
    );
}

// ---------------------------------------------------------------------------------------------
// Replay of real sessions.

/// One primary model request of a logged session, with what the replay needs to check it.
struct LoggedTurn {
    usage: Usage,
    /// Context tokens of the primary request, straight from the log's numbers.
    primary_tokens: u64,
    /// Largest context of any call in the turn, subagents included.
    any_call_tokens: u64,
    /// The last prompt the person typed before this request, by the raw log.
    expected_anchor: Option<String>,
    /// `true` when the last user text before this request was a compaction summary.
    after_summary: bool,
    /// How many canonical turns precede this request.
    history_len: usize,
}

struct LoggedSession {
    turns: Vec<LoggedTurn>,
    history: Vec<Turn>,
}

fn context_of(usage: &Value) -> u64 {
    [
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ]
    .iter()
    .map(|k| usage[k].as_u64().unwrap_or(0))
    .sum()
}

fn call_from(usage: &Value, primary: bool, request_id: Option<&str>) -> CallUsage {
    CallUsage {
        input_tokens: usage["input_tokens"].as_u64().unwrap_or(0),
        output_tokens: usage["output_tokens"].as_u64().unwrap_or(0),
        cache_read_tokens: usage["cache_read_input_tokens"].as_u64().unwrap_or(0),
        cache_creation_tokens: usage["cache_creation_input_tokens"].as_u64().unwrap_or(0),
        primary,
        model: None,
        request_id: request_id.map(str::to_string),
    }
}

/// A minimal reader of Claude Code's log: user prompts and tool results become canonical user
/// turns, each distinct `requestId` one primary request (usage repeated across its lines counted
/// once), and subagent requests reported through `agent_progress` lines (or `isSidechain`
/// lines) non-primary calls of the next primary request.
fn read_session(name: &str) -> LoggedSession {
    let path = evaldata().join("claude-code-sessions/spotter").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("evaluation data {} is missing: {e}", path.display()));
    let mut turns: Vec<LoggedTurn> = Vec::new();
    let mut history = Vec::new();
    let mut requests = HashSet::new();
    let mut subagent_messages = HashSet::new();
    let mut pending_subagent: Vec<CallUsage> = Vec::new();
    let mut last_prompt: Option<String> = None;
    let mut after_summary = false;
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let sidechain = entry["isSidechain"].as_bool() == Some(true);
        match entry["type"].as_str() {
            Some("user") if entry["isMeta"].as_bool() != Some(true) && !sidechain => {
                let content = &entry["message"]["content"];
                let mut texts = Vec::new();
                let mut parts = Vec::new();
                if let Some(s) = content.as_str() {
                    texts.push(s.to_string());
                } else {
                    for block in content.as_array().into_iter().flatten() {
                        match block["type"].as_str() {
                            Some("text") => texts.push(block["text"].as_str().unwrap().into()),
                            Some("tool_result") => parts.push(Part::ToolResult(ToolResult {
                                call_id: block["tool_use_id"].as_str().unwrap().to_string(),
                                parts: vec![ToolResultPart::Text {
                                    text: block["content"].to_string(),
                                }],
                                is_error: block["is_error"].as_bool() == Some(true),
                            })),
                            _ => {}
                        }
                    }
                }
                let summary = entry["isCompactSummary"].as_bool() == Some(true);
                let joined = texts.join("\n");
                if !joined.trim().is_empty() {
                    after_summary = summary;
                    if !summary {
                        last_prompt = Some(joined.clone());
                    }
                }
                parts.extend(texts.into_iter().map(|text| Part::Text { text }));
                let mut turn = Turn::new(Role::User, parts);
                if summary {
                    turn.meta.insert("compaction_summary".into(), json!(true));
                }
                history.push(turn);
            }
            Some("assistant") => {
                let usage = &entry["message"]["usage"];
                let request = entry["requestId"].as_str().unwrap_or_default().to_string();
                if usage.is_null() || !requests.insert(request.clone()) {
                    continue;
                }
                if sidechain {
                    pending_subagent.push(call_from(usage, false, Some(&request)));
                    continue;
                }
                let mut calls = vec![call_from(usage, true, Some(&request))];
                calls.append(&mut pending_subagent);
                let any_call_tokens = calls.iter().map(CallUsage::context_tokens).max().unwrap();
                turns.push(LoggedTurn {
                    usage: Usage { calls },
                    primary_tokens: context_of(usage),
                    any_call_tokens,
                    expected_anchor: last_prompt.clone(),
                    after_summary,
                    history_len: history.len(),
                });
                history.push(Turn::assistant_text(
                    entry["message"]["content"].to_string(),
                ));
            }
            Some("progress") if entry["data"]["type"] == "agent_progress" => {
                let message = &entry["data"]["message"];
                let inner = &message["message"];
                if message["type"] == "assistant"
                    && !inner["usage"].is_null()
                    && subagent_messages.insert(inner["id"].to_string())
                {
                    pending_subagent.push(call_from(&inner["usage"], false, None));
                }
            }
            _ => {}
        }
    }
    LoggedSession { turns, history }
}

/// What the replay found, for the cross-session sanity checks.
#[derive(Default)]
struct ReplayTally {
    rotations: usize,
    subagent_would_have_fired: usize,
    anchors_after_summary: usize,
}

fn replay(session: &LoggedSession, window_tokens: u64, auto_rotate: bool, tally: &mut ReplayTally) {
    let config = RotationConfig {
        auto_rotate,
        ..RotationConfig::default()
    };
    let policy = RotationPolicy::new(config.clone()).unwrap();
    let window = ContextWindow::overridden(window_tokens).unwrap();
    let mut state = RotationState::default();

    // The expected positions, from the raw numbers with integer arithmetic only.
    let hard = |t: u64| t * 100 >= 97 * window_tokens;
    let soft = |t: u64| auto_rotate && t * 100 >= 90 * window_tokens;
    let mut since = 0u32;
    let mut expected = Vec::new();
    for (i, turn) in session.turns.iter().enumerate() {
        since += 1;
        if since >= config.min_turns && (hard(turn.primary_tokens) || soft(turn.primary_tokens)) {
            expected.push(i);
            since = 0;
        } else if since >= config.min_turns
            && (hard(turn.any_call_tokens) || soft(turn.any_call_tokens))
        {
            tally.subagent_would_have_fired += 1;
        }
    }

    let mut fired = Vec::new();
    for (i, turn) in session.turns.iter().enumerate() {
        let d = policy.observe(&mut state, Some(&turn.usage), &window);
        assert_eq!(d.tokens, Some(turn.primary_tokens), "turn {i}");
        if !d.should_rotate {
            continue;
        }
        let reason = if hard(turn.primary_tokens) {
            Reason::HardThreshold
        } else {
            Reason::SoftThreshold
        };
        assert_eq!(d.reason, reason, "turn {i}: {}", d.message);
        fired.push(i);
        let anchor = Anchor::from_turns(&session.history[..turn.history_len]);
        let rotation = policy
            .rotate(
                &mut state,
                SeedSource::Memory {
                    workspace: "spotter",
                    session_name: "replay",
                    anchor: anchor.as_ref(),
                },
            )
            .unwrap();
        let want = turn
            .expected_anchor
            .as_deref()
            .expect("a prompt precedes every rotation");
        assert_eq!(anchor.as_ref().map(Anchor::text), Some(want), "turn {i}");
        let shown = Anchor::from_text(want).unwrap().capped();
        assert!(
            rotation
                .seed
                .text
                .contains(&format!("---\n{shown}\n---\n</rotation_context>")),
            "turn {i}: the seed must end with the anchor"
        );
        assert_eq!(state.take_pending_seed(), Some(rotation.seed));
        tally.anchors_after_summary += usize::from(turn.after_summary);
    }
    assert_eq!(
        fired, expected,
        "window {window_tokens}, auto {auto_rotate}"
    );
    tally.rotations += fired.len();
}

/// Three long real sessions (Claude Code 2.1, 139-152 primary requests each, contexts from 26k
/// to 167k tokens, subagents with up to 600k tokens per turn, one harness compaction each),
/// replayed request by request against small windows with auto-rotation on and off.
#[test]
fn replaying_real_sessions_rotates_exactly_where_the_numbers_say() {
    let sessions = [
        "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        "4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
        "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
    ];
    let mut tally = ReplayTally::default();
    for name in sessions {
        let session = read_session(name);
        assert!(
            session.turns.len() > 100,
            "{name}: {} requests",
            session.turns.len()
        );
        for window in [60_000, 150_000] {
            for auto_rotate in [false, true] {
                replay(&session, window, auto_rotate, &mut tally);
            }
        }
    }
    // The replay must have exercised what it claims to check.
    assert!(tally.rotations > 50, "{} rotations", tally.rotations);
    assert!(
        tally.subagent_would_have_fired > 0,
        "no turn where counting subagent calls would have rotated wrongly"
    );
    assert!(
        tally.anchors_after_summary > 0,
        "no rotation right after a compaction summary"
    );
}
