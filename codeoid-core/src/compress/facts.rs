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

/// Error, warning and failure lines, in the forms compilers, test runners, loggers and shells
/// print them.
pub const DIAGNOSTICS: &[&str] = &[
    // `error: …`, `warning[E0001]: …`, `  Error: …`, `fatal: …` (rustc, cargo, git, npm, go).
    r"(?i)^\s*(?:error|warning|fatal|panic|critical)(?:\[[^\]]*\])?\s*:",
    // Log levels and runner verdicts in capitals: `[ERROR]`, `WARN `, `FAILED`, `npm ERR!`.
    r"(?:^|[^A-Za-z0-9_])(?:ERROR|ERR!|WARN|WARNING|FATAL|CRITICAL|FAILED|FAILURE|FAIL)(?:[^A-Za-z0-9_]|$)",
    // Exception types followed by their message: `ValueError: x`, `java.io.IOException: y`
    // (not Rust paths such as `RecvError::Closed`: the colon must end the word).
    r"\b[A-Z][A-Za-z0-9_]*(?:Error|Exception|Warning):(?:\s|$)",
    r"(?i)\b(?:panicked at|traceback \(most recent call last\)|segmentation fault|core dumped)",
    // A diagnostic after its location, wherever the line starts: `src/a.ts(10,5): error TS2322`,
    // `a.py:3: error: …`, `main.c:3:7: fatal error: …`, eslint's `  12:5  error  …`.
    r"(?i)(?:\S:\d+(?::\d+)?:|\S\(\d+(?:,\d+)?\):|^\s*\d+:\d+)\s+(?:fatal )?(?:error|warning)\b",
    // `file.go:3:2: undefined: Foo`: a file with an extension, line, column and a message.
    r"^\S+\.[A-Za-z0-9]+:\d+:\d+: \S",
    // Where a rustc diagnostic points: `  --> src/lib.rs:3:5`.
    r"^\s*--> \S+:\d+:\d+",
    // A Go test's failure or log line, which comes before its `--- FAIL`: `    a_test.go:7: got 3`.
    r"^[ \t]+[A-Za-z0-9_./-]*_test\.go:[0-9]+: ",
    // A Python traceback's frames: `  File "app.py", line 3, in main`.
    r#"^\s*File ".+", line \d+"#,
    // Exit codes, as shells and harnesses report them.
    r"(?i)^\s*(?:exit (?:code|status)|exited with(?: code)?)[: ]+\d+",
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
