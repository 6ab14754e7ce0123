//! Argument checking for the four tools: a model's JSON in, typed arguments or a message the
//! model can act on out.
//!
//! What is accepted, exactly as the schemas say: a JSON object with only the tool's properties,
//! required ones present, integers in range, strings non-empty. Leniencies, because models and
//! harnesses really send these: empty or `null` arguments mean `{}`; an optional property set to
//! `null` is absent; an integral float (`5.0`) is an integer (JSON Schema agrees); arguments
//! double-encoded as a JSON string holding an object are decoded once.
//!
//! Every rejection names what was wrong and ends with the expected shape, so the model can retry
//! correctly. Nothing here panics on any input (proptested in the integration tests).

use serde_json::{Map, Value};

use super::schema::{
    RECALL_DEFAULT_LIMIT, RECALL_MAX_LIMIT, TIMELINE_DEFAULT_LIMIT, TIMELINE_MAX_LIMIT, ToolName,
};

/// Checked arguments of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolArgs {
    /// `recall`.
    Recall {
        query: String,
        limit: u64,
        include_current_session: bool,
        tool_name: Option<String>,
    },
    /// `recall_file`.
    RecallFile { path: String },
    /// `timeline`.
    Timeline {
        offset: u64,
        limit: u64,
        before: Option<String>,
    },
    /// `get_episode`.
    GetEpisode { episode_id: String, offset: u64 },
}

/// The arguments a tool takes, as one line for error messages.
pub(crate) fn expected_shape(tool: ToolName) -> String {
    match tool {
        ToolName::Recall => format!(
            "{{\"query\": string (required), \"limit\": integer 1..{RECALL_MAX_LIMIT} (default \
             {RECALL_DEFAULT_LIMIT}), \"include_current_session\": boolean (default false), \
             \"tool_name\": string}}"
        ),
        ToolName::RecallFile => "{\"path\": string (required)}".to_owned(),
        ToolName::Timeline => format!(
            "{{\"offset\": integer >= 0 (default 0), \"limit\": integer 1..{TIMELINE_MAX_LIMIT} \
             (default {TIMELINE_DEFAULT_LIMIT}), \"before\": episode_id}}"
        ),
        ToolName::GetEpisode => {
            "{\"episode_id\": string (required), \"offset\": integer >= 0 (default 0)}".to_owned()
        }
    }
}

fn allowed(tool: ToolName) -> &'static [&'static str] {
    match tool {
        ToolName::Recall => &["query", "limit", "include_current_session", "tool_name"],
        ToolName::RecallFile => &["path"],
        ToolName::Timeline => &["offset", "limit", "before"],
        ToolName::GetEpisode => &["episode_id", "offset"],
    }
}

/// Most unknown field names an error lists.
const MAX_LISTED_FIELDS: usize = 8;

/// A short description of a JSON value's type and, for scalars, the value.
fn describe(value: &Value) -> String {
    let shown = |s: String| {
        if s.chars().count() > 40 {
            format!("{}…", s.chars().take(40).collect::<String>())
        } else {
            s
        }
    };
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {}", shown(format!("{s:?}"))),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// The argument object of `raw`, or why there is none.
fn object(raw: &str) -> Result<Map<String, Value>, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return Ok(Map::new());
    }
    let value: Value = serde_json::from_str(trimmed)
        .map_err(|e| format!("the arguments are not valid JSON ({e})"))?;
    match value {
        Value::Object(map) => Ok(map),
        // Some harnesses double-encode: a JSON string holding the object.
        Value::String(inner) => match serde_json::from_str::<Value>(&inner) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(format!(
                "the arguments must be a JSON object, got {}",
                describe(&Value::String(inner))
            )),
        },
        other => Err(format!(
            "the arguments must be a JSON object, got {}",
            describe(&other)
        )),
    }
}

fn optional<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    args.get(key).filter(|v| !v.is_null())
}

fn string(args: &Map<String, Value>, key: &str, required: bool) -> Result<Option<String>, String> {
    match optional(args, key) {
        None if required => Err(format!("the required field {key:?} is missing")),
        None => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Err(format!(
            "{key:?} is empty; {}",
            if required {
                "give a non-empty string"
            } else {
                "omit it or give a non-empty string"
            }
        )),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("{key:?} must be a string, got {}", describe(other))),
    }
}

fn integer(
    args: &Map<String, Value>,
    key: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, String> {
    let Some(value) = optional(args, key) else {
        return Ok(None);
    };
    let out_of_range = || {
        if *range.end() == u64::MAX {
            format!(
                "{key:?} is {value}, out of range; use an integer >= {}",
                range.start()
            )
        } else {
            format!(
                "{key:?} is {value}, out of range; use an integer from {} to {}",
                range.start(),
                range.end()
            )
        }
    };
    let Value::Number(number) = value else {
        return Err(format!(
            "{key:?} must be an integer, got {}",
            describe(value)
        ));
    };
    if let Some(n) = number.as_u64() {
        return range
            .contains(&n)
            .then_some(Some(n))
            .ok_or_else(out_of_range);
    }
    if number.as_i64().is_some() {
        return Err(out_of_range());
    }
    match number.as_f64() {
        Some(f) if f.fract() == 0.0 && f >= 0.0 && f <= u64::MAX as f64 => {
            let n = f as u64;
            range
                .contains(&n)
                .then_some(Some(n))
                .ok_or_else(out_of_range)
        }
        Some(f) if f.fract() == 0.0 => Err(out_of_range()),
        _ => Err(format!(
            "{key:?} must be an integer, got {}",
            describe(value)
        )),
    }
}

fn boolean(args: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match optional(args, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!(
            "{key:?} must be true or false, got {}",
            describe(other)
        )),
    }
}

