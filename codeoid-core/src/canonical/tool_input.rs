//! What the chunker reads out of a tool call's input: the summary argument, the file paths, and
//! what the tool did with them (DESIGN §1); and which tools are codeoid's own memory tools.
//!
//! Invariants: a path argument too long for a summary keeps its end (the file name), any other
//! argument its start. The summary argument is the first string among `file_path`, `path`, `pattern`,
//! `command` (DESIGN §1; a `command` given as an argument vector, as Codex sends it, is its
//! command line: the script of `["bash", "-lc", script]`, else the words joined) and, for tools
//! that have none of them (Codex's `exec_command`, Gemini CLI's older `read_file`, SWE-agent's
//! file tools, web fetch and search, subagent tasks), among `cmd`, `absolute_path`, `filename`,
//! `file_name`, `search_term`, `url`, `query`, `description`, `prompt`; an `apply_patch` with none
//! shows the first file it patches. Paths come from `file_path`, `path`, `filePath`,
//! `absolute_path`, `filename`, `notebook_path`, `paths[]`, `files[]`, for grep/glob tools
//! `pattern`, for `apply_patch` the files its patch names (writes, see `patch`), and for shell
//! tools the files their command reads or edits with `cat`, `sed -n`, `nl`, `head`, `tail`…
//! (see `shell`), in that order, without duplicates. A memory tool's call (`recall_file`'s
//! `path`) names no path: it looked at memory, not at the file.
//!
//! It deliberately does not normalize paths (the store does, relative to the session's root) and
//! never touches the filesystem.

use serde_json::Value;

use super::episode::{PathAccess, SUMMARY_ARG_MAX_CHARS, SUMMARY_MAX_CHARS, ToolPath, one_line};

mod patch;
mod shell;

pub(crate) use shell::{command_line, files_of};

/// The bare names of codeoid's four memory tools (`tools::ToolName`, in its order).
pub(crate) const MEMORY_TOOL_NAMES: [&str; 4] =
    ["recall", "recall_file", "timeline", "get_episode"];

/// What separates a harness's prefix from a tool's name (`codeoid_memory__recall`).
pub(crate) const TOOL_PREFIX_SEPARATOR: &str = "__";

/// The memory tool `name` calls, as its bare name: `name` itself, or what follows its last
/// [`TOOL_PREFIX_SEPARATOR`] (`codeoid_memory__recall`, MCP's `mcp__codeoid__recall`). Exact
/// and case-sensitive, as the dispatcher reads names. `None` for any other tool.
pub(crate) fn memory_tool(name: &str) -> Option<&'static str> {
    let bare = name.rsplit(TOOL_PREFIX_SEPARATOR).next().unwrap_or(name);
    MEMORY_TOOL_NAMES.into_iter().find(|t| *t == bare)
}

/// Keys whose string value is one file path (`absolute_path`: Gemini CLI's older `read_file`).
const PATH_KEYS: [&str; 6] = [
    "file_path",
    "path",
    "filePath",
    "absolute_path",
    "filename",
    "notebook_path",
];

/// Keys whose array value lists file paths.
const PATH_LIST_KEYS: [&str; 2] = ["paths", "files"];

