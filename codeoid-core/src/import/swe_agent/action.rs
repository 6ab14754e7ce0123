//! A classic-format SWE-agent action (the command the model wrote, as the harness parsed it) →
//! the tool call it stands for, in the shape the function-calling format records the same call:
//! the tool's name and its arguments by name.
//!
//! In the classic format every action runs in the environment's shell, where SWE-agent's own
//! commands (`open`, `edit`, `find_file`...) are installed. The commands below, from SWE-agent's
//! tool bundles (`tools/windowed`, `tools/windowed_edit_linting`, `tools/windowed_edit_replace`,
//! `tools/search`, `tools/submit`), become calls of that command with its documented
//! arguments; any other action, or one of them whose arguments do not fit its signature, is a
//! `bash` call of the action itself, `{"command": action}`, which is what it was.
//!
//! | signature | input |
//! |---|---|
//! | `open "<path>" [<line_number>]` | `path`, `line_number` |
//! | `goto <line_number>` | `line_number` |
//! | `create <filename>` | `filename` |
//! | `scroll_up`, `scroll_down`, `submit` | `{}` |
//! | `find_file <file_name> [<dir>]` | `file_name`, `dir` |
//! | `search_dir <search_term> [<dir>]` | `search_term`, `dir` |
//! | `search_file <search_term> [<file>]` | `search_term`, `file` |
//! | `edit <start_line>:<end_line>` + lines + `end_of_edit` | `start_line`, `end_line`, `replacement_text` |
//! | `edit <search> <replace> [<replace-all>]` | `search`, `replace`, `replace-all` |
//! | `insert <text> [<line>]` | `text`, `line` |
//!
//! Arguments are split as a POSIX shell splits words (quotes, backslashes), as the function-calling
//! format quotes them. Line numbers are integers.

use serde_json::{Map, Value};

/// What an argument holds.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Integer,
    Boolean,
}

/// Arguments of a command: names and kinds, in order.
type Args = &'static [(&'static str, Kind)];

/// A command read as its own tool: its name, required and optional arguments.
struct Command {
    name: &'static str,
    required: Args,
    optional: Args,
}

const fn command(name: &'static str, required: Args, optional: Args) -> Command {
    Command {
        name,
        required,
        optional,
    }
}

const COMMANDS: [Command; 11] = [
    command(
        "open",
        &[("path", Kind::Text)],
        &[("line_number", Kind::Integer)],
    ),
    command("goto", &[("line_number", Kind::Integer)], &[]),
    command("create", &[("filename", Kind::Text)], &[]),
    command("scroll_up", &[], &[]),
    command("scroll_down", &[], &[]),
    command("submit", &[], &[]),
    command(
        "find_file",
        &[("file_name", Kind::Text)],
        &[("dir", Kind::Text)],
    ),
    command(
        "search_dir",
        &[("search_term", Kind::Text)],
        &[("dir", Kind::Text)],
    ),
    command(
        "search_file",
        &[("search_term", Kind::Text)],
        &[("file", Kind::Text)],
    ),
    command(
        "edit",
        &[("search", Kind::Text), ("replace", Kind::Text)],
        &[("replace-all", Kind::Boolean)],
    ),
    command(
        "insert",
        &[("text", Kind::Text)],
        &[("line", Kind::Integer)],
    ),
];

/// The tool call `action` stands for: its name and input.
pub(super) fn call(action: &str) -> (String, Value) {
    let action = action.trim();
    let bash = || {
        let mut input = Map::new();
        input.insert("command".to_owned(), Value::String(action.to_owned()));
        ("bash".to_owned(), Value::Object(input))
    };
    if let Some(edit) = line_range_edit(action) {
        return ("edit".to_owned(), edit);
    }
    let Some(words) = split(action) else {
        return bash();
    };
    let Some((name, args)) = words.split_first() else {
        return bash();
    };
    let Some(command) = COMMANDS.iter().find(|c| c.name == name) else {
        return bash();
    };
    let (required, optional) = (command.required, command.optional);
    if args.len() < required.len() || args.len() > required.len() + optional.len() {
        return bash();
    }
    let mut input = Map::new();
    for ((key, kind), word) in required.iter().chain(optional).zip(args) {
        let value = match kind {
            Kind::Text => Value::String(word.clone()),
            Kind::Integer => match word.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => return bash(),
            },
            Kind::Boolean => match word.to_ascii_lowercase().as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return bash(),
            },
        };
        input.insert((*key).to_owned(), value);
    }
    (name.clone(), Value::Object(input))
}

