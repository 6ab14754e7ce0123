//! A complete agent loop over codeoid in plain Rust: no framework, no network.
//!
//! The harness keeps the model's context (the backing context) as a list of canonical turns,
//! mounts the four memory tools next to its own `read_file` tool, records every turn, and obeys
//! the rotation policy: when a turn fills the context, it drops the list and starts again from
//! the seed block. The model is a scripted fake that reports usage as a real API does; after the
//! rotation it has forgotten the file it read, and gets it back with `recall_file`.
//!
//! Run: `cargo run -p codeoid-core --example agent_loop`. With `CODEOID_MODEL_DIR` pointing at a
//! sentence-transformers checkpoint, recall is hybrid; without one the default model is
//! downloaded once, or recall stays lexical if it cannot be. The example checks what it claims
//! and exits non-zero if memory did not do its job.

use codeoid_core::canonical::{
    CallUsage, Part, Role, ToolCall, ToolResult, ToolResultPart, Turn, Usage,
};
use codeoid_core::store::NewSession;
use codeoid_core::translate::{Format, Options, declare_tools};
use codeoid_core::{Memory, MemoryConfig};
use serde_json::{Value, json};

/// The model's context window in this demo: tiny, so a short conversation fills it.
const WINDOW: u64 = 8_000;

const CONFIG_RS: &str = "pub fn parse_config(text: &str) -> Result<Config, Error> {\n    for line in text.lines() {\n        // Empty lines are rejected: the format has no blank separators (see ADR-7).\n        if line.trim().is_empty() { return Err(Error::BlankLine); }\n    }\n    todo!()\n}\n";

/// One scripted model step: what the model says or calls, and the prompt tokens the provider
/// reports for that call.
struct Step {
    parts: Vec<Part>,
    prompt_tokens: u64,
}

