//! Which wire format, provider and model a translation targets, and the options that steer it.
//!
//! A [`Format`] is a JSON shape (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses,
//! Gemini `contents`); a [`Backend`] adds who answers in that shape (`provider`, e.g. `"deepseek"`
//! for an OpenAI-compatible endpoint) and which model, because thinking signatures are only ever
//! sent back to the provider and model family that made them.
//!
//! [`Options`] implements `Default` and serde with every field defaulted: build it with
//! `Options { strict: true, ..Options::default() }` in Rust or as partial JSON from a binding, so a
//! new option never breaks a caller.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::canonical::{Part, Role, Turn};
use crate::error::{Error, Result};

/// A provider wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Anthropic Messages (`messages`, `system`, `tools` with `input_schema`).
    Anthropic,
    /// OpenAI Chat Completions (`messages` with `tool_calls` and `tool` messages).
    OpenaiChat,
    /// OpenAI Responses (`input` items, `instructions`).
    OpenaiResponses,
    /// Gemini `generateContent` (`contents`, `systemInstruction`, `functionDeclarations`).
    Gemini,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 4] = [
        Format::Anthropic,
        Format::OpenaiChat,
        Format::OpenaiResponses,
        Format::Gemini,
    ];

    /// `"anthropic"`, `"openai_chat"`, `"openai_responses"` or `"gemini"`; also the fixture
    /// directory name under `fixtures/translate/`.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Anthropic => "anthropic",
            Format::OpenaiChat => "openai_chat",
            Format::OpenaiResponses => "openai_responses",
            Format::Gemini => "gemini",
        }
    }

    /// The provider that defines the format (`"anthropic"`, `"openai"`, `"gemini"`): the default
    /// [`Backend::provider`].
    pub const fn vendor(self) -> &'static str {
        match self {
            Format::Anthropic => "anthropic",
            Format::OpenaiChat | Format::OpenaiResponses => "openai",
            Format::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = Error;

    fn from_str(name: &str) -> Result<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                Error::invalid_input(format!(
                    "unknown translation format {name:?}; expected one of anthropic, openai_chat, \
                     openai_responses, gemini"
                ))
            })
    }
}

/// Where a translation goes to (or comes from): a format, the provider answering in it and,
/// when known, the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backend {
    /// The wire format.
    pub format: Format,
    /// Provider name as recorded in [`crate::canonical::Signature::provider`] and
    /// [`crate::canonical::Turn::provider`] (`"anthropic"`, `"openai"`, `"gemini"`, or an
    /// OpenAI-compatible provider such as `"deepseek"`).
    pub provider: String,
    /// Model id, when known. Signatures are matched against it (see [`SignatureMatch`]) and
    /// turns read back are stamped with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl Backend {
    /// `format` served by its own vendor, model unknown.
    pub fn new(format: Format) -> Backend {
        Backend {
            format,
            provider: format.vendor().to_owned(),
            model: None,
        }
    }

    /// The same backend with `model` set.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Backend {
        self.model = Some(model.into());
        self
    }

    /// The same backend served by `provider` (an OpenAI-compatible provider, a proxy...).
    #[must_use]
    pub fn with_provider(mut self, provider: impl Into<String>) -> Backend {
        self.provider = provider.into();
        self
    }

    /// A turn of `role` with `parts` read back from this backend's messages, an assistant's
    /// stamped with its provider and model.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming `path` (the message it came from) when the
    /// turn is not a valid canonical turn.
    pub(crate) fn decoded_turn(&self, role: Role, parts: Vec<Part>, path: &str) -> Result<Turn> {
        let mut turn = Turn::new(role, parts);
        if role == Role::Assistant {
            turn.provider = Some(self.provider.clone());
            turn.model = self.model.clone();
        }
        turn.validate()
            .map_err(|e| Error::invalid_input(format!("{path}: {}", e.message())))?;
        Ok(turn)
    }
}

/// What to do with thinking the target must not receive as thinking: another provider's (or
/// model family's) signed reasoning, unsigned reasoning for a format that requires signatures,
/// redacted reasoning anywhere but Anthropic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForeignThinking {
    /// Leave it out (reported as [`crate::translate::LossKind::Dropped`]).
    #[default]
    Drop,
    /// Send its text as a plain text part wrapped in `<thinking>` tags (reported as
    /// [`crate::translate::LossKind::AsText`]); empty and redacted thinking is still dropped.
    AsText,
}

/// How closely a signature's producer must match the target before it is sent back.
///
/// Anthropic signatures are valid across every Claude model, so for provider `"anthropic"` the
/// family is the provider. Elsewhere the family is the model id without its snapshot suffix
/// (`gpt-5-2025-08-07` → `gpt-5`, `gemini-2.5-pro-preview-05-06` → `gemini-2.5-pro`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignatureMatch {
    /// Same provider is enough.
    Provider,
    /// Same provider and model family (the default). An unknown model on either side matches.
    #[default]
    Family,
    /// Same provider and exactly the same model id. An unknown model on either side matches.
    Model,
}

