//! Tool call arguments: objects for Anthropic and Gemini, JSON strings for OpenAI, and the
//! documented repairs for arguments that are neither.
//!
//! Canonical [`crate::canonical::ToolCall::input`] is normally a JSON object, but models do emit
//! truncated or non-object arguments, and OpenAI sends them as a string that may not parse. The
//! rules, chosen so that nothing is ever lost silently:
//! - Reading OpenAI arguments: valid JSON becomes that value (object or not); a string that is not
//!   valid JSON is kept verbatim as a JSON string, never an error.
//! - Writing OpenAI arguments: a string input that is not valid JSON is sent verbatim (so it
//!   survives a round trip), anything else as compact JSON (a string holding JSON is reported: it
//!   reads back parsed).
//! - Writing for Anthropic or Gemini, which require an object: `null` becomes `{}`; a string holding
//!   a JSON object is parsed; anything else is wrapped as `{"_raw_arguments": value}`, which reading
//!   unwraps again. Each of these is reported as a change.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The key under which non-object arguments are wrapped for formats that require an object.
pub const RAW_ARGUMENTS_KEY: &str = "_raw_arguments";

/// An object argument for Anthropic or Gemini, and the repair made to get it, if any.
pub(crate) fn as_object(input: &Value) -> (Cow<'_, Value>, Option<&'static str>) {
    match input {
        Value::Object(map) if !is_wrapped(map) => (Cow::Borrowed(input), None),
        Value::Null => (
            Cow::Owned(Value::Object(Map::new())),
            Some("null tool input sent as {}"),
        ),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(parsed @ Value::Object(_)) => (
                Cow::Owned(parsed),
                Some("string tool input holding a JSON object sent as that object"),
            ),
            _ => (
                wrap(input),
                Some("non-object tool input wrapped as {\"_raw_arguments\": …}"),
            ),
        },
        _ => (
            wrap(input),
            Some("non-object tool input wrapped as {\"_raw_arguments\": …}"),
        ),
    }
}

fn wrap(input: &Value) -> Cow<'_, Value> {
    let mut map = Map::new();
    map.insert(RAW_ARGUMENTS_KEY.to_owned(), input.clone());
    Cow::Owned(Value::Object(map))
}

fn is_wrapped(map: &Map<String, Value>) -> bool {
    map.len() == 1 && map.contains_key(RAW_ARGUMENTS_KEY)
}

/// The canonical input for an object read from Anthropic or Gemini: unwraps
/// `{"_raw_arguments": value}`.
pub(crate) fn from_object(value: &Value) -> Value {
    match value {
        Value::Object(map) if is_wrapped(map) => {
            map.get(RAW_ARGUMENTS_KEY).cloned().unwrap_or(Value::Null)
        }
        other => other.clone(),
    }
}

/// The OpenAI `arguments` string for `input`, and a note when reading it back will not give
/// `input` again.
pub(crate) fn to_json_string(input: &Value) -> (Cow<'_, str>, Option<&'static str>) {
    match input {
        // A string that is itself JSON reads back parsed; sending it compact makes the second
        // trip identical to the first.
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(parsed) => (
                Cow::Owned(parsed.to_string()),
                Some("string tool input is itself valid JSON and reads back parsed"),
            ),
            Err(_) => (Cow::Borrowed(s), None),
        },
        other => (Cow::Owned(other.to_string()), None),
    }
}

/// The canonical input for an OpenAI `arguments` string.
pub(crate) fn from_json_string(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_pass_through_without_repair() {
        let input = json!({"path": "a.rs"});
        let (out, note) = as_object(&input);
        assert_eq!(*out, input);
        assert!(note.is_none());
    }

    #[test]
    fn non_object_inputs_are_repaired_and_unwrap_back() {
        let (out, note) = as_object(&Value::Null);
        assert_eq!(*out, json!({}));
        assert!(note.is_some());

        let holding_object = json!("{\"a\": 1}");
        let (out, _) = as_object(&holding_object);
        assert_eq!(*out, json!({"a": 1}));

        for odd in [
            json!("not json {"),
            json!([1, 2]),
            json!(7),
            json!({"_raw_arguments": 1}),
        ] {
            let (out, note) = as_object(&odd);
            assert!(out.is_object(), "{odd}");
            assert!(note.is_some());
            assert_eq!(from_object(&out), odd);
        }
    }

    #[test]
    fn invalid_json_arguments_survive_an_openai_round_trip() {
        let truncated = "{\"path\": \"src/ma";
        let canonical = from_json_string(truncated);
        assert_eq!(canonical, json!(truncated));
        let (wire, note) = to_json_string(&canonical);
        assert_eq!(wire, truncated);
        assert!(note.is_none());
        assert_eq!(from_json_string("{\"a\":[1]}"), json!({"a": [1]}));
        assert!(to_json_string(&json!("[1]")).1.is_some());
    }
}
