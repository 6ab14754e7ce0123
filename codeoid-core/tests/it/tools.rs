//! The four memory tools through `Memory::call_tool`: the JSON Schemas of DESIGN §3, prefixed
//! names, every kind of bad argument as an error result (and never a panic, proptested), and the
//! pinned text formats. `files` covers `recall_file` with live hashing; `pages` the paging of
//! long `get_episode` content; `e2e` drives a whole imported real session.

mod e2e;
mod files;
mod pages;

use codeoid_core::retrieve::{EmbeddingConfig, ModelChoice};
use codeoid_core::tools::{ToolName, tool_specs};
use codeoid_core::{Memory, MemoryConfig};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::retrieve::{exchange, open_in, session};

/// A config without embeddings (scores are then exact and time-independent for old episodes).
pub(crate) fn lexical_config() -> MemoryConfig {
    MemoryConfig {
        embedding: EmbeddingConfig {
            model: ModelChoice::Disabled,
            ..EmbeddingConfig::default()
        },
        ..MemoryConfig::default()
    }
}

/// A lexical-only memory in `dir` (see [`crate::retrieve::open_in`]).
fn lexical_memory(dir: &std::path::Path) -> Memory {
    open_in(dir, lexical_config())
}

#[test]
fn schemas_are_exactly_those_of_the_design() {
    let specs = tool_specs(None).unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["recall", "recall_file", "timeline", "get_episode"]);
    let schema = |name: &str| -> Value {
        let mut schema = specs
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .input_schema
            .clone();
        // Descriptions are prose for the model; the shape is what is pinned.
        for property in schema["properties"].as_object_mut().unwrap().values_mut() {
            property.as_object_mut().unwrap().remove("description");
        }
        schema
    };
    assert_eq!(
        schema("recall"),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 6},
                "include_current_session": {"type": "boolean", "default": false},
                "tool_name": {"type": "string"}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        schema("recall_file"),
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        schema("timeline"),
        json!({
            "type": "object",
            "properties": {
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "limit": {"type": "integer", "minimum": 1, "maximum": 60, "default": 20},
                "before": {"type": "string"}
            },
            "additionalProperties": false
        })
    );
    assert_eq!(
        schema("get_episode"),
        json!({
            "type": "object",
            "properties": {
                "episode_id": {"type": "string"},
                "offset": {"type": "integer", "minimum": 0, "default": 0}
            },
            "required": ["episode_id"],
            "additionalProperties": false
        })
    );
    for spec in &specs {
        assert!(spec.description.len() > 40, "{}", spec.name);
    }
}

#[test]
fn prefixed_declarations_mount_on_every_backend_and_dispatch() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let specs = memory.tool_schemas(Some("codeoid_memory")).unwrap();
    assert_eq!(specs[0].name, "codeoid_memory__recall");
    for format in codeoid_core::translate::Format::ALL {
        let declared = codeoid_core::translate::declare_tools(
            &specs,
            format,
            &codeoid_core::translate::Options::default(),
        )
        .unwrap();
        let text = declared.value.to_string();
        for spec in &specs {
            assert!(
                text.contains(&format!("\"{}\"", spec.name)),
                "{format:?}: {text}"
            );
        }
        // Anthropic and OpenAI take the schemas verbatim; Gemini's schema subset may drop
        // keywords such as `additionalProperties`, which the translator reports.
        if format != codeoid_core::translate::Format::Gemini {
            assert!(declared.is_lossless(), "{format:?}: {:?}", declared.losses);
        }
    }
    let s = session(&memory, "work");
    for name in [
        "timeline",
        "codeoid_memory__timeline",
        "mcp__codeoid__timeline",
    ] {
        let out = memory.call_tool(Some(&s), name, "{}");
        assert!(!out.is_error, "{name}: {}", out.text);
        assert_eq!(out.text, "(no episodes in this workspace yet)\n");
    }
    let err = memory.tool_schemas(Some("bad prefix")).unwrap_err();
    assert!(err.message().contains("\"bad prefix\""), "{err}");
}