/// Keys tried, in order, for the argument shown in a tool call's summary: DESIGN §1's four, then
/// what tools without any of them are called with, so that `WebFetch(https://…)`,
/// `Task(review the parser)` or SWE-agent's `create(reproduce.py)` say what the call was about
/// instead of `WebFetch()`.
const SUMMARY_KEYS: [&str; 13] = [
    "file_path",
    "path",
    "pattern",
    "command",
    "cmd",
    "absolute_path",
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
        .find_map(|key| {
            let text = match input.get(key)? {
                Value::String(s) => s.clone(),
                // Codex's `shell` sends its command as an argument vector.
                Value::Array(argv) if *key == "command" || *key == "cmd" => shell::argv_line(argv)?,
                _ => return None,
            };
            Some((*key, text))
        })
        .or_else(|| {
            let first = patch_paths(name, input).into_iter().next()?;
            Some(("path", first))
        })
        .map(|(key, s)| {
            if PATH_KEYS.contains(&key) {
                path_tail(&s, SUMMARY_ARG_MAX_CHARS)
            } else {
                one_line(&s, SUMMARY_ARG_MAX_CHARS)
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

/// `true` for Codex's patch tool, bare or prefixed.
fn is_apply_patch(tool: &str) -> bool {
    tool.to_ascii_lowercase().ends_with("apply_patch")
}

/// The files an `apply_patch` call's input patches (none for any other tool).
fn patch_paths(tool: &str, input: &Value) -> Vec<String> {
    if !is_apply_patch(tool) {
        return Vec::new();
    }
    patch::patch_text(input).map_or_else(Vec::new, patch::patch_files)
}

/// The files the shell command of `input` reads or edits (see `shell`), when `tool` runs shell
/// commands: a command line starting with `apply_patch` writes the files its patch names.
fn shell_paths(tool: &str, input: &Value) -> Vec<(String, PathAccess)> {
    if !shell::is_shell_tool(tool) {
        return Vec::new();
    }
    let Some(line) = shell::command_line(input) else {
        return Vec::new();
    };
    if line.trim_start().starts_with("apply_patch") {
        return patch::patch_files(&line)
            .into_iter()
            .map(|p| (p, PathAccess::Write))
            .collect();
    }
    let workdir = input.get("workdir").and_then(Value::as_str);
    files_of(&line, workdir)
        .into_iter()
        .map(|f| (f.path, f.access))
        .collect()
}

/// The file paths and patterns in `input`, tagged with what `tool` did with them. A memory
/// tool's call has none (see [`memory_tool`]).
pub(crate) fn tool_paths(tool: &str, input: &Value) -> Vec<ToolPath> {
    if memory_tool(tool).is_some() {
        return Vec::new();
    }
    let access = access_of(tool, input);
    let lower = tool.to_ascii_lowercase();
    let mut found: Vec<ToolPath> = Vec::new();
    let mut push = |s: &str, access: PathAccess| {
        if !s.trim().is_empty() && !found.iter().any(|f| f.path == s && f.access == access) {
            found.push(ToolPath {
                path: s.to_owned(),
                access,
            });
        }
    };
    for key in PATH_KEYS {
        if let Some(s) = input.get(key).and_then(Value::as_str) {
            push(s, access);
        }
    }
    for key in PATH_LIST_KEYS {
        if let Some(items) = input.get(key).and_then(Value::as_array) {
            for item in items.iter().filter_map(Value::as_str) {
                push(item, access);
            }
        }
    }
    if lower.contains("grep") || lower.contains("glob") {
        if let Some(s) = input.get("pattern").and_then(Value::as_str) {
            push(s, access);
        }
    }
    for path in patch_paths(tool, input) {
        push(&path, PathAccess::Write);
    }
    for (path, access) in shell_paths(tool, input) {
        push(&path, access);
    }
    found
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

    fn pairs(tool: &str, input: &Value) -> Vec<(String, PathAccess)> {
        tool_paths(tool, input)
            .into_iter()
            .map(|p| (p.path, p.access))
            .collect()
    }

    #[test]
    fn memory_tools_are_known_by_every_prefix_and_name_no_path() {
        for name in [
            "recall",
            "recall_file",
            "timeline",
            "get_episode",
            "codeoid_memory__recall",
            "mcp__codeoid__recall_file",
            "x___get_episode",
        ] {
            assert!(memory_tool(name).is_some(), "{name}");
        }
        for name in [
            "Recall",
            "recall_files",
            "recall__x",
            "Read",
            "my_recall",
            "",
        ] {
            assert_eq!(memory_tool(name), None, "{name}");
        }
        assert_eq!(memory_tool("mcp__codeoid__timeline"), Some("timeline"));
        assert!(tool_paths("recall_file", &json!({"path": "src/a.py"})).is_empty());
        assert!(tool_paths("mcp__codeoid__recall_file", &json!({"path": "a.py"})).is_empty());
        // Its summary is unchanged: the timeline still says what it asked.
        assert_eq!(
            tool_summary("recall_file", &json!({"path": "src/a.py"})),
            "recall_file(src/a.py)"
        );
    }

    #[test]
    fn shell_commands_that_show_a_file_read_it() {
        let read = |p: &str| (p.to_owned(), PathAccess::Read);
        for command in [
            "cat src/b.py",
            "sed -n '1,200p' src/b.py",
            "nl -ba src/b.py",
            "head -n 40 src/b.py",
            "tail src/b.py",
        ] {
            assert_eq!(
                pairs("Bash", &json!({ "command": command })),
                [read("src/b.py")],
                "{command}"
            );
        }
        // Codex: an argument vector, run in `workdir`.
        let codex = json!({"command": ["bash", "-lc", "cat src/b.py"], "workdir": "/repo"});
        assert_eq!(pairs("shell", &codex), [read("/repo/src/b.py")]);
        assert_eq!(
            tool_summary(
                "shell",
                &json!({"command": ["bash", "-lc", "cat src/b.py"]})
            ),
            "shell(cat src/b.py)"
        );
        assert_eq!(
            tool_summary("shell", &json!({"command": ["rg", "-n", "fn main"]})),
            "shell(rg -n 'fn main')"
        );
        assert_eq!(
            pairs("exec_command", &json!({"cmd": "head -5 a.rs"})),
            [read("a.rs")]
        );
        assert_eq!(
            pairs("Bash", &json!({"command": "sed -i 's/a/b/' a.rs"})),
            [("a.rs".to_owned(), PathAccess::Write)]
        );
        // Not a shell tool, or not a read.
        assert!(pairs("Task", &json!({"command": "cat a.rs"})).is_empty());
        assert!(pairs("Bash", &json!({"command": "cargo test"})).is_empty());
    }

    #[test]
    fn apply_patch_writes_the_files_its_patch_names() {
        let patch = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** Add File: \
                     src/new.py\n+x\n*** End Patch\n";
        let write = |p: &str| (p.to_owned(), PathAccess::Write);
        let expected = [write("src/app.py"), write("src/new.py")];
        assert_eq!(pairs("apply_patch", &json!(patch)), expected);
        assert_eq!(pairs("apply_patch", &json!({ "input": patch })), expected);
        assert_eq!(
            tool_summary("apply_patch", &json!(patch)),
            "apply_patch(src/app.py)"
        );
        // Through the shell, as older Codex versions call it.
        assert_eq!(
            pairs("shell", &json!({"command": ["apply_patch", patch]})),
            expected
        );
        let heredoc = format!("apply_patch <<'EOF'\n{patch}EOF\n");
        assert_eq!(
            pairs("shell", &json!({"command": ["bash", "-lc", heredoc]})),
            expected
        );
    }

    #[test]
    fn gemini_absolute_path_is_a_path() {
        let input = json!({"absolute_path": "/repo/src/a.ts"});
        assert_eq!(
            pairs("read_file", &input),
            [("/repo/src/a.ts".to_owned(), PathAccess::Read)]
        );
        assert_eq!(
            tool_summary("read_file", &input),
            "read_file(/repo/src/a.ts)"
        );
    }
}
