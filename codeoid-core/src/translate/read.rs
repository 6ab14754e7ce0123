//! Reading provider JSON with errors that say where: every failure names the JSON path
//! (`messages[3].content[1].tool_use_id`), what was found and what was expected.
//!
//! These helpers only check shape. What a value means is decided by the provider module reading
//! it.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A short description of a JSON value's type, for messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `value` as an object, or an error naming `path`.
pub(crate) fn object<'v>(value: &'v Value, path: &str) -> Result<&'v Map<String, Value>> {
    value.as_object().ok_or_else(|| {
        Error::invalid_input(format!("{path} is {}; expected an object", kind(value)))
    })
}

/// `value` as an array, or an error naming `path`.
pub(crate) fn array<'v>(value: &'v Value, path: &str) -> Result<&'v Vec<Value>> {
    value.as_array().ok_or_else(|| {
        Error::invalid_input(format!("{path} is {}; expected an array", kind(value)))
    })
}

/// The string field `key` of `map`, or an error naming `path.key`.
pub(crate) fn string<'v>(map: &'v Map<String, Value>, key: &str, path: &str) -> Result<&'v str> {
    match map.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(Error::invalid_input(format!(
            "{path}.{key} is {}; expected a string",
            kind(other)
        ))),
        None => Err(Error::invalid_input(format!(
            "{path}.{key} is missing; expected a string"
        ))),
    }
}

/// The optional string field `key` of `map` (absent and `null` are `None`).
pub(crate) fn opt_string<'v>(
    map: &'v Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<&'v str>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(Error::invalid_input(format!(
            "{path}.{key} is {}; expected a string",
            kind(other)
        ))),
    }
}

/// The optional boolean field `key` of `map` (absent and `null` are `false`).
pub(crate) fn flag(map: &Map<String, Value>, key: &str, path: &str) -> Result<bool> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(Error::invalid_input(format!(
            "{path}.{key} is {}; expected a boolean",
            kind(other)
        ))),
    }
}

/// A message field that is either plain text or an array of content parts (OpenAI's `content`
/// and `output`).
pub(crate) enum TextOrParts<'v> {
    /// A plain string.
    Text(&'v str),
    /// An array of content parts, not yet checked.
    Parts(&'v [Value]),
}

/// `map[key]` as [`TextOrParts`].
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] naming `{path}.{key}` when it is missing or neither a
/// string nor an array.
pub(crate) fn text_or_parts<'v>(
    map: &'v Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<TextOrParts<'v>> {
    const EXPECTED: &str = "expected a string or an array of content parts";
    match map.get(key) {
        Some(Value::String(text)) => Ok(TextOrParts::Text(text)),
        Some(Value::Array(items)) => Ok(TextOrParts::Parts(items)),
        Some(other) => Err(Error::invalid_input(format!(
            "{path}.{key} is {}; {EXPECTED}",
            kind(other)
        ))),
        None => Err(Error::invalid_input(format!(
            "{path}.{key} is missing; {EXPECTED}"
        ))),
    }
}

/// An error for a content part or item whose `type` this translator does not know.
pub(crate) fn unknown_type(path: &str, found: &str, known: &str) -> Error {
    Error::invalid_input(format!(
        "{path} has unknown type {found:?}; supported: {known} (set skip_unknown to drop such \
         parts instead)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_path_the_found_type_and_the_expectation() {
        let v = json!({"id": 3});
        let map = object(&v, "messages[0]").unwrap();
        let err = string(map, "id", "messages[0]").unwrap_err();
        assert_eq!(
            err.message(),
            "messages[0].id is a number; expected a string"
        );
        let err = string(map, "name", "messages[0]").unwrap_err();
        assert_eq!(
            err.message(),
            "messages[0].name is missing; expected a string"
        );
        let err = array(&v, "contents").unwrap_err();
        assert_eq!(err.message(), "contents is an object; expected an array");
        assert_eq!(opt_string(map, "x", "m").unwrap(), None);
        assert!(flag(&json!({"f": "yes"}).as_object().unwrap().clone(), "f", "m").is_err());
    }
}
