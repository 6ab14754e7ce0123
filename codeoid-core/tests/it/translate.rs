//! Translation: golden fixtures, the invariants real translators get wrong (one test each), bad
//! input, real Claude Code sessions, property tests, and validation of every fixture against the
//! providers' own SDK types (Python).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::evaldata;
use codeoid_core::ErrorKind;
use codeoid_core::canonical::{
    Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};
use codeoid_core::translate::{
    self, Backend, CANCELLED_RESULT, ERROR_MARKER, ForeignThinking, Format, GEMINI_SKIP_SIGNATURE,
    LossKind, Options, ToolSpec,
};
use proptest::prelude::*;
use serde_json::{Value, json};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn fixtures_dir() -> PathBuf {
    workspace().join("fixtures/translate")
}

/// The four memory tools' schemas as DESIGN §3 states them (the tools module owns the real ones;
/// translation takes schemas as values).
pub fn memory_tools() -> Vec<ToolSpec> {
    let tool = |name: &str, description: &str, schema: Value| ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: schema,
    };
    vec![
        tool(
            "recall",
            "Search all prior episodes of this workspace.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 6},
                    "include_current_session": {"type": "boolean", "default": false},
                    "tool_name": {"type": "string"},
                },
                "required": ["query"],
                "additionalProperties": false,
            }),
        ),
        tool(
            "recall_file",
            "The most recent prior read of a file.",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
                "additionalProperties": false,
            }),
        ),
        tool(
            "timeline",
            "Walk activity newest first.",
            json!({
                "type": "object",
                "properties": {
                    "offset": {"type": "integer", "minimum": 0, "default": 0},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 60, "default": 20},
                    "before": {"type": "string", "description": "An episode id."},
                },
                "additionalProperties": false,
            }),
        ),
        tool(
            "get_episode",
            "One past episode verbatim.",
            json!({
                "type": "object",
                "properties": {"episode_id": {"type": "string"}},
                "required": ["episode_id"],
                "additionalProperties": false,
            }),
        ),
    ]
}

fn call(id: &str, name: &str, input: Value) -> Part {
    Part::ToolCall(ToolCall {
        id: id.into(),
        provider_id: None,
        name: name.into(),
        input,
    })
}

fn result(id: &str, text: &str, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id: id.into(),
        parts: vec![ToolResultPart::Text { text: text.into() }],
        is_error,
    })
}

fn text(t: &str) -> Part {
    Part::Text { text: t.into() }
}

fn png() -> Image {
    Image {
        media_type: Some("image/png".into()),
        source: ImageSource::Base64 { data: PNG.into() },
    }
}

fn signed(provider: &str, model: &str, text: &str, value: &str) -> Part {
    Part::Thinking(Thinking {
        text: text.into(),
        signature: Some(Signature {
            provider: provider.into(),
            model: Some(model.into()),
            value: value.into(),
        }),
        redacted: false,
    })
}

fn assistant(parts: Vec<Part>) -> Turn {
    Turn::new(Role::Assistant, parts)
}

fn user(parts: Vec<Part>) -> Turn {
    Turn::new(Role::User, parts)
}

/// Role and parts: what a request body carries. A call's `provider_id` equal to its `id` (as
/// importers write it) is no provider id: the id carries it, and no format has a slot for it
/// apart from the id (docs/translate.md, "The contract").
fn shape(turns: &[Turn]) -> Vec<(Role, Vec<Part>)> {
    turns
        .iter()
        .map(|t| {
            let parts = t
                .parts
                .iter()
                .map(|p| match p {
                    Part::ToolCall(call) if call.provider_id.as_ref() == Some(&call.id) => {
                        Part::ToolCall(ToolCall {
                            provider_id: None,
                            ..call.clone()
                        })
                    }
                    other => other.clone(),
                })
                .collect();
            (t.role, parts)
        })
        .collect()
}

fn backend(format: Format, model: &str) -> Backend {
    Backend::new(format).with_model(model)
}

fn round_trip(turns: &[Turn], backend: &Backend, options: &Options) -> (Value, Vec<Turn>) {
    let out = translate::to_messages(turns, backend, options).unwrap();
    assert!(out.is_lossless(), "{:#?}", out.losses);
    let back = translate::from_messages(&out.value, backend, options).unwrap();
    assert!(back.is_lossless(), "{:#?}", back.losses);
    (out.value, back.value.turns)
}

/// A conversation each format can carry whole when its thinking is native.
fn native_conversation(provider: &str, model: &str) -> Vec<Turn> {
    let thinking = |t: &str, v: &str| signed(provider, model, t, v);
    let mut first = assistant(vec![
        thinking("Plan: read both files.", "sig-1"),
        text("Reading both."),
        call("call_a", "Read", json!({"file_path": "src/a.rs"})),
        call("call_b", "Read", json!({"file_path": "src/b.rs"})),
    ]);
    first.provider = Some(provider.into());
    let mut second = assistant(vec![thinking("", "sig-empty"), text("Both read.")]);
    second.provider = Some(provider.into());
    vec![
        user(vec![text("Compare a.rs and b.rs"), Part::Image(png())]),
        first,
        user(vec![
            result("call_a", "fn a() {}", false),
            Part::ToolResult(ToolResult {
                call_id: "call_b".into(),
                parts: vec![
                    ToolResultPart::Text {
                        text: "no such file".into(),
                    },
                    ToolResultPart::Image(png()),
                ],
                is_error: true,
            }),
            text("and then?"),
        ]),
        second,
    ]
}

#[test]
fn every_format_round_trips_what_it_can_carry() {
    let cases = [
        (Format::Anthropic, "anthropic", "claude-sonnet-4-5"),
        (Format::OpenaiResponses, "openai", "gpt-5"),
        (Format::Gemini, "gemini", "gemini-2.5-pro"),
    ];
    for (format, provider, model) in cases {
        let turns = native_conversation(provider, model);
        let (_, back) = round_trip(&turns, &backend(format, model), &Options::default());
        assert_eq!(shape(&back), shape(&turns), "{format}");
        assert_eq!(back[1].provider.as_deref(), Some(provider));
        assert_eq!(back[1].model.as_deref(), Some(model));
    }
    // Chat has no signed thinking; with reasoning_content, unsigned reasoning survives.
    let mut turns = native_conversation("deepseek", "deepseek-reasoner");
    for turn in &mut turns {
        for part in &mut turn.parts {
            if let Part::Thinking(t) = part {
                t.signature = None;
            }
        }
    }
    let options = Options {
        chat_reasoning_content: true,
        ..Options::default()
    };
    let deepseek = backend(Format::OpenaiChat, "deepseek-reasoner").with_provider("deepseek");
    let (value, back) = round_trip(&turns, &deepseek, &options);
    assert_eq!(shape(&back), shape(&turns));
    assert_eq!(value[1]["reasoning_content"], "Plan: read both files.");
}

#[test]
fn anthropic_tool_ids_are_remapped_and_mapped_back() {
    let ids = ["functions.read_file:0", "call abc|1", "ünïcode", "cdx_6869"];
    let turns = vec![
        user(vec![text("go")]),
        assistant(ids.iter().map(|id| call(id, "Read", json!({}))).collect()),
        user(ids.iter().map(|id| result(id, "ok", false)).collect()),
    ];
    let target = Backend::new(Format::Anthropic);
    let (value, back) = round_trip(&turns, &target, &Options::default());
    let pattern_ok = |id: &str| {
        !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let uses = value[1]["content"].as_array().unwrap();
    let results = value[2]["content"].as_array().unwrap();
    for (tool_use, tool_result) in uses.iter().zip(results) {
        let id = tool_use["id"].as_str().unwrap();
        assert!(pattern_ok(id), "{id}");
        assert_eq!(
            tool_result["tool_use_id"], id,
            "result ids follow their call"
        );
    }
    assert_eq!(shape(&back), shape(&turns));
    // Deterministic: translating again gives the same wire ids.
    let again = translate::to_messages(&turns, &target, &Options::default()).unwrap();
    assert_eq!(again.value, value);
}

#[test]
fn results_of_one_assistant_turn_go_in_the_next_single_user_message_before_any_text() {
    let turns = vec![
        user(vec![text("go")]),
        assistant(vec![
            call("a", "Read", json!({})),
            call("b", "Grep", json!({})),
        ]),
        user(vec![text("also: hurry"), result("b", "B", false)]),
        user(vec![result("a", "A", false)]),
    ];
    for format in Format::ALL {
        let out =
            translate::to_messages(&turns, &Backend::new(format), &Options::default()).unwrap();
        assert!(
            out.losses.iter().all(|l| l.kind == LossKind::Moved),
            "{format}: {:#?}",
            out.losses
        );
        let back = translate::from_messages(&out.value, &Backend::new(format), &Options::default())
            .unwrap()
            .value
            .turns;
        assert_eq!(back.len(), 3, "{format}: one user turn after the calls");
        assert_eq!(
            back[2].parts,
            vec![
                result("a", "A", false),
                result("b", "B", false),
                text("also: hurry")
            ],
            "{format}"
        );
    }
    let anthropic = translate::to_messages(
        &turns,
        &Backend::new(Format::Anthropic),
        &Options::default(),
    )
    .unwrap()
    .value;
    let kinds: Vec<&str> = anthropic[2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["tool_result", "tool_result", "text"]);
}

#[test]
fn parallel_tool_calls_stay_parallel() {
    let turns = vec![
        user(vec![text("go")]),
        assistant(vec![
            call("a", "Read", json!({"file_path": "a"})),
            call("b", "Read", json!({"file_path": "b"})),
            call("c", "Grep", json!({"pattern": "x"})),
        ]),
        user(vec![
            result("a", "1", false),
            result("b", "2", false),
            result("c", "3", false),
        ]),
    ];
    let options = Options::default();
    let chat = translate::to_messages(&turns, &Backend::new(Format::OpenaiChat), &options)
        .unwrap()
        .value;
    assert_eq!(chat[1]["tool_calls"].as_array().unwrap().len(), 3);
    assert!(
        chat.as_array().unwrap()[2..]
            .iter()
            .all(|m| m["role"] == "tool")
    );
    let responses =
        translate::to_messages(&turns, &Backend::new(Format::OpenaiResponses), &options)
            .unwrap()
            .value;
    let types: Vec<&str> = responses.as_array().unwrap()[1..]
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "function_call",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "function_call_output"
        ]
    );
    let gemini = translate::to_messages(&turns, &Backend::new(Format::Gemini), &options)
        .unwrap()
        .value;
    assert_eq!(gemini.as_array().unwrap().len(), 3);
    assert_eq!(gemini[1]["parts"].as_array().unwrap().len(), 3);
    assert_eq!(gemini[2]["parts"].as_array().unwrap().len(), 3);
    let anthropic = translate::to_messages(&turns, &Backend::new(Format::Anthropic), &options)
        .unwrap()
        .value;
    assert_eq!(anthropic[1]["content"].as_array().unwrap().len(), 3);
    // Calls split over consecutive assistant turns (as Claude Code logs them) become parallel again.
    let split = vec![
        user(vec![text("go")]),
        assistant(vec![call("a", "Read", json!({}))]),
        assistant(vec![call("b", "Read", json!({}))]),
        user(vec![result("a", "1", false), result("b", "2", false)]),
    ];
    let out = translate::to_messages(&split, &Backend::new(Format::OpenaiChat), &options).unwrap();
    assert_eq!(out.value[1]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(out.losses[0].kind, LossKind::Merged);
}

