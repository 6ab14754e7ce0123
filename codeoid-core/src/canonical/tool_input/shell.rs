//! The files a shell command reads or edits: `cat src/b.py`, `sed -n '1,200p' src/b.py`,
//! `nl -ba src/b.py`, `head -n 50 f`, `tail f`, `sed -i 's/a/b/' f`, as agents without a file
//! tool (Codex, SWE-agent, any `Bash` user) look at files.
//!
//! The command line is read with the compression rules' lexer ([`CommandShape`]): quotes
//! removed, heredoc bodies dropped, wrappers (`sudo`, `env`, `time`…) peeled. The file of an
//! output redirection (`> f`, `>> f`, `2> f`, `&> f`, a `cat > f <<EOF` rewrite) is an edit,
//! whatever the program; `/dev/null` and the like are not files.
//! Only the first stage of each pipeline is looked at (later stages read a pipe), only for the
//! programs listed in [`program`], and only words that can be a file (no `-`, globs, variables
//! or substitutions). A `cd dir` earlier in the line, or the call's `workdir`, is prefixed to the
//! relative paths after it; a `cd` this cannot follow (`cd -`, `cd $X`) ends the extraction.
//!
//! Deliberately approximate: this is not a shell. A quoted path holding a space stays one path
//! (`cat "my notes.md"`), an unquoted one is two, as the shell sees it; a read through a script,
//! an alias or `xargs` is not seen.

use serde_json::Value;

use crate::canonical::PathAccess;
use crate::compress::{CommandShape, Pipeline};

/// What a recognised program does with its file arguments, and which of its options take a
/// value (the next word is that value, not a file).
struct Program {
    access: PathAccess,
    /// The program may show only part of the file (`head`, `tail`, a `sed -n` script).
    partial: bool,
    with_value: &'static [&'static str],
    /// `sed`: the first operand is the script unless `-e` or `-f` gave one.
    script_first: bool,
}

/// The program named `name` (its last path segment) with the options `words` gives it, when it
/// reads or edits its file operands.
fn program(name: &str, words: &[&str]) -> Option<Program> {
    let plain = |partial, with_value| Program {
        access: PathAccess::Read,
        partial,
        with_value,
        script_first: false,
    };
    Some(match name {
        "cat" | "tac" | "less" | "more" => plain(false, &[]),
        "nl" => plain(
            false,
            &["-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"],
        ),
        "bat" | "batcat" => plain(false, &["-l", "-H", "-r", "-m", "--language"]),
        "head" | "tail" => plain(true, &["-n", "-c", "--lines", "--bytes"]),
        "sed" => {
            let has = |short: &str, long: &str| {
                words.iter().any(|w| {
                    *w == long
                        || w.starts_with(&format!("{long}="))
                        || (w.starts_with('-') && !w.starts_with("--") && w[1..].contains(short))
                })
            };
            let access = if has("i", "--in-place") {
                PathAccess::Write
            } else if has("n", "--quiet") || words.contains(&"--silent") {
                PathAccess::Read
            } else {
                // `sed 's/a/b/' f` prints a transformed copy: neither a read of the file as it
                // is nor an edit.
                return None;
            };
            let given_script = words
                .iter()
                .any(|w| matches!(*w, "-e" | "-f" | "--expression" | "--file"));
            Program {
                access,
                partial: access == PathAccess::Read,
                with_value: &["-e", "-f", "-l", "--expression", "--file"],
                script_first: !given_script,
            }
        }
        _ => return None,
    })
}

/// `true` for a tool that runs shell commands: Claude Code's `Bash`, Codex's `shell`,
/// `local_shell` and `exec_command`, Gemini CLI's `run_shell_command`, SWE-agent's `bash`.
pub(super) fn is_shell_tool(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("bash")
        || lower.contains("shell")
        || matches!(
            lower.as_str(),
            "exec_command" | "container.exec" | "run_command"
        )
}

/// The shells whose `-c` script is the command an argument vector runs.
const SHELLS: [&str; 5] = ["bash", "sh", "zsh", "dash", "ksh"];

/// The command line of an argument vector: the script of `["bash", "-lc", script]`, else the
/// words joined by spaces (quoted when they hold a space or a quote).
pub(super) fn argv_line(argv: &[Value]) -> Option<String> {
    let words: Vec<&str> = argv.iter().map(Value::as_str).collect::<Option<_>>()?;
    if let [shell, flag, script] = words.as_slice() {
        let shell = shell.rsplit('/').next().unwrap_or(shell);
        let flag_c = flag.starts_with('-') && !flag.starts_with("--") && flag.ends_with('c');
        if SHELLS.contains(&shell) && flag_c {
            return Some((*script).to_owned());
        }
    }
    let quoted: Vec<String> = words
        .iter()
        .map(|w| {
            if w.is_empty() || w.contains(|c: char| c.is_whitespace() || "'\"\\$`".contains(c)) {
                format!("'{}'", w.replace('\'', r"'\''"))
            } else {
                (*w).to_owned()
            }
        })
        .collect();
    (!quoted.is_empty()).then(|| quoted.join(" "))
}

