//! Reading OpenAI Responses `input` back into canonical turns (the writer is the parent module).
//!
//! Assistant-side items (reasoning, function calls, assistant messages) join one assistant turn;
//! `function_call_output` items open a user turn that the next user message joins and closes.
//! Reasoning and assistant message item ids go to the turn's meta under [`REASONING_IDS_META`]
//! and [`MESSAGE_IDS_META`] (a message's `status` is not kept: writing sends `completed`);
//! function call item ids become `provider_id`s; errors are recovered from the error marker. System and developer messages
//! become the system prompt (reported as moved when they come after the first turn); output parts
//! of unknown types (`input_file`) are errors or, with `skip_unknown`, dropped.

use serde_json::{Map, Value, json};

use crate::canonical::{
    Image, ImageSource, Part, Role, Signature, Thinking, ToolCall, ToolResult, ToolResultPart, Turn,
};
use crate::error::{Error, Result};

use super::{MESSAGE_IDS_META, REASONING_IDS_META, marked_list};
use crate::translate::Conversation;
use crate::translate::arguments;
use crate::translate::backend::{Backend, Options};
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::openai_chat::{image_from_url, moved_system};
use crate::translate::read;
use crate::translate::tool_error::{self, ERROR_MARKER};

/// Reads Responses input (a string or a list of items) back into a conversation.
pub(crate) fn decode(
    input: &Value,
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Result<Conversation> {
    if let Value::String(text) = input {
        return Ok(Conversation {
            system: None,
            turns: vec![Turn::user_text(text.clone())],
        });
    }
    let list = read::array(input, "input")?;
    let mut reader = Reader {
        backend,
        turns: Vec::new(),
        system: Vec::new(),
        user_open: false,
    };
    for (i, item) in list.iter().enumerate() {
        let path = format!("input[{i}]");
        let map = read::object(item, &path)?;
        let kind = match read::opt_string(map, "type", &path)? {
            Some(kind) => kind,
            None if map.contains_key("role") => "message",
            None => {
                return Err(Error::invalid_input(format!(
                    "{path} has neither \"type\" nor \"role\"; expected a responses input item"
                )));
            }
        };
        match kind {
            "message" => reader.message(map, &path, i, options, losses)?,
            "reasoning" => {
                let part = reasoning_part(map, &path, backend)?;
                let turn = reader.assistant();
                if let Some(id) = read::opt_string(map, "id", &path)? {
                    note_id(turn, REASONING_IDS_META, turn.parts.len(), id);
                }
                turn.parts.push(part);
            }
            "function_call" => {
                let call = ToolCall {
                    id: ids::canonical_id(read::string(map, "call_id", &path)?).into_owned(),
                    provider_id: read::opt_string(map, "id", &path)?.map(str::to_owned),
                    name: read::string(map, "name", &path)?.to_owned(),
                    input: arguments::from_json_string(read::string(map, "arguments", &path)?),
                };
                reader.assistant().parts.push(Part::ToolCall(call));
            }
            "function_call_output" => {
                let result = decode_output(map, &path, i, options, losses)?;
                reader.user(true).parts.push(Part::ToolResult(result));
            }
            other if options.skip_unknown => {
                losses.message(
                    i,
                    None,
                    LossKind::Dropped,
                    format!("input item of type {other:?}"),
                );
            }
            other => {
                return Err(read::unknown_type(
                    &path,
                    other,
                    "message, reasoning, function_call, function_call_output",
                ));
            }
        }
    }
    for (t, turn) in reader.turns.iter().enumerate() {
        turn.validate()
            .map_err(|e| Error::invalid_input(format!("input turn {t}: {}", e.message())))?;
    }
    let system = (!reader.system.is_empty()).then(|| reader.system.join("\n\n"));
    Ok(Conversation {
        system,
        turns: reader.turns,
    })
}

struct Reader<'b> {
    backend: &'b Backend,
    turns: Vec<Turn>,
    system: Vec<String>,
    /// The last turn is a user turn of outputs that a user message may still join.
    user_open: bool,
}

impl Reader<'_> {
    fn assistant(&mut self) -> &mut Turn {
        self.user_open = false;
        if self.turns.last().is_none_or(|t| t.role != Role::Assistant) {
            let mut turn = Turn::new(Role::Assistant, Vec::new());
            turn.provider = Some(self.backend.provider.clone());
            turn.model = self.backend.model.clone();
            self.turns.push(turn);
        }
        let last = self.turns.len() - 1;
        &mut self.turns[last]
    }

    /// The user turn to append to: the open one, or a new one (left open when `open`).
    fn user(&mut self, open: bool) -> &mut Turn {
        if !self.user_open || self.turns.last().is_none_or(|t| t.role != Role::User) {
            self.turns.push(Turn::new(Role::User, Vec::new()));
        }
        self.user_open = open;
        let last = self.turns.len() - 1;
        &mut self.turns[last]
    }

    fn message(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        i: usize,
        options: &Options,
        losses: &mut Losses,
    ) -> Result<()> {
        let role = read::string(map, "role", path)?;
        let parts = message_parts(map, path, i, options, losses)?;
        match role {
            "user" => self.user(false).parts.extend(parts),
            "assistant" => {
                let id = read::opt_string(map, "id", path)?;
                let turn = self.assistant();
                for part in parts {
                    // Every text of the message has its id, so that they go back as one item.
                    if let (Some(id), Part::Text { .. }) = (id, &part) {
                        note_id(turn, MESSAGE_IDS_META, turn.parts.len(), id);
                    }
                    turn.parts.push(part);
                }
            }
            "system" | "developer" => {
                if !self.turns.is_empty() {
                    losses.message(i, None, LossKind::Moved, moved_system(role));
                }
                self.system
                    .extend(parts.into_iter().filter_map(|p| match p {
                        Part::Text { text } => Some(text),
                        _ => None,
                    }));
            }
            other => {
                return Err(Error::invalid_input(format!(
                    "{path}.role is {other:?}; expected user, assistant, system or developer"
                )));
            }
        }
        Ok(())
    }
}