#[test]
fn gemini_pairs_responses_by_name_one_per_call_with_object_responses() {
    let turns = vec![
        user(vec![text("go")]),
        assistant(vec![
            call("r1", "Read", json!({"file_path": "a"})),
            call("g1", "Grep", json!({"pattern": "x"})),
            call("r2", "Read", json!({"file_path": "b"})),
        ]),
        // r2 answered first, g1 never: the writer restores call order and answers g1.
        user(vec![result("r2", "B", false), result("r1", "A", false)]),
        assistant(vec![text("done")]),
    ];
    let options = Options {
        gemini_call_ids: false,
        ..Options::default()
    };
    let target = Backend::new(Format::Gemini);
    let out = translate::to_messages(&turns, &target, &options).unwrap();
    let calls = out.value[1]["parts"].as_array().unwrap();
    let responses = out.value[2]["parts"].as_array().unwrap();
    assert_eq!(calls.len(), responses.len(), "as many responses as calls");
    for (c, r) in calls.iter().zip(responses) {
        assert_eq!(c["functionCall"]["name"], r["functionResponse"]["name"]);
        assert!(r["functionResponse"]["response"].is_object());
        assert!(c["functionCall"].get("id").is_none());
    }
    assert_eq!(
        responses[0]["functionResponse"]["response"],
        json!({"output": "A"})
    );
    assert_eq!(
        responses[1]["functionResponse"]["response"],
        json!({"error": CANCELLED_RESULT})
    );
    assert_eq!(
        responses[2]["functionResponse"]["response"],
        json!({"output": "B"})
    );
    assert!(out.losses.iter().any(|l| l.kind == LossKind::Synthesized));
    // Read back without ids: pairing by name and order gives each response its call.
    let back = translate::from_messages(&out.value, &target, &options)
        .unwrap()
        .value
        .turns;
    let call_ids: Vec<String> = back[1]
        .parts
        .iter()
        .map(|p| match p {
            Part::ToolCall(c) => c.id.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let result_ids: Vec<String> = back[2]
        .parts
        .iter()
        .map(|p| match p {
            Part::ToolResult(r) => r.call_id.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(call_ids, result_ids);
    assert_eq!(call_ids[0], "gemini_call_1_0");
}

#[test]
fn errors_are_encoded_where_there_is_no_flag_and_recovered() {
    let turns = vec![
        user(vec![text("go")]),
        assistant(vec![
            call("a", "Bash", json!({"command": "false"})),
            call("b", "Bash", json!({})),
        ]),
        user(vec![
            result("a", "exit 1", true),
            Part::ToolResult(ToolResult {
                call_id: "b".into(),
                parts: vec![],
                is_error: true,
            }),
        ]),
    ];
    let chat = round_trip(
        &turns,
        &Backend::new(Format::OpenaiChat),
        &Options::default(),
    );
    assert_eq!(chat.0[2]["content"], format!("{ERROR_MARKER}\nexit 1"));
    assert_eq!(chat.0[3]["content"], ERROR_MARKER);
    assert_eq!(shape(&chat.1), shape(&turns));
    let responses = round_trip(
        &turns,
        &Backend::new(Format::OpenaiResponses),
        &Options::default(),
    );
    assert_eq!(responses.0[3]["output"], format!("{ERROR_MARKER}\nexit 1"));
    assert_eq!(shape(&responses.1), shape(&turns));
    let gemini =
        translate::to_messages(&turns, &Backend::new(Format::Gemini), &Options::default()).unwrap();
    assert_eq!(
        gemini.value[2]["parts"][0]["functionResponse"]["response"],
        json!({"error": "exit 1"})
    );
    let back = translate::from_messages(
        &gemini.value,
        &Backend::new(Format::Gemini),
        &Options::default(),
    )
    .unwrap()
    .value
    .turns;
    assert_eq!(back[2].parts[0], turns[2].parts[0]);
    // The flagged error without text is the one thing Gemini reads back differently; reported.
    assert_eq!(gemini.losses.len(), 1);
    assert_eq!(gemini.losses[0].kind, LossKind::Changed);
    // A successful output that starts with the marker is reported, since it reads back flagged.
    let lookalike = vec![
        assistant(vec![call("c", "Bash", json!({}))]),
        user(vec![result(
            "c",
            &format!("{ERROR_MARKER}\nnot really"),
            false,
        )]),
    ];
    let out = translate::to_messages(
        &lookalike,
        &Backend::new(Format::OpenaiChat),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(out.losses[0].kind, LossKind::Changed);
}

#[test]
fn images_in_tool_results_become_sibling_parts_for_gemini_and_come_back() {
    let turns = vec![
        user(vec![text("screenshot please")]),
        assistant(vec![call("s", "Screenshot", json!({}))]),
        user(vec![
            Part::ToolResult(ToolResult {
                call_id: "s".into(),
                parts: vec![
                    ToolResultPart::Text {
                        text: "captured".into(),
                    },
                    ToolResultPart::Image(png()),
                ],
                is_error: false,
            }),
            // The user's own image right after must not be taken for the result's.
            Part::Image(png()),
        ]),
    ];
    let (value, back) = round_trip(&turns, &Backend::new(Format::Gemini), &Options::default());
    let parts = value[2]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(
        parts[0]["functionResponse"]["response"],
        json!({"output": "captured", "attached_images": 1})
    );
    assert_eq!(parts[1]["inlineData"]["mimeType"], "image/png");
    assert_eq!(shape(&back), shape(&turns));
    // Chat has no images in tool messages: they follow in a user message and come back too.
    let (chat, back) = round_trip(
        &turns,
        &Backend::new(Format::OpenaiChat),
        &Options::default(),
    );
    assert_eq!(chat[2]["content"], "captured");
    assert_eq!(
        chat[3]["content"][0]["text"],
        "[tool call s returned 1 image(s)]"
    );
    assert_eq!(shape(&back), shape(&turns));
}

#[test]
fn thinking_signatures_go_back_only_to_their_provider_and_family() {
    let turns = vec![
        user(vec![text("q")]),
        assistant(vec![
            signed("anthropic", "claude-opus-4-1", "deep thought", "sig-a"),
            text("answer"),
        ]),
        user(vec![text("more")]),
    ];
    // Another Claude model: kept (Anthropic signatures are valid across Claude models).
    let claude = translate::to_messages(
        &turns,
        &backend(Format::Anthropic, "claude-sonnet-4-5"),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(claude.value[1]["content"][0]["signature"], "sig-a");
    assert_eq!(claude.losses.len(), 1, "only the model restamp is reported");
    assert_eq!(claude.losses[0].kind, LossKind::Changed);
    for format in [Format::OpenaiChat, Format::OpenaiResponses, Format::Gemini] {
        let out =
            translate::to_messages(&turns, &Backend::new(format), &Options::default()).unwrap();
        let dump = out.value.to_string();
        assert!(
            !dump.contains("sig-a") && !dump.contains("deep thought"),
            "{format}: {dump}"
        );
        assert_eq!(out.losses[0].kind, LossKind::Dropped);
        let as_text = Options {
            foreign_thinking: ForeignThinking::AsText,
            ..Options::default()
        };
        let out = translate::to_messages(&turns, &Backend::new(format), &as_text).unwrap();
        let dump = out.value.to_string();
        assert!(!dump.contains("sig-a"), "{format}");
        assert!(
            dump.contains("<thinking>\\ndeep thought\\n</thinking>"),
            "{format}: {dump}"
        );
        assert_eq!(out.losses[0].kind, LossKind::AsText);
    }
    // Same provider, other family: dropped.
    let gpt = vec![
        user(vec![text("q")]),
        assistant(vec![signed("openai", "gpt-5-mini", "t", "enc"), text("a")]),
    ];
    let out = translate::to_messages(
        &gpt,
        &backend(Format::OpenaiResponses, "gpt-5"),
        &Options::default(),
    )
    .unwrap();
    assert!(!out.value.to_string().contains("enc"));
}

#[test]
fn empty_signed_thinking_blocks_survive() {
    for (format, provider) in [
        (Format::Anthropic, "anthropic"),
        (Format::OpenaiResponses, "openai"),
        (Format::Gemini, "gemini"),
    ] {
        let model = "m";
        let turns = vec![
            user(vec![text("q")]),
            assistant(vec![signed(provider, model, "", "opaque"), text("a")]),
            user(vec![text("q2")]),
            assistant(vec![signed(provider, model, "", "opaque-end")]),
        ];
        let (value, back) = round_trip(&turns, &backend(format, model), &Options::default());
        assert!(value.to_string().contains("opaque-end"), "{format}");
        assert_eq!(shape(&back), shape(&turns), "{format}");
    }
    let redacted = vec![
        user(vec![text("q")]),
        assistant(vec![
            Part::Thinking(Thinking {
                text: String::new(),
                signature: Some(Signature {
                    provider: "anthropic".into(),
                    model: None,
                    value: "EmwKAhgBEgy".into(),
                }),
                redacted: true,
            }),
            text("a"),
        ]),
    ];
    let (value, back) = round_trip(
        &redacted,
        &Backend::new(Format::Anthropic),
        &Options::default(),
    );
    assert_eq!(
        value[1]["content"][0],
        json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy"})
    );
    assert_eq!(shape(&back), shape(&redacted));
}

#[test]
fn gemini_thought_signature_on_a_function_call_maps_to_empty_thinking_before_it() {
    let contents = json!([
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnLTE="},
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"temp": 20}}},
            {"functionResponse": {"name": "get_weather", "response": {"temp": 25}}},
        ]},
        {"role": "model", "parts": [{"text": "Paris 20, Rome 25."}, {"text": "", "thoughtSignature": "c2lnLTI="}]},
    ]);
    let target = backend(Format::Gemini, "gemini-3-pro-preview");
    let turns = translate::from_messages(&contents, &target, &Options::default())
        .unwrap()
        .value
        .turns;
    match &turns[1].parts[..] {
        [Part::Thinking(t), Part::ToolCall(a), Part::ToolCall(b)] => {
            assert_eq!(t.text, "");
            let signature = t.signature.as_ref().unwrap();
            assert_eq!(
                (signature.provider.as_str(), signature.value.as_str()),
                ("gemini", "c2lnLTE=")
            );
            assert_eq!(signature.model.as_deref(), Some("gemini-3-pro-preview"));
            assert_eq!(
                (a.input["city"].as_str(), b.input["city"].as_str()),
                (Some("Paris"), Some("Rome"))
            );
        }
        other => panic!("{other:?}"),
    }
    // Native responses pair by name and order and read back as their JSON.
    assert_eq!(
        turns[2].parts[1],
        Part::ToolResult(ToolResult {
            call_id: "gemini_call_1_1".into(),
            parts: vec![ToolResultPart::Text {
                text: "{\"temp\":25}".into()
            }],
            is_error: false,
        })
    );
    // Written back, the signature sits on the call again.
    let out = translate::to_messages(&turns, &target, &Options::default()).unwrap();
    assert_eq!(out.value[1]["parts"][0]["thoughtSignature"], "c2lnLTE=");
    assert!(out.value[1]["parts"][0]["functionCall"].is_object());
    assert_eq!(out.value[3]["parts"][1]["thoughtSignature"], "c2lnLTI=");
}

#[test]
fn gemini_gets_the_documented_placeholder_for_calls_it_did_not_make() {
    let turns = vec![
        user(vec![text("go")]),
        assistant(vec![
            signed("anthropic", "claude-opus-4-1", "t", "s"),
            call("toolu_1", "Read", json!({})),
        ]),
        user(vec![result("toolu_1", "ok", false)]),
    ];
    let options = Options {
        gemini_missing_signature: Some(GEMINI_SKIP_SIGNATURE.into()),
        ..Options::default()
    };
    let target = backend(Format::Gemini, "gemini-3-pro-preview");
    let out = translate::to_messages(&turns, &target, &options).unwrap();
    assert_eq!(
        out.value[1]["parts"][0]["thoughtSignature"],
        GEMINI_SKIP_SIGNATURE
    );
    let back = translate::from_messages(&out.value, &target, &options)
        .unwrap()
        .value
        .turns;
    assert!(
        matches!(back[1].parts[..], [Part::ToolCall(_)]),
        "the placeholder is not a signature: {:?}",
        back[1].parts
    );
}

#[test]
fn memory_tools_are_declarable_on_every_backend() {
    for format in Format::ALL {
        let out = translate::declare_tools(&memory_tools(), format, &Options::default()).unwrap();
        let text = out.value.to_string();
        for name in ["recall", "recall_file", "timeline", "get_episode"] {
            assert!(text.contains(&format!("\"{name}\"")), "{format}");
        }
        if format == Format::Gemini {
            assert!(!text.contains("additionalProperties"), "{text}");
            assert_eq!(
                out.losses.len(),
                4,
                "one dropped additionalProperties per tool"
            );
            let recall = &out.value[0]["functionDeclarations"][0]["parameters"];
            assert_eq!(
                recall["properties"]["limit"],
                json!({"type": "integer", "minimum": 1, "maximum": 20, "default": 6})
            );
            assert_eq!(recall["required"], json!(["query"]));
        } else {
            assert!(out.is_lossless(), "{format}: {:?}", out.losses);
            assert!(text.contains("\"additionalProperties\":false"), "{format}");
        }
    }
    let verbatim = Options {
        gemini_json_schema: true,
        ..Options::default()
    };
    let out = translate::declare_tools(&memory_tools(), Format::Gemini, &verbatim).unwrap();
    assert!(out.is_lossless());
    assert_eq!(
        out.value[0]["functionDeclarations"][3]["parametersJsonSchema"],
        memory_tools()[3].input_schema
    );
}

#[test]
fn tool_declarations_reject_bad_names_and_non_object_schemas() {
    let spec = |name: &str, schema: Value| ToolSpec {
        name: name.into(),
        description: String::new(),
        input_schema: schema,
    };
    let err = translate::declare_tools(
        &[spec("read.file", json!({"type": "object"}))],
        Format::Anthropic,
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("\"read.file\""), "{err}");
    assert!(
        translate::declare_tools(
            &[spec("read.file", json!({"type": "object"}))],
            Format::Gemini,
            &Options::default()
        )
        .is_ok()
    );
    let err = translate::declare_tools(
        &[spec("t", json!({"type": "string"}))],
        Format::OpenaiChat,
        &Options::default(),
    )
    .unwrap_err();
    assert!(err.message().contains("type \"string\""), "{err}");
    let twice = [
        spec("t", json!({"type": "object"})),
        spec("t", json!({"type": "object"})),
    ];
    assert!(
        translate::declare_tools(&twice, Format::Gemini, &Options::default())
            .unwrap_err()
            .message()
            .contains("declared twice")
    );
}

#[test]
fn requests_carry_system_messages_and_tools_and_read_back() {
    let turns = native_conversation("anthropic", "claude-sonnet-4-5");
    for format in Format::ALL {
        let target = backend(format, "claude-sonnet-4-5").with_provider("anthropic");
        let body = translate::to_request(
            Some("Be terse."),
            &turns,
            &memory_tools(),
            &target,
            &Options::default(),
        )
        .unwrap();
        let back = translate::from_request(&body.value, &target, &Options::default())
            .unwrap()
            .value;
        assert_eq!(back.system.as_deref(), Some("Be terse."), "{format}");
        assert_eq!(back.tools.len(), 4, "{format}");
        if body.is_lossless() {
            assert_eq!(shape(&back.turns), shape(&turns), "{format}");
        }
    }
    let chat = translate::to_request(
        Some("S"),
        &[],
        &[],
        &backend(Format::OpenaiChat, "gpt-5"),
        &Options {
            chat_system_role: translate::SystemRole::Developer,
            ..Options::default()
        },
    )
    .unwrap()
    .value;
    assert_eq!(
        chat,
        json!({"model": "gpt-5", "messages": [{"role": "developer", "content": "S"}]})
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input

#[test]
fn unknown_content_part_types_are_precise_errors_or_dropped_on_request() {
    let cases = [
        (
            Format::Anthropic,
            json!([{"role": "user", "content": [{"type": "document", "source": {}}]}]),
            "messages[0].content[0]",
        ),
        (
            Format::OpenaiChat,
            json!([{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]),
            "messages[0].content[0]",
        ),
        (
            Format::OpenaiResponses,
            json!([{"type": "web_search_call", "id": "ws_1"}]),
            "input[0]",
        ),
        (
            Format::Gemini,
            json!([{"role": "model", "parts": [{"executableCode": {"code": "1"}}]}]),
            "contents[0].parts[0]",
        ),
    ];
    for (format, value, path) in cases {
        let err = translate::from_messages(&value, &Backend::new(format), &Options::default())
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{format}");
        assert!(err.message().starts_with(path), "{format}: {err}");
        assert!(err.message().contains("skip_unknown"), "{format}: {err}");
        let skip = Options {
            skip_unknown: true,
            ..Options::default()
        };
        let out = translate::from_messages(&value, &Backend::new(format), &skip).unwrap();
        assert_eq!(out.losses.len(), 1, "{format}");
        assert_eq!(out.losses[0].kind, LossKind::Dropped);
    }
    // Canonical JSON with an unknown part type is rejected by the canonical parser itself.
    let err = Turn::from_json(r#"{"role": "user", "parts": [{"type": "audio"}]}"#).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn malformed_provider_json_names_the_path() {
    let cases = [
        (
            Format::Anthropic,
            json!({"messages": []}),
            "messages is an object; expected an array",
        ),
        (
            Format::Anthropic,
            json!([{"role": "system", "content": "x"}]),
            "messages[0].role is \"system\"",
        ),
        (
            Format::Anthropic,
            json!([{"role": "assistant", "content": [{"type": "tool_use", "id": 1, "name": "x", "input": {}}]}]),
            "messages[0].content[0].id is a number",
        ),
        (
            Format::OpenaiChat,
            json!([{"role": "tool", "tool_call_id": "a"}]),
            "messages[0].content is missing",
        ),
        (
            Format::OpenaiResponses,
            json!([{"type": "function_call", "call_id": "a", "name": "x"}]),
            "input[0].arguments is missing",
        ),
        (
            Format::Gemini,
            json!([{"role": "user", "parts": [{"functionResponse": {"name": "x", "response": "ok"}}]}]),
            "contents[0].parts[0].functionResponse.response is a string; expected an object",
        ),
        (
            Format::Gemini,
            json!([{"role": "user", "parts": [{"functionCall": {"name": "x"}}]}]),
            "contents[0]: part 0 of a user turn is a tool_call",
        ),
    ];
    let err = translate::from_request(
        &json!({"contents": []}),
        &Backend::new(Format::Anthropic),
        &Options::default(),
    )
    .unwrap_err();
    assert!(
        err.message().contains("request body has no \"messages\""),
        "{err}"
    );
    let err = translate::from_request(
        &json!([]),
        &Backend::new(Format::Gemini),
        &Options::default(),
    )
    .unwrap_err();
    assert!(err.message().contains("request body is an array"), "{err}");
    for (format, value, expected) in cases {
        let err = translate::from_messages(&value, &Backend::new(format), &Options::default())
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains(expected), "{format}: {err}");
    }
}

fn skip_unknown() -> Options {
    Options {
        skip_unknown: true,
        ..Options::default()
    }
}

#[test]
fn unknown_blocks_inside_tool_results_are_errors_or_dropped_with_skip_unknown() {
    let cases = [
        (
            Format::Anthropic,
            json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
                {"type": "text", "text": "found it"},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}},
                {"type": "search_result", "source": "https://example.com", "title": "x", "content": []},
            ]}]}]),
            "messages[0].content[0].content[1] has unknown type \"document\"; supported: text, image",
        ),
        (
            Format::OpenaiResponses,
            json!([{"type": "function_call_output", "call_id": "t1", "output": [
                {"type": "input_text", "text": "found it"},
                {"type": "input_file", "file_id": "file_1"},
                {"type": "input_file", "file_data": "data:application/pdf;base64,JVBER"},
            ]}]),
            "input[0].output[1] has unknown type \"input_file\"; supported: input_text, input_image",
        ),
        (
            Format::OpenaiChat,
            json!([{"role": "tool", "tool_call_id": "t1", "content": [
                {"type": "text", "text": "found it"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                {"type": "text"},
            ]}]),
            "messages[0].content[1] has unknown type \"image_url\"; supported: text",
        ),
    ];
    for (format, value, expected) in cases {
        let err = translate::from_messages(&value, &Backend::new(format), &Options::default())
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{format}");
        assert!(err.message().starts_with(expected), "{format}: {err}");
        assert!(err.message().contains("skip_unknown"), "{format}: {err}");
        let out = translate::from_messages(&value, &Backend::new(format), &skip_unknown()).unwrap();
        let kinds: Vec<LossKind> = out.losses.iter().map(|l| l.kind).collect();
        assert_eq!(kinds, [LossKind::Dropped, LossKind::Dropped], "{format}");
        assert_eq!(
            out.value.turns[0].parts,
            [result("t1", "found it", false)],
            "{format}"
        );
    }
    // A text part of a tool message without its text: named, and dropped on request.
    let chat = json!([{"role": "tool", "tool_call_id": "t1", "content": [{"type": "text"}]}]);
    let backend = Backend::new(Format::OpenaiChat);
    let err = translate::from_messages(&chat, &backend, &Options::default()).unwrap_err();
    assert!(
        err.message()
            .starts_with("messages[0].content[0].text is missing"),
        "{err}"
    );
    let out = translate::from_messages(&chat, &backend, &skip_unknown()).unwrap();
    assert_eq!(out.losses.len(), 1);
    assert!(
        out.losses[0].what.contains("without text"),
        "{:?}",
        out.losses
    );
}

