//! The Claude Code `PreToolUse` hook: valid settings JSON, and Bash commands that reach
//! `codeoid run` intact, with their exit codes and stderr unchanged.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use codeoid_core::compress::claude_hook::{
    Guard, HOOK_SUBCOMMAND, claude_code_settings, pre_tool_use,
};
use codeoid_core::compress::{MemorySink, Registry, Runner, Stdin};
use serde_json::{Value, json};

/// The `PreToolUse` input Claude Code sends for a Bash call, as its hooks reference describes.
fn hook_input(command: &str) -> String {
    json!({
        "session_id": "abc123",
        "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
        "cwd": "/home/user/p",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {
            "command": command,
            "description": "Run the tests",
            "timeout": 120000
        },
        "tool_use_id": "toolu_01ABC"
    })
    .to_string()
}

/// The rewritten command of a hook answer.
fn rewritten(answer: &str) -> String {
    let value: Value = serde_json::from_str(answer).unwrap();
    let specific = &value["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse");
    assert!(
        specific.get("permissionDecision").is_none(),
        "the hook never decides permissions"
    );
    let input = &specific["updatedInput"];
    assert_eq!(
        input["description"], "Run the tests",
        "other tool input fields are kept"
    );
    assert_eq!(input["timeout"], 120000);
    input["command"].as_str().unwrap().to_owned()
}

#[test]
fn settings_are_valid_json_routing_bash_to_the_hook_subcommand() {
    let settings = claude_code_settings(&["codeoid"]);
    let text = serde_json::to_string_pretty(&settings).unwrap();
    let parsed: Value = serde_json::from_str(&text).unwrap();
    let entries = parsed["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["matcher"], "Bash");
    let hook = &entries[0]["hooks"][0];
    assert_eq!(hook["type"], "command");
    assert_eq!(hook["command"], format!("codeoid {HOOK_SUBCOMMAND}"));
    let quoted = claude_code_settings(&["/opt/code oid/bin/codeoid"]);
    assert_eq!(
        quoted["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        format!("'/opt/code oid/bin/codeoid' {HOOK_SUBCOMMAND}")
    );
}

/// Commands whose quoting, exit codes and streams must survive the rewrite.
const COMMANDS: &[&str] = &[
    "seq 1 3000; echo 'it'\"'\"'s \"quoted\" $HOME' >&2; exit 3",
    "printf '%s\\n' \"a  b\" 'c\\d' && echo \"$((6 * 7))\" && false",
    "cat <<'EOF'\nline with $dollar and `ticks`\nEOF\necho done >&2",
    "cd / && pwd && ls -d /nonexistent-dir-xyz",
    "sh -c 'kill -TERM $$'",
];

#[test]
fn rewritten_commands_reach_codeoid_run_intact() {
    // A stand-in for the CLI: `codeoid run -- <command>` runs exactly that command.
    let bin = tempfile::tempdir().unwrap();
    let stand_in = bin.path().join("codeoid");
    std::fs::write(
        &stand_in,
        "#!/bin/sh\n[ \"$1\" = run ] && [ \"$2\" = --session ] && [ \"$3\" = abc123 ] && [ \"$4\" = -- ] && [ $# -eq 5 ] || { echo \"bad arguments: $*\" >&2; exit 99; }\nexec sh -c \"$5\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for command in COMMANDS {
        let answer = pre_tool_use(&hook_input(command), &["codeoid"], &Guard::none())
            .unwrap()
            .unwrap();
        let wrapped = rewritten(&answer);
        assert!(
            wrapped.contains("codeoid run --session 'abc123' -- '"),
            "{wrapped}"
        );
        let run = |line: &str| {
            Command::new("sh")
                .arg("-c")
                .arg(line)
                .env("PATH", &path)
                .output()
                .unwrap()
        };
        let original = run(command);
        let routed = run(&wrapped);
        assert_eq!(routed.status.code(), original.status.code(), "{command}");
        assert_eq!(routed.stdout, original.stdout, "{command}");
        assert_eq!(routed.stderr, original.stderr, "{command}");
    }
}

#[test]
fn the_runner_keeps_exit_codes_and_stderr_of_hooked_commands() {
    let registry = Registry::builtin().unwrap();
    for command in COMMANDS {
        let sink = MemorySink::new();
        let run = Runner::new(&registry)
            .stdin(Stdin::Null)
            .run(command, &sink)
            .unwrap();
        let direct = Command::new("sh").arg("-c").arg(command).output().unwrap();
        let expected_code = direct.status.code().unwrap_or(128 + 15);
        assert_eq!(run.exit_code, expected_code, "{command}");
        assert_eq!(run.stderr, direct.stderr, "{command}");
        assert_eq!(sink.stored()[0].stdout, direct.stdout, "{command}");
        if run.compressed.is_none() {
            assert_eq!(run.stdout, direct.stdout, "{command}");
        }
    }
}

#[test]
fn the_directory_change_of_a_leading_cd_stays_outside_the_wrapper() {
    let answer = pre_tool_use(
        &hook_input("cd /tmp && cd .. && cargo test 2>&1"),
        &["codeoid"],
        &Guard::none(),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        rewritten(&answer),
        "cd /tmp && cd .. && codeoid run --session 'abc123' -- 'cargo test 2>&1'"
    );
}

#[test]
fn calls_that_must_not_be_rewritten_get_no_answer() {
    for command in ["cd src", "codeoid run -- ls", "npm run dev &", ""] {
        assert_eq!(
            pre_tool_use(&hook_input(command), &["codeoid"], &Guard::none()).unwrap(),
            None,
            "{command:?}"
        );
    }
}

#[test]
fn commands_a_deny_or_ask_rule_could_match_are_left_to_claude_code() {
    let settings = r#"{"permissions": {
        "allow": ["Bash(cargo test:*)"],
        "deny": ["Bash(rm -rf:*)"],
        "ask": ["Bash(git push:*)"]
    }}"#;
    let guard = Guard::from_settings(&["{}".to_owned(), settings.to_owned()]);
    for command in [
        "rm -rf target",
        "cargo build && rm -rf target",
        "git push origin main",
    ] {
        assert_eq!(
            pre_tool_use(&hook_input(command), &["codeoid"], &guard).unwrap(),
            None,
            "{command}"
        );
    }
    let answer = pre_tool_use(&hook_input("cargo test"), &["codeoid"], &guard)
        .unwrap()
        .unwrap();
    assert_eq!(
        rewritten(&answer),
        "codeoid run --session 'abc123' -- 'cargo test'"
    );
}

#[test]
fn a_session_id_a_shell_could_misread_is_not_passed_on() {
    let input = hook_input("cargo test").replace("abc123", "x'; rm -rf ~; '");
    let answer = pre_tool_use(&input, &["codeoid"], &Guard::none())
        .unwrap()
        .unwrap();
    assert_eq!(rewritten(&answer), "codeoid run -- 'cargo test'");
}
