//! Canonical turns ⇄ provider message formats: Anthropic Messages, OpenAI Chat Completions,
//! OpenAI Responses and Gemini `contents`, both directions, plus tool declarations and whole
//! request bodies.
//!
//! Provider JSON is `serde_json::Value` on both sides, so harnesses and bindings pass it through
//! untouched. Every translation returns a [`Translation`]: the value and the list of [`Loss`]es,
//! each naming what was not carried unchanged and where. The contract, tested for every format
//! and by property tests over arbitrary turns: **an empty loss list means that translating back
//! gives the same turns** (role and parts; turn ids, timestamps, usage and meta are never part of
//! a request body). Reading back stamps assistant turns and signatures with the [`Backend`]'s
//! provider and model.
//!
//! Writing always starts with the same provider-independent repairs (`normalize`): results
//! paired with their calls and hoisted before any text, cancelled calls answered, orphan results
//! sent as text, call ids reused by a later assistant block given new ones, harness error parts
//! left out. Then each provider module applies its own rules:
//! tool id charsets and lengths (`ids`), error flags encoded in content where there is none
//! (`tool_error`), non-object arguments (`arguments`), thinking signatures that go back only to
//! the provider and model family that made them (`thinking`), file references that go only to
//! the provider that stores them (`file_ref`). `docs/translate.md` has the full mapping tables.
//!
//! This module is a leaf: no store, no embeddings, no network. It does not pick models, set
//! sampling parameters or count tokens beyond the rough estimate of [`fit_window`].

mod anthropic;
mod arguments;
mod backend;
mod file_ref;
mod gemini;
mod ids;
mod loss;
mod media;
mod normalize;
mod openai_chat;
mod openai_responses;
mod read;
mod request;
mod schema;
mod thinking;
mod tool_error;
mod tools;
mod usage;
mod window;

pub(crate) use gemini::GEMINI_GENERATED;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canonical::Turn;
use crate::error::Result;

pub use arguments::RAW_ARGUMENTS_KEY;
pub use backend::{
    Backend, ForeignThinking, Format, GEMINI_SKIP_SIGNATURE, Options, SignatureMatch, SystemRole,
};
pub use gemini::ATTACHED_IMAGES_KEY;
pub use ids::{ENCODED_PREFIX, HASHED_PREFIX, canonical_id, provider_id};
pub use loss::{Location, Loss, LossKind, Translation};
pub use normalize::CANCELLED_RESULT;
pub use openai_responses::{MESSAGE_IDS_META, REASONING_IDS_META};
pub use request::{Request, from_request, to_request};
pub use tool_error::ERROR_MARKER;
pub use tools::{ToolSpec, declare_tools};
pub use usage::read_usage;
pub use window::{IMAGE_TOKENS, PART_OVERHEAD_TOKENS, Window, fit_window};

/// A conversation read back from provider JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// System prompt found among the messages (OpenAI `system`/`developer` messages, joined by a
    /// blank line); `None` for formats that keep it outside the message list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The turns, in order.
    pub turns: Vec<Turn>,
}

/// Translates canonical turns into `backend`'s message list: Anthropic `messages`, OpenAI Chat
/// `messages`, OpenAI Responses `input` items or Gemini `contents`. The system prompt and tools
/// are not included; [`to_request`] builds the whole body.
///
/// # Errors
/// - [`crate::ErrorKind::InvalidInput`] when a turn fails [`Turn::validate`] or two tool calls
///   of one assistant block (consecutive assistant turns) share an id (the message names the
///   turns). An id reused by a later block is not an error: it is sent as a new id, reported.
/// - [`crate::ErrorKind::Translation`] with [`Options::strict`] when anything would be lost.
pub fn to_messages(
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
) -> Result<Translation<Value>> {
    let plan = normalize::plan(turns)?;
    let mut losses = loss::Losses::default();
    let messages = encode(&plan, turns, backend, options, &mut losses);
    let mut all = plan.losses;
    all.extend(losses.list);
    all.finish(Value::Array(messages), options.strict)
}

pub(crate) fn encode(
    plan: &normalize::Plan<'_>,
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    losses: &mut loss::Losses,
) -> Vec<Value> {
    match backend.format {
        Format::Anthropic => anthropic::encode(plan, turns, backend, options, losses),
        Format::OpenaiChat => openai_chat::encode(plan, turns, backend, options, losses),
        Format::OpenaiResponses => openai_responses::encode(plan, turns, backend, options, losses),
        Format::Gemini => gemini::encode(plan, turns, backend, options, losses),
    }
}

/// Reads `backend`'s message list back into canonical turns: Anthropic `messages`, OpenAI Chat
/// `messages` (system and developer messages become [`Conversation::system`]), OpenAI Responses
/// `input` (a string or a list of items) or Gemini `contents`.
///
/// Tool ids that [`to_messages`] remapped are mapped back; errors encoded in content are
/// recovered; assistant turns and signatures are stamped with `backend`'s provider and model.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] naming the JSON path when the value does not have the
/// format's shape, or holds a content part of an unknown type, also inside a tool result (unless
/// [`Options::skip_unknown`]), or a turn that fails [`Turn::validate`]. With [`Options::strict`],
/// [`crate::ErrorKind::Translation`] when anything was skipped.
pub fn from_messages(
    messages: &Value,
    backend: &Backend,
    options: &Options,
) -> Result<Translation<Conversation>> {
    let mut losses = loss::Losses::default();
    let conversation = match backend.format {
        Format::Anthropic => Conversation {
            system: None,
            turns: anthropic::decode(messages, backend, options, &mut losses)?,
        },
        Format::OpenaiChat => openai_chat::decode(messages, backend, options, &mut losses)?,
        Format::OpenaiResponses => {
            openai_responses::decode(messages, backend, options, &mut losses)?
        }
        Format::Gemini => Conversation {
            system: None,
            turns: gemini::decode(messages, backend, options, &mut losses)?,
        },
    };
    losses.finish(conversation, options.strict)
}