#[test]
fn gemini_media_other_than_images_is_unknown_content() {
    let contents = json!([{"role": "user", "parts": [
        {"text": "summarize these"},
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0xLjQ="}},
        {"fileData": {"mimeType": "video/mp4", "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/abc"}},
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
    ]}]);
    let gemini = Backend::new(Format::Gemini);
    let err = translate::from_messages(&contents, &gemini, &Options::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(
        err.message()
            .starts_with("contents[0].parts[1] holds \"application/pdf\" media"),
        "{err}"
    );
    assert!(err.message().contains("skip_unknown"), "{err}");
    let out = translate::from_messages(&contents, &gemini, &skip_unknown()).unwrap();
    assert_eq!(
        out.value.turns[0].parts,
        [text("summarize these"), Part::Image(png())]
    );
    let dropped: Vec<String> = out.losses.iter().map(|l| l.to_string()).collect();
    assert_eq!(
        dropped,
        [
            "message 0 part 1: dropped: application/pdf media; canonical turns carry images \
             (image/*) only",
            "message 0 part 2: dropped: video/mp4 media; canonical turns carry images (image/*) \
             only"
        ]
    );
}

#[test]
fn images_of_types_the_target_does_not_accept_are_dropped_by_every_writer() {
    let pdf = Image {
        media_type: Some("application/pdf".into()),
        source: ImageSource::Base64 {
            data: "JVBERi0xLjQ=".into(),
        },
    };
    let video = Image {
        media_type: Some("video/mp4".into()),
        source: ImageSource::Url {
            url: "https://example.com/clip.mp4".into(),
        },
    };
    let turns = vec![
        user(vec![
            text("what is in these?"),
            Part::Image(pdf.clone()),
            Part::Image(video),
            Part::Image(png()),
        ]),
        assistant(vec![call("r", "Read", json!({"file_path": "a.pdf"}))]),
        user(vec![Part::ToolResult(ToolResult {
            call_id: "r".into(),
            parts: vec![
                ToolResultPart::Text {
                    text: "read".into(),
                },
                ToolResultPart::Image(pdf),
            ],
            is_error: false,
        })]),
    ];
    for format in Format::ALL {
        let out =
            translate::to_messages(&turns, &Backend::new(format), &Options::default()).unwrap();
        let dump = out.value.to_string();
        for absent in ["application/pdf", "JVBERi0xLjQ=", "video/mp4", "clip.mp4"] {
            assert!(!dump.contains(absent), "{format}: {absent} in {dump}");
        }
        assert!(dump.contains(PNG), "{format}: the PNG is still sent");
        let dropped: Vec<String> = out
            .losses
            .iter()
            .filter(|l| l.kind == LossKind::Dropped)
            .map(|l| l.location.to_string())
            .collect();
        assert_eq!(
            dropped,
            ["turn 0 part 1", "turn 0 part 2", "turn 2 part 0"],
            "{format}: {:#?}",
            out.losses
        );
    }
}

#[test]
fn system_messages_after_the_first_turn_are_reported_as_moved() {
    let chat = json!([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "developer", "content": "Now be verbose."},
        {"role": "assistant", "content": "Hello!"},
    ]);
    let out = translate::from_messages(
        &chat,
        &Backend::new(Format::OpenaiChat),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        out.value.system.as_deref(),
        Some("Be brief.\n\nNow be verbose.")
    );
    let losses: Vec<String> = out.losses.iter().map(|l| l.to_string()).collect();
    assert_eq!(
        losses,
        [
            "message 2: moved: developer message after the conversation started moved into the \
          system prompt; its position among the turns is not kept"
        ]
    );
    let responses = json!([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Later."}]},
    ]);
    let out = translate::from_messages(
        &responses,
        &Backend::new(Format::OpenaiResponses),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(out.value.system.as_deref(), Some("Be brief.\n\nLater."));
    assert_eq!(out.losses.len(), 1);
    assert_eq!(out.losses[0].kind, LossKind::Moved);
    assert_eq!(out.losses[0].location.to_string(), "message 2");
}

#[test]
fn a_native_gemini_function_response_read_as_text_is_reported() {
    let contents = json!([
        {"role": "model", "parts": [
            {"functionCall": {"id": "c1", "name": "weather", "args": {"city": "Oslo"}}},
            {"functionCall": {"id": "c2", "name": "weather", "args": {"city": "Rome"}}},
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "c1", "name": "weather", "response": {"temperature": 3}}},
            {"functionResponse": {"id": "c2", "name": "weather", "response": {"output": "21 C"}}},
        ]},
    ]);
    let gemini = Backend::new(Format::Gemini);
    let out = translate::from_messages(&contents, &gemini, &Options::default()).unwrap();
    assert_eq!(
        out.value.turns[1].parts,
        [
            result("c1", "{\"temperature\":3}", false),
            result("c2", "21 C", false)
        ]
    );
    assert_eq!(out.losses.len(), 1, "{:#?}", out.losses);
    assert_eq!(out.losses[0].kind, LossKind::Changed);
    assert_eq!(out.losses[0].location.to_string(), "message 1 part 0");
    // What the loss announces: written back in codeoid's shape.
    let again = translate::to_messages(&out.value.turns, &gemini, &Options::default()).unwrap();
    assert_eq!(
        again.value[1]["parts"][0]["functionResponse"]["response"],
        json!({"output": "{\"temperature\":3}"})
    );
}