/// The fake model: a fixed script. Prompt tokens grow with the conversation until the fifth
/// reply reports 7,900 of 8,000 tokens (98.75%, over the 97% hard limit), and drop after the
/// rotation, as they would with a fresh context.
fn script() -> Vec<Step> {
    let call = |id: &str, name: &str, input: Value| {
        Part::ToolCall(ToolCall {
            id: id.into(),
            provider_id: None,
            name: name.into(),
            input,
        })
    };
    let text = |t: &str| Part::Text { text: t.into() };
    vec![
        Step {
            parts: vec![
                text("I will read the parser."),
                call("c1", "read_file", json!({"path": "src/config.rs"})),
            ],
            prompt_tokens: 2_100,
        },
        Step {
            parts: vec![text(
                "parse_config rejects blank lines on purpose: the format has no separators (ADR-7).",
            )],
            prompt_tokens: 3_900,
        },
        Step {
            parts: vec![call(
                "c2",
                "recall",
                json!({"query": "blank line separators decision", "include_current_session": true}),
            )],
            prompt_tokens: 5_200,
        },
        Step {
            parts: vec![text(
                "Memory has only this session's read of the file; ADR-7 is the reason.",
            )],
            prompt_tokens: 6_400,
        },
        Step {
            parts: vec![text(
                "Plan: accept blank lines as separators behind a flag, keep the default strict.",
            )],
            prompt_tokens: 7_900,
        },
        // After the rotation the context holds only the seed and the new prompt.
        Step {
            parts: vec![call("c3", "recall_file", json!({"path": "src/config.rs"}))],
            prompt_tokens: 900,
        },
        Step {
            parts: vec![text(
                "Done: blank lines are allowed when `lenient` is set; the strict default is unchanged.",
            )],
            prompt_tokens: 1_800,
        },
    ]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let workspace = dir.path().join("project");
    std::fs::create_dir_all(workspace.join("src"))?;
    std::fs::write(workspace.join("src/config.rs"), CONFIG_RS)?;
    let memory = Memory::open(MemoryConfig {
        db_path: Some(dir.path().join("codeoid.db")),
        workspace_dir: Some(workspace.clone()),
        ..MemoryConfig::from_env()?
    })?;
    let session = memory.start_session(NewSession {
        name: Some("lenient config".into()),
        ..NewSession::default()
    })?;
    memory.set_context_window(&session.id, Some(WINDOW))?;

    // Mount the tools: the harness's own plus the four memory tools, declared for Anthropic.
    let mut tools = memory.tool_schemas(None)?;
    tools.push(codeoid_core::translate::ToolSpec {
        name: "read_file".into(),
        description: "Read a file of the workspace.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    });
    let declared = declare_tools(&tools, Format::Anthropic, &Options::default())?.value;
    println!(
        "tools declared for the model: {}",
        declared.as_array().map_or(0, Vec::len)
    );

    let prompts = [
        "Why does parse_config reject empty lines?",
        "Was that a deliberate decision?",
        "Plan how to make blank lines optional.",
        "Make blank lines optional, but keep strict as the default.",
    ];
    let mut steps = script().into_iter();
    let mut context: Vec<Turn> = Vec::new();
    let mut rotations = 0;
    let mut pending_seed: Option<String> = None;
    let mut recovered_file = String::new();
    for (prompt_index, prompt) in prompts.iter().enumerate() {
        // The first message after a rotation carries the seed, exactly once.
        let shown = match pending_seed.take() {
            Some(seed) => format!("{seed}\n\n{prompt}"),
            None => (*prompt).to_string(),
        };
        let user = Turn::user_text(shown);
        memory.record_turn(&session.id, &user)?;
        context.push(user);
        loop {
            let step = steps.next().ok_or("the script ran out")?;
            let reply = assistant(step);
            let outcome = memory.record_turn(&session.id, &reply)?;
            context.push(reply.clone());
            let calls: Vec<&ToolCall> = reply
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::ToolCall(c) => Some(c),
                    _ => None,
                })
                .collect();
            if let Some(rotation) = outcome.rotation {
                rotations += 1;
                println!(
                    "── rotation {} at {:.1}% of the window: context dropped ──",
                    rotation.count,
                    100.0 * outcome.decision.and_then(|d| d.occupancy).unwrap_or(0.0)
                );
                context.clear();
                pending_seed = memory.take_seed(&session.id)?.map(|s| s.text);
                if let Some(seed) = &pending_seed {
                    println!("{seed}\n");
                    check(
                        seed.contains(prompts[2]),
                        format!("the seed must anchor on the last prompt:\n{seed}"),
                    )?;
                }
            }
            if calls.is_empty() {
                break;
            }
            let mut results = Vec::new();
            for call in calls {
                let (text, is_error) = if call.name == "read_file" {
                    let path = call.input["path"].as_str().unwrap_or_default();
                    (std::fs::read_to_string(workspace.join(path))?, false)
                } else {
                    let out =
                        memory.call_tool(Some(&session.id), &call.name, &call.input.to_string());
                    (out.text, out.is_error)
                };
                println!(
                    "tool {}({}) → {} bytes{}",
                    call.name,
                    call.input,
                    text.len(),
                    if is_error { " (error)" } else { "" }
                );
                if prompt_index == 3 && call.name == "recall_file" {
                    recovered_file = text.clone();
                }
                results.push(Part::ToolResult(ToolResult {
                    call_id: call.id.clone(),
                    parts: vec![ToolResultPart::Text { text }],
                    is_error,
                }));
            }
            let tool_turn = Turn::new(Role::User, results);
            memory.record_turn(&session.id, &tool_turn)?;
            context.push(tool_turn);
        }
    }

    // The block a system prompt would carry from now on (it changes only on its schedule).
    println!(
        "\nworkspace index:\n{}",
        memory.workspace_index(Some(&session.id))?
    );

    // What the example claims, checked.
    check(
        rotations == 1,
        format!("expected exactly one rotation, saw {rotations}"),
    )?;
    check(
        context.len() < 6,
        format!(
            "the context after the rotation holds {} turns",
            context.len()
        ),
    )?;
    check(
        recovered_file.contains("Empty lines are rejected"),
        format!("recall_file after the rotation did not bring the file back:\n{recovered_file}"),
    )?;
    let stored = memory.session(&session.id)?;
    check(
        stored.rotation_count == 1,
        "the store must count the rotation".to_string(),
    )?;
    println!(
        "\nok: one rotation, the file read before it recovered through recall_file, {} turns stored",
        stored.turn_count
    );
    Ok(())
}

fn assistant(step: Step) -> Turn {
    let mut turn = Turn::new(Role::Assistant, step.parts);
    turn.provider = Some("anthropic".into());
    turn.model = Some("claude-sonnet-4-5".into());
    turn.usage = Some(Usage {
        calls: vec![CallUsage {
            input_tokens: step.prompt_tokens,
            output_tokens: 120,
            ..CallUsage::default()
        }],
    });
    turn
}

fn check(ok: bool, what: String) -> Result<(), Box<dyn std::error::Error>> {
    if ok { Ok(()) } else { Err(what.into()) }
}
