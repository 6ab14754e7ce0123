//! A small, realistic coding-agent session that `codeoid quickstart` records when no real logs
//! exist on the machine, so a new user sees every mechanism work on a fresh install.
//!
//! The workspace is a real directory next to the store holding the files the session reads, so
//! `recall_file` can compare what was read with what is on disk. Turn ids are fixed: recording
//! the demo again adds nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use codeoid_core::Memory;
use codeoid_core::canonical::{
    CallUsage, Part, Role, ToolCall, ToolResult, ToolResultPart, Turn, Usage,
};
use codeoid_core::store::NewSession;
use serde_json::{Value, json};

/// The demo's session ids.
pub const SESSIONS: [&str; 2] = ["demo-fix-nested-arrays", "demo-error-positions"];

const PARSER_BEFORE: &str = "pub fn parse_array(tokens: &[Token], pos: &mut usize) -> Result<Value, ParseError> {\n    let mut depth = 0;\n    let mut items = Vec::new();\n    while *pos < tokens.len() {\n        match tokens[*pos] {\n            Token::Open => depth += 1,\n            Token::Close => {\n                depth -= 1;\n                *pos += 1;\n                if depth == 0 { return Ok(Value::Array(items)); }\n            }\n            _ => items.push(parse_value(tokens, pos)?),\n        }\n        *pos += 1;\n    }\n    Err(ParseError::UnexpectedEnd)\n}\n";

const PARSER_AFTER: &str = "pub fn parse_array(tokens: &[Token], pos: &mut usize) -> Result<Value, ParseError> {\n    *pos += 1; // the opening bracket\n    let mut items = Vec::new();\n    while *pos < tokens.len() {\n        match tokens[*pos] {\n            Token::Close => {\n                *pos += 1;\n                return Ok(Value::Array(items));\n            }\n            Token::Comma => *pos += 1,\n            _ => items.push(parse_value(tokens, pos)?),\n        }\n    }\n    Err(ParseError::UnexpectedEnd)\n}\n";

/// A directory next to the store file for the demo workspace.
pub fn workspace_dir(db_path: &Path) -> PathBuf {
    db_path
        .parent()
        .unwrap_or(Path::new("."))
        .join("demo-workspace")
}

/// Writes the demo project files (the parser as it is after the fix).
pub fn write_workspace(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("cannot create the demo workspace {}", dir.display()))?;
    std::fs::write(dir.join("src/parser.rs"), PARSER_AFTER)?;
    std::fs::write(
        dir.join("src/error.rs"),
        "pub enum ParseError {\n    UnexpectedEnd,\n    UnexpectedToken { found: char },\n}\n",
    )?;
    Ok(())
}

/// Cargo test output: many passing tests and, when `failing`, the nested-array panic.
pub fn cargo_test_output(failing: bool) -> String {
    let mut out = String::from(
        "   Compiling tinyjson v0.3.1 (/work/tinyjson)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 2.41s\n     Running unittests src/lib.rs (target/debug/deps/tinyjson-5f0c2e9a)\n\nrunning 48 tests\n",
    );
    for i in 0..47 {
        out.push_str(&format!("test parser::tests::parses_case_{i:02} ... ok\n"));
    }
    if failing {
        out.push_str("test parser::tests::nested_arrays ... FAILED\n\nfailures:\n\n---- parser::tests::nested_arrays stdout ----\nthread 'parser::tests::nested_arrays' panicked at src/parser.rs:9:17:\nindex out of bounds: the len is 9 but the index is 9\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\nfailures:\n    parser::tests::nested_arrays\n\ntest result: FAILED. 47 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s\n\nerror: test failed, to rerun pass `--lib`\n");
    } else {
        out.push_str("test parser::tests::nested_arrays ... ok\n\ntest result: ok. 48 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s\n");
    }
    out
}

fn usage(tokens: u64) -> Option<Usage> {
    Some(Usage {
        calls: vec![CallUsage {
            input_tokens: 4,
            cache_read_tokens: tokens,
            output_tokens: 220,
            ..CallUsage::default()
        }],
    })
}

fn turn(id: &str, role: Role, parts: Vec<Part>, tokens: u64) -> Turn {
    let mut turn = Turn::new(role, parts);
    turn.id = Some(id.to_string());
    if role == Role::Assistant {
        turn.provider = Some("anthropic".into());
        turn.model = Some("claude-sonnet-4-5".into());
        turn.usage = usage(tokens);
    }
    turn
}