#[test]
fn orphan_results_are_sent_as_text_and_cancelled_calls_are_answered() {
    let turns = vec![
        user(vec![result("ghost", "boo", false), text("hi")]),
        assistant(vec![call("a", "Read", json!({}))]),
        user(vec![text("never mind")]),
    ];
    for format in Format::ALL {
        let out =
            translate::to_messages(&turns, &Backend::new(format), &Options::default()).unwrap();
        let kinds: Vec<LossKind> = out.losses.iter().map(|l| l.kind).collect();
        assert_eq!(kinds, [LossKind::AsText, LossKind::Synthesized], "{format}");
        let dump = out.value.to_string();
        assert!(
            dump.contains("whose call is not in this conversation"),
            "{format}"
        );
        assert!(dump.contains("boo"));
        assert!(dump.contains(CANCELLED_RESULT), "{format}");
        let strict = Options {
            strict: true,
            ..Options::default()
        };
        let err = translate::to_messages(&turns, &Backend::new(format), &strict).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Translation);
        assert!(
            err.message().starts_with("turn 0 part 0: as_text:"),
            "{err}"
        );
    }
    // A final assistant turn's calls are pending, not cancelled.
    let pending = vec![
        user(vec![text("go")]),
        assistant(vec![call("a", "Read", json!({}))]),
    ];
    let out = translate::to_messages(
        &pending,
        &Backend::new(Format::Anthropic),
        &Options::default(),
    )
    .unwrap();
    assert!(out.is_lossless());
}