/// Records item `id` of part `index` in `turn`'s meta under `key`.
fn note_id(turn: &mut Turn, key: &str, index: usize, id: &str) {
    let ids = turn
        .meta
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(ids) = ids {
        ids.insert(index.to_string(), json!(id));
    }
}

fn reasoning_part(map: &Map<String, Value>, path: &str, backend: &Backend) -> Result<Part> {
    let mut texts = Vec::new();
    if let Some(summary) = map.get("summary") {
        let summary_path = format!("{path}.summary");
        for (s, entry) in read::array(summary, &summary_path)?.iter().enumerate() {
            let entry_path = format!("{summary_path}[{s}]");
            texts.push(read::string(
                read::object(entry, &entry_path)?,
                "text",
                &entry_path,
            )?);
        }
    }
    let signature = read::opt_string(map, "encrypted_content", path)?.map(|value| Signature {
        provider: backend.provider.clone(),
        model: backend.model.clone(),
        value: value.to_owned(),
    });
    Ok(Part::Thinking(Thinking {
        text: texts.join("\n\n"),
        signature,
        redacted: false,
    }))
}

fn message_parts(
    map: &Map<String, Value>,
    path: &str,
    i: usize,
    options: &Options,
    losses: &mut Losses,
) -> Result<Vec<Part>> {
    let items = match read::text_or_parts(map, "content", path)? {
        read::TextOrParts::Text(text) => {
            return Ok(vec![Part::Text {
                text: text.to_owned(),
            }]);
        }
        read::TextOrParts::Parts(items) => items,
    };
    let mut parts = Vec::with_capacity(items.len());
    for (p, item) in items.iter().enumerate() {
        let item_path = format!("{path}.content[{p}]");
        let item = read::object(item, &item_path)?;
        match read::string(item, "type", &item_path)? {
            "input_text" | "output_text" => parts.push(Part::Text {
                text: read::string(item, "text", &item_path)?.to_owned(),
            }),
            "refusal" => parts.push(Part::Text {
                text: read::string(item, "refusal", &item_path)?.to_owned(),
            }),
            "input_image" => parts.push(Part::Image(decode_image(item, &item_path)?)),
            other if options.skip_unknown => losses.message(
                i,
                Some(p),
                LossKind::Dropped,
                format!("content part of type {other:?}"),
            ),
            other => {
                return Err(read::unknown_type(
                    &item_path,
                    other,
                    "input_text, output_text, refusal, input_image",
                ));
            }
        }
    }
    Ok(parts)
}

fn decode_image(item: &Map<String, Value>, path: &str) -> Result<Image> {
    if let Some(url) = read::opt_string(item, "image_url", path)? {
        return Ok(image_from_url(url));
    }
    match read::opt_string(item, "file_id", path)? {
        Some(file_id) => Ok(Image {
            media_type: None,
            source: ImageSource::File {
                file_id: file_id.to_owned(),
            },
        }),
        None => Err(Error::invalid_input(format!(
            "{path} has neither image_url nor file_id; expected one of them"
        ))),
    }
}

/// A `function_call_output` item (input item `i`). Output parts other than `input_text` and
/// `input_image` (`input_file`) are unknown content: dropped with `skip_unknown`.
fn decode_output(
    map: &Map<String, Value>,
    path: &str,
    i: usize,
    options: &Options,
    losses: &mut Losses,
) -> Result<ToolResult> {
    let call_id = ids::canonical_id(read::string(map, "call_id", path)?).into_owned();
    let (is_error, parts) = match read::text_or_parts(map, "output", path)? {
        read::TextOrParts::Text(s) => match tool_error::unmark(s) {
            (false, Some("")) | (_, None) => (s == ERROR_MARKER, Vec::new()),
            (is_error, Some(text)) => (
                is_error,
                vec![ToolResultPart::Text {
                    text: text.to_owned(),
                }],
            ),
        },
        read::TextOrParts::Parts(items) => {
            let mut parts = Vec::with_capacity(items.len());
            for (p, item) in items.iter().enumerate() {
                let item_path = format!("{path}.output[{p}]");
                let item = read::object(item, &item_path)?;
                match read::string(item, "type", &item_path)? {
                    "input_text" => parts.push(ToolResultPart::Text {
                        text: read::string(item, "text", &item_path)?.to_owned(),
                    }),
                    "input_image" => {
                        parts.push(ToolResultPart::Image(decode_image(item, &item_path)?));
                    }
                    other if options.skip_unknown => losses.message(
                        i,
                        Some(p),
                        LossKind::Dropped,
                        format!("output part of type {other:?} in a function_call_output"),
                    ),
                    other => {
                        return Err(read::unknown_type(
                            &item_path,
                            other,
                            "input_text, input_image (in a function_call_output)",
                        ));
                    }
                }
            }
            let first = parts.first().map(|p| match p {
                ToolResultPart::Text { text } => Ok(text.as_str()),
                ToolResultPart::Image(_) => Err(()),
            });
            let rest: Vec<std::result::Result<&str, ()>> = parts
                .iter()
                .skip(1)
                .map(|p| match p {
                    ToolResultPart::Text { text } => Ok(text.as_str()),
                    ToolResultPart::Image(_) => Err(()),
                })
                .collect();
            let is_error = marked_list(first.as_ref(), &rest);
            if is_error {
                parts.remove(0);
            }
            (is_error, parts)
        }
    };
    Ok(ToolResult {
        call_id,
        parts,
        is_error,
    })
}
