//! Recognizing a session log's format from its content, not its name.
//!
//! Each format has records no other format writes: Codex rollout lines are `{timestamp, type,
//! payload}` envelopes, Claude Code lines carry `uuid`/`sessionId` next to a `type` such as
//! `user` or `file-history-snapshot`, Gemini CLI files start with `{sessionId, projectHash}`
//! (or `$set`/`$rewindTo` patch lines), SWE-agent trajectories hold `trajectory`/`history`
//! arrays (a retry run holds them under `attempts`). Sniffing reads the first lines that parse (a malformed first line does not hide the
//! format) and falls back to parsing the whole file as one JSON document.
//!
//! Prompt-history files (`~/.claude/history.jsonl`, `~/.codex/history.jsonl`, Gemini's
//! `logs.json`) are recognized and refused with a hint: they hold prompts without answers and
//! duplicate what the transcripts already contain.

use std::path::Path;

use serde_json::{Map, Value};

use super::fields::str_field;
use super::jsonl;
use super::session::LogFormat;
use crate::error::{Error, ErrorKind, Result};

/// How many lines sniffing looks at before giving up on line-oriented formats.
const SNIFF_LINES: usize = 50;

const CLAUDE_TYPES: [&str; 9] = [
    "user",
    "assistant",
    "system",
    "summary",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "custom-title",
    "attachment",
];

const CODEX_ENVELOPES: [&str; 5] = [
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

const CODEX_BARE_ITEMS: [&str; 7] = [
    "message",
    "function_call",
    "function_call_output",
    "reasoning",
    "local_shell_call",
    "custom_tool_call",
    "custom_tool_call_output",
];

/// What sniffing concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// A supported format.
    Format(LogFormat),
    /// A known file that is not a session log; the text says what it is and what to import.
    Refused(&'static str),
    /// Nothing recognizable; the text says why.
    Unknown(String),
}

/// Detects the format of the session log at `path` from its content.
///
/// # Errors
/// [`ErrorKind::NotFound`] when `path` does not exist, [`ErrorKind::Io`] when it cannot be
/// read, [`ErrorKind::Import`] naming the file and listing the supported formats when the
/// content is not one of them.
pub fn detect_format(path: &Path) -> Result<LogFormat> {
    let bytes = read_file(path)?;
    match sniff(&bytes) {
        Sniffed::Format(format) => Ok(format),
        other => Err(unrecognized(path, &other)),
    }
}

/// Reads a whole file, mapping "does not exist" to [`ErrorKind::NotFound`].
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::not_found(format!(
                "no such file or directory: {}; check the path",
                path.display()
            ))
            .with_source(e)
        } else {
            Error::io("read", path, e)
        }
    })
}

/// The [`ErrorKind::Import`] error for a file sniffing did not accept.
pub(crate) fn unrecognized(path: &Path, sniffed: &Sniffed) -> Error {
    let why = match sniffed {
        Sniffed::Refused(why) => (*why).to_owned(),
        Sniffed::Unknown(why) => why.clone(),
        Sniffed::Format(format) => format!("it is a {format} log"),
    };
    Error::new(
        ErrorKind::Import,
        format!(
            "cannot import {}: {why}; supported formats: {}",
            path.display(),
            LogFormat::supported_list()
        ),
    )
}