fn text(text: &str) -> Part {
    Part::Text {
        text: text.to_string(),
    }
}

fn call(id: &str, name: &str, input: Value) -> Part {
    Part::ToolCall(ToolCall {
        id: id.into(),
        provider_id: None,
        name: name.into(),
        input,
    })
}

fn result(id: &str, output: &str) -> Part {
    Part::ToolResult(ToolResult {
        call_id: id.into(),
        parts: vec![ToolResultPart::Text {
            text: output.to_string(),
        }],
        is_error: false,
    })
}

/// The demo's turns, per session.
fn sessions() -> [(&'static str, &'static str, Vec<Turn>); 2] {
    use Role::{Assistant as A, User as U};
    let fix = vec![
        turn(
            "u1",
            U,
            vec![text(
                "The JSON parser in src/parser.rs panics on nested arrays like [[1,2],[3]]. Find the bug and fix it.",
            )],
            0,
        ),
        turn(
            "a1",
            A,
            vec![
                text("Let me read the parser first."),
                call("c1", "Read", json!({"file_path": "src/parser.rs"})),
            ],
            11_800,
        ),
        turn("r1", U, vec![result("c1", PARSER_BEFORE)], 0),
        turn(
            "a2",
            A,
            vec![
                text("Reproducing with the test suite."),
                call(
                    "c2",
                    "Bash",
                    json!({"command": "cargo test", "description": "Run the tests"}),
                ),
            ],
            13_900,
        ),
        turn("r2", U, vec![result("c2", &cargo_test_output(true))], 0),
        turn(
            "a3",
            A,
            vec![
                text(
                    "The depth counter treats the inner array's closing bracket as the end of the outer one, then skips a token past the end. Parsing each nested array recursively removes the counter.",
                ),
                call(
                    "c3",
                    "Edit",
                    json!({"file_path": "src/parser.rs", "old_string": PARSER_BEFORE, "new_string": PARSER_AFTER}),
                ),
            ],
            16_200,
        ),
        turn(
            "r3",
            U,
            vec![result("c3", "The file src/parser.rs has been updated.")],
            0,
        ),
        turn(
            "a4",
            A,
            vec![call(
                "c4",
                "Bash",
                json!({"command": "cargo test", "description": "Run the tests again"}),
            )],
            17_100,
        ),
        turn("r4", U, vec![result("c4", &cargo_test_output(false))], 0),
        turn(
            "a5",
            A,
            vec![text(
                "Fixed: parse_array now recurses into nested arrays instead of counting depth, so `[[1,2],[3]]` parses. All 48 tests pass.",
            )],
            17_900,
        ),
    ];
    let positions = vec![
        turn(
            "u1",
            U,
            vec![text(
                "Parser errors should report the line and column where they happen. Add that to ParseError.",
            )],
            0,
        ),
        turn(
            "a1",
            A,
            vec![call(
                "c1",
                "Grep",
                json!({"pattern": "ParseError::", "path": "src"}),
            )],
            9_400,
        ),
        turn(
            "r1",
            U,
            vec![result(
                "c1",
                "src/parser.rs:13:    Err(ParseError::UnexpectedEnd)\nsrc/error.rs:1:pub enum ParseError {",
            )],
            0,
        ),
        turn(
            "a2",
            A,
            vec![call("c2", "Read", json!({"file_path": "src/error.rs"}))],
            10_100,
        ),
        turn(
            "r2",
            U,
            vec![result(
                "c2",
                "pub enum ParseError {\n    UnexpectedEnd,\n    UnexpectedToken { found: char },\n}\n",
            )],
            0,
        ),
        turn(
            "a3",
            A,
            vec![text(
                "ParseError has two variants and neither carries a position. I will add `line` and `column` to both and thread a position through the tokenizer.",
            )],
            10_900,
        ),
    ];
    [
        (SESSIONS[0], "fix nested arrays", fix),
        (SESSIONS[1], "error positions", positions),
    ]
}

/// Records the demo sessions into `memory` (idempotent) and finishes them.
pub fn record(memory: &Memory) -> Result<()> {
    for (id, name, turns) in sessions() {
        memory.start_session(NewSession {
            id: Some(id.to_string()),
            name: Some(name.to_string()),
            provider: Some("anthropic".into()),
            model: Some("claude-sonnet-4-5".into()),
            ..NewSession::default()
        })?;
        for turn in &turns {
            memory.record_turn(id, turn)?;
        }
        memory.finish_session(id)?;
    }
    Ok(())
}
