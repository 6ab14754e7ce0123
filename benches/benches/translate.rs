//! Translating a 1,000-turn session to every backend (target: under 20 ms each), and reading it
//! back.
//!
//! The session is real: the `user`/`assistant` message objects of the Claude Code logs under
//! `../shared/evaldata/claude-code-sessions/spotter` (the three long sessions, in file order),
//! read into canonical turns with the Anthropic reader and cut at 1,000 turns. Each benchmark
//! asserts its result: every tool call is sent exactly once, and reading back gives the same
//! number of calls.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use codeoid_core::canonical::{Part, Turn};
use codeoid_core::translate::{self, Backend, Format, Options, ToolSpec};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const TURNS: usize = 1_000;

fn sessions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/evaldata/claude-code-sessions/spotter")
}

/// The first 1,000 canonical turns of the long sessions.
fn session() -> Vec<Turn> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(sessions_dir())
        .expect("evaldata is present")
        .map(|e| e.expect("readable directory").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 1_000_000))
        .collect();
    logs.sort();
    let mut turns = Vec::new();
    for log in logs {
        let text = std::fs::read_to_string(&log).expect("readable log");
        let messages: Vec<Value> = text
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|line| matches!(line["type"].as_str(), Some("user" | "assistant")))
            .map(|line| json!({"role": line["message"]["role"], "content": line["message"]["content"]}))
            .collect();
        let claude = Backend::new(Format::Anthropic).with_model("claude-opus-4-6");
        let read = translate::from_messages(&Value::Array(messages), &claude, &Options::default())
            .expect("the logs read as Anthropic messages");
        turns.extend(read.value.turns);
    }
    assert!(
        turns.len() >= TURNS,
        "only {} turns in the logs",
        turns.len()
    );
    turns.truncate(TURNS);
    turns
}

fn calls(turns: &[Turn]) -> usize {
    turns
        .iter()
        .flat_map(|t| &t.parts)
        .filter(|p| matches!(p, Part::ToolCall(_)))
        .count()
}

fn tools() -> Vec<ToolSpec> {
    let schema = json!({
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 20}},
        "required": ["query"],
        "additionalProperties": false,
    });
    ["recall", "recall_file", "timeline", "get_episode"]
        .into_iter()
        .map(|name| ToolSpec {
            name: name.into(),
            description: "memory".into(),
            input_schema: schema.clone(),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let turns = session();
    let expected_calls = calls(&turns);
    assert!(expected_calls > 300, "{expected_calls} calls");
    let tools = tools();
    let options = Options::default();
    for format in Format::ALL {
        let backend = Backend::new(format).with_model("claude-opus-4-6");
        // Correctness first: all calls sent, and reading back finds them all.
        let body = translate::to_request(Some("system"), &turns, &tools, &backend, &options)
            .expect("translates");
        let messages = translate::to_messages(&turns, &backend, &options).expect("translates");
        let back =
            translate::from_messages(&messages.value, &backend, &options).expect("reads back");
        assert_eq!(calls(&back.value.turns), expected_calls, "{format}");
        assert!(body.value.to_string().len() > 100_000, "{format}");

        c.bench_function(&format!("translate/to_request/{format}/1000_turns"), |b| {
            b.iter(|| {
                let out = translate::to_request(
                    Some("system"),
                    black_box(&turns),
                    &tools,
                    &backend,
                    &options,
                )
                .expect("translates");
                black_box(out)
            })
        });
        c.bench_function(
            &format!("translate/from_messages/{format}/1000_turns"),
            |b| {
                b.iter(|| {
                    let out =
                        translate::from_messages(black_box(&messages.value), &backend, &options)
                            .expect("reads back");
                    black_box(out)
                })
            },
        );
    }
    let backend = Backend::new(Format::Gemini);
    let total = translate::fit_window(&turns, &backend, &options, u64::MAX).kept_tokens;
    let budget = total / 2;
    let window = translate::fit_window(&turns, &backend, &options, budget);
    assert!(
        window.fits && window.start > 0 && window.kept_tokens <= budget,
        "{window:?} of {total}"
    );
    c.bench_function("translate/fit_window/1000_turns", |b| {
        b.iter(|| {
            black_box(translate::fit_window(
                black_box(&turns),
                &backend,
                &options,
                budget,
            ))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
