//! Facts: the lines of a command's output that compression must never remove.
//!
//! Every rule declares fact patterns (regular expressions, one line at a time, on the normalized
//! text of [`super::terminal`]). A line that matches is a fact. Two forms exist:
//! - a pattern without a capture group makes the whole line the fact: it must appear, unchanged,
//!   as a line of the compressed output;
//! - a pattern with a capture group makes the captured text the fact (a commit hash, a path): it
//!   must appear somewhere in the compressed output, which lets a rule reformat the line around
//!   it.
//!
//! `@diagnostics` in a pattern list stands for [`DIAGNOSTICS`], the error, warning, panic and
//! exit-code lines that every rule that keeps them shares.
//!
//! Rules use [`Facts::is_fact`] to protect lines (a rule's own [`FactSet`], plus those of the
//! other rules a command line runs); tests and benchmarks use [`Facts::missing`] to prove none
//! was lost. This module does not decide what else a rule keeps.

use std::collections::HashSet;

use regex::Regex;

use crate::error::{Error, Result};

/// The name that stands for [`DIAGNOSTICS`] in a rule's fact list.
pub const DIAGNOSTICS_NAME: &str = "@diagnostics";

/// Error, warning and failure lines, in the forms compilers, test runners, loggers, shells and
/// the tools a build script calls print them.
///
/// Each pattern names a shape, never a bare word: `0 errors`, `error_count = 0`, `-Werror` in a
/// compiler's command line and prose that mentions an error are not facts.
pub const DIAGNOSTICS: &[&str] = &[
    // `error: …`, `warning[E0001]: …`, `  Error: …`, `fatal: …` (rustc, cargo, git, npm, go),
    // and the same after a tool's name or inside a box: `rsync error: …`, `collect2: error: …`,
    // `PHP Fatal error: …`, node's `Error [ERR_X]: …`, Terraform's `│ Error: Invalid reference`.
    r"(?i)^[\s│┃║]*(?:[\w.+/\[\]-]+:? )?(?:(?:fatal|parse|syntax) )?(?:error|warning|fatal|panic|critical)(?: ?\[[^\]]*\])?\s*:(?:[^:]|$)",
    // Log levels and runner verdicts in capitals: `[ERROR]`, `WARN `, `FAILED`, `npm ERR!`,
    // `FATAL`; `CMake Error at …`; pnpm's ` ERR_PNPM_FETCH_404 …` (not node's `code:
    // 'ERR_ASSERTION'` property lines: the error line above them is the fact, and repeated
    // failure blocks must still collapse).
    r"(?:^|[^A-Za-z0-9_])(?:ERROR|ERR!|WARN|WARNING|FATAL|CRITICAL|FAILED|FAILURE|FAIL)(?:[^A-Za-z0-9_]|$)",
    r"^CMake (?:Error|Warning)\b|\bERR_PNPM_[A-Z0-9_]+\b",
    // npm 9+ (`npm error code E404`, `npm warn …`), pnpm, and yarn's `error Command failed …`.
    r"^(?:npm|pnpm) (?:error|warn)\b|^error [A-Z]",
    // Exception types followed by their message: `ValueError: x`, `Exception: y`,
    // `java.io.IOException: z` (not Rust paths such as `RecvError::Closed`: the colon must end
    // the word).
    r"\b(?:[A-Z][A-Za-z0-9_]*)?(?:Error|Exception|Warning):(?:\s|$)",
    // An exception alone on its line (`java.lang.NullPointerException`), Java's `Exception in
    // thread "main" …` and `Caused by: …`, Ruby's `… (NoMethodError)`, `Uncaught exception`.
    r"^\s*(?:[A-Za-z_$][\w$]*\.)*[A-Z]\w*(?:Error|Exception)\s*$",
    r"^(?:Exception in thread |Caused by: )|\([A-Z]\w*(?:Error|Exception)\)$|(?i:\b(?:unhandled|uncaught) exception\b)",
    r"(?i)\b(?:panicked at|traceback \(most recent call last\)|segmentation fault|core dumped)",
    // A failed assertion: C's `Assertion failed: (x), function f, file a.c, line 3.` and
    // `a.out: a.c:3: main: Assertion `x' failed.`, Rust's `assertion `left == right` failed`.
    r"(?i)\bassertion\b.*\bfailed\b",
    // A process a signal ended, as shells report it: a line `Killed` (`Aborted (core dumped)`,
    // `Killed: 9`), bash's `./build.sh: line 12: 4242 Killed   ./step`, zsh's `zsh: killed …`.
    r"^\s*(?:Killed|Terminated|Aborted|Hangup|Quit|Bus error|Illegal instruction|Floating point exception|Trace/breakpoint trap|Alarm clock|CPU time limit exceeded)(?:: \d+)?(?: \(core dumped\))?[.!]?\s*$",
    r": line \d+: +\d+ (?:Killed|Terminated|Aborted|Hangup|Quit|Bus error|Illegal instruction|Floating point exception|Segmentation fault|Trace/breakpoint trap|Alarm clock)\b",
    r"^zsh: (?:killed|terminated|abort|bus error|segmentation fault|illegal hardware instruction|floating point exception)\b",
    // What a failed system call or connection says, wherever it is quoted: `jq: command not
    // found`, `cp: cannot stat 'x': No such file or directory`, `Permission denied (publickey).`,
    // `ssh: connect to host h port 22: Connection refused`, and their kin; ld's `undefined
    // reference to`.
    r"(?i)\b(?:command not found|no such file or directory|permission denied|operation not permitted|no space left on device|read-only file system|too many open files|cannot allocate memory|disk quota exceeded|input/output error|text file busy|argument list too long|device or resource busy|connection refused|connection reset by peer|connection timed out|no route to host|network is unreachable|could not resolve host|name or service not known|temporary failure in name resolution|host key verification failed|broken pipe|undefined reference to)\b",
    r": (?:Is a directory|Not a directory|File exists|Directory not empty|Bad file descriptor|Invalid argument)(?: \((?:os error )?\d+\))?$",
    // dash's `sh: 1: ./run: not found`.
    r"^[\w./-]*sh(?:: line \d+|: \d+)?: .+: not found$",
    // A tool saying what it could not do (`ls: cannot access 'x'`, `tar: could not chdir …`),
    // curl's `curl: (22) The requested URL returned error: 500`, apt's `E: Unable to locate …`.
    r"^[\w.+-]+(?:\[\d+\])?: (?:cannot|can't|could not|couldn't|unable to|failed to) ",
    r"^curl: \(\d+\) |^[EW]: \S",
    // Build tools: `make: *** No rule to make target 'x'.  Stop.`, `make[1]: *** [Makefile:20:
    // build] Error 2`, `ninja: build stopped: subcommand failed.`
    r"^\S*make(?:\[\d+\])?: \*\*\* |^ninja: build stopped\b",
    // A diagnostic after its location, wherever the line starts: `src/a.ts(10,5): error TS2322`,
    // `a.py:3: error: …`, `main.c:3:7: fatal error: …`, eslint's `  12:5  error  …`.
    r"(?i)(?:\S:\d+(?::\d+)?:|\S\(\d+(?:,\d+)?\):|^\s*\d+:\d+)\s+(?:fatal )?(?:error|warning)\b",
    // `file.go:3:2: undefined: Foo`: a file with an extension, line, column and a message.
    r"^\S+\.[A-Za-z0-9]+:\d+:\d+: \S",
    // Where a rustc diagnostic points: `  --> src/lib.rs:3:5`; where a Terraform one does, in its
    // box: `│   on main.tf line 12, in resource "aws_s3_bucket" "b":`.
    r"^\s*--> \S+:\d+:\d+|^[│|]?\s+on \S+ line \d+(?:, in .+)?:$",
    // A Go test's failure or log line, which comes before its `--- FAIL`: `    a_test.go:7: got 3`.
    r"^[ \t]+[A-Za-z0-9_./-]*_test\.go:[0-9]+: ",
    // A Python traceback's frames: `  File "app.py", line 3, in main`.
    r#"^\s*File ".+", line \d+"#,
    // Exit codes, as shells and harnesses report them: `Exit code 2` at the start of a line, a
    // non-zero one anywhere (`Process completed with exit code 1.`).
    r"(?i)^\s*(?:exit (?:code|status)|exited with(?: code)?)[: ]+\d+|\bexit (?:code|status)[: ]+[1-9]",
];