/// Recognizes the format of `bytes`.
pub(crate) fn sniff(bytes: &[u8]) -> Sniffed {
    let trimmed = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Some(first) = trimmed.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Sniffed::Unknown("the file is empty".to_owned());
    };
    let mut first_error = None;
    for line in jsonl::lines(trimmed).take(SNIFF_LINES) {
        match line.text.and_then(jsonl::object) {
            Ok(obj) => {
                if let Some(found) = classify(&obj) {
                    return found;
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if matches!(trimmed[first], b'{' | b'[') {
        match serde_json::from_slice::<Value>(trimmed) {
            Ok(Value::Object(obj)) => {
                if let Some(found) = classify(&obj) {
                    return found;
                }
            }
            Ok(Value::Array(items)) => {
                if let Some(found) = items.iter().find_map(|item| classify(item.as_object()?)) {
                    return found;
                }
            }
            Ok(_) => {}
            Err(e) if e.is_eof() && first_error.is_some() => {
                return Sniffed::Unknown(format!(
                    "it starts like a JSON document but ends early (line {}, column {}); the \
                     file may be truncated",
                    e.line(),
                    e.column()
                ));
            }
            Err(_) => {}
        }
    }
    Sniffed::Unknown(match first_error {
        Some(e) if trimmed[first] != b'{' && trimmed[first] != b'[' => {
            format!("it is neither JSON Lines nor a JSON document ({e})")
        }
        _ => "no record looks like one of a supported format".to_owned(),
    })
}

fn classify(obj: &Map<String, Value>) -> Option<Sniffed> {
    let ty = str_field(obj, "type");
    let has = |key: &str| obj.contains_key(key);
    let format = |f| Some(Sniffed::Format(f));

    if has("payload") && ty.is_some_and(|t| CODEX_ENVELOPES.contains(&t)) {
        return format(LogFormat::Codex);
    }
    if has("record_type")
        || (ty.is_some_and(|t| CODEX_BARE_ITEMS.contains(&t))
            && (has("role") || has("call_id") || has("summary")))
        || (has("id") && has("timestamp") && has("instructions"))
    {
        return format(LogFormat::Codex);
    }
    if (has("sessionId") && has("projectHash")) || has("$set") || has("$rewindTo") {
        return format(LogFormat::GeminiCli);
    }
    if has("id")
        && has("content")
        && !has("message")
        && !has("uuid")
        && ty.is_some_and(|t| matches!(t, "user" | "gemini" | "info" | "error" | "warning"))
    {
        return format(LogFormat::GeminiCli);
    }
    if has("sessionId") && has("messageId") && obj.get("message").is_some_and(Value::is_string) {
        return Some(Sniffed::Refused(
            "it is a Gemini CLI prompt log (logs.json), which holds prompts without answers; \
             import the chats/session-*.json files next to it instead",
        ));
    }
    if ty.is_some_and(|t| CLAUDE_TYPES.contains(&t))
        && (has("uuid")
            || has("sessionId")
            || has("leafUuid")
            || has("messageId")
            || has("message"))
    {
        return format(LogFormat::ClaudeCode);
    }
    let run = |obj: &Map<String, Value>| {
        obj.get("trajectory").is_some_and(Value::is_array)
            || (obj.get("history").is_some_and(Value::is_array) && obj.contains_key("info"))
    };
    // A retry run (`RetryAgent`) has its runs under `attempts`, and, once it chose, a copy of
    // the best one beside them; while it runs, only the attempts.
    let attempts = obj.get("attempts").and_then(Value::as_array);
    if run(obj) || attempts.is_some_and(|a| a.iter().filter_map(Value::as_object).any(run)) {
        return format(LogFormat::SweAgent);
    }
    if has("display") && has("project") {
        return Some(Sniffed::Refused(
            "it is a Claude Code prompt history (history.jsonl), which holds prompts without \
             answers; import the transcripts under ~/.claude/projects instead",
        ));
    }
    if has("session_id") && has("ts") && has("text") {
        return Some(Sniffed::Refused(
            "it is a Codex prompt history (history.jsonl), which holds prompts without answers; \
             import the rollouts under ~/.codex/sessions instead",
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_each_format_from_content() {
        let claude = br#"{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(sniff(claude), Sniffed::Format(LogFormat::ClaudeCode));
        let codex = br#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#;
        assert_eq!(sniff(codex), Sniffed::Format(LogFormat::Codex));
        let gemini =
            b"{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": []\n}";
        assert_eq!(sniff(gemini), Sniffed::Format(LogFormat::GeminiCli));
        let traj = b"{\n \"environment\": \"x\",\n \"trajectory\": [],\n \"history\": [],\n \"info\": {}\n}";
        assert_eq!(sniff(traj), Sniffed::Format(LogFormat::SweAgent));
        let retrying =
            b"{\n \"attempts\": [{\"trajectory\": [], \"history\": [], \"info\": {}}]\n}";
        assert_eq!(sniff(retrying), Sniffed::Format(LogFormat::SweAgent));
    }

    #[test]
    fn a_malformed_first_line_does_not_hide_the_format() {
        let input =
            b"{\"type\":\"user\",\n{\"type\":\"summary\",\"summary\":\"s\",\"leafUuid\":\"l\"}\n";
        assert_eq!(sniff(input), Sniffed::Format(LogFormat::ClaudeCode));
    }

    #[test]
    fn prompt_histories_are_refused_with_a_hint() {
        let input = br#"{"display":"hi","pastedContents":{},"timestamp":1,"project":"/p"}"#;
        let Sniffed::Refused(why) = sniff(input) else {
            panic!("not refused")
        };
        assert!(why.contains("~/.claude/projects"));
    }

    #[test]
    fn unknown_content_says_why() {
        assert_eq!(sniff(b"  \n"), Sniffed::Unknown("the file is empty".into()));
        let Sniffed::Unknown(why) = sniff(b"hello world\n") else {
            panic!("recognized plain text")
        };
        assert!(
            why.contains("neither JSON Lines nor a JSON document"),
            "{why}"
        );
        assert!(matches!(sniff(b"{\"a\":1}\n"), Sniffed::Unknown(_)));
    }
}
