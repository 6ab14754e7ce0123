//! The shape of a shell command line, as far as choosing a compression rule needs it.
//!
//! Agents rarely type a bare `cargo test`: they write `cd crate && RUST_LOG=debug cargo test 2>&1`,
//! `sudo -E env FOO=1 time git status`, or chain several commands. [`CommandShape::parse`] splits
//! a POSIX shell command line into pipelines (separated by `&&`, `||`, `;`, `&` and newlines) and
//! stages (separated by `|` and `|&`), and reduces every stage to the command that actually runs:
//! quotes removed, redirections (`2>&1`, `> file`, heredocs) dropped, and the prefixes that only
//! wrap a command peeled off (`VAR=value`, `env …`, `time`, `sudo …`, `nice …`, `timeout …`,
//! `nohup`, `command`, `exec`, `stdbuf …`). Rule patterns match that reduced text.
//!
//! Pipelines whose command only sets up the shell (`cd`, `export`, `echo` …) are "setup": they
//! print little and do not decide which rule applies.
//!
//! This is a lexer, not a shell: it does not expand variables, globs or aliases, and the text of
//! `$( … )` and backticks stays inside the word that holds it. It never fails: any input yields a
//! shape, possibly with no commands.

mod lexer;

use lexer::{Op, Token, lex};

/// A command line reduced to what rule matching needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandShape {
    /// The pipelines, in order. Each is a non-empty list of stages.
    pub pipelines: Vec<Pipeline>,
    /// True when a pipeline is sent to the background with a top-level `&`.
    pub background: bool,
}

/// One pipeline: stages connected by `|`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pipeline {
    /// Each stage's command, prefixes peeled and redirections dropped, words joined by one space.
    /// A stage that is only assignments or redirections is an empty string.
    pub stages: Vec<String>,
    /// The words of the first stage, prefixes peeled, quotes removed and not joined: a quoted
    /// word holding a space (`cat "my notes.md"`) stays one word here.
    pub first_words: Vec<String>,
    /// The files its output redirections write (`> out.txt`, `2>> err.log`, `&> all.log`), as
    /// written, in order.
    pub writes: Vec<String>,
}

impl Pipeline {
    /// True when more than one command is connected by `|`.
    pub fn is_piped(&self) -> bool {
        self.stages.len() > 1
    }

    /// True when this pipeline only prepares the shell (`cd`, `export`, `echo` …) or is empty.
    pub fn is_setup(&self) -> bool {
        !self.is_piped()
            && self.stages.first().is_none_or(|stage| {
                let program = stage.split(' ').next().unwrap_or("");
                program.is_empty() || SETUP_PROGRAMS.contains(&program)
            })
    }
}

impl CommandShape {
    /// Parses a shell command line. Never fails; unbalanced quotes run to the end of the text.
    pub fn parse(command: &str) -> CommandShape {
        let tokens = lex(command);
        let mut shape = CommandShape::default();
        let mut stage_words: Vec<String> = Vec::new();
        let mut pipeline = Pipeline::default();
        for token in tokens {
            match token {
                Token::Word(word) => stage_words.push(word),
                Token::Written(file) => pipeline.writes.push(file),
                Token::Op(op) => {
                    push_stage(&mut pipeline, &stage_words);
                    stage_words.clear();
                    if op == Op::Pipe {
                        continue;
                    }
                    if op == Op::Background {
                        shape.background = true;
                    }
                    push_pipeline(&mut shape, std::mem::take(&mut pipeline));
                }
            }
        }
        push_stage(&mut pipeline, &stage_words);
        push_pipeline(&mut shape, pipeline);
        shape
    }

    /// The pipelines that do real work: all but the setup ones, unless everything is setup, in
    /// which case the last pipeline (an `echo` can still print a lot).
    pub fn substantive(&self) -> Vec<&Pipeline> {
        let work: Vec<&Pipeline> = self.pipelines.iter().filter(|p| !p.is_setup()).collect();
        if work.is_empty() {
            self.pipelines.last().into_iter().collect()
        } else {
            work
        }
    }
}