/// The role OpenAI Chat gets for the system prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemRole {
    /// `"system"`, understood by every OpenAI-compatible endpoint.
    #[default]
    System,
    /// `"developer"`, the name OpenAI's reasoning models use.
    Developer,
}

/// Knobs of a translation. `Options::default()` is right for most callers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// Fail with [`crate::ErrorKind::Translation`] on the first loss instead of repairing and
    /// reporting it.
    pub strict: bool,
    /// What to do with thinking the target must not receive as thinking.
    pub foreign_thinking: ForeignThinking,
    /// How closely a signature's producer must match the target.
    pub signature_match: SignatureMatch,
    /// When reading provider JSON, skip content parts and items of unknown types (reported as
    /// dropped) instead of failing.
    pub skip_unknown: bool,
    /// OpenAI Chat: send and read unsigned reasoning as `reasoning_content` on assistant
    /// messages, as DeepSeek, Moonshot and other compatible providers expect. An assistant
    /// message with tool calls but no reasoning to send (history from another provider) then
    /// gets an empty `reasoning_content`, reported as synthesized, because their thinking modes
    /// reject tool calls without it. Off for OpenAI itself, which rejects the field.
    pub chat_reasoning_content: bool,
    /// OpenAI Chat: send a `content` that holds only text as one string, its parts joined by a
    /// blank line (reported as merged), instead of an array of text parts, which DeepSeek and
    /// several other compatible providers reject. `None` (the default) does so when the backend's
    /// provider is not `openai`; OpenAI itself gets text parts.
    pub chat_string_content: Option<bool>,
    /// OpenAI Chat: the role of the system prompt message.
    pub chat_system_role: SystemRole,
    /// OpenAI Responses: send item ids (`rs_…`, `msg_…`, `fc_…`) with a reasoning item and the
    /// items after it when all of them are known (on by default; a group with one unknown id is
    /// always sent without ids). Turn off for requests with `store: false`, where OpenAI looks
    /// ids up and finds nothing; the reasoning is then resumed from its `encrypted_content`.
    pub responses_item_ids: bool,
    /// Gemini: send tool call ids in `functionCall.id` / `functionResponse.id`. Turn off for
    /// endpoints that reject the field; calls and responses are then paired by name and order.
    pub gemini_call_ids: bool,
    /// Gemini: a `thoughtSignature` to put on the first `functionCall` of a model turn that has
    /// no native signature (a turn from another provider), so Gemini 3 accepts the history.
    /// Google documents [`GEMINI_SKIP_SIGNATURE`] for this, and `None` (the default) sends it
    /// to models named `gemini-3…` and later, nothing to earlier ones. Read back, the value
    /// and Google's documented placeholders are ignored.
    pub gemini_missing_signature: Option<String>,
    /// Gemini tool declarations: pass the schema verbatim as `parametersJsonSchema` instead of
    /// sanitizing it into the OpenAPI subset accepted by `parameters`.
    pub gemini_json_schema: bool,
}

/// The placeholder `thoughtSignature` Google documents for function calls that Gemini did not
/// produce (history from another model), for [`Options::gemini_missing_signature`].
pub const GEMINI_SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

impl Default for Options {
    fn default() -> Options {
        Options {
            strict: false,
            foreign_thinking: ForeignThinking::Drop,
            signature_match: SignatureMatch::Family,
            skip_unknown: false,
            chat_reasoning_content: false,
            chat_string_content: None,
            chat_system_role: SystemRole::System,
            responses_item_ids: true,
            gemini_call_ids: true,
            gemini_missing_signature: None,
            gemini_json_schema: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn format_names_round_trip_and_unknown_names_are_rejected() {
        for format in Format::ALL {
            assert_eq!(format.name().parse::<Format>().unwrap(), format);
        }
        let err = "openai".parse::<Format>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.message().contains("\"openai\""));
    }

    #[test]
    fn options_deserialize_from_partial_json() {
        let options: Options =
            serde_json::from_str(r#"{"strict": true, "foreign_thinking": "as_text"}"#).unwrap();
        assert!(options.strict);
        assert_eq!(options.foreign_thinking, ForeignThinking::AsText);
        assert!(options.gemini_call_ids);
    }

    #[test]
    fn backend_defaults_to_the_format_vendor() {
        let backend = Backend::new(Format::OpenaiResponses).with_model("gpt-5");
        assert_eq!(backend.provider, "openai");
        assert_eq!(backend.model.as_deref(), Some("gpt-5"));
    }
}