#[test]
fn duplicated_tool_call_ids_are_an_error() {
    let turns = vec![assistant(vec![
        call("x", "Read", json!({})),
        call("x", "Read", json!({})),
    ])];
    for format in Format::ALL {
        let err =
            translate::to_messages(&turns, &Backend::new(format), &Options::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(
            err.message()
                .contains("tool call id \"x\" appears in turn 0 and turn 0"),
            "{err}"
        );
    }
}

/// A harness that numbers calls per request: `call_0` for a Read, answered, then `call_0` again
/// for a Bash, answered.
fn reused_call_ids() -> Vec<Turn> {
    vec![
        user(vec![text("look at a.rs, then build")]),
        assistant(vec![call("call_0", "Read", json!({"file_path": "a.rs"}))]),
        user(vec![result("call_0", "fn a() {}", false)]),
        assistant(vec![call(
            "call_0",
            "Bash",
            json!({"command": "cargo build"}),
        )]),
        user(vec![result("call_0", "ok", false)]),
        assistant(vec![text("Built.")]),
    ]
}

#[test]
fn a_call_id_reused_by_a_later_assistant_turn_gets_a_new_id_on_every_backend() {
    let turns = reused_call_ids();
    for format in Format::ALL {
        let target = Backend::new(format);
        let out = translate::to_messages(&turns, &target, &Options::default()).unwrap();
        let losses: Vec<String> = out.losses.iter().map(|l| l.to_string()).collect();
        assert_eq!(
            losses,
            [
                "turn 3 part 0: changed: tool call id \"call_0\" was already used by a call in \
                 turn 1; sent as \"call_0-2\" with its results (providers require distinct ids), \
                 which reads back as is",
                "turn 4 part 0: changed: result of tool call \"call_0\" sent with its call's new \
                 id \"call_0-2\""
            ],
            "{format}"
        );
        let back = translate::from_messages(&out.value, &target, &Options::default()).unwrap();
        assert!(back.is_lossless(), "{format}: {:#?}", back.losses);
        let mut expected = turns.clone();
        expected[3].parts = vec![call("call_0-2", "Bash", json!({"command": "cargo build"}))];
        expected[4].parts = vec![result("call_0-2", "ok", false)];
        assert_eq!(shape(&back.value.turns), shape(&expected), "{format}");
        // Deterministic, and a fixed point once renamed.
        let again =
            translate::to_messages(&back.value.turns, &target, &Options::default()).unwrap();
        assert_eq!(again.value, out.value, "{format}");
        assert!(again.is_lossless(), "{format}");
    }
}

fn deepseek() -> Backend {
    backend(Format::OpenaiChat, "deepseek-reasoner").with_provider("deepseek")
}

/// Text-only content in every place Chat has one: a user message, an assistant message and a
/// failed tool result, each with two texts.
fn two_texts_everywhere() -> Vec<Turn> {
    vec![
        user(vec![text("Fix the build."), text("It fails on CI.")]),
        assistant(vec![
            text("Reading the log."),
            text("Then the code."),
            call("c", "Bash", json!({"command": "cargo build"})),
        ]),
        user(vec![Part::ToolResult(ToolResult {
            call_id: "c".into(),
            parts: vec![
                ToolResultPart::Text {
                    text: "error[E0432]".into(),
                },
                ToolResultPart::Text {
                    text: "1 error".into(),
                },
            ],
            is_error: true,
        })]),
    ]
}

#[test]
fn chat_content_that_is_only_text_is_one_string_for_providers_other_than_openai() {
    let turns = two_texts_everywhere();
    let out = translate::to_messages(&turns, &deepseek(), &Options::default()).unwrap();
    assert_eq!(out.value[0]["content"], "Fix the build.\n\nIt fails on CI.");
    assert_eq!(
        out.value[1]["content"],
        "Reading the log.\n\nThen the code."
    );
    assert_eq!(
        out.value[2]["content"],
        format!("{ERROR_MARKER}\nerror[E0432]\n\n1 error")
    );
    let merged: Vec<String> = out
        .losses
        .iter()
        .map(|l| format!("{} {}", l.location, l.kind.name()))
        .collect();
    assert_eq!(
        merged,
        [
            "turn 0 part 1 merged",
            "turn 1 part 1 merged",
            "turn 2 part 0 merged"
        ]
    );
    // What the losses announce: each reads back as one text; the error flag survives.
    let back = translate::from_messages(&out.value, &deepseek(), &Options::default()).unwrap();
    assert!(back.is_lossless());
    let turns_back = &back.value.turns;
    assert_eq!(
        turns_back[0].parts,
        [text("Fix the build.\n\nIt fails on CI.")]
    );
    assert_eq!(
        turns_back[2].parts,
        [result("c", "error[E0432]\n\n1 error", true)]
    );
    // OpenAI keeps its text parts, and the option overrides the default both ways.
    let openai = translate::to_messages(
        &turns,
        &Backend::new(Format::OpenaiChat),
        &Options::default(),
    )
    .unwrap();
    assert!(openai.is_lossless());
    assert!(openai.value[0]["content"].is_array());
    assert!(openai.value[2]["content"].is_array());
    let parts = Options {
        chat_string_content: Some(false),
        ..Options::default()
    };
    let out = translate::to_messages(&turns, &deepseek(), &parts).unwrap();
    assert!(out.is_lossless());
    assert!(out.value[1]["content"].is_array());
    let strings = Options {
        chat_string_content: Some(true),
        ..Options::default()
    };
    let out = translate::to_messages(&turns, &Backend::new(Format::OpenaiChat), &strings).unwrap();
    assert_eq!(
        out.value[1]["content"],
        "Reading the log.\n\nThen the code."
    );
    // Content with an image stays a part list: a string cannot hold it.
    let with_image = vec![user(vec![text("this"), Part::Image(png())])];
    let out = translate::to_messages(&with_image, &deepseek(), &Options::default()).unwrap();
    assert!(out.is_lossless());
    assert!(out.value[0]["content"].is_array());
}

#[test]
fn thinking_mode_providers_get_an_empty_reasoning_content_on_foreign_tool_calls() {
    let mut claude = assistant(vec![
        signed("anthropic", "claude-sonnet-4-5", "Check the log.", "sig"),
        call("c", "Bash", json!({"command": "cargo build"})),
    ]);
    claude.provider = Some("anthropic".into());
    let mut answer = assistant(vec![text("Fixed.")]);
    answer.provider = Some("anthropic".into());
    let turns = vec![
        user(vec![text("Fix the build.")]),
        claude,
        user(vec![result("c", "ok", false)]),
        answer,
    ];
    let options = Options {
        chat_reasoning_content: true,
        ..Options::default()
    };
    let out = translate::to_messages(&turns, &deepseek(), &options).unwrap();
    assert_eq!(out.value[1]["reasoning_content"], "");
    assert!(out.value[1]["tool_calls"].is_array());
    // Only messages with tool calls need it.
    assert!(
        out.value[3].get("reasoning_content").is_none(),
        "{}",
        out.value
    );
    let kinds: Vec<(String, LossKind)> = out
        .losses
        .iter()
        .map(|l| (l.location.to_string(), l.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("turn 1".to_owned(), LossKind::Synthesized),
            ("turn 1 part 0".to_owned(), LossKind::Dropped)
        ]
    );
    // It reads back as empty thinking, which is sent the same way again, without a loss.
    let back = translate::from_messages(&out.value, &deepseek(), &options).unwrap();
    let again = translate::to_messages(&back.value.turns, &deepseek(), &options).unwrap();
    assert_eq!(again.value, out.value);
    assert!(again.is_lossless(), "{:#?}", again.losses);
    // Without the option nothing is added.
    let plain = translate::to_messages(&turns, &deepseek(), &Options::default()).unwrap();
    assert!(plain.value[1].get("reasoning_content").is_none());
}

#[test]
fn non_object_and_invalid_json_arguments_are_repaired_and_reported() {
    let inputs = [
        json!(null),
        json!("{\"path\": \"a\"}"),
        json!("{\"path\": \"trunc"),
        json!([1, 2]),
        json!(3),
    ];
    let turns = vec![
        user(vec![text("go")]),
        assistant(
            inputs
                .iter()
                .enumerate()
                .map(|(i, v)| call(&format!("c{i}"), "Read", v.clone()))
                .collect(),
        ),
        user(
            (0..inputs.len())
                .map(|i| result(&format!("c{i}"), "ok", false))
                .collect(),
        ),
    ];
    for format in [Format::Anthropic, Format::Gemini] {
        let out =
            translate::to_messages(&turns, &Backend::new(format), &Options::default()).unwrap();
        assert_eq!(
            out.losses.len(),
            inputs.len(),
            "{format}: {:#?}",
            out.losses
        );
        assert!(out.losses.iter().all(|l| l.kind == LossKind::Changed));
        let back = translate::from_messages(&out.value, &Backend::new(format), &Options::default())
            .unwrap()
            .value
            .turns;
        let read: Vec<Value> = back[1]
            .parts
            .iter()
            .map(|p| match p {
                Part::ToolCall(c) => c.input.clone(),
                _ => Value::Null,
            })
            .collect();
        // Wrapped values unwrap back; null and the string holding an object come back repaired.
        assert_eq!(
            read,
            [
                json!({}),
                json!({"path": "a"}),
                json!("{\"path\": \"trunc"),
                json!([1, 2]),
                json!(3)
            ]
        );
    }
    // OpenAI carries arguments as a string, so truncated JSON survives verbatim.
    let out = translate::to_messages(
        &turns,
        &Backend::new(Format::OpenaiChat),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        out.value[1]["tool_calls"][2]["function"]["arguments"],
        "{\"path\": \"trunc"
    );
    let chat = json!([{"role": "assistant", "content": null, "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "not json"}}]}]);
    let back = translate::from_messages(
        &chat,
        &Backend::new(Format::OpenaiChat),
        &Options::default(),
    )
    .unwrap()
    .value
    .turns;
    assert_eq!(back[0].parts[0], call("1", "f", json!("not json")));
}

// ---------------------------------------------------------------------------------------------
// Real sessions

/// The message objects of a Claude Code log, in order (minimal parsing: `user`/`assistant` lines).
pub fn claude_code_messages(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| matches!(line["type"].as_str(), Some("user" | "assistant")))
        .filter_map(|line| {
            let message = line.get("message")?;
            Some(json!({"role": message["role"], "content": message["content"]}))
        })
        .collect()
}

#[test]
fn real_claude_code_sessions_translate_to_every_backend_and_back() {
    let dir = evaldata().join("claude-code-sessions/spotter");
    let mut sessions: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    sessions.sort();
    assert_eq!(sessions.len(), 6);
    let claude = backend(Format::Anthropic, "claude-opus-4-6");
    let mut total_turns = 0;
    for session in &sessions {
        let messages = Value::Array(claude_code_messages(session));
        let turns = translate::from_messages(&messages, &claude, &Options::default())
            .unwrap()
            .value
            .turns;
        total_turns += turns.len();
        for format in Format::ALL {
            let target = backend(format, "claude-opus-4-6");
            let out = translate::to_messages(&turns, &target, &Options::default()).unwrap();
            let back = translate::from_messages(&out.value, &target, &Options::default()).unwrap();
            // Sending what was read back gives the same JSON: the translation is a fixed point.
            let again =
                translate::to_messages(&back.value.turns, &target, &Options::default()).unwrap();
            assert_eq!(again.value, out.value, "{format} {}", session.display());
            if out.is_lossless() {
                assert_eq!(shape(&back.value.turns), shape(&turns));
            }
            // Every tool call of the original is sent exactly once.
            let calls = turns
                .iter()
                .flat_map(|t| &t.parts)
                .filter(|p| matches!(p, Part::ToolCall(_)))
                .count();
            let sent = back
                .value
                .turns
                .iter()
                .flat_map(|t| &t.parts)
                .filter(|p| matches!(p, Part::ToolCall(_)))
                .count();
            assert_eq!(calls, sent, "{format}");
        }
    }
    assert!(total_turns > 1_000, "{total_turns}");
}

#[test]
fn fork_windows_of_a_real_session_never_split_a_call_from_its_result() {
    let session = evaldata().join("claude-code-sessions/spotter/tool_heavy.jsonl");
    let messages = Value::Array(claude_code_messages(&session));
    let claude = backend(Format::Anthropic, "claude-opus-4-6");
    let turns = translate::from_messages(&messages, &claude, &Options::default())
        .unwrap()
        .value
        .turns;
    let target = backend(Format::OpenaiResponses, "gpt-5");
    let total = translate::fit_window(&turns, &target, &Options::default(), u64::MAX).kept_tokens;
    let mut starts = Vec::new();
    for budget in [total, total / 2, total / 4, total / 10, 0] {
        let window = translate::fit_window(&turns, &target, &Options::default(), budget);
        assert_eq!(window.kept_tokens + window.omitted_tokens, total);
        assert_eq!(window.fits, window.kept_tokens <= budget, "{window:?}");
        let kept = &turns[window.start..];
        assert!(window.start == 0 || kept[0].role == Role::User);
        let kept_calls: Vec<&str> = kept
            .iter()
            .flat_map(|t| &t.parts)
            .filter_map(|p| match p {
                Part::ToolCall(c) => Some(c.id.as_str()),
                _ => None,
            })
            .collect();
        for part in kept.iter().flat_map(|t| &t.parts) {
            if let Part::ToolResult(r) = part {
                assert!(
                    kept_calls.contains(&r.call_id.as_str()),
                    "result {} without its call",
                    r.call_id
                );
            }
        }
        starts.push(window.start);
    }
    assert!(
        starts.windows(2).all(|w| w[0] <= w[1]),
        "smaller budgets keep fewer turns: {starts:?}"
    );
    assert!(starts[0] == 0 && *starts.last().unwrap() > 0);
}

// ---------------------------------------------------------------------------------------------
// Golden fixtures

#[derive(serde::Deserialize, serde::Serialize)]
struct Fixture {
    description: String,
    direction: String,
    backend: Backend,
    #[serde(default)]
    options: Options,
    canonical: translate::Request,
    provider: Value,
    #[serde(default)]
    losses: Vec<translate::Loss>,
}

fn fixture_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for format in Format::ALL {
        let dir = fixtures_dir().join(format.name());
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Checks every golden fixture. `CODEOID_BLESS=1` rewrites the expected side instead (review the
/// diff before committing).
#[test]
fn golden_fixtures() {
    let bless = std::env::var_os("CODEOID_BLESS").is_some();
    let files = fixture_files();
    assert!(files.len() >= 8, "{files:?}");
    for path in files {
        let name = path.display().to_string();
        let mut fixture: Fixture =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            path.parent().unwrap().file_name().unwrap(),
            fixture.backend.format.name(),
            "{name}"
        );
        let options = &fixture.options;
        match fixture.direction.as_str() {
            "both" | "to_provider" => {
                let c = &fixture.canonical;
                let out = translate::to_request(
                    c.system.as_deref(),
                    &c.turns,
                    &c.tools,
                    &fixture.backend,
                    options,
                )
                .unwrap();
                if bless {
                    fixture.provider = out.value;
                    fixture.losses = out.losses;
                } else {
                    assert_eq!(out.value, fixture.provider, "{name}");
                    assert_eq!(out.losses, fixture.losses, "{name}");
                }
                if fixture.direction == "both" {
                    assert!(
                        fixture.losses.is_empty(),
                        "{name}: a both-ways fixture must be lossless"
                    );
                    let back =
                        translate::from_request(&fixture.provider, &fixture.backend, options)
                            .unwrap();
                    assert_eq!(shape(&back.value.turns), shape(&c.turns), "{name}");
                    assert_eq!(back.value.system, c.system, "{name}");
                }
            }
            "from_provider" => {
                let back =
                    translate::from_request(&fixture.provider, &fixture.backend, options).unwrap();
                if bless {
                    fixture.canonical = back.value;
                    fixture.losses = back.losses;
                } else {
                    assert_eq!(back.value, fixture.canonical, "{name}");
                    assert_eq!(back.losses, fixture.losses, "{name}");
                }
            }
            other => panic!("{name}: unknown direction {other:?}"),
        }
        if bless {
            let mut text = serde_json::to_string_pretty(&fixture).unwrap();
            text.push('\n');
            std::fs::write(&path, text).unwrap();
        }
    }
}

/// Every fixture's provider side, plus the translations of a real session to every backend,
/// validated with the providers' official Python SDK types. The test command (`make test`) installs
/// the SDKs and sets `CODEOID_REQUIRE_SDK_VALIDATION=1`, so there the check can never be skipped;
/// a plain `cargo test` without the SDKs skips it with a message.
#[test]
fn provider_json_validates_against_the_official_sdk_types() {
    let script = workspace().join("scripts/validate_translations.py");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let required = std::env::var("CODEOID_REQUIRE_SDK_VALIDATION").is_ok_and(|v| v == "1");
    let probe = Command::new(&python)
        .arg(&script)
        .arg("--check-sdks")
        .output();
    let unavailable = match probe {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        Err(e) => Some(format!("cannot run {python}: {e}")),
    };
    if let Some(why) = unavailable {
        assert!(
            !required,
            "SDK validation is required here but unavailable: {why}"
        );
        eprintln!(
            "skipping SDK validation: {why}; install with pip install -r scripts/requirements-translate.txt"
        );
        return;
    }
    // Real translations next to the fixtures: one file per backend.
    let dir = tempfile::tempdir().unwrap();
    let session = evaldata().join("claude-code-sessions/spotter/tool_heavy.jsonl");
    let messages = Value::Array(claude_code_messages(&session));
    let claude = backend(Format::Anthropic, "claude-opus-4-6");
    let turns = translate::from_messages(&messages, &claude, &Options::default())
        .unwrap()
        .value
        .turns;
    for format in Format::ALL {
        let target = backend(format, "claude-opus-4-6").with_provider(format.vendor());
        let body = translate::to_request(
            Some("system"),
            &turns,
            &memory_tools(),
            &target,
            &Options::default(),
        )
        .unwrap();
        let file = dir.path().join(format!("{}.json", format.name()));
        std::fs::write(
            &file,
            json!({"backend": target, "provider": body.value}).to_string(),
        )
        .unwrap();
    }
    let out = Command::new(&python)
        .arg(&script)
        .arg(fixtures_dir())
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("0 failed"), "{stdout}");
}

// ---------------------------------------------------------------------------------------------
// Properties

fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z ]{1,12}",
        Just(format!("{ERROR_MARKER}\nx")),
        Just(ERROR_MARKER.to_owned()),
        Just("[tool call a returned 1 image(s)]".to_owned()),
        any::<String>(),
    ]
}