/// A compiled set of fact patterns.
#[derive(Debug, Clone)]
pub(crate) struct FactSet {
    /// All patterns in one alternation, for the per-line "is this a fact" test.
    any: Option<Regex>,
    /// Each pattern alone, to extract what it captures.
    each: Vec<Regex>,
}

impl FactSet {
    /// Compiles `patterns` (with `@diagnostics` expanded) for the rule `rule`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when a pattern is not a valid regular expression or
    /// names an unknown `@set`.
    pub(crate) fn new(rule: &str, patterns: &[String]) -> Result<FactSet> {
        let mut sources: Vec<String> = Vec::new();
        for pattern in patterns {
            if pattern == DIAGNOSTICS_NAME {
                sources.extend(DIAGNOSTICS.iter().map(|p| (*p).to_owned()));
            } else if pattern.starts_with('@') {
                return Err(Error::invalid_input(format!(
                    "rule {rule:?} names unknown fact set {pattern:?}; the only set is \
                     \"{DIAGNOSTICS_NAME}\""
                )));
            } else {
                sources.push(pattern.clone());
            }
        }
        let each = sources
            .iter()
            .map(|source| compile(rule, "fact", source))
            .collect::<Result<Vec<_>>>()?;
        let any = if sources.is_empty() {
            None
        } else {
            let joined: Vec<String> = sources.iter().map(|s| format!("(?:{s})")).collect();
            Some(compile(rule, "fact", &joined.join("|"))?)
        };
        Ok(FactSet { any, each })
    }

