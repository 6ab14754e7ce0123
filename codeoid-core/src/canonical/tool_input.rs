//! What the chunker reads out of a tool call's input: the summary argument, the file paths, and
//! what the tool did with them (DESIGN §1).
//!
//! Invariants: a path argument too long for a summary keeps its end (the file name), any other
//! argument its start. The summary argument is the first string among `file_path`, `path`, `pattern`,
//! `command` (DESIGN §1) and, for tools that have none of them (SWE-agent's file tools, web fetch
//! and search, subagent tasks), among `filename`, `file_name`, `search_term`, `url`, `query`,
//! `description`, `prompt`; paths come from `file_path`, `path`,
//! `filePath`, `filename`, `notebook_path`, `paths[]`, `files[]` and, for grep/glob tools,
//! `pattern`, in that order, without duplicates.
//!
//! It deliberately does not normalize paths (the store does, relative to the session's root) and
//! never touches the filesystem.

use serde_json::Value;

use super::episode::{PathAccess, SUMMARY_ARG_MAX_CHARS, SUMMARY_MAX_CHARS, ToolPath, one_line};

/// Keys whose string value is one file path.
const PATH_KEYS: [&str; 5] = ["file_path", "path", "filePath", "filename", "notebook_path"];

/// Keys whose array value lists file paths.
const PATH_LIST_KEYS: [&str; 2] = ["paths", "files"];

/// Keys tried, in order, for the argument shown in a tool call's summary: DESIGN §1's four, then
/// what tools without any of them are called with, so that `WebFetch(https://…)`,
/// `Task(review the parser)` or SWE-agent's `create(reproduce.py)` say what the call was about
/// instead of `WebFetch()`.
const SUMMARY_KEYS: [&str; 11] = [
    "file_path",
    "path",
    "pattern",
    "command",
    "filename",
    "file_name",
    "search_term",
    "url",
    "query",
    "description",
    "prompt",
];

/// `name(arg)`: the tool name and the first summary argument, collapsed to one line and cut to
/// [`SUMMARY_ARG_MAX_CHARS`], the whole at most [`SUMMARY_MAX_CHARS`].
pub(crate) fn tool_summary(name: &str, input: &Value) -> String {
    let arg = SUMMARY_KEYS
        .iter()
        .find_map(|key| Some((*key, input.get(key).and_then(Value::as_str)?)))
        .map(|(key, s)| {
            if PATH_KEYS.contains(&key) {
                path_tail(s, SUMMARY_ARG_MAX_CHARS)
            } else {
                one_line(s, SUMMARY_ARG_MAX_CHARS)
            }
        })
        .unwrap_or_default();
    let name = one_line(name, SUMMARY_MAX_CHARS);
    // Cut the name, never the parentheses, when a very long name would overflow the line.
    let room_for_name = SUMMARY_MAX_CHARS.saturating_sub(arg.chars().count() + 2);
    format!("{}({arg})", one_line(&name, room_for_name))
}

/// A path cut to its last `max` characters (`…` first): the file name and the folders just above
/// it say which file, where an absolute path's head (`/home/user/projects/…`) says nothing.
fn path_tail(path: &str, max: usize) -> String {
    let path = one_line(path, usize::MAX);
    let count = path.chars().count();
    if count <= max || max == 0 {
        return path;
    }
    let skip = count - (max - 1);
    let tail: String = path.chars().skip(skip).collect();
    format!("…{tail}")
}

/// The file paths and patterns in `input`, tagged with what `tool` did with them.
pub(crate) fn tool_paths(tool: &str, input: &Value) -> Vec<ToolPath> {
    let access = access_of(tool, input);
    let lower = tool.to_ascii_lowercase();
    let mut found: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        if !s.trim().is_empty() && !found.iter().any(|f| f == s) {
            found.push(s.to_owned());
        }
    };
    for key in PATH_KEYS {
        if let Some(s) = input.get(key).and_then(Value::as_str) {
            push(s);
        }
    }
    for key in PATH_LIST_KEYS {
        if let Some(items) = input.get(key).and_then(Value::as_array) {
            items.iter().filter_map(Value::as_str).for_each(&mut push);
        }
    }
    if lower.contains("grep") || lower.contains("glob") {
        if let Some(s) = input.get("pattern").and_then(Value::as_str) {
            push(s);
        }
    }
    found
        .into_iter()
        .map(|path| ToolPath { path, access })
        .collect()
}