/// The words of each stage of `command`, quotes removed, nothing peeled or joined: for a rule
/// that reads a command's own arguments (the pattern of a `grep`).
pub(crate) fn stage_words(command: &str) -> Vec<Vec<String>> {
    let mut stages = vec![Vec::new()];
    for token in lex(command) {
        match token {
            Token::Word(word) => stages.last_mut().map_or((), |s| s.push(word)),
            Token::Op(_) => stages.push(Vec::new()),
            Token::Written(_) => {}
        }
    }
    stages.retain(|s| !s.is_empty());
    stages
}

/// Adds the stage of `words` to `pipeline`.
fn push_stage(pipeline: &mut Pipeline, words: &[String]) {
    let peeled = peel(words);
    if pipeline.stages.is_empty() {
        pipeline.first_words = peeled.to_vec();
    }
    pipeline.stages.push(peeled.join(" "));
}

fn push_pipeline(shape: &mut CommandShape, pipeline: Pipeline) {
    // `a && ;` or a trailing `;` leave an empty single stage behind: not a pipeline. A lone
    // `> file` still writes (truncates) the file.
    if pipeline.stages.iter().any(|s| !s.is_empty()) || !pipeline.writes.is_empty() {
        shape.pipelines.push(pipeline);
    }
}

/// Programs that change the shell's state or print a short message, never the output a rule is
/// about.
const SETUP_PROGRAMS: &[&str] = &[
    "cd", "pushd", "popd", "export", "unset", "set", "shopt", "source", ".", "alias", "ulimit",
    "umask", "echo", "printf", "true", ":", "sleep", "clear", "mkdir", "touch",
];

/// A stage's words with its wrapper prefixes peeled off.
fn peel(words: &[String]) -> &[String] {
    let mut rest: &[String] = words;
    loop {
        let before = rest.len();
        rest = skip_assignments(rest);
        if let Some((program, tail)) = rest.split_first() {
            let name = program.rsplit('/').next().unwrap_or(program);
            rest = match name {
                "env" => skip_options(tail, &["-u", "--unset", "-C", "--chdir", "-S"]),
                "time" => skip_options(tail, &["-f", "--format", "-o", "--output"]),
                "sudo" => skip_options(
                    tail,
                    &[
                        "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user",
                    ],
                ),
                "nice" => skip_nice(tail),
                "nohup" | "command" | "exec" | "builtin" => skip_options(tail, &[]),
                "stdbuf" => skip_options(tail, &["-i", "-o", "-e"]),
                "timeout" => skip_timeout(tail),
                _ => rest,
            };
        }
        if rest.len() == before {
            break;
        }
    }
    rest
}

fn skip_assignments(words: &[String]) -> &[String] {
    let n = words.iter().take_while(|w| is_assignment(w)).count();
    &words[n..]
}

fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Skips leading options (and the values of those in `with_value`) up to and including `--`.
fn skip_options<'w>(words: &'w [String], with_value: &[&str]) -> &'w [String] {
    let mut i = 0;
    while let Some(word) = words.get(i) {
        if word == "--" {
            return &words[i + 1..];
        }
        if !word.starts_with('-') || word == "-" {
            break;
        }
        let takes_value = with_value.contains(&word.as_str());
        i += if takes_value { 2 } else { 1 };
    }
    &words[i.min(words.len())..]
}

fn skip_nice(words: &[String]) -> &[String] {
    match words.first().map(String::as_str) {
        Some("-n") => &words[2.min(words.len())..],
        Some(w) if w.starts_with('-') => &words[1..],
        _ => words,
    }
}

