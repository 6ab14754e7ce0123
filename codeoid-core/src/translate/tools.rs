//! Tool declarations for each provider from a name, a description and a JSON Schema.
//!
//! The schemas are input values (the memory tools' schemas are owned by the tools module): this
//! module only checks what every provider requires and reshapes the declaration:
//! - names match `^[a-zA-Z0-9_-]{1,64}$` (Anthropic, OpenAI) or Gemini's rule (a letter or `_`
//!   first, then letters, digits, `_ . : -`, at most 64), and are unique;
//! - the schema is an object schema (`"type": "object"`; a schema with `properties` but no `type`
//!   gets it, reported as changed);
//! - Anthropic `{name, description, input_schema}`; OpenAI Chat `{type: "function", function:
//!   {name, description, parameters}}`; Responses `{type: "function", name, description,
//!   parameters, strict: false}` (strict mode would require every property to be required);
//!   Gemini one `{functionDeclarations: [...]}` whose `parameters` went through `schema`
//!   (or, with [`Options::gemini_json_schema`], the schema verbatim as `parametersJsonSchema`).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};

use super::backend::{Format, Options};
use super::loss::{Location, LossKind, Losses, Translation};
use super::read;
use super::schema;

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of its arguments (an object schema).
    pub input_schema: Value,
}

fn name_ok(format: Format, name: &str) -> bool {
    let len_ok = !name.is_empty() && name.len() <= 64;
    let mut bytes = name.bytes();
    len_ok
        && match format {
            Format::Gemini => {
                bytes
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                    && bytes.all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b))
            }
            _ => bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
        }
}

/// Checks the schema's root and returns it, with `"type": "object"` added when it only has
/// `properties`.
fn object_schema(tool: &ToolSpec, losses: &mut Losses) -> Result<Value> {
    let name = &tool.name;
    let map = read::object(
        &tool.input_schema,
        &format!("input schema of tool {name:?}"),
    )?;
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(tool.input_schema.clone()),
        None if map.contains_key("properties") || map.is_empty() => {
            losses.push(
                Location::Tool {
                    name: name.clone(),
                    pointer: "/type".into(),
                },
                LossKind::Changed,
                "\"type\": \"object\" added to a schema that had none",
            );
            let mut map = map.clone();
            map.insert("type".into(), json!("object"));
            Ok(Value::Object(map))
        }
        other => Err(Error::invalid_input(format!(
            "input schema of tool {name:?} has type {}; providers require an object schema \
             (\"type\": \"object\" with \"properties\")",
            other.map_or_else(|| "missing".to_owned(), Value::to_string)
        ))),
    }
}

/// The `tools` value of a `format` request declaring `tools`.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] when a name is empty, too long, has characters the format
/// rejects or is declared twice, or a schema is not an object schema (or has a `$ref` Gemini
/// cannot inline). With [`Options::strict`], [`crate::ErrorKind::Translation`] when a schema had
/// to be changed.
pub fn declare_tools(
    tools: &[ToolSpec],
    format: Format,
    options: &Options,
) -> Result<Translation<Value>> {
    let mut losses = Losses::default();
    let mut seen = HashSet::new();
    let mut declarations = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = &tool.name;
        if !name_ok(format, name) {
            let rule = match format {
                Format::Gemini => {
                    "a letter or underscore, then letters, digits, underscores, dots, colons or \
                     dashes, at most 64 characters"
                }
                _ => "letters, digits, underscores or dashes, 1 to 64 characters",
            };
            return Err(Error::invalid_input(format!(
                "tool name {name:?} is not accepted by {format}; use {rule}"
            )));
        }
        if !seen.insert(name.as_str()) {
            return Err(Error::invalid_input(format!(
                "tool {name:?} is declared twice; tool names must be unique"
            )));
        }
        let schema = object_schema(tool, &mut losses)?;
        let mut declaration = Map::new();
        declaration.insert("name".into(), json!(name));
        if !tool.description.is_empty() {
            declaration.insert("description".into(), json!(tool.description));
        }
        let declaration = match format {
            Format::Anthropic => {
                declaration.insert("input_schema".into(), schema);
                Value::Object(declaration)
            }
            Format::OpenaiChat => {
                declaration.insert("parameters".into(), schema);
                json!({"type": "function", "function": declaration})
            }
            Format::OpenaiResponses => {
                declaration.insert("type".into(), json!("function"));
                declaration.insert("parameters".into(), schema);
                declaration.insert("strict".into(), json!(false));
                Value::Object(declaration)
            }
            Format::Gemini if options.gemini_json_schema => {
                declaration.insert("parametersJsonSchema".into(), schema);
                Value::Object(declaration)
            }
            Format::Gemini => {
                declaration.insert(
                    "parameters".into(),
                    schema::for_gemini(&schema, name, &mut losses)?,
                );
                Value::Object(declaration)
            }
        };
        declarations.push(declaration);
    }
    let value = match format {
        Format::Gemini if declarations.is_empty() => json!([]),
        Format::Gemini => json!([{"functionDeclarations": declarations}]),
        _ => Value::Array(declarations),
    };
    losses.finish(value, options.strict)
}

/// Reads a `format` request's `tools` back. Provider tools without a schema (server tools such
/// as web search) are skipped and reported.
pub(crate) fn read_tools(
    tools: &Value,
    format: Format,
    losses: &mut Losses,
) -> Result<Vec<ToolSpec>> {
    let list = read::array(tools, "tools")?;
    let mut out = Vec::with_capacity(list.len());
    for (t, tool) in list.iter().enumerate() {
        let path = format!("tools[{t}]");
        let map = read::object(tool, &path)?;
        let declarations: Vec<(String, &Map<String, Value>)> = match format {
            Format::Gemini => match map.get("functionDeclarations") {
                Some(list) => {
                    let list_path = format!("{path}.functionDeclarations");
                    let mut found = Vec::new();
                    for (d, declaration) in read::array(list, &list_path)?.iter().enumerate() {
                        let declaration_path = format!("{list_path}[{d}]");
                        found.push((
                            declaration_path.clone(),
                            read::object(declaration, &declaration_path)?,
                        ));
                    }
                    found
                }
                None => Vec::new(),
            },
            Format::OpenaiChat => match map.get("function") {
                Some(function) => {
                    let function_path = format!("{path}.function");
                    vec![(
                        function_path.clone(),
                        read::object(function, &function_path)?,
                    )]
                }
                None => Vec::new(),
            },
            Format::Anthropic | Format::OpenaiResponses => vec![(path.clone(), map)],
        };
        let schema_key = match format {
            Format::Anthropic => "input_schema",
            _ => "parameters",
        };
        let before = out.len();
        for (path, declaration) in declarations {
            let schema = declaration
                .get(schema_key)
                .or_else(|| declaration.get("parametersJsonSchema"));
            let Some(schema) = schema else {
                continue;
            };
            out.push(ToolSpec {
                name: read::string(declaration, "name", &path)?.to_owned(),
                description: read::opt_string(declaration, "description", &path)?
                    .unwrap_or("")
                    .to_owned(),
                input_schema: schema.clone(),
            });
        }
        if out.len() == before {
            losses.push(
                Location::Tool {
                    name: format!("tools[{t}]"),
                    pointer: String::new(),
                },
                LossKind::Dropped,
                "tool without a function schema (a provider-side tool)",
            );
        }
    }
    Ok(out)
}