/// What a tool named `tool` does with its paths, judged from its name (and, for editor tools
/// that multiplex commands, the `command` argument).
pub(crate) fn access_of(tool: &str, input: &Value) -> PathAccess {
    let lower = tool.to_ascii_lowercase();
    // Multiplexed editors (Anthropic's text editor tool): the command decides.
    if lower.contains("str_replace") || lower == "text_editor" {
        return match input.get("command").and_then(Value::as_str) {
            Some("view") => PathAccess::Read,
            Some(_) => PathAccess::Write,
            None => PathAccess::Other,
        };
    }
    const READS: [&str; 9] = [
        "read",
        "read_file",
        "readfile",
        "view",
        "view_file",
        "cat",
        "open_file",
        "notebookread",
        "read_many_files",
    ];
    const WRITES: [&str; 11] = [
        "write",
        "edit",
        "multiedit",
        "write_file",
        "edit_file",
        "create_file",
        "notebookedit",
        "apply_patch",
        "replace",
        "patch",
        "delete_file",
    ];
    if READS.contains(&lower.as_str()) {
        PathAccess::Read
    } else if WRITES.contains(&lower.as_str()) {
        PathAccess::Write
    } else if ["grep", "glob", "search", "find", "ls", "list"]
        .iter()
        .any(|k| lower.contains(k))
    {
        PathAccess::Search
    } else {
        PathAccess::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_long_path_keeps_its_file_name() {
        let path = "/home/user/projects/spotter-worktrees/spotter-gqc/test/spotter/services/\
                    transcript_renderer_test.exs";
        let summary = tool_summary("Edit", &json!({"file_path": path}));
        assert!(
            summary.ends_with("/services/transcript_renderer_test.exs)"),
            "{summary}"
        );
        assert!(summary.starts_with("Edit(…"), "{summary}");
        assert_eq!(
            summary.chars().count(),
            "Edit()".len() + SUMMARY_ARG_MAX_CHARS
        );
        // Other arguments keep their start: a command's verb says what it did.
        let command = format!("cargo test --workspace {}", "-p x ".repeat(20));
        let summary = tool_summary("Bash", &json!({"command": command}));
        assert!(
            summary.starts_with("Bash(cargo test --workspace"),
            "{summary}"
        );
    }

    #[test]
    fn summary_takes_the_first_known_argument() {
        let input = json!({"command": "cargo test", "file_path": "src/lib.rs"});
        assert_eq!(tool_summary("Read", &input), "Read(src/lib.rs)");
        assert_eq!(
            tool_summary("Bash", &json!({"command": "cargo\n  test  -p x"})),
            "Bash(cargo test -p x)"
        );
        assert_eq!(
            tool_summary("TodoWrite", &json!({"todos": []})),
            "TodoWrite()"
        );
        // Tools with none of DESIGN's four keys still say what they were called with.
        let fetch = json!({"prompt": "summarize", "url": "https://docs.rs/rusqlite"});
        assert_eq!(
            tool_summary("WebFetch", &fetch),
            "WebFetch(https://docs.rs/rusqlite)"
        );
        assert_eq!(
            tool_summary("WebSearch", &json!({"query": "fts5 detail column"})),
            "WebSearch(fts5 detail column)"
        );
        assert_eq!(
            tool_summary("create", &json!({"filename": "reproduce.py"})),
            "create(reproduce.py)"
        );
        assert_eq!(
            tool_summary(
                "search_dir",
                &json!({"search_term": "def parse", "dir": "src"})
            ),
            "search_dir(def parse)"
        );
        let task = json!({"prompt": "Read every file...", "description": "Review the parser"});
        assert_eq!(tool_summary("Task", &task), "Task(Review the parser)");
        // DESIGN's keys come first.
        let both = json!({"url": "https://x", "path": "src"});
        assert_eq!(tool_summary("Fetch", &both), "Fetch(src)");
        let long = "x".repeat(200);
        let s = tool_summary("Bash", &json!({ "command": long }));
        assert_eq!(s.chars().count(), "Bash()".len() + SUMMARY_ARG_MAX_CHARS);
        let s = tool_summary(&"n".repeat(300), &json!({ "path": long }));
        assert!(s.chars().count() <= SUMMARY_MAX_CHARS, "{s}");
        assert!(s.ends_with("x)"), "a path keeps its end: {s}");
    }

    #[test]
    fn paths_come_from_every_known_key_once() {
        let input = json!({
            "file_path": "/repo/src/a.rs",
            "filePath": "b.rs",
            "filename": "/repo/src/a.rs",
            "paths": ["c.rs", 3, "b.rs"],
            "files": ["d.rs"],
            "pattern": "fn main",
        });
        let paths: Vec<_> = tool_paths("Edit", &input)
            .into_iter()
            .map(|p| p.path)
            .collect();
        assert_eq!(paths, ["/repo/src/a.rs", "b.rs", "c.rs", "d.rs"]);
        let grep = tool_paths("Grep", &json!({"pattern": "**/*.rs", "path": "src"}));
        assert_eq!(grep.len(), 2);
        assert!(grep.iter().all(|p| p.access == PathAccess::Search));
        assert_eq!(grep[1].path, "**/*.rs");
    }

    #[test]
    fn access_follows_the_tool() {
        let none = json!({});
        assert_eq!(access_of("Read", &none), PathAccess::Read);
        assert_eq!(access_of("MultiEdit", &none), PathAccess::Write);
        assert_eq!(access_of("Glob", &none), PathAccess::Search);
        assert_eq!(access_of("Bash", &none), PathAccess::Other);
        let view = json!({"command": "view"});
        assert_eq!(
            access_of("str_replace_based_edit_tool", &view),
            PathAccess::Read
        );
        let create = json!({"command": "create"});
        assert_eq!(
            access_of("str_replace_based_edit_tool", &create),
            PathAccess::Write
        );
    }
}