/// The command line a shell tool's input runs: `command` or `cmd`, a string or an argument
/// vector.
pub(crate) fn command_line(input: &Value) -> Option<String> {
    ["command", "cmd"]
        .iter()
        .find_map(|key| match input.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Array(argv) => argv_line(argv),
            _ => None,
        })
}

/// `true` when `word` can be a file operand: not an option, a glob, a variable, a substitution
/// or a URL.
fn is_file_word(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && !word.contains("://")
        && !word.contains(|c: char| "*?[]{}$`<>|&;()=\\".contains(c) || c.is_control())
}

/// `dir` joined to the current directory `cwd` (`None`: the shell's own start).
fn join(cwd: Option<&str>, path: &str) -> String {
    match cwd {
        Some(dir) if !path.starts_with('/') && !path.starts_with('~') => {
            format!("{}/{path}", dir.trim_end_matches('/'))
        }
        _ => path.to_owned(),
    }
}

/// One file a command line reads or edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellFile {
    /// As the command named it, behind any `cd` or `workdir` it ran under.
    pub path: String,
    /// [`PathAccess::Read`] or [`PathAccess::Write`].
    pub access: PathAccess,
    /// The read may show only part of the file: `head`, `tail`, a `sed -n` script, or a later
    /// pipeline stage that can cut the output.
    pub partial: bool,
}

/// The files `command` reads or edits, in order, run in `workdir` when given.
pub(crate) fn files_of(command: &str, workdir: Option<&str>) -> Vec<ShellFile> {
    let mut cwd: Option<String> = workdir.map(str::to_owned);
    let mut out: Vec<ShellFile> = Vec::new();
    for pipeline in CommandShape::parse(command).pipelines {
        // Redirections are opened before the command runs, so before any `cd` it makes.
        let written: Vec<String> = pipeline
            .writes
            .iter()
            .filter(|w| is_file_word(w) && !w.starts_with("/dev/"))
            .map(|w| join(cwd.as_deref(), w))
            .collect();
        let known = pipeline_reads(&pipeline, &mut cwd, &mut out);
        for path in written {
            push(&mut out, path, PathAccess::Write, false);
        }
        if !known {
            break;
        }
    }
    out
}

/// Adds what the first stage of `pipeline` reads or edits to `out`, and follows its `cd` in
/// `cwd`. `false` when the shell went somewhere this cannot follow (`cd -`, `cd $X`): nothing
/// after it can be placed.
fn pipeline_reads(pipeline: &Pipeline, cwd: &mut Option<String>, out: &mut Vec<ShellFile>) -> bool {
    let words: Vec<&str> = pipeline.first_words.iter().map(String::as_str).collect();
    let Some((name, args)) = words.split_first() else {
        return true;
    };
    let name = name.rsplit('/').next().unwrap_or(name);
    if name == "cd" || name == "pushd" {
        return match args {
            [dir] if is_file_word(dir) && !dir.starts_with('~') => {
                *cwd = Some(join(cwd.as_deref(), dir));
                true
            }
            // `cd`, `cd -`, `cd $X`: where the shell went is unknown from here on.
            _ => false,
        };
    }
    let Some(program) = program(name, args) else {
        return true;
    };
    let mut operands: Vec<&str> = Vec::new();
    let mut options_done = false;
    let mut i = 0;
    while let Some(&word) = args.get(i) {
        i += 1;
        if !options_done && word == "--" {
            options_done = true;
        } else if !options_done && word.starts_with('-') && word != "-" {
            if program.with_value.contains(&word) {
                i += 1;
            }
        } else {
            operands.push(word);
        }
    }
    if program.script_first && !operands.is_empty() {
        operands.remove(0);
    }
    let partial = program.partial || pipeline.is_piped();
    for word in operands.into_iter().filter(|w| is_file_word(w)) {
        push(out, join(cwd.as_deref(), word), program.access, partial);
    }
    true
}