#[test]
fn bad_calls_are_error_results_the_model_can_act_on() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let s = session(&memory, "work");
    let cases: [(&str, &str, &str); 12] = [
        (
            "recal",
            "{}",
            "unknown memory tool \"recal\"; the memory tools are recall, recall_file, timeline, get_episode",
        ),
        (
            "recall",
            "{}",
            "invalid arguments for recall: the required field \"query\" is missing. Expected: {\"query\": string (required)",
        ),
        (
            "recall",
            r#"{"query": 5}"#,
            "\"query\" must be a string, got the number 5",
        ),
        (
            "recall",
            r#"{"query": "x", "limit": 0}"#,
            "\"limit\" is 0, out of range; use an integer from 1 to 20",
        ),
        (
            "recall",
            r#"{"query": "x", "limit": 21}"#,
            "out of range; use an integer from 1 to 20",
        ),
        (
            "recall",
            r#"{"query": "x", "extra": true}"#,
            "unknown field \"extra\"; recall accepts only \"query\", \"limit\", \"include_current_session\", \"tool_name\"",
        ),
        (
            "recall",
            "{\"query\": \"x\"",
            "the arguments are not valid JSON",
        ),
        (
            "recall_file",
            "{}",
            "the required field \"path\" is missing",
        ),
        (
            "timeline",
            r#"{"limit": 61}"#,
            "use an integer from 1 to 60",
        ),
        ("timeline", r#"{"offset": -3}"#, "use an integer >= 0"),
        (
            "timeline",
            r#"{"before": "ep_0000000000000000"}"#,
            "timeline failed: episode \"ep_0000000000000000\" not found",
        ),
        (
            "get_episode",
            r#"{"episode_id": "ep_nope"}"#,
            "get_episode failed: episode \"ep_nope\" not found in workspace",
        ),
    ];
    for (name, args, expected) in cases {
        let out = memory.call_tool(Some(&s), name, args);
        assert!(out.is_error, "{name} {args}: {}", out.text);
        assert!(out.text.contains(expected), "{name} {args}:\n{}", out.text);
    }
    // Arguments a binding could not pass on answer as call_tool answers unreadable ones.
    let out = codeoid_core::tools::invalid_arguments("codeoid_memory__recall", "it is NaN");
    assert!(out.is_error);
    assert!(
        out.text
            .starts_with("invalid arguments for recall: it is NaN. Expected: {\"query\""),
        "{}",
        out.text
    );
    let out = codeoid_core::tools::invalid_arguments("recal", "it is NaN");
    assert!(out.is_error && out.text.starts_with("unknown memory tool \"recal\""));
    // A pasted megabyte as a name, a field, a tool name or a path is not echoed back whole.
    let huge = "y".repeat(1 << 20);
    let many_fields: String = (0..100).map(|i| format!(",\"f{i}\":1")).collect();
    for (name, args) in [
        (huge.as_str(), "{}".to_owned()),
        ("recall", format!(r#"{{"query": "x", "{huge}": 1}}"#)),
        ("recall", format!(r#"{{"query": "x"{many_fields}}}"#)),
        (
            "recall",
            format!(r#"{{"query": "zzq", "tool_name": "{huge}"}}"#),
        ),
        ("recall_file", format!(r#"{{"path": "{huge}"}}"#)),
    ] {
        let out = memory.call_tool(Some(&s), name, &args);
        assert!(out.text.len() < 2_000, "{}…", &out.text[..300]);
        assert!(
            out.text.contains("(1048576 characters)") || out.text.contains("and 92 more"),
            "{}",
            out.text
        );
    }
    // Memory switched off: every tool says so, as an error result.
    let off = open_in(
        dir.path(),
        MemoryConfig {
            memory_enabled: false,
            ..MemoryConfig::default()
        },
    );
    let out = off.call_tool(None, "recall", r#"{"query": "x"}"#);
    assert!(
        out.is_error && out.text.contains("session memory is switched off"),
        "{}",
        out.text
    );
}

#[test]
fn the_recall_block_and_empty_results_are_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let old = session(&memory, "old work");
    // 2025: recency is 0.00 today, so the score is exactly 0.25 × bm25.
    let id = exchange(
        &memory,
        &old,
        "k",
        0,
        "what fails",
        "Bash",
        json!({"command": "cargo test flaky_network"}),
        "test flaky_network ... FAILED",
    );
    let current = session(&memory, "now");
    let out = memory.call_tool(
        Some(&current),
        "recall",
        r#"{"query": "flaky_network", "limit": 1}"#,
    );
    assert!(!out.is_error, "{}", out.text);
    let content = memory.episode(&id).unwrap().content;
    assert_eq!(
        out.text,
        format!(
            "### [1] Bash(cargo test flaky_network) — prior session #1\n\
             - when: 2025-10-09T08:53:22Z\n\
             - kind: tool_call (Bash)\n\
             - score: 0.250 (vec=0.00, fts=1.00, rec=0.00, path=0.00)\n\
             - terms: 1 of 1 (flaky network)\n\
             - episode_id: {id}\n\
             \n\
             {content}"
        )
    );
    assert!(
        content.starts_with("# User intent\nwhat fails\n"),
        "{content}"
    );
    // The calling session is excluded by default and included on request.
    let out = memory.call_tool(Some(&old), "recall", r#"{"query": "flaky_network"}"#);
    assert!(!out.is_error);
    assert_eq!(
        out.text,
        "no episodes in this workspace's memory match \"flaky_network\" (what the current \
         session did since its last rotation was not searched; set include_current_session to \
         true to search it)"
    );
    let out = memory.call_tool(
        Some(&old),
        "recall",
        r#"{"query": "flaky_network", "include_current_session": true}"#,
    );
    assert!(
        out.text
            .starts_with("### [1] Bash(cargo test flaky_network) — current session\n")
    );
    // tool_name filters, case-insensitively.
    let out = memory.call_tool(
        None,
        "recall",
        r#"{"query": "flaky_network", "tool_name": "read"}"#,
    );
    assert_eq!(
        out.text,
        "no episodes in this workspace's memory match \"flaky_network\" among read calls"
    );
    let out = memory.call_tool(
        None,
        "recall",
        r#"{"query": "flaky_network", "tool_name": "bash"}"#,
    );
    assert!(out.text.starts_with("### [1] "), "{}", out.text);
    // A pasted log as a query is echoed by its start only.
    let pasted = format!("zzqx {}", "nomatchword ".repeat(10_000));
    let args = json!({ "query": pasted }).to_string();
    let out = memory.call_tool(None, "recall", &args);
    assert!(!out.is_error);
    assert!(out.text.len() < 400, "{} bytes", out.text.len());
    assert!(
        out.text
            .starts_with("no episodes in this workspace's memory match \"zzqx nomatchword"),
        "{}",
        out.text
    );
    assert!(
        out.text.ends_with(&format!(
            "…\" (the start of a {}-character query)",
            pasted.chars().count()
        )),
        "{}",
        out.text
    );
}

#[test]
fn long_contents_are_cut_around_a_get_episode_marker() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let s = session(&memory, "work");
    // Longer than a recall excerpt, shorter than a get_episode page.
    let output = format!("first line\n{}\nlast line", "middle\n".repeat(2000));
    let id = exchange(
        &memory,
        &s,
        "k",
        0,
        "dump it",
        "Bash",
        json!({"command": "cat big.log"}),
        &output,
    );
    let out = memory.call_tool(None, "recall", r#"{"query": "big.log"}"#);
    assert!(out.text.contains(&format!(
        "characters omitted here; get_episode(\"{id}\") has the whole episode]"
    )));
    assert!(out.text.ends_with("last line"));
    assert!(out.text.len() < 7_000, "{}", out.text.len());
    let whole = memory.call_tool(None, "get_episode", &json!({"episode_id": id}).to_string());
    let content = memory.episode(&id).unwrap().content;
    assert!(content.chars().count() <= codeoid_core::tools::EPISODE_PAGE_CHARS);
    assert!(whole.text.ends_with(&content));
}

#[test]
fn many_long_hits_share_one_budget() {
    let dir = tempfile::tempdir().unwrap();
    let memory = lexical_memory(dir.path());
    let s = session(&memory, "work");
    let mut ids = Vec::new();
    for i in 0..12 {
        let output = format!("start {i}\n{}\nend {i}", "bigdump line\n".repeat(700));
        ids.push(exchange(
            &memory,
            &s,
            &format!("k{i}"),
            i,
            "dump it",
            "Bash",
            json!({"command": format!("cat dump{i}.log")}),
            &output,
        ));
    }
    let out = memory.call_tool(None, "recall", r#"{"query": "bigdump", "limit": 20}"#);
    assert!(!out.is_error, "{}", out.text);
    // Every episode is a hit, cut to its share of the budget around a marker naming it.
    for id in &ids {
        assert!(
            out.text
                .contains(&format!("get_episode(\"{id}\") has the whole episode]")),
            "{id} not cut: {}",
            out.text
        );
    }
    let budget = codeoid_core::tools::RECALL_BUDGET_CHARS;
    // Content shown is the budget; headers and markers add a few hundred characters a hit.
    let chars = out.text.chars().count();
    assert!(chars <= budget + 12 * 400, "{chars} characters for 12 hits");
    // Without the shared budget each would have shown its whole 6,000-character excerpt.
    assert!(
        chars < 12 * codeoid_core::tools::MAX_CONTENT_CHARS / 2,
        "{chars}"
    );
    // Each excerpt still ends with its output's last line.
    for i in 0..12 {
        assert!(out.text.contains(&format!("end {i}")), "end {i} missing");
    }
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|n| json!(n)),
        ".{0,20}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("query".to_owned()),
                        Just("limit".to_owned()),
                        Just("path".to_owned()),
                        Just("offset".to_owned()),
                        Just("before".to_owned()),
                        Just("episode_id".to_owned()),
                        Just("tool_name".to_owned()),
                        ".{0,8}",
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn no_input_makes_a_tool_panic_or_fail_silently(
        tool in prop_oneof![
            Just("recall".to_owned()),
            Just("recall_file".to_owned()),
            Just("timeline".to_owned()),
            Just("get_episode".to_owned()),
            Just("x__recall".to_owned()),
            ".{0,12}",
        ],
        args in prop_oneof![any_json().prop_map(|v| v.to_string()), ".{0,40}"],
    ) {
        let memory = shared_memory();
        let out = memory.call_tool(None, &tool, &args);
        prop_assert!(!out.text.is_empty());
        if out.is_error {
            let known = ToolName::parse(&tool).is_some();
            prop_assert!(
                out.text.starts_with("invalid arguments for ")
                    || out.text.starts_with("unknown memory tool ")
                    || (known && out.text.contains(" failed: ")),
                "{}", out.text
            );
        }
    }
}

/// One lexical memory with a few episodes, shared by the proptest cases.
fn shared_memory() -> &'static Memory {
    static MEMORY: std::sync::OnceLock<(tempfile::TempDir, Memory)> = std::sync::OnceLock::new();
    &MEMORY
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let memory = lexical_memory(dir.path());
            let s = session(&memory, "work");
            crate::retrieve::record_filler(&memory, &s, 0);
            (dir, memory)
        })
        .1
}