/// `edit <start>:<end>`, the replacement lines, and a closing `end_of_edit` line (the last thing
/// in the action, or absent).
fn line_range_edit(action: &str) -> Option<Value> {
    let (first, body) = action.split_once('\n').unwrap_or((action, ""));
    let range = first.trim().strip_prefix("edit")?;
    let (start, end) = range.trim().split_once(':')?;
    if !range.starts_with(char::is_whitespace) {
        return None;
    }
    let start = start.trim().parse::<i64>().ok()?;
    let end = end.trim().parse::<i64>().ok()?;
    let lines: Vec<&str> = body.lines().collect();
    let text = match lines.iter().position(|l| l.trim_end() == "end_of_edit") {
        // Something after the closing line is another command: not one edit.
        Some(close) if lines[close + 1..].iter().any(|l| !l.trim().is_empty()) => return None,
        Some(close) => lines[..close].join("\n"),
        None => lines.join("\n"),
    };
    let mut input = Map::new();
    input.insert("start_line".to_owned(), Value::from(start));
    input.insert("end_line".to_owned(), Value::from(end));
    input.insert("replacement_text".to_owned(), Value::String(text));
    Some(Value::Object(input))
}

/// The words of `line` as a POSIX shell splits them; `None` for an unterminated quote.
fn split(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => w.push(c),
                            '\n' => {}
                            c => {
                                w.push('\\');
                                w.push(c);
                            }
                        },
                        c => w.push(c),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => word.get_or_insert_with(String::new).push('\\'),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classic_commands_become_their_tools_and_the_rest_bash() {
        let cases = [
            (
                "create reproduce_bug.py\n",
                "create",
                json!({"filename": "reproduce_bug.py"}),
            ),
            (
                "find_file \"numpy_handler.py\"\n",
                "find_file",
                json!({"file_name": "numpy_handler.py"}),
            ),
            (
                "open pydicom/pixel_data_handlers/numpy_handler.py 293\n",
                "open",
                json!({"path": "pydicom/pixel_data_handlers/numpy_handler.py", "line_number": 293}),
            ),
            (
                "edit 4:4\ndef division(a: float, b: float) -> float:\nend_of_edit\n",
                "edit",
                json!({"start_line": 4, "end_line": 4, "replacement_text": "def division(a: float, b: float) -> float:"}),
            ),
            ("submit\n", "submit", json!({})),
            (
                "python reproduce_bug.py\n",
                "bash",
                json!({"command": "python reproduce_bug.py"}),
            ),
            // Arguments that do not fit the signature: the shell ran it as it was.
            (
                "open a.py b.py c.py",
                "bash",
                json!({"command": "open a.py b.py c.py"}),
            ),
            ("goto top", "bash", json!({"command": "goto top"})),
            (
                "create 'unterminated",
                "bash",
                json!({"command": "create 'unterminated"}),
            ),
            (
                "edit 1:2\nx\nend_of_edit\nls",
                "bash",
                json!({"command": "edit 1:2\nx\nend_of_edit\nls"}),
            ),
        ];
        for (action, name, input) in cases {
            assert_eq!(call(action), (name.to_owned(), input), "{action:?}");
        }
    }

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            split(r#"edit 'it''s' "a \"b\" \c" d\ e"#).unwrap(),
            vec!["edit", "its", r#"a "b" \c"#, "d e"]
        );
        assert_eq!(split("  "), Some(Vec::new()));
        assert_eq!(split("\"open"), None);
    }
}