/// Adds `path` to `out` unless it is there with the same access already.
fn push(out: &mut Vec<ShellFile>, path: String, access: PathAccess, partial: bool) {
    if !out.iter().any(|f| f.path == path && f.access == access) {
        out.push(ShellFile {
            path,
            access,
            partial,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(command: &str) -> Vec<(String, PathAccess, bool)> {
        files_of(command, None)
            .into_iter()
            .map(|f| (f.path, f.access, f.partial))
            .collect()
    }

    fn read(path: &str, partial: bool) -> (String, PathAccess, bool) {
        (path.to_owned(), PathAccess::Read, partial)
    }

    #[test]
    fn the_usual_ways_of_looking_at_a_file_are_reads() {
        assert_eq!(paths("cat src/b.py"), [read("src/b.py", false)]);
        assert_eq!(paths("sed -n '1,200p' src/b.py"), [read("src/b.py", true)]);
        assert_eq!(paths("nl -ba src/b.py"), [read("src/b.py", false)]);
        assert_eq!(paths("nl -b a src/b.py"), [read("src/b.py", false)]);
        assert_eq!(paths("head -n 50 a.rs"), [read("a.rs", true)]);
        assert_eq!(
            paths("tail -20 a.rs b.rs"),
            [read("a.rs", true), read("b.rs", true)]
        );
        assert_eq!(
            paths("sudo cat -n /etc/hosts 2>&1"),
            [read("/etc/hosts", false)]
        );
        // A later stage can cut what the first one printed.
        assert_eq!(
            paths("cat -n src/b.py | head -40"),
            [read("src/b.py", true)]
        );
        assert_eq!(
            paths("sed -n -e '10,20p' x.txt"),
            [read("x.txt", true)],
            "-e gives the script"
        );
    }

    #[test]
    fn edits_searches_stdin_and_the_unknowable_are_not_reads() {
        assert_eq!(
            paths("sed -i 's/a/b/' src/a.py"),
            [("src/a.py".to_owned(), PathAccess::Write, false)]
        );
        for nothing in [
            "sed 's/a/b/' f.txt",
            "grep -n foo src/a.py",
            "cat",
            "cat -",
            "cat *.py",
            "cat $FILE",
            "echo hi | cat",
            "ls src",
            "python3 -c 'open(\"a.py\").read()'",
        ] {
            assert_eq!(paths(nothing), [], "{nothing}");
        }
    }

    #[test]
    fn quoted_paths_keep_their_spaces() {
        assert_eq!(
            paths("cat \"my notes.md\" 'a b.py' c.py"),
            [
                read("my notes.md", false),
                read("a b.py", false),
                read("c.py", false)
            ]
        );
        assert_eq!(
            paths("cd 'my dir' && head -n 5 x\\ y.txt > \"out put.txt\""),
            [
                read("my dir/x y.txt", true),
                ("my dir/out put.txt".to_owned(), PathAccess::Write, false)
            ]
        );
    }

    #[test]
    fn output_redirections_are_edits() {
        let write = |path: &str| (path.to_owned(), PathAccess::Write, false);
        assert_eq!(
            paths("cat > out.txt <<'EOF'\nhello > there\nEOF"),
            [write("out.txt")]
        );
        assert_eq!(
            paths("cat a.py > b.py 2>/dev/null"),
            [read("a.py", false), write("b.py")]
        );
        assert_eq!(
            paths("cd src && echo x >> notes.md; python3 gen.py &> ../gen.log"),
            [write("src/notes.md"), write("src/../gen.log")]
        );
        assert_eq!(
            paths("cd src > /tmp/cd.log && : > a.py"),
            [write("/tmp/cd.log"), write("src/a.py")]
        );
        assert_eq!(paths("make 2>&1 > $LOG"), [], "a variable is no file");
        assert_eq!(paths("cd $X && echo > a.py"), [], "nowhere known");
    }

    #[test]
    fn cd_and_workdir_are_followed() {
        assert_eq!(paths("cd src && cat b.py"), [read("src/b.py", false)]);
        assert_eq!(
            paths("cd /repo/src; cat b.py ../c.py"),
            [
                read("/repo/src/b.py", false),
                read("/repo/src/../c.py", false)
            ]
        );
        assert_eq!(paths("cd $TMP && cat b.py"), []);
        let in_dir: Vec<String> = files_of("cat b.py /abs/c.py", Some("/repo/sub"))
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(in_dir, ["/repo/sub/b.py", "/abs/c.py"]);
    }

    #[test]
    fn argument_vectors_are_command_lines() {
        let line = |v: Value| command_line(&json!({ "command": v }));
        assert_eq!(
            line(json!(["bash", "-lc", "cat src/b.py"])).as_deref(),
            Some("cat src/b.py")
        );
        assert_eq!(line(json!(["/bin/sh", "-c", "ls"])).as_deref(), Some("ls"));
        assert_eq!(
            line(json!(["rg", "-n", "fn main", "src"])).as_deref(),
            Some("rg -n 'fn main' src")
        );
        assert_eq!(
            line(json!(["echo", "it's"])).as_deref(),
            Some(r"echo 'it'\''s'")
        );
        assert_eq!(line(json!([])), None);
        assert_eq!(line(json!(["a", 1])), None);
        assert_eq!(
            command_line(&json!({"cmd": "cat a.rs"})).as_deref(),
            Some("cat a.rs")
        );
        assert!(is_shell_tool("Bash") && is_shell_tool("local_shell"));
        assert!(is_shell_tool("run_shell_command") && is_shell_tool("exec_command"));
        assert!(!is_shell_tool("Read") && !is_shell_tool("str_replace_based_edit_tool"));
    }
}