fn arb_image() -> impl Strategy<Value = Image> {
    let source = prop_oneof![
        Just(ImageSource::Base64 { data: PNG.into() }),
        Just(ImageSource::Base64 {
            data: "SGVsbG8=".into()
        }),
        Just(ImageSource::Url {
            url: "https://example.com/a.png".into()
        }),
        Just(ImageSource::Url {
            url: "gs://bucket/a.png".into()
        }),
        Just(ImageSource::File {
            file_id: "file_123".into()
        }),
        Just(ImageSource::File {
            file_id: "file-123".into()
        }),
        Just(ImageSource::File {
            file_id: "files/abc".into()
        }),
    ];
    let media = prop_oneof![
        Just(None),
        Just(Some("image/png".to_owned())),
        Just(Some("image/bmp".to_owned()))
    ];
    (media, source).prop_map(|(media_type, source)| Image { media_type, source })
}

fn arb_id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_owned()),
        Just("b".to_owned()),
        Just("toolu_01X".to_owned()),
        Just("fn.x:0".to_owned()),
        Just("cdx_61".to_owned()),
        Just("y".repeat(50)),
        "[a-c]{1,2}",
    ]
}

fn arb_input() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"path": "a.rs"})),
        Just(json!({})),
        Just(Value::Null),
        Just(json!("{\"k\": 1}")),
        Just(json!("{\"trunc")),
        Just(json!([1, "x"])),
        Just(json!({"_raw_arguments": 2})),
        Just(json!(1.5)),
    ]
}

fn arb_thinking() -> impl Strategy<Value = Thinking> {
    let provider = prop_oneof![
        Just("anthropic"),
        Just("openai"),
        Just("gemini"),
        Just("deepseek")
    ];
    let model = prop_oneof![Just(None), Just(Some("m")), Just(Some("other"))];
    (
        arb_text(),
        proptest::option::of((provider, model, "[a-z]{0,4}")),
        any::<bool>(),
    )
        .prop_map(|(text, signature, redacted)| Thinking {
            text,
            signature: signature.map(|(provider, model, value)| Signature {
                provider: provider.into(),
                model: model.map(Into::into),
                value,
            }),
            redacted,
        })
}

fn arb_part() -> impl Strategy<Value = Part> {
    let result_part = prop_oneof![
        arb_text().prop_map(|text| ToolResultPart::Text { text }),
        arb_image().prop_map(ToolResultPart::Image),
    ];
    prop_oneof![
        3 => arb_text().prop_map(|text| Part::Text { text }),
        1 => arb_image().prop_map(Part::Image),
        2 => arb_thinking().prop_map(Part::Thinking),
        3 => (arb_id(), proptest::option::of(prop_oneof!["[a-z]{1,3}", Just("fc_1".to_owned())]), prop_oneof![Just("Read"), Just("Grep")], arb_input()).prop_map(
            |(id, provider_id, name, input)| Part::ToolCall(ToolCall { id, provider_id, name: name.into(), input })
        ),
        3 => (arb_id(), proptest::collection::vec(result_part, 0..3), any::<bool>()).prop_map(
            |(call_id, parts, is_error)| Part::ToolResult(ToolResult { call_id, parts, is_error })
        ),
        1 => "[a-z]{0,5}".prop_map(|message| Part::Error { message }),
    ]
}

fn arb_turns() -> impl Strategy<Value = Vec<Turn>> {
    let turn = (
        any::<bool>(),
        proptest::collection::vec(arb_part(), 0..4),
        proptest::option::of(prop_oneof![
            Just("anthropic"),
            Just("gemini"),
            Just("openai")
        ]),
        any::<bool>(),
    )
        .prop_map(|(is_user, parts, provider, item_ids)| {
            // Keep parts that fit the role most of the time, so that generated conversations are
            // mostly valid and translation, not validation, is what gets exercised.
            let role = if is_user { Role::User } else { Role::Assistant };
            let parts = parts
                .into_iter()
                .filter(|p| {
                    !matches!(
                        (role, p),
                        (Role::User, Part::ToolCall(_) | Part::Thinking(_))
                            | (Role::Assistant, Part::ToolResult(_))
                    )
                })
                .collect();
            let mut turn = Turn::new(role, parts);
            turn.provider = provider.map(Into::into);
            if item_ids {
                // Responses item ids as its reader records them: one message id for the texts.
                let (mut reasoning, mut messages) =
                    (serde_json::Map::new(), serde_json::Map::new());
                for (p, part) in turn.parts.iter().enumerate() {
                    match part {
                        Part::Thinking(_) => {
                            reasoning.insert(p.to_string(), json!(format!("rs_{p}")));
                        }
                        Part::Text { .. } => {
                            messages.insert(p.to_string(), json!("msg_1"));
                        }
                        _ => {}
                    }
                }
                turn.meta
                    .insert(translate::REASONING_IDS_META.into(), reasoning.into());
                turn.meta
                    .insert(translate::MESSAGE_IDS_META.into(), messages.into());
            }
            turn
        });
    proptest::collection::vec(turn, 0..7).prop_map(|mut turns| {
        // Call ids are drawn from a small pool so that results often match them; make them unique
        // within each assistant block (duplicates there are a tested error of their own) so most
        // cases reach the translators. Later blocks may reuse an id: that is repaired.
        let mut seen = std::collections::HashSet::new();
        for (t, turn) in turns.iter_mut().enumerate() {
            if turn.role == Role::User {
                seen.clear();
            }
            for (p, part) in turn.parts.iter_mut().enumerate() {
                if let Part::ToolCall(call) = part {
                    if !seen.insert(call.id.clone()) {
                        call.id = format!("{}_{t}_{p}", call.id);
                        seen.insert(call.id.clone());
                    }
                }
            }
        }
        turns
    })
}

fn arb_backend() -> impl Strategy<Value = (Backend, Options)> {
    let format = prop_oneof![
        Just(Format::Anthropic),
        Just(Format::OpenaiChat),
        Just(Format::OpenaiResponses),
        Just(Format::Gemini)
    ];
    let model = prop_oneof![Just(None), Just(Some("m"))];
    let strings = proptest::option::of(any::<bool>());
    let flags = (any::<bool>(), any::<bool>(), any::<bool>());
    (format, model, flags, strings).prop_map(|(format, model, (as_text, flag, ids), strings)| {
        let mut backend = Backend::new(format);
        backend.model = model.map(Into::into);
        let options = Options {
            foreign_thinking: if as_text {
                ForeignThinking::AsText
            } else {
                ForeignThinking::Drop
            },
            chat_reasoning_content: flag,
            chat_string_content: strings,
            gemini_call_ids: ids,
            gemini_missing_signature: flag.then(|| GEMINI_SKIP_SIGNATURE.to_owned()),
            ..Options::default()
        };
        (backend, options)
    })
}

/// The property every translation holds: it succeeds, reads back, is a fixed point, and when
/// nothing was reported lost it gives the input back.
fn check_translation(
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
) -> Result<(), TestCaseError> {
    // Generated turns are valid and no assistant block repeats a call id: translation must succeed.
    let out = translate::to_messages(turns, backend, options);
    prop_assert!(out.is_ok(), "{:?}", out.err());
    let out = out.unwrap();
    let back = translate::from_messages(&out.value, backend, options);
    prop_assert!(back.is_ok(), "{:?}\n{}", back.err(), out.value);
    let back = back.unwrap();
    prop_assert!(back.is_lossless());
    if out.is_lossless() {
        prop_assert_eq!(shape(&back.value.turns), shape(turns), "{}", out.value);
    }
    let again = translate::to_messages(&back.value.turns, backend, options).unwrap();
    prop_assert_eq!(&again.value, &out.value);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Translation succeeds or errors cleanly; a success reads back, is a fixed point, and when
    /// nothing was reported lost it gives the input back.
    #[test]
    fn translation_is_clean_and_lossless_means_identity(turns in arb_turns(), (backend, options) in arb_backend()) {
        check_translation(&turns, &backend, &options)?;
    }
}

/// A tool call as importers write it: the provider id is the call id itself.
fn imported_call(id: &str, name: &str, input: Value) -> Part {
    Part::ToolCall(ToolCall {
        id: id.into(),
        provider_id: Some(id.into()),
        name: name.into(),
        input,
    })
}

#[test]
fn an_imported_call_translates_without_spurious_losses_or_ids_providers_refuse() {
    let turns = vec![
        user(vec![text("list the files")]),
        assistant(vec![imported_call(
            "toolu_01A",
            "Bash",
            json!({"command": "ls"}),
        )]),
        user(vec![result("toolu_01A", "a.rs", false)]),
        assistant(vec![text("One file.")]),
    ];
    for format in [Format::Anthropic, Format::OpenaiChat, Format::Gemini] {
        let out =
            translate::to_messages(&turns, &backend(format, "m"), &Options::default()).unwrap();
        assert!(out.is_lossless(), "{format}: {:#?}", out.losses);
    }
    // OpenAI Responses refuses an item id that is not its own (`fc_…`): it is left out.
    let out = translate::to_messages(
        &turns,
        &backend(Format::OpenaiResponses, "gpt-5"),
        &Options::default(),
    )
    .unwrap();
    assert!(out.is_lossless(), "{:#?}", out.losses);
    let items = out.value.as_array().unwrap();
    let call = items.iter().find(|i| i["type"] == "function_call").unwrap();
    assert!(call.get("id").is_none(), "{call}");
    assert_eq!(call["call_id"], "toolu_01A");

    // Its own id goes with the reasoning item it followed, sent by id too, and only then.
    let own = |reasoning: Option<&str>| {
        let mut parts = Vec::new();
        let mut turn_meta = serde_json::Map::new();
        if let Some(id) = reasoning {
            parts.push(signed("openai", "gpt-5", "plan", "enc"));
            if !id.is_empty() {
                turn_meta.insert(translate::REASONING_IDS_META.into(), json!({"0": id}));
            }
        }
        parts.push(Part::ToolCall(ToolCall {
            id: "call_1".into(),
            provider_id: Some("fc_1".into()),
            name: "Bash".into(),
            input: json!({"command": "ls"}),
        }));
        let mut turn = assistant(parts);
        turn.meta = turn_meta;
        vec![
            user(vec![text("q")]),
            turn,
            user(vec![result("call_1", "a.rs", false)]),
        ]
    };
    let sent = |turns: &[Turn]| {
        let out = translate::to_messages(
            turns,
            &backend(Format::OpenaiResponses, "gpt-5"),
            &Options::default(),
        )
        .unwrap();
        let call = out
            .value
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["type"] == "function_call")
            .cloned()
            .unwrap();
        (call, out.losses)
    };
    let (call, losses) = sent(&own(Some("rs_1")));
    assert_eq!(call["id"], "fc_1");
    assert!(losses.is_empty(), "{losses:#?}");
    for reasoning in [None, Some("")] {
        // No reasoning item, or one whose id is not known: the call goes without its id.
        let (call, losses) = sent(&own(reasoning));
        assert!(call.get("id").is_none(), "{call}");
        assert_eq!(losses.len(), 1, "{losses:#?}");
        assert_eq!(losses[0].kind, LossKind::Dropped);
    }
}

