//! Claude Code `attachment` lines that carry text the model read, rewritten into the `user`
//! line each stands for so it is grouped, deduplicated and dated like any message.
//!
//! - `queued_command`: something sent while the agent was working, which Claude Code folds
//!   into the running turn instead of writing a `user` line. Typed by the person
//!   (`commandMode` `prompt`, `origin.kind` `human`, either absent too) it is a prompt: the
//!   user intent of the calls that follow. Anything else queued (a task notification, another
//!   session's message) is harness-injected context (`isMeta`).
//! - `hook_additional_context`: text a hook added for the model (compiler errors after an edit,
//!   say): context (`isMeta`), its `content` strings joined by newlines.
//!
//! Every other attachment (hook outcomes, file snapshots, reminders about tools) is not part of
//! the conversation and stays ignored. The rewritten line keeps its `attachment` object, whose
//! `type` the turn records as `meta.attachment`.
//!
//! Claude Code also writes some harness text as plain `user` lines without `isMeta` (a
//! background task's `<task-notification>`, `[Request interrupted by user]`):
//! [`is_harness_notice`] tells the reader to treat them as context too.

use serde_json::{Map, Value};

use crate::canonical::Part;
use crate::import::fields::{flag, str_field};

/// The `user` line attachment line `obj` stands for, or `obj` unchanged when it carries no
/// conversation text.
pub(super) fn as_user_line(
    mut obj: Map<String, Value>,
) -> Result<Map<String, Value>, Map<String, Value>> {
    let Some((content, typed)) = obj
        .get("attachment")
        .and_then(Value::as_object)
        .and_then(conversation_text)
    else {
        return Err(obj);
    };
    let mut message = Map::new();
    message.insert("role".to_owned(), Value::from("user"));
    message.insert("content".to_owned(), content);
    obj.insert("message".to_owned(), Value::Object(message));
    if !typed {
        obj.insert("isMeta".to_owned(), Value::Bool(true));
    }
    Ok(obj)
}

/// The text an attachment put before the model (a string or content blocks) and whether the
/// person typed it.
fn conversation_text(attachment: &Map<String, Value>) -> Option<(Value, bool)> {
    match str_field(attachment, "type")? {
        "queued_command" => {
            let prompt = attachment
                .get("prompt")
                .filter(|p| p.is_string() || p.is_array())?;
            let by_person = str_field(attachment, "commandMode").is_none_or(|m| m == "prompt")
                && attachment
                    .get("origin")
                    .and_then(|o| o.get("kind"))
                    .and_then(Value::as_str)
                    .is_none_or(|k| k == "human")
                && !flag(attachment, "isMeta");
            Some((prompt.clone(), by_person))
        }
        "hook_additional_context" => {
            let texts: Vec<String> = match attachment.get("content")? {
                Value::String(text) => vec![text.clone()],
                Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    })
                    .collect(),
                _ => return None,
            };
            let text = texts.join("\n");
            (!text.trim().is_empty()).then(|| (Value::String(text), false))
        }
        _ => None,
    }
}

/// Texts Claude Code writes as user messages without `isMeta` that no person typed: a
/// background task's end (`<task-notification>`) and the mark of an interruption. Taken for
/// prompts, they became the intent of the calls after them.
pub(super) fn is_harness_notice(parts: &[Part]) -> bool {
    let mut texts = parts.iter().filter_map(|p| match p {
        Part::Text { text } => Some(text.trim_start()),
        _ => None,
    });
    texts.next().is_some_and(|text| {
        text.starts_with("<task-notification>") || text.starts_with("[Request interrupted by user")
    })
}
