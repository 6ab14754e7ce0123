//! Translation between canonical turns and provider message formats (DESIGN §7): Anthropic
//! Messages, OpenAI Chat Completions, OpenAI Responses and Gemini `contents`. Needs no handle:
//! the core's `translate` module is a leaf without store or model.
//!
//! The target is chosen with a `CODEOID_FORMAT_*` integer (checked; 0 and unknown values are
//! `CODEOID_ERROR_INVALID_INPUT`) and an optional model id; the provider is the format's vendor.
//! Every result carries `losses`: what was not carried unchanged, and where
//! (`docs/translate.md`). An empty list means translating back gives the same turns.

use std::ffi::c_char;

use codeoid_core::canonical::Turn;
use codeoid_core::translate::{self, Backend, Format, Options, ToolSpec};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::args::{optional_text, out, parse_json, text};
use crate::error::{Failure, FfiResult, codeoid_error};
use crate::json::{self, overlay};
use crate::panic::boundary;
use crate::sessions::parse_turns;
use crate::strings::codeoid_string;

/// Anthropic Messages (`messages`).
pub const CODEOID_FORMAT_ANTHROPIC: u32 = 1;
/// OpenAI Chat Completions (`messages`).
pub const CODEOID_FORMAT_OPENAI_CHAT: u32 = 2;
/// OpenAI Responses (`input` items).
pub const CODEOID_FORMAT_OPENAI_RESPONSES: u32 = 3;
/// Gemini `generateContent` (`contents`).
pub const CODEOID_FORMAT_GEMINI: u32 = 4;

/// The format with C code `code`.
pub(crate) fn format(code: u32, name: &str) -> FfiResult<Format> {
    match code {
        CODEOID_FORMAT_ANTHROPIC => Ok(Format::Anthropic),
        CODEOID_FORMAT_OPENAI_CHAT => Ok(Format::OpenaiChat),
        CODEOID_FORMAT_OPENAI_RESPONSES => Ok(Format::OpenaiResponses),
        CODEOID_FORMAT_GEMINI => Ok(Format::Gemini),
        other => Err(Failure::invalid_input(format!(
            "argument `{name}` is {other}, not a format; use CODEOID_FORMAT_ANTHROPIC (1), \
             _OPENAI_CHAT (2), _OPENAI_RESPONSES (3) or _GEMINI (4)"
        ))),
    }
}

/// The backend for `format` and an optional model.
pub(crate) fn backend(code: u32, model: Option<&str>) -> FfiResult<Backend> {
    let backend = Backend::new(format(code, "format")?);
    Ok(match model {
        Some(model) => backend.with_model(model),
        None => backend,
    })
}

/// The request of `codeoid_translate_to_request`. The core's `translate::Request` ignores keys it
/// does not know, so a misspelled `"sytem"` would silently drop the system prompt; this is the
/// same shape with unknown keys refused, converted field by field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestIn {
    #[serde(default)]
    system: Option<String>,
    #[serde(default)]
    turns: Vec<Turn>,
    #[serde(default)]
    tools: Vec<ToolIn>,
}

/// A tool declaration (`codeoid_translate_declare_tools`, `tools` of a request): the core's
/// `translate::ToolSpec` with unknown keys refused, so `"descripton"` is an error rather than a
/// tool declared without its description.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolIn {
    name: String,
    #[serde(default)]
    description: String,
    input_schema: Value,
}

impl From<ToolIn> for ToolSpec {
    fn from(t: ToolIn) -> ToolSpec {
        ToolSpec {
            name: t.name,
            description: t.description,
            input_schema: t.input_schema,
        }
    }
}

/// Translation options from optional JSON: the fields of `docs/translate.md`, unknown keys
/// rejected.
pub(crate) fn options(json: Option<&str>) -> FfiResult<Options> {
    let value: Option<Value> = json
        .map(|j| parse_json(j, "options_json", "a translation options object"))
        .transpose()?;
    overlay(&Options::default(), value.as_ref(), "options_json")
}

/// Translates canonical turns (`turns_json`: a JSON array of turn objects) into `format`'s
/// message list (Anthropic `messages`, OpenAI Chat `messages`, OpenAI Responses `input` items or
/// Gemini `contents`) and writes `{"messages": [...], "losses": [...]}` into `*out_json`.
///
/// `model` (optional) is the target model id, used to match thinking signatures.
/// `options_json` (optional) is an object of translation options (`strict`,
/// `foreign_thinking`, ... see `docs/translate.md`).
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (unknown format, bad turns or options),
/// `CODEOID_ERROR_TRANSLATION` (with `strict`, when anything would be lost). Thread-safe.
///
/// # Safety
/// Each `(ptr, len)` pair is NULL or readable; `out_json` is NULL or points at a
/// `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_translate_to_messages(
    format: u32,
    model: *const c_char,
    model_len: usize,
    turns_json: *const c_char,
    turns_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_translate_to_messages", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let model = unsafe { optional_text(model, model_len, "model") }?;
        // SAFETY: as above.
        let turns = unsafe { text(turns_json, turns_json_len, "turns_json") }?;
        // SAFETY: as above.
        let options_text =
            unsafe { optional_text(options_json, options_json_len, "options_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let backend = backend(format, model)?;
        let options = options(options_text)?;
        let turns = parse_turns(turns, "turns_json")?;
        let translation = translate::to_messages(&turns, &backend, &options)?;
        json::write(
            out_json,
            &json!({"messages": translation.value, "losses": translation.losses}),
        )
    })
}

