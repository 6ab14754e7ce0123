//! Claude Code integration: a `PreToolUse` hook that routes Bash commands through `codeoid run`.
//!
//! Claude Code runs the configured hook command before every `Bash` tool call, with a JSON
//! object on stdin (`hook_event_name`, `tool_name`, `tool_input`, `session_id`, `cwd`,
//! `permission_mode`, …). [`pre_tool_use`] reads it and answers with
//! `hookSpecificOutput.updatedInput`: the same tool input with `command` replaced by
//! `codeoid run -- '<the command>'`, so the command runs unchanged inside the runner, its stderr
//! and exit code reach Claude Code as they are, and its stdout arrives compressed with the hint
//! naming the stored raw output.
//!
//! Invariants:
//! - the hook never makes a permission decision (no `permissionDecision`): Claude Code's own
//!   permission flow applies, to the rewritten command;
//! - it never hides a command from the user's rules: a command that a Bash `deny` or `ask` rule
//!   could match is left as written (see [`Guard`]), so Claude Code judges it exactly as
//!   without the hook;
//! - leading `cd <dir> &&` steps stay outside the wrapper, so the directory change still persists
//!   in Claude Code's shell as it would without the hook;
//! - commands it cannot wrap faithfully are left alone (no output): background commands
//!   (`run_in_background` or a top-level `&`, whose output must stream), commands that only set
//!   up the shell, commands already routed through `codeoid run`, and any call in plan mode.
//!
//! This module builds JSON; the `codeoid hook claude-code` subcommand that prints it is the
//! CLI's.

mod guard;

use serde_json::{Value, json};

use super::command::CommandShape;
use crate::error::{Error, Result};

pub use guard::{Guard, settings_paths};

/// The arguments of the CLI subcommand the hook configuration runs.
pub const HOOK_SUBCOMMAND: &str = "hook claude-code";

/// The `hooks` entry to merge into Claude Code's `settings.json` (user, project or local), with
/// `codeoid` the words that start codeoid: the program (`"codeoid"` when it is on `PATH`), then
/// any global options the hook and the commands it writes must keep (`--db <file>`).
pub fn claude_code_settings(codeoid: &[&str]) -> Value {
    json!({
        "hooks": {
            "PreToolUse": [{
                "matcher": "Bash",
                "hooks": [{
                    "type": "command",
                    "command": format!("{} {HOOK_SUBCOMMAND}", shell_words(codeoid)),
                }]
            }]
        }
    })
}

/// Answers one `PreToolUse` hook call: the JSON to print on stdout, or `None` to print nothing
/// (the tool call then runs as the model wrote it). `codeoid` as in [`claude_code_settings`];
/// `guard` holds the user's Bash `deny` and `ask` rules (build it from the files of
/// [`settings_paths`] with [`Guard::from_settings`]).
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] when `input` is not a JSON object, or is the input of
/// another hook event. The CLI should then exit with a non-blocking error status so the call
/// proceeds unchanged.
pub fn pre_tool_use(input: &str, codeoid: &[&str], guard: &Guard) -> Result<Option<String>> {
    let value: Value = serde_json::from_str(input).map_err(|err| {
        Error::invalid_input(
            "the hook input is not JSON; run this command from a Claude Code PreToolUse hook",
        )
        .with_source(err)
    })?;
    let Some(object) = value.as_object() else {
        return Err(Error::invalid_input(
            "the hook input is not a JSON object; run this command from a Claude Code PreToolUse hook",
        ));
    };
    if let Some(event) = object.get("hook_event_name").and_then(Value::as_str) {
        if event != "PreToolUse" {
            return Err(Error::invalid_input(format!(
                "hook event {event:?} is not PreToolUse; configure this command under \"PreToolUse\""
            )));
        }
    }
    if object.get("tool_name").and_then(Value::as_str) != Some("Bash")
        || object.get("permission_mode").and_then(Value::as_str) == Some("plan")
    {
        return Ok(None);
    }
    let Some(tool_input) = object.get("tool_input").and_then(Value::as_object) else {
        return Ok(None);
    };
    if tool_input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
        return Ok(None);
    }
    let Some(command) = tool_input.get("command").and_then(Value::as_str) else {
        return Ok(None);
    };
    if guard.protects(command) {
        return Ok(None);
    }
    // The session id routes raw outputs to the Claude Code session that produced them, so an
    // import of that session's log later finds them in the same session.
    let session = object
        .get("session_id")
        .and_then(Value::as_str)
        .filter(|id| is_plain_session_id(id));
    let Some(wrapped) = wrap_command_in_session(codeoid, session, command) else {
        return Ok(None);
    };
    let mut updated = tool_input.clone();
    updated.insert("command".to_owned(), Value::String(wrapped));
    let output = json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": updated,
        }
    });
    Ok(Some(output.to_string()))
}

/// `command` rewritten to run through `codeoid run`, or `None` when it should run as it is (see
/// the module docs). Leading `cd <dir> &&` steps stay outside. `codeoid` as in
/// [`claude_code_settings`].
pub fn wrap_command(codeoid: &[&str], command: &str) -> Option<String> {
    wrap_command_in_session(codeoid, None, command)
}

