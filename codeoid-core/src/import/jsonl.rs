//! Line-oriented JSON: splitting a file's bytes into numbered lines and each line into a JSON
//! object, with a precise reason when a line is not one.
//!
//! Invariants: line numbers are 1-based and count every `\n`-terminated line, blank ones
//! included, so they match what an editor shows; a trailing `\r` and a leading UTF-8 byte-order
//! mark are not content; blank lines are neither records nor malformed. A truncated last line
//! (a log still being written) is reported like any other malformed line.
//!
//! This module knows nothing about any harness's record types.

use serde_json::{Map, Value};

/// One non-blank line.
pub(crate) struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// The line without its terminator, or why it is not text.
    pub text: Result<&'a str, String>,
}

/// The non-blank lines of `bytes`, numbered.
pub(crate) fn lines(bytes: &[u8]) -> impl Iterator<Item = Line<'_>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(index, raw)| {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            if raw.iter().all(u8::is_ascii_whitespace) {
                return None;
            }
            let text = std::str::from_utf8(raw).map_err(|e| {
                format!(
                    "line is not valid UTF-8 (invalid byte at offset {})",
                    e.valid_up_to()
                )
            });
            Some(Line {
                number: index as u64 + 1,
                text,
            })
        })
}

/// Parses one line as a JSON object.
///
/// The error says what the line was instead ("invalid JSON at column 17: ...", "a JSON array,
/// not an object").
pub(crate) fn object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!("a JSON {}, not an object", kind_of(&other))),
        Err(e) => Err(format!("invalid JSON at column {}: {e}", e.column())),
    }
}

/// "array", "string", "number"... for messages about unexpected shapes.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_count_blank_lines_and_strip_terminators() {
        let input = b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":";
        let got: Vec<(u64, String)> = lines(input)
            .map(|l| (l.number, l.text.unwrap().to_owned()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "{\"a\":1}".to_owned()),
                (4, "{\"b\":2}".to_owned()),
                (5, "{\"c\":".to_owned()),
            ]
        );
    }

    #[test]
    fn invalid_utf8_is_reported_not_panicked_on() {
        let input = b"{\"a\":\"\xFF\"}\n";
        let line = lines(input).next().unwrap();
        assert!(line.text.unwrap_err().contains("not valid UTF-8"));
    }

    #[test]
    fn object_explains_what_the_line_was() {
        assert!(
            object("[1]")
                .unwrap_err()
                .contains("a JSON array, not an object")
        );
        assert!(object("42").unwrap_err().contains("number"));
        assert!(
            object("{\"a\":")
                .unwrap_err()
                .starts_with("invalid JSON at column")
        );
        assert_eq!(object("{\"a\":1}").unwrap()["a"], 1);
    }
}