/// Reads `format`'s message list (`messages_json`) back into canonical turns and writes
/// `{"system": string or null, "turns": [...], "losses": [...]}` into `*out_json`. Assistant
/// turns are stamped with the format's provider and `model` (optional); tool ids remapped on
/// the way out are mapped back; errors encoded in content are recovered.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (unknown format, JSON not in the format's shape),
/// `CODEOID_ERROR_TRANSLATION` (with `strict`). Thread-safe.
///
/// # Safety
/// As `codeoid_translate_to_messages`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_translate_from_messages(
    format: u32,
    model: *const c_char,
    model_len: usize,
    messages_json: *const c_char,
    messages_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_translate_from_messages", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let model = unsafe { optional_text(model, model_len, "model") }?;
        // SAFETY: as above.
        let messages = unsafe { text(messages_json, messages_json_len, "messages_json") }?;
        // SAFETY: as above.
        let options_text =
            unsafe { optional_text(options_json, options_json_len, "options_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let backend = backend(format, model)?;
        let options = options(options_text)?;
        let messages: Value = parse_json(messages, "messages_json", "JSON")?;
        let translation = translate::from_messages(&messages, &backend, &options)?;
        json::write(
            out_json,
            &json!({
                "system": translation.value.system,
                "turns": translation.value.turns,
                "losses": translation.losses,
            }),
        )
    })
}

/// Builds `format`'s whole request body (without sampling parameters) from `request_json`:
/// `{"system"?: string, "turns": [turn...], "tools"?: [{"name", "description"?,
/// "input_schema"}]}` (any other key, at either level, is an error naming it), and writes
/// `{"body": {...}, "losses": [...]}` into `*out_json`. For every format but Gemini (whose model
/// is part of the URL) the body names `model` when given.
///
/// Errors: as `codeoid_translate_to_messages`. Thread-safe.
///
/// # Safety
/// As `codeoid_translate_to_messages`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_translate_to_request(
    format: u32,
    model: *const c_char,
    model_len: usize,
    request_json: *const c_char,
    request_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_translate_to_request", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let model = unsafe { optional_text(model, model_len, "model") }?;
        // SAFETY: as above.
        let request = unsafe { text(request_json, request_json_len, "request_json") }?;
        // SAFETY: as above.
        let options_text =
            unsafe { optional_text(options_json, options_json_len, "options_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let backend = backend(format, model)?;
        let options = options(options_text)?;
        let request: RequestIn = parse_json(
            request,
            "request_json",
            "a request object {\"system\"?, \"turns\", \"tools\"?}",
        )?;
        let tools: Vec<ToolSpec> = request.tools.into_iter().map(ToolSpec::from).collect();
        for (i, turn) in request.turns.iter().enumerate() {
            turn.validate().map_err(|e| {
                Failure::invalid_input(format!(
                    "argument `request_json`: turn {i} is invalid: {}",
                    e.full_message()
                ))
            })?;
        }
        let translation = translate::to_request(
            request.system.as_deref(),
            &request.turns,
            &tools,
            &backend,
            &options,
        )?;
        json::write(
            out_json,
            &json!({"body": translation.value, "losses": translation.losses}),
        )
    })
}

/// Declares tools in `format`'s shape and writes `{"tools": value, "losses": [...]}` into
/// `*out_json`, where `value` is what goes in the request's `tools` field (Anthropic
/// `[{name, description, input_schema}]`, OpenAI Chat `[{"type": "function", "function"}]`,
/// Responses `[{"type": "function", name, ...}]`, Gemini `[{"functionDeclarations": [...]}]`).
/// `tools_json` is a JSON array of `{"name", "description"?, "input_schema"}`, as
/// `codeoid_memory_tool_schemas` returns them; any other key is an error naming it.
///
/// Errors: `CODEOID_ERROR_NULL_ARGUMENT`, `CODEOID_ERROR_INVALID_UTF8`,
/// `CODEOID_ERROR_INVALID_INPUT` (unknown format, bad JSON or key, a name the format rejects or
/// declared twice, a schema that is not an object schema), `CODEOID_ERROR_TRANSLATION` (with
/// `strict`, when a schema had to be changed). Thread-safe.
///
/// # Safety
/// Each `(ptr, len)` pair is NULL or readable; `out_json` is NULL or points at a
/// `codeoid_string` that owns nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn codeoid_translate_declare_tools(
    format: u32,
    tools_json: *const c_char,
    tools_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut codeoid_string,
) -> *mut codeoid_error {
    boundary("codeoid_translate_declare_tools", || {
        // SAFETY: the caller guarantees the pointers as documented.
        let tools = unsafe { text(tools_json, tools_json_len, "tools_json") }?;
        // SAFETY: as above.
        let options_text =
            unsafe { optional_text(options_json, options_json_len, "options_json") }?;
        // SAFETY: as above.
        let out_json = unsafe { out(out_json, "out_json") }?;
        let format = self::format(format, "format")?;
        let options = options(options_text)?;
        let tools: Vec<ToolIn> = parse_json(
            tools,
            "tools_json",
            "an array of tools [{\"name\", \"description\"?, \"input_schema\"}]",
        )?;
        let tools: Vec<ToolSpec> = tools.into_iter().map(ToolSpec::from).collect();
        let declared = translate::declare_tools(&tools, format, &options)?;
        json::write(
            out_json,
            &json!({"tools": declared.value, "losses": declared.losses}),
        )
    })
}