/// [`wrap_command`] with `--session <id>` passed to `codeoid run` when `session` is given.
pub fn wrap_command_in_session(
    codeoid: &[&str],
    session: Option<&str>,
    command: &str,
) -> Option<String> {
    let (prefix, rest) = split_leading_cds(command);
    let shape = CommandShape::parse(rest);
    let runs_something = shape.pipelines.iter().any(|p| !p.is_setup());
    let program = shell_words(codeoid);
    let already = rest.trim_start().starts_with(&format!("{program} run"));
    if rest.trim().is_empty() || shape.background || !runs_something || already {
        return None;
    }
    let session = session.map_or_else(String::new, |id| format!(" --session {}", shell_quote(id)));
    Some(format!(
        "{prefix}{program} run{session} -- {}",
        shell_quote(rest.trim())
    ))
}

/// Session ids the hook passes on: what Claude Code mints (UUIDs), nothing a shell could misread
/// even though the id is quoted anyway.
fn is_plain_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Splits `cd dir && cd other && rest` into (`"cd dir && cd other && "`, `"rest"`). Only
/// arguments without quotes, spaces or shell metacharacters are recognised; anything else
/// stays in `rest`.
fn split_leading_cds(command: &str) -> (&str, &str) {
    let mut consumed = 0;
    loop {
        let rest = &command[consumed..];
        let trimmed = rest.trim_start();
        let Some(after_cd) = trimmed.strip_prefix("cd ") else {
            break;
        };
        let after_cd = after_cd.trim_start();
        let dir_len = after_cd
            .find(|c: char| c.is_whitespace() || "&|;<>()$`'\"\\".contains(c))
            .unwrap_or(after_cd.len());
        if dir_len == 0 {
            break;
        }
        let Some(tail) = after_cd[dir_len..].trim_start().strip_prefix("&&") else {
            break;
        };
        let tail = tail.trim_start();
        consumed = command.len() - tail.len();
    }
    command.split_at(consumed)
}

/// `text` as one POSIX shell word: single-quoted, with `'` written as `'\''`.
pub fn shell_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// `words` as one shell command line, each quoted only when it needs to be.
pub fn shell_words(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| shell_quote_if_needed(w))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote_if_needed(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@%,".contains(c));
    if plain {
        text.to_owned()
    } else {
        shell_quote(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_wrapped_with_leading_cds_outside() {
        assert_eq!(
            wrap_command(&["codeoid"], "cargo test").as_deref(),
            Some("codeoid run -- 'cargo test'")
        );
        assert_eq!(
            wrap_command(&["codeoid"], "cd crates/x && cd src && git diff").as_deref(),
            Some("cd crates/x && cd src && codeoid run -- 'git diff'")
        );
        assert_eq!(
            wrap_command(&["codeoid"], "cd 'my dir' && ls").as_deref(),
            Some("codeoid run -- 'cd '\\''my dir'\\'' && ls'")
        );
        assert_eq!(
            wrap_command(&["/opt/my tools/codeoid"], "ls").as_deref(),
            Some("'/opt/my tools/codeoid' run -- 'ls'")
        );
    }

    #[test]
    fn some_commands_are_left_alone() {
        for command in [
            "",
            "cd src",
            "cd x && export A=1",
            "npm run dev &",
            "codeoid run -- ls",
        ] {
            assert_eq!(wrap_command(&["codeoid"], command), None, "{command:?}");
        }
    }

    #[test]
    fn quoting_round_trips_through_sh() {
        let nasty = "echo 'it''s' \"$HOME\" `date` \\ && printf '%s\\n' a\nb";
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s' {}", shell_quote(nasty)))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), nasty);
    }

    #[test]
    fn non_bash_plan_mode_and_background_calls_get_no_output() {
        let read = r#"{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/x"}}"#;
        assert_eq!(
            pre_tool_use(read, &["codeoid"], &Guard::none()).unwrap(),
            None
        );
        let plan = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","permission_mode":"plan","tool_input":{"command":"ls"}}"#;
        assert_eq!(
            pre_tool_use(plan, &["codeoid"], &Guard::none()).unwrap(),
            None
        );
        let bg = r#"{"tool_name":"Bash","tool_input":{"command":"npm run dev","run_in_background":true}}"#;
        assert_eq!(
            pre_tool_use(bg, &["codeoid"], &Guard::none()).unwrap(),
            None
        );
    }

    #[test]
    fn bad_input_is_invalid_input() {
        let err = pre_tool_use("not json", &["codeoid"], &Guard::none()).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidInput);
        let err = pre_tool_use(
            r#"{"hook_event_name":"PostToolUse"}"#,
            &["codeoid"],
            &Guard::none(),
        )
        .unwrap_err();
        assert!(
            err.message().contains("\"PostToolUse\""),
            "{}",
            err.message()
        );
        assert!(pre_tool_use("[1]", &["codeoid"], &Guard::none()).is_err());
    }
}