#[test]
fn gemini_gets_a_function_call_only_right_after_a_user_turn() {
    // Two responses in a row in a real log: text, then the call.
    let turns = vec![
        user(vec![text("plan the feature")]),
        assistant(vec![text("I'll track the tasks.")]),
        assistant(vec![call("c1", "TodoWrite", json!({"todos": []}))]),
        user(vec![result("c1", "ok", false)]),
    ];
    let out = translate::to_messages(
        &turns,
        &backend(Format::Gemini, "gemini-2.5-pro"),
        &Options::default(),
    )
    .unwrap();
    let contents = out.value.as_array().unwrap();
    let roles: Vec<&str> = contents
        .iter()
        .map(|c| c["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "model", "user"], "{}", out.value);
    let parts = contents[1]["parts"].as_array().unwrap();
    assert_eq!(parts[0]["text"], "I'll track the tasks.");
    assert_eq!(parts[1]["functionCall"]["name"], "TodoWrite");
    assert!(
        out.losses
            .iter()
            .any(|l| l.kind == LossKind::Merged && l.location.to_string() == "turn 2"),
        "{:#?}",
        out.losses
    );
}

#[test]
fn anthropic_gets_no_blank_text_and_a_failed_result_always_has_content() {
    let turns = vec![
        user(vec![text("go")]),
        assistant(vec![
            text("\n\n"),
            call("c1", "Bash", json!({"command": "false"})),
            call("c2", "Bash", json!({"command": "true"})),
        ]),
        user(vec![
            Part::ToolResult(ToolResult {
                call_id: "c1".into(),
                parts: vec![],
                is_error: true,
            }),
            result("c2", "", false),
            text(" \n"),
            text("next"),
        ]),
    ];
    let out = translate::to_messages(
        &turns,
        &backend(Format::Anthropic, "claude-x"),
        &Options::default(),
    )
    .unwrap();
    let messages = out.value.as_array().unwrap();
    assert_eq!(
        messages[1]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["tool_use", "tool_use"],
        "a blank text block is not sent"
    );
    let blocks = messages[2]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["is_error"], true);
    assert_eq!(blocks[0]["content"], "(no output)");
    assert!(blocks[1].get("content").is_none(), "{}", blocks[1]);
    assert_eq!(blocks[2], json!({"type": "text", "text": "next"}));
    assert_eq!(blocks.len(), 3);
    let kinds: Vec<LossKind> = out.losses.iter().map(|l| l.kind).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == LossKind::Dropped).count(),
        3,
        "{:#?}",
        out.losses
    );
    assert!(kinds.contains(&LossKind::Synthesized), "{:#?}", out.losses);
}

#[test]
fn gemini_gets_no_empty_text_and_gemini_3_signs_foreign_calls_by_default() {
    let turns = vec![
        user(vec![text("go")]),
        assistant(vec![text(""), call("c1", "Read", json!({"path": "a"}))]),
        user(vec![result("c1", "ok", false)]),
    ];
    let options = Options::default();
    let request = |model: &str| {
        translate::to_request(
            Some(""),
            &turns,
            &[],
            &backend(Format::Gemini, model),
            &options,
        )
        .unwrap()
    };
    let three = request("gemini-3-pro-preview");
    assert!(
        three.value.get("systemInstruction").is_none(),
        "{}",
        three.value
    );
    let model = &three.value["contents"][1];
    assert_eq!(model["parts"].as_array().unwrap().len(), 1, "{model}");
    assert_eq!(model["parts"][0]["thoughtSignature"], GEMINI_SKIP_SIGNATURE);
    assert!(
        three.losses.iter().any(|l| l.kind == LossKind::Dropped),
        "{:#?}",
        three.losses
    );
    for model in ["models/gemini-3.1-flash", "gemini-10-ultra"] {
        assert_eq!(
            request(model).value["contents"][1]["parts"][0]["thoughtSignature"],
            GEMINI_SKIP_SIGNATURE,
            "{model}"
        );
    }
    for model in ["gemini-2.5-pro", "gemma-3-27b", "gemini-exp"] {
        let value = request(model).value;
        assert!(
            value["contents"][1]["parts"][0]
                .get("thoughtSignature")
                .is_none(),
            "{model}: {value}"
        );
    }
    // The placeholder is not a signature when read back, whatever the options say.
    let back = translate::from_messages(
        &three.value["contents"],
        &backend(Format::Gemini, "gemini-3-pro-preview"),
        &options,
    )
    .unwrap()
    .value
    .turns;
    assert!(
        matches!(back[1].parts[..], [Part::ToolCall(_)]),
        "{:?}",
        back[1].parts
    );
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses item ids

/// Type and item id of every assistant-side item of Responses `input`, in order.
fn assistant_item_ids(input: &Value) -> Vec<(String, Option<String>)> {
    input
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] != "function_call_output" && i["role"] != "user")
        .map(|i| {
            let id = i.get("id").and_then(Value::as_str).map(str::to_owned);
            (i["type"].as_str().unwrap().to_owned(), id)
        })
        .collect()
}

fn ids_of(list: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    list.iter()
        .map(|(kind, id)| ((*kind).to_owned(), id.map(str::to_owned)))
        .collect()
}

#[test]
fn responses_item_ids_go_back_for_a_whole_reasoning_group_or_not_at_all() {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures_dir().join("openai_responses/from_native.json")).unwrap(),
    )
    .unwrap();
    let input = &fixture["provider"]["input"];
    let gpt = backend(Format::OpenaiResponses, "gpt-5");
    let options = Options::default();
    let read = translate::from_messages(input, &gpt, &options)
        .unwrap()
        .value
        .turns;
    let all = ids_of(&[
        ("reasoning", Some("rs_1")),
        ("message", Some("msg_1")),
        ("function_call", Some("fc_1")),
    ]);
    let written = translate::to_messages(&read, &gpt, &options).unwrap();
    assert!(written.is_lossless(), "{:#?}", written.losses);
    assert_eq!(assistant_item_ids(&written.value), all, "{}", written.value);
    let message = &written.value[2];
    assert_eq!(message["status"], "completed", "{message}");
    assert_eq!(
        message["content"],
        json!([{"type": "output_text", "text": "Calling.", "annotations": []}])
    );

    // One item per turn, as `Memory::record_message` records them: the group spans the turns.
    let mut per_item = Vec::new();
    for item in input.as_array().unwrap() {
        if item["role"] != "developer" {
            let one = translate::from_messages(&json!([item]), &gpt, &options).unwrap();
            per_item.extend(one.value.turns);
        }
    }
    assert_eq!(per_item.len(), 5);
    let written = translate::to_messages(&per_item, &gpt, &options).unwrap();
    assert_eq!(assistant_item_ids(&written.value), all, "{}", written.value);

    // One id of the group unknown (a message recorded before message ids were kept): none of
    // the group's ids is sent, and the call's is reported.
    let none = ids_of(&[
        ("reasoning", None),
        ("message", None),
        ("function_call", None),
    ]);
    let mut older = read.clone();
    older[1].meta.remove(translate::MESSAGE_IDS_META);
    let written = translate::to_messages(&older, &gpt, &options).unwrap();
    assert_eq!(
        assistant_item_ids(&written.value),
        none,
        "{}",
        written.value
    );
    assert_eq!(written.value[2]["content"], "Calling.");
    assert_eq!(written.losses.len(), 1, "{:#?}", written.losses);
    assert_eq!(written.losses[0].kind, LossKind::Dropped);
    assert!(
        written.losses[0].what.contains("\"fc_1\""),
        "{:?}",
        written.losses[0]
    );

    // Text from another provider in the group is an item without an id, too.
    let mut mixed = read.clone();
    mixed[1].parts.insert(
        2,
        signed("anthropic", "claude-x", "their plan", "sig-anthropic"),
    );
    let as_text = Options {
        foreign_thinking: ForeignThinking::AsText,
        ..Options::default()
    };
    let written = translate::to_messages(&mixed, &gpt, &as_text).unwrap();
    assert!(
        assistant_item_ids(&written.value)
            .iter()
            .all(|(_, id)| id.is_none()),
        "{}",
        written.value
    );

    // A reasoning item with nothing after it in its run goes without its id.
    let mut alone = read[1].clone();
    alone.parts.truncate(1);
    let turns = vec![read[0].clone(), alone, user(vec![text("and?")])];
    let written = translate::to_messages(&turns, &gpt, &options).unwrap();
    assert_eq!(
        assistant_item_ids(&written.value),
        ids_of(&[("reasoning", None)])
    );

    // Texts of one message recorded in two turns go back as one item: the second turn is
    // reported as merged, as it reads back.
    let mut halves = vec![read[1].clone(), read[1].clone()];
    for half in &mut halves {
        half.parts.retain(|p| matches!(p, Part::Text { .. }));
        half.meta.clear();
        half.meta
            .insert(translate::MESSAGE_IDS_META.into(), json!({"0": "msg_1"}));
    }
    let written = translate::to_messages(&halves, &gpt, &options).unwrap();
    assert_eq!(written.losses.len(), 1, "{:#?}", written.losses);
    assert_eq!(written.losses[0].kind, LossKind::Merged);

    // For `store: false` requests no item id is sent at all.
    let stateless = Options {
        responses_item_ids: false,
        ..Options::default()
    };
    let written = translate::to_messages(&read, &gpt, &stateless).unwrap();
    assert_eq!(
        assistant_item_ids(&written.value),
        none,
        "{}",
        written.value
    );
}

// ---------------------------------------------------------------------------------------------
// Cases long property-test runs found

#[test]
fn gemini_an_empty_signature_ending_a_model_turn_before_the_calls_translates_back_the_same() {
    // Found around 30k cases: the earlier turn's signature was written as an empty thought
    // of its own, which reads back in the merged turn and rides on the call the next time.
    let empty_signed = Part::Thinking(Thinking {
        text: String::new(),
        signature: Some(Signature {
            provider: "gemini".into(),
            model: None,
            value: String::new(),
        }),
        redacted: false,
    });
    let turns = vec![
        assistant(vec![empty_signed.clone()]),
        assistant(vec![call("a", "Read", json!({"path": "a.rs"}))]),
    ];
    let options = Options {
        gemini_call_ids: false,
        ..Options::default()
    };
    let gemini = Backend::new(Format::Gemini);
    check_translation(&turns, &gemini, &options).unwrap();
    let out = translate::to_messages(&turns, &gemini, &options).unwrap();
    assert_eq!(
        out.value,
        json!([{"role": "model", "parts": [
            {"functionCall": {"name": "Read", "args": {"path": "a.rs"}}, "thoughtSignature": ""}
        ]}])
    );
    // A signature that cannot ride (the calls' turn starts with a thought of its own) stays an
    // empty thought, and that too reads back and is written the same.
    let turns = vec![
        assistant(vec![text("plan"), empty_signed]),
        assistant(vec![
            signed("gemini", "m", "think", "sig-t"),
            call("a", "Read", json!({})),
        ]),
    ];
    check_translation(&turns, &gemini, &options).unwrap();
    let gemini_3 = Backend::new(Format::Gemini).with_model("gemini-3-pro");
    check_translation(&turns[1..], &gemini_3, &options).unwrap();
}