/// Checks `raw` (the arguments as the model sent them) for `tool`.
///
/// # Errors
/// A message for the model: what is wrong, then the expected shape.
pub(crate) fn parse(tool: ToolName, raw: &str) -> Result<ToolArgs, String> {
    let check = || -> Result<ToolArgs, String> {
        let args = object(raw)?;
        let known = allowed(tool);
        let unknown: Vec<&str> = args
            .keys()
            .map(String::as_str)
            .filter(|k| !known.contains(k))
            .collect();
        if !unknown.is_empty() {
            let mut listed: Vec<String> = unknown
                .iter()
                .take(MAX_LISTED_FIELDS)
                .map(|k| format!("{:?}", super::format::echo(k)))
                .collect();
            if unknown.len() > MAX_LISTED_FIELDS {
                listed.push(format!("and {} more", unknown.len() - MAX_LISTED_FIELDS));
            }
            return Err(format!(
                "unknown field{} {}; {tool} accepts only {}",
                if unknown.len() == 1 { "" } else { "s" },
                listed.join(", "),
                known
                    .iter()
                    .map(|k| format!("{k:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(match tool {
            ToolName::Recall => ToolArgs::Recall {
                query: string(&args, "query", true)?.unwrap_or_default(),
                limit: integer(&args, "limit", 1..=RECALL_MAX_LIMIT)?
                    .unwrap_or(RECALL_DEFAULT_LIMIT),
                include_current_session: boolean(&args, "include_current_session")?
                    .unwrap_or(false),
                tool_name: string(&args, "tool_name", false)?,
            },
            ToolName::RecallFile => ToolArgs::RecallFile {
                path: string(&args, "path", true)?.unwrap_or_default(),
            },
            ToolName::Timeline => ToolArgs::Timeline {
                offset: integer(&args, "offset", 0..=u64::MAX)?.unwrap_or(0),
                limit: integer(&args, "limit", 1..=TIMELINE_MAX_LIMIT)?
                    .unwrap_or(TIMELINE_DEFAULT_LIMIT),
                before: string(&args, "before", false)?,
            },
            ToolName::GetEpisode => ToolArgs::GetEpisode {
                episode_id: string(&args, "episode_id", true)?.unwrap_or_default(),
                offset: integer(&args, "offset", 0..=u64::MAX)?.unwrap_or(0),
            },
        })
    };
    check().map_err(|problem| invalid(tool, &problem))
}

/// The answer to arguments of `tool` that cannot be used: the problem and the expected shape.
pub(crate) fn invalid(tool: ToolName, problem: &str) -> String {
    format!(
        "invalid arguments for {tool}: {problem}. Expected: {}",
        expected_shape(tool)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_leniencies() {
        assert_eq!(
            parse(ToolName::Timeline, "").unwrap(),
            ToolArgs::Timeline {
                offset: 0,
                limit: 20,
                before: None
            }
        );
        assert_eq!(
            parse(
                ToolName::Recall,
                r#"{"query":"x","limit":5.0,"tool_name":null}"#
            )
            .unwrap(),
            ToolArgs::Recall {
                query: "x".into(),
                limit: 5,
                include_current_session: false,
                tool_name: None
            }
        );
        assert_eq!(
            parse(ToolName::RecallFile, r#""{\"path\":\"a.rs\"}""#).unwrap(),
            ToolArgs::RecallFile {
                path: "a.rs".into()
            }
        );
    }

    #[test]
    fn rejections_say_what_and_show_the_shape() {
        let cases = [
            (
                ToolName::Recall,
                "{}",
                "the required field \"query\" is missing",
            ),
            (ToolName::Recall, r#"{"query":"  "}"#, "\"query\" is empty"),
            (
                ToolName::Recall,
                r#"{"query":"x","limit":21}"#,
                "\"limit\" is 21, out of range; use an integer from 1 to 20",
            ),
            (
                ToolName::Recall,
                r#"{"query":"x","limit":-1}"#,
                "out of range",
            ),
            (
                ToolName::Recall,
                r#"{"query":"x","limit":2.5}"#,
                "must be an integer, got the number 2.5",
            ),
            (
                ToolName::Recall,
                r#"{"query":"x","limit":"5"}"#,
                "must be an integer, got the string \"5\"",
            ),
            (
                ToolName::Recall,
                r#"{"query":"x","include_current_session":"yes"}"#,
                "must be true or false",
            ),
            (
                ToolName::Recall,
                r#"{"query":"x","q":1,"z":2}"#,
                "unknown fields \"q\", \"z\"",
            ),
            (ToolName::Timeline, r#"{"offset":1e300}"#, "out of range"),
            (
                ToolName::Timeline,
                "[1]",
                "must be a JSON object, got an array",
            ),
            (ToolName::GetEpisode, "{\"episode_id\":", "not valid JSON"),
            (
                ToolName::GetEpisode,
                r#"{"episode_id":7}"#,
                "must be a string, got the number 7",
            ),
        ];
        for (tool, raw, expected) in cases {
            let message = parse(tool, raw).unwrap_err();
            assert!(message.contains(expected), "{raw}: {message}");
            assert!(message.starts_with(&format!("invalid arguments for {tool}: ")));
            assert!(message.ends_with(&expected_shape(tool)), "{message}");
        }
    }
}