    /// True when `line` is a fact.
    pub(crate) fn is_fact(&self, line: &str) -> bool {
        self.any.as_ref().is_some_and(|re| re.is_match(line))
    }

    /// True when the set has no patterns.
    pub(crate) fn is_empty(&self) -> bool {
        self.any.is_none()
    }

    /// Every fact of `input` that `output` does not contain, in input order.
    pub(crate) fn missing(&self, input: &str, output: &str) -> Vec<String> {
        Facts::new(vec![self]).missing(input, output)
    }

    /// True when `line` is a fact of this set that `output` (whose lines are `output_lines`)
    /// does not contain.
    fn lacks(&self, line: &str, output: &str, output_lines: &HashSet<&str>) -> bool {
        if !self.is_fact(line) {
            return false;
        }
        self.each.iter().any(|re| {
            re.captures(line).is_some_and(|caps| match caps.get(1) {
                Some(captured) => !output.contains(captured.as_str()),
                None => !output_lines.contains(line),
            })
        })
    }
}

/// The facts one output is read with: its rule's, and on a command line that runs commands of
/// several rules (`git status && git diff`, which the fallback rule compresses), each of theirs
/// too, so the changed files and diff headers the git rules keep are kept there as well.
#[derive(Debug, Clone)]
pub(crate) struct Facts<'a> {
    sets: Vec<&'a FactSet>,
}