#[test]
fn a_provider_id_equal_to_the_call_id_is_no_provider_id_on_every_backend() {
    // Found around 20k cases: importers write `provider_id` = `id`, which no format carries
    // apart from the id; it reads back as none, and the contract counts both as the same.
    let turns = vec![
        user(vec![text("go")]),
        assistant(vec![imported_call("a", "Read", json!({}))]),
    ];
    for format in Format::ALL {
        let b = backend(format, "m");
        check_translation(&turns, &b, &Options::default()).unwrap();
        let out = translate::to_messages(&turns, &b, &Options::default()).unwrap();
        assert!(out.is_lossless(), "{format}: {:#?}", out.losses);
        let back = translate::from_messages(&out.value, &b, &Options::default()).unwrap();
        assert!(
            matches!(&back.value.turns[1].parts[..], [Part::ToolCall(c)] if c.provider_id.is_none()),
            "{format}: {:?}",
            back.value.turns[1]
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Gemini function responses with images

fn url_image(url: &str) -> ToolResultPart {
    ToolResultPart::Image(Image {
        media_type: None,
        source: ImageSource::Url { url: url.into() },
    })
}

#[test]
fn gemini_responses_to_parallel_calls_stay_together_with_their_images_after_them() {
    let turns = vec![
        user(vec![text("compare the two screens")]),
        assistant(vec![
            call("a", "Screenshot", json!({"screen": 1})),
            call("b", "Screenshot", json!({"screen": 2})),
            call("c", "Read", json!({"path": "notes.md"})),
        ]),
        user(vec![
            Part::ToolResult(ToolResult {
                call_id: "a".into(),
                parts: vec![
                    ToolResultPart::Text {
                        text: "screen 1".into(),
                    },
                    url_image("https://example.com/a1.png"),
                    url_image("https://example.com/a2.png"),
                ],
                is_error: false,
            }),
            result("b", "screen 2 is off", true),
            Part::ToolResult(ToolResult {
                call_id: "c".into(),
                parts: vec![url_image("https://example.com/c.png")],
                is_error: false,
            }),
            Part::Image(png()),
        ]),
    ];
    let (value, back) = round_trip(&turns, &Backend::new(Format::Gemini), &Options::default());
    let kinds: Vec<&str> = value[2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let map = p.as_object().unwrap();
            ["functionResponse", "inlineData", "fileData", "text"]
                .into_iter()
                .find(|k| map.contains_key(*k))
                .unwrap()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "functionResponse",
            "functionResponse",
            "functionResponse",
            "fileData",
            "fileData",
            "fileData",
            "inlineData"
        ],
        "{}",
        value[2]
    );
    assert_eq!(
        value[2]["parts"][0]["functionResponse"]["response"]["attached_images"],
        2
    );
    assert!(
        value[2]["parts"][1]["functionResponse"]["response"]
            .get("attached_images")
            .is_none()
    );
    assert_eq!(
        value[2]["parts"][2]["functionResponse"]["response"]["attached_images"],
        1
    );
    assert_eq!(shape(&back), shape(&turns));

    // What an older codeoid wrote, each response's images right after it, reads the same.
    let older = json!([
        {"role": "model", "parts": [
            {"functionCall": {"id": "a", "name": "Screenshot", "args": {}}},
            {"functionCall": {"id": "b", "name": "Read", "args": {}}}
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "a", "name": "Screenshot",
                "response": {"output": "shot", "attached_images": 1}}},
            {"fileData": {"fileUri": "https://example.com/a.png"}},
            {"functionResponse": {"id": "b", "name": "Read", "response": {"output": "text"}}},
            {"text": "and this one"},
            {"fileData": {"fileUri": "https://example.com/mine.png"}}
        ]}
    ]);
    let read = translate::from_messages(&older, &Backend::new(Format::Gemini), &Options::default())
        .unwrap();
    assert!(read.is_lossless(), "{:#?}", read.losses);
    let parts = &read.value.turns[1].parts;
    assert!(
        matches!(&parts[..], [
            Part::ToolResult(a), Part::ToolResult(b), Part::Text { .. }, Part::Image(_)
        ] if a.parts.len() == 2 && b.parts.len() == 1),
        "{parts:#?}"
    );
}

#[test]
fn gemini_3_media_inside_a_function_response_reads_into_the_result() {
    let contents = |nested: Value| {
        json!([
            {"role": "model", "parts": [{"functionCall": {"id": "s", "name": "Screenshot", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {
                "id": "s", "name": "Screenshot",
                "response": {"output": "captured"},
                "parts": nested
            }}]}
        ])
    };
    let gemini = Backend::new(Format::Gemini).with_model("gemini-3-pro-preview");
    let options = Options::default();
    let read = translate::from_messages(
        &contents(json!([
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
            {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://example.com/b.jpg", "displayName": "b.jpg"}}
        ])),
        &gemini,
        &options,
    )
    .unwrap();
    let Part::ToolResult(result) = &read.value.turns[1].parts[0] else {
        panic!("{:?}", read.value.turns[1]);
    };
    assert_eq!(
        result.parts,
        [
            ToolResultPart::Text {
                text: "captured".into()
            },
            ToolResultPart::Image(png()),
            ToolResultPart::Image(Image {
                media_type: Some("image/jpeg".into()),
                source: ImageSource::Url {
                    url: "https://example.com/b.jpg".into()
                },
            }),
        ]
    );
    // The display name has no canonical place: reported.
    assert_eq!(read.losses.len(), 1, "{:#?}", read.losses);
    assert_eq!(read.losses[0].kind, LossKind::Dropped);
    assert!(read.losses[0].what.contains("\"b.jpg\""));
    // Written back, the images follow the response as siblings.
    let out = translate::to_messages(&read.value.turns, &gemini, &options).unwrap();
    assert_eq!(out.value[1]["parts"].as_array().unwrap().len(), 3);

    // Media other than images is unknown content, also inside a function response.
    let pdf =
        contents(json!([{"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0="}}]));
    let err = translate::from_messages(&pdf, &gemini, &options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(
        err.message()
            .contains("contents[1].parts[0].functionResponse.parts[0]"),
        "{err}"
    );
    let read = translate::from_messages(&pdf, &gemini, &skip_unknown()).unwrap();
    assert_eq!(read.losses.len(), 1);
    assert_eq!(read.losses[0].kind, LossKind::Dropped);
}

// ---------------------------------------------------------------------------------------------
// Anthropic tool loops without native thinking

fn flagged_turns(turns: &[Turn]) -> Vec<String> {
    let out = translate::to_messages(
        turns,
        &backend(Format::Anthropic, "claude-sonnet-4-5"),
        &Options::default(),
    )
    .unwrap();
    out.losses
        .iter()
        .filter(|l| l.kind == LossKind::NeedsThinkingOff)
        .map(|l| l.location.to_string())
        .collect()
}

fn made_by(provider: &str, parts: Vec<Part>) -> Turn {
    let mut turn = assistant(parts);
    turn.provider = Some(provider.into());
    turn
}

#[test]
fn anthropic_history_ending_inside_a_tool_loop_without_native_thinking_needs_thinking_off() {
    let prompt = user(vec![text("read a.rs")]);
    let read = call("c1", "Read", json!({"file_path": "a.rs"}));
    let answered = user(vec![result("c1", "fn a() {}", false)]);
    let gpt = made_by(
        "openai",
        vec![signed("openai", "gpt-5", "plan", "enc"), read.clone()],
    );
    // Ending on the results, or on the calls whose results come next: flagged, once.
    let on_results = vec![prompt.clone(), gpt.clone(), answered.clone()];
    assert_eq!(flagged_turns(&on_results), ["turn 1"]);
    assert_eq!(flagged_turns(&on_results[..2]), ["turn 1"]);
    // The loop has ended (an answer, or a new prompt): the next request opens a new turn.
    let closed = made_by("openai", vec![text("a() is empty")]);
    assert!(flagged_turns(&[on_results.clone(), vec![closed.clone()]].concat()).is_empty());
    let next = [
        on_results.clone(),
        vec![closed, user(vec![text("and b.rs?")])],
    ]
    .concat();
    assert!(flagged_turns(&next).is_empty());
    // Another provider's turn without thinking, and native thinking that does not come first.
    let plain = made_by("openai", vec![read.clone()]);
    assert_eq!(
        flagged_turns(&[prompt.clone(), plain, answered.clone()]),
        ["turn 1"]
    );
    let late = made_by(
        "anthropic",
        vec![
            text("Reading."),
            signed("anthropic", "claude-sonnet-4-5", "plan", "sig"),
            read.clone(),
        ],
    );
    assert_eq!(
        flagged_turns(&[prompt.clone(), late, answered.clone()]),
        ["turn 1"]
    );

    // Native thinking first, or an Anthropic turn made with thinking off: nothing to report.
    let claude = made_by(
        "anthropic",
        vec![
            signed("anthropic", "claude-sonnet-4-5", "plan", "sig"),
            read.clone(),
        ],
    );
    assert!(flagged_turns(&[prompt.clone(), claude.clone(), answered.clone()]).is_empty());
    let no_thinking = made_by("anthropic", vec![read.clone()]);
    assert!(flagged_turns(&[prompt.clone(), no_thinking, answered.clone()]).is_empty());
    // The turn starts at the prompt: a later step of the loop need not think again.
    let step = made_by(
        "anthropic",
        vec![call("c2", "Read", json!({"file_path": "b.rs"}))],
    );
    let loop_turns = vec![
        prompt.clone(),
        claude,
        answered.clone(),
        step,
        user(vec![result("c2", "fn b() {}", false)]),
    ];
    assert!(flagged_turns(&loop_turns).is_empty());
    // But a loop that started on another provider is flagged at its first assistant message.
    let mut mixed = loop_turns;
    mixed[1] = gpt;
    assert_eq!(flagged_turns(&mixed), ["turn 1"]);
}

// ---------------------------------------------------------------------------------------------
// Provider file references

#[test]
fn file_references_go_only_to_the_provider_that_stores_them() {
    const ANTHROPIC: &str = "file_011CNha8iCJcU1wXNR6q4V8w";
    const OPENAI: &str = "file-6F2ksmvXxt4VdoqmHRw6kL";
    const GEMINI: &str = "https://generativelanguage.googleapis.com/v1beta/files/abc-123";
    const UNKNOWN: &str = "gs://bucket/a.png";
    let file = |id: &str| Image {
        media_type: None,
        source: ImageSource::File { file_id: id.into() },
    };
    let turns = vec![
        user(vec![
            text("compare"),
            Part::Image(file(ANTHROPIC)),
            Part::Image(file(OPENAI)),
            Part::Image(file(GEMINI)),
            Part::Image(file(UNKNOWN)),
        ]),
        assistant(vec![call("s", "Screenshot", json!({}))]),
        user(vec![Part::ToolResult(ToolResult {
            call_id: "s".into(),
            parts: vec![
                ToolResultPart::Text {
                    text: "shot".into(),
                },
                ToolResultPart::Image(file(ANTHROPIC)),
            ],
            is_error: false,
        })]),
    ];
    for (format, own) in [
        (Format::Anthropic, ANTHROPIC),
        (Format::OpenaiResponses, OPENAI),
        (Format::Gemini, GEMINI),
    ] {
        let out =
            translate::to_messages(&turns, &Backend::new(format), &Options::default()).unwrap();
        let sent = out.value.to_string();
        for id in [ANTHROPIC, OPENAI, GEMINI] {
            assert_eq!(sent.contains(id), id == own, "{format}: {id} in {sent}");
        }
        assert!(
            sent.contains(UNKNOWN),
            "{format}: an unknown issuer is sent: {sent}"
        );
        let dropped: Vec<String> = out
            .losses
            .iter()
            .filter(|l| l.kind == LossKind::Dropped && l.what.contains("cannot resolve"))
            .map(|l| l.location.to_string())
            .collect();
        let expected: Vec<String> = [(ANTHROPIC, 1), (OPENAI, 2), (GEMINI, 3)]
            .into_iter()
            .filter(|(id, _)| *id != own)
            .map(|(_, part)| format!("turn 0 part {part}"))
            .chain((own != ANTHROPIC).then(|| "turn 2 part 0".to_owned()))
            .collect();
        assert_eq!(dropped, expected, "{format}: {:#?}", out.losses);
    }
    // On its own provider a file reference is lossless.
    let own = vec![user(vec![Part::Image(file(ANTHROPIC))])];
    round_trip(&own, &Backend::new(Format::Anthropic), &Options::default());
}