fn skip_timeout(words: &[String]) -> &[String] {
    let rest = skip_options(words, &["-s", "--signal", "-k", "--kill-after"]);
    // The duration comes first: `timeout 30 cargo test`, `timeout 2m go test`.
    match rest.first() {
        Some(d) if d.chars().next().is_some_and(|c| c.is_ascii_digit()) => &rest[1..],
        _ => rest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(line: &str) -> Vec<String> {
        CommandShape::parse(line)
            .substantive()
            .iter()
            .map(|p| p.stages.join(" | "))
            .collect()
    }

    #[test]
    fn prefixes_are_peeled() {
        assert_eq!(commands("cd crates/core && cargo test"), ["cargo test"]);
        assert_eq!(
            commands("RUST_LOG=debug FOO='a b' cargo test -q"),
            ["cargo test -q"]
        );
        assert_eq!(commands("env -u HOME -- A=1 git status"), ["git status"]);
        assert_eq!(commands("time -p go test ./..."), ["go test ./..."]);
        assert_eq!(commands("sudo -u root -E nice -n 5 ls -la"), ["ls -la"]);
        assert_eq!(commands("timeout -s KILL 30s pytest -x"), ["pytest -x"]);
        assert_eq!(
            commands("/usr/bin/env NODE_ENV=test npx jest"),
            ["npx jest"]
        );
    }

    #[test]
    fn redirections_and_quotes_are_dropped() {
        assert_eq!(commands("cargo test 2>&1"), ["cargo test"]);
        assert_eq!(commands("git diff >/tmp/out 2> err.txt"), ["git diff"]);
        assert_eq!(
            commands("grep -rn \"fn main\" src &>/dev/null"),
            ["grep -rn fn main src"]
        );
        assert_eq!(commands("echo 'a|b' && ls"), ["ls"]);
    }

    #[test]
    fn output_redirections_name_the_files_written() {
        let writes = |line: &str| -> Vec<Vec<String>> {
            CommandShape::parse(line)
                .pipelines
                .into_iter()
                .map(|p| p.writes)
                .collect()
        };
        assert_eq!(
            writes("git diff >/tmp/out 2> err.txt < in.txt"),
            [["/tmp/out", "err.txt"]]
        );
        assert_eq!(
            writes("cat >> \"notes.md\" <<'EOF'\nline > not.a.file\nEOF"),
            [["notes.md"]]
        );
        assert_eq!(
            writes("make &> build.log; : > empty.txt"),
            [["build.log"], ["empty.txt"]]
        );
        assert_eq!(
            writes("cargo test 2>&1 | tee out.log <<< x"),
            [Vec::<String>::new()]
        );
        assert_eq!(
            writes("echo $(cat a > b)"),
            [Vec::<String>::new()],
            "inside a substitution"
        );
        let shape = CommandShape::parse("sudo -u me cat 'a b.txt' | head");
        assert_eq!(shape.pipelines[0].first_words, ["cat", "a b.txt"]);
        assert_eq!(shape.pipelines[0].stages, ["cat a b.txt", "head"]);
    }

    #[test]
    fn pipes_and_sequences() {
        let shape = CommandShape::parse("cargo test 2>&1 | tail -20; git status || true");
        assert_eq!(shape.pipelines.len(), 3);
        assert!(shape.pipelines[0].is_piped());
        assert_eq!(shape.pipelines[0].stages, ["cargo test", "tail -20"]);
        assert_eq!(commands("a || b"), ["a", "b"]);
        assert!(!CommandShape::parse("a |& b").background);
        assert!(CommandShape::parse("npm run dev &").background);
        assert!(!CommandShape::parse("a && b").background);
    }

    #[test]
    fn substitutions_stay_in_their_word() {
        let line = "git commit -m \"$(cat <<'EOF'\nfix: a | b; c\nEOF\n)\" && git log -1";
        assert_eq!(
            commands(line),
            [
                "git commit -m $(cat <<'EOF'\nfix: a | b; c\nEOF\n)",
                "git log -1"
            ]
        );
        assert_eq!(commands("echo `ls | wc -l`"), ["echo `ls | wc -l`"]);
    }

    #[test]
    fn heredoc_bodies_are_skipped() {
        let line = "cat <<EOF > out.txt\nrm -rf | x\nEOF\ncargo test";
        assert_eq!(commands(line), ["cat", "cargo test"]);
        let tabbed = "python3 - <<-'PY'\n\timport os | x\n\tPY\nls";
        assert_eq!(commands(tabbed), ["python3 -", "ls"]);
    }

    #[test]
    fn setup_only_lines_keep_the_last_pipeline() {
        assert_eq!(commands("cd x && echo hello"), ["echo hello"]);
        assert_eq!(commands(""), Vec::<String>::new());
        assert_eq!(commands("   ;; && "), Vec::<String>::new());
    }

    #[test]
    fn comments_and_unbalanced_quotes_do_not_break_parsing() {
        assert_eq!(commands("ls # list | files"), ["ls"]);
        assert_eq!(
            commands("grep 'unterminated | x"),
            ["grep unterminated | x"]
        );
        assert_eq!(commands("echo a#b"), ["echo a#b"]);
    }
}