impl<'a> Facts<'a> {
    /// The facts of all of `sets`.
    pub(crate) fn new(sets: Vec<&'a FactSet>) -> Facts<'a> {
        Facts { sets }
    }

    /// True when no set has a pattern.
    pub(crate) fn is_empty(&self) -> bool {
        self.sets.iter().all(|set| set.is_empty())
    }

    /// True when `line` is a fact of any of the sets.
    pub(crate) fn is_fact(&self, line: &str) -> bool {
        self.sets.iter().any(|set| set.is_fact(line))
    }

    /// Every fact of `input` that `output` does not contain, in input order.
    pub(crate) fn missing(&self, input: &str, output: &str) -> Vec<String> {
        if self.is_empty() {
            return Vec::new();
        }
        let output_lines: HashSet<&str> = output.lines().collect();
        input
            .lines()
            .filter(|line| {
                self.sets
                    .iter()
                    .any(|set| set.lacks(line, output, &output_lines))
            })
            .map(str::to_owned)
            .collect()
    }
}

/// Compiles one pattern of a rule, naming the rule and the pattern when it is invalid.
///
/// Word boundaries (`\b`, `\B`) are made ASCII-only. A Unicode word boundary makes the regex
/// engine leave its fast DFA as soon as a line holds a non-ASCII character (a `✓`, a box-drawing
/// character), which costs ten times the time on test-runner and `tree` output; command output
/// keys its words in ASCII anyway.
pub(crate) fn compile(rule: &str, what: &str, pattern: &str) -> Result<Regex> {
    Regex::new(&ascii_word_boundaries(pattern)).map_err(|err| {
        Error::invalid_input(format!(
            "rule {rule:?} has an invalid {what} pattern {pattern:?}; write a regular expression \
             in the syntax of the Rust regex crate"
        ))
        .with_source(err)
    })
}

/// `pattern` with every unescaped `\b` and `\B` written as `(?-u:\b)` and `(?-u:\B)`.
fn ascii_word_boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(b @ ('b' | 'B')) => {
                out.push_str("(?-u:\\");
                out.push(b);
                out.push(')');
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(patterns: &[&str]) -> FactSet {
        let owned: Vec<String> = patterns.iter().map(|p| (*p).to_owned()).collect();
        FactSet::new("test", &owned).unwrap()
    }

    #[test]
    fn diagnostics_match_real_error_lines() {
        let facts = set(&[DIAGNOSTICS_NAME]);
        for line in [
            "error[E0308]: mismatched types",
            "warning: unused variable: `x`",
            "fatal: not a git repository (or any of the parent directories): .git",
            "npm ERR! code ELIFECYCLE",
            "2024-01-02 12:00:01 [ERROR] connection refused",
            "E   AssertionError: assert 1 == 2",
            "thread 'main' panicked at src/main.rs:2:5:",
            "Traceback (most recent call last):",
            "--- FAIL: TestParse (0.00s)",
            "Exit code 2",
            "src/f.ts(10,5): error TS2322: Type 'string' is not assignable",
            "a.py:3: error: Incompatible return value type",
            "main.c:3:7: fatal error: missing.h: No such file or directory",
            "./x.go:3:2: undefined: Foo",
            "  12:5  error  'x' is assigned a value but never used  no-unused-vars",
            "  --> src/mod7.rs:4:9",
            "  File \"/app/main.py\", line 12, in <module>",
        ] {
            assert!(facts.is_fact(line), "{line:?} should be a fact");
        }
        for line in [
            "test parse::ok ... ok",
            "    Finished `test` profile",
            "errors.rs | 4 ++--",
            "src/lib.rs:12:    let error = 3;",
            "src/lib.rs:12:5:fn main() {",
            "2024-01-02 12:00:01 request served",
        ] {
            assert!(!facts.is_fact(line), "{line:?} should not be a fact");
        }
    }

    /// Asserts that every line of `lines` is a fact of `@diagnostics`.
    fn all_facts(lines: &[&str]) {
        let facts = set(&[DIAGNOSTICS_NAME]);
        for line in lines {
            assert!(facts.is_fact(line), "{line:?} should be a fact");
        }
    }

    #[test]
    fn errors_after_a_tool_name_or_inside_a_box_are_facts() {
        all_facts(&[
            "rsync error: some files/attrs were not transferred (see previous errors) (code 23)",
            "collect2: error: ld returned 1 exit status",
            "ninja: error: loading 'build.ninja': No such file or directory",
            "cc1: warning: command-line option '-std=c++17' is valid for C++",
            "PHP Fatal error:  Uncaught Error: Call to undefined function f()",
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/app/x.js'",
            "│ Error: Invalid reference",
            "│ Warning: Argument is deprecated",
            "Error: Process completed with exit code 1.",
        ]);
    }

    #[test]
    fn shell_and_system_call_failures_are_facts() {
        all_facts(&[
            "./build.sh: line 12: jq: command not found",
            "zsh: command not found: jq",
            "sh: 1: ./run: not found",
            "/bin/sh: 3: protoc: not found",
            "sh: 1: ./run: Permission denied",
            "cp: cannot stat 'x': No such file or directory",
            "ls: cannot access 'dist': No such file or directory",
            "mkdir: cannot create directory 'out': File exists",
            "cat: src: Is a directory",
            "rm: cannot remove '/etc/hosts': Operation not permitted",
            "write /var/lib/docker/tmp/x: no space left on device",
            "tar: could not chdir to 'build'",
            "Error: EACCES: permission denied, open '/usr/lib/node_modules/x'",
            "/usr/bin/ld: main.o: in function `main': main.c:(.text+0x9): undefined reference to `f'",
        ]);
    }

    #[test]
    fn build_tool_failures_are_facts() {
        all_facts(&[
            "make: *** No rule to make target 'x'.  Stop.",
            "make[1]: *** [Makefile:20: build] Error 2",
            "gmake[2]: *** [src/CMakeFiles/app.dir/build.make:76: app] Error 1",
            "ninja: build stopped: subcommand failed.",
            "CMake Error at CMakeLists.txt:3 (find_package):",
        ]);
    }

    #[test]
    fn network_failures_are_facts() {
        all_facts(&[
            "curl: (22) The requested URL returned error: 500",
            "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
            "ssh: connect to host db.internal port 22: Connection refused",
            "Permission denied (publickey).",
            "fatal: Could not read from remote repository.",
            "ssh: Could not resolve hostname db.internal: Name or service not known",
            "Host key verification failed.",
            "read: Connection reset by peer",
        ]);
    }

    #[test]
    fn processes_ended_by_a_signal_are_facts() {
        all_facts(&[
            "Killed",
            "Killed: 9",
            "Terminated",
            "Aborted (core dumped)",
            "Segmentation fault (core dumped)",
            "Bus error",
            "./build.sh: line 32: 20597 Killed                  ./scripts/warm_cache.sh",
            "./build.sh: line 29: 20596 Aborted                 ./build/app --selftest",
            "zsh: killed     ./worker",
        ]);
    }

    #[test]
    fn assertions_exceptions_and_panics_are_facts() {
        all_facts(&[
            "Assertion failed: (x), function f, file a.c, line 3.",
            "app: src/main.c:8: main: Assertion `cfg != NULL' failed.",
            "assertion `left == right` failed",
            "java.lang.NullPointerException",
            "Exception in thread \"main\" java.lang.IllegalStateException: closed",
            "Caused by: java.io.FileNotFoundException: /etc/app.conf",
            "app.rb:3:in `run': undefined method `x' for nil (NoMethodError)",
            "Exception: boom",
            "Uncaught exception: connection lost",
            "Traceback (most recent call last):",
            "panic: runtime error: index out of range [3] with length 3",
            "FATAL: password authentication failed for user \"app\"",
            "2024-05-01T10:00:00Z FATAL cannot bind :8080",
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
            "fatal: not a git repository (or any of the parent directories): .git",
        ]);
    }

    #[test]
    fn package_manager_and_ci_errors_are_facts() {
        all_facts(&[
            "npm ERR! code E404",
            "npm error code E404",
            "npm warn deprecated inflight@1.0.6: This module is not supported",
            " ERR_PNPM_FETCH_404  GET https://registry.npmjs.org/left-padd: Not Found - 404",
            "error Command failed with exit code 1.",
            "E: Unable to locate package libfoo-dev",
            "Process completed with exit code 2.",
        ]);
    }

    #[test]
    fn terraform_diagnostic_locations_are_facts() {
        all_facts(&[
            "│   on main.tf line 12, in resource \"aws_s3_bucket\" \"b\":",
            "  on variables.tf line 3:",
        ]);
    }

    #[test]
    fn words_about_errors_are_not_facts() {
        let facts = set(&[DIAGNOSTICS_NAME]);
        for line in [
            "Found 0 errors.",
            "0 errors, 0 warnings",
            "error_count = 0",
            "errors: 0",
            "warnings_as_errors = true",
            "  \"on_error\": \"continue\",",
            "cc -O2 -Wall -Werror -c src/error.c -o build/error.o",
            "gcc -Werror=format-security -Wno-error=unused-variable -c a.c",
            "This release improves error messages and error recovery.",
            "fix: better error reporting when the config is missing",
            "   Compiling error-chain v0.12.4",
            "   Compiling thiserror v1.0.69",
            "test error::tests::reports_permission_denied ... ok",
            "Killed 3 stale worker processes",
            "assertions: 12 passed",
            "Process completed with exit code 0.",
            "Permissions: 0644",
            "│   ├── errors.rs",
            "├─┬ eslint-plugin-error@1.2.0",
            "Note: You didn't use the -out option to save this plan, so Terraform can't",
            "Plan: 12 to add, 0 to change, 0 to destroy.",
            "  <li>Bug fixes: out of memory allocation errors (William Brack), ",
            "  code: 'ERR_ASSERTION'",
        ] {
            assert!(!facts.is_fact(line), "{line:?} should not be a fact");
        }
    }

    #[test]
    fn word_boundaries_become_ascii_and_escapes_stay() {
        assert_eq!(ascii_word_boundaries(r"^go\b"), r"^go(?-u:\b)");
        assert_eq!(ascii_word_boundaries(r"\\b\B\d"), r"\\b(?-u:\B)\d");
        assert_eq!(ascii_word_boundaries("tail\\"), "tail\\");
        let re = compile("t", "fact", r"\bFAIL\b").unwrap();
        assert!(re.is_match("✕ FAIL: x"));
        assert!(!re.is_match("FAILED"));
    }

    #[test]
    fn whole_line_facts_must_appear_as_lines() {
        let facts = set(&["^FAIL .*"]);
        let input = "ok a\nFAIL b\nFAIL c\n";
        assert_eq!(facts.missing(input, "FAIL b\nFAIL c"), Vec::<String>::new());
        assert_eq!(
            facts.missing(input, "FAIL b and FAIL c"),
            ["FAIL b", "FAIL c"]
        );
    }

    #[test]
    fn captured_facts_may_be_reformatted() {
        let facts = set(&["^commit ([0-9a-f]{40})"]);
        let hash = "0123456789abcdef0123456789abcdef01234567";
        let input = format!("commit {hash}\nAuthor: a\n");
        assert!(facts.missing(&input, &format!("{hash} subject")).is_empty());
        assert_eq!(facts.missing(&input, "nothing"), [format!("commit {hash}")]);
    }

    #[test]
    fn bad_patterns_are_invalid_input_naming_the_rule() {
        let err = FactSet::new("mine", &["(".to_owned()]).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidInput);
        assert!(err.message().contains("\"mine\""), "{}", err.message());
        let err = FactSet::new("mine", &["@nope".to_owned()]).unwrap_err();
        assert!(err.message().contains("@nope"), "{}", err.message());
    }
}
