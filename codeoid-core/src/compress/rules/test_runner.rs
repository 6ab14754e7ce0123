//! The `test_runner` family: drop what passed, keep every failure and the summary.
//!
//! Declared almost entirely as data, so one algorithm serves cargo test and nextest, pytest, go
//! test, jest, vitest, mocha, bun, rspec, ExUnit and whatever a user configures. The rule's
//! `drop` patterns name the lines that carry no news (a passing test, a progress line, a build
//! step), each with what it is called in markers. The algorithm keeps every other line, so a
//! failure block of a format nobody anticipated survives whole. Fact lines are kept even when a
//! drop pattern also matches them.
//!
//! With `dedupe_repeats` (the default), a run of lines that each already appeared earlier in the
//! kept output (the same stack frames and advice under every failure of a run where all tests
//! fail for one reason) becomes one marker, when the run is long enough to be worth it. Fact
//! lines are never deduplicated.
//!
//! Returns nothing when no line was dropped or deduplicated.

use std::collections::HashSet;

use regex::Regex;
use serde::Deserialize;

use super::Input;
use crate::compress::elision::{Output, Tally, marker_text};
use crate::compress::facts::compile;
use crate::error::Result;

/// Parameters of the `test_runner` family.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Params {
    /// Lines to elide, with what they are called in markers.
    drop: Vec<DropSpec>,
    /// Elide runs of lines repeated from earlier output.
    dedupe_repeats: bool,
    /// A repeated run is elided only if its lines add up to at least this many bytes.
    min_repeat_bytes: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            drop: Vec::new(),
            dedupe_repeats: true,
            min_repeat_bytes: 100,
        }
    }
}

/// One `drop` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct DropSpec {
    /// Regular expression matched against each line.
    pattern: String,
    /// What such lines are called in the marker, plural: `"passing tests"`.
    what: String,
}

/// Lines shorter than this are never deduplicated: blank lines and short words repeat by nature
/// and a marker would be longer than them.
const MIN_DEDUPE_LINE: usize = 16;

/// A `test_runner` rule ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    any_drop: Option<Regex>,
    drops: Vec<(Regex, String)>,
    dedupe_repeats: bool,
    min_repeat_bytes: usize,
}

impl Compiled {
    /// Compiles the drop patterns of `rule`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the rule and pattern when one does not compile.
    pub(crate) fn new(rule: &str, params: Params) -> Result<Compiled> {
        let drops = params
            .drop
            .iter()
            .map(|d| Ok((compile(rule, "drop", &d.pattern)?, d.what.clone())))
            .collect::<Result<Vec<_>>>()?;
        let any_drop = if drops.is_empty() {
            None
        } else {
            let joined: Vec<String> = params
                .drop
                .iter()
                .map(|d| format!("(?:{})", d.pattern))
                .collect();
            Some(compile(rule, "drop", &joined.join("|"))?)
        };
        Ok(Compiled {
            any_drop,
            drops,
            dedupe_repeats: params.dedupe_repeats,
            min_repeat_bytes: params.min_repeat_bytes,
        })
    }

    pub(crate) fn compress(&self, input: &Input<'_>) -> Option<String> {
        let mut out = Output::with_capacity(input.text.len() / 3);
        let mut tally = Tally::default();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut repeats: Vec<&str> = Vec::new();
        let mut elided_any = false;
        for &line in &input.lines {
            if !input.facts.is_fact(line) {
                if let Some(what) = self.dropped(line) {
                    self.flush_repeats(&mut out, &mut repeats, &mut elided_any);
                    tally.add(what);
                    elided_any = true;
                    continue;
                }
                if self.dedupe_repeats
                    && line.trim().len() >= MIN_DEDUPE_LINE
                    && seen.contains(line)
                {
                    tally.flush(&mut out, indent_of(line));
                    repeats.push(line);
                    continue;
                }
            }
            self.flush_repeats(&mut out, &mut repeats, &mut elided_any);
            tally.flush(&mut out, indent_of(line));
            out.line(line);
            seen.insert(line);
        }
        self.flush_repeats(&mut out, &mut repeats, &mut elided_any);
        tally.flush(&mut out, "");
        elided_any.then(|| out.finish())
    }

    /// What `line` is called if a drop pattern matches it.
    fn dropped(&self, line: &str) -> Option<&str> {
        if !self.any_drop.as_ref()?.is_match(line) {
            return None;
        }
        self.drops
            .iter()
            .find(|(re, _)| re.is_match(line))
            .map(|(_, what)| what.as_str())
    }

    /// Writes a pending run of repeated lines: as one marker when that saves space, else as is.
    fn flush_repeats(&self, out: &mut Output, repeats: &mut Vec<&str>, elided_any: &mut bool) {
        if repeats.is_empty() {
            return;
        }
        let bytes: usize = repeats.iter().map(|l| l.len() + 1).sum();
        let what = if repeats.len() == 1 { "line" } else { "lines" };
        let marker = marker_text(repeats.len(), what, "repeated from earlier output");
        if bytes >= self.min_repeat_bytes && bytes > marker.len() + 1 {
            out.marker_with(
                indent_of(repeats[0]),
                repeats.len(),
                what,
                "repeated from earlier output",
            );
            *elided_any = true;
        } else {
            for line in repeats.iter() {
                out.line(line);
            }
        }
        repeats.clear();
    }
}

/// The leading whitespace of `line`, so a marker sits at the indentation of what it replaces.
fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

#[cfg(test)]
mod tests {
    use super::super::tests::input_for;
    use super::*;

    fn cargo_like() -> Compiled {
        let params: Params = serde_json::from_str(
            r#"{"drop": [
                {"pattern": "^test .* \\.\\.\\. ok$", "what": "passing tests"},
                {"pattern": "^\\s+Compiling ", "what": "build lines"}]}"#,
        )
        .unwrap();
        Compiled::new("cargo-test", params).unwrap()
    }

    #[test]
    fn passing_lines_become_counted_markers_in_place() {
        let text = "   Compiling a v0.1.0\nrunning 4 tests\ntest a ... ok\ntest b ... ok\n\
                    test c ... FAILED\ntest d ... ok\n\ntest result: FAILED. 3 passed; 1 failed";
        let input = input_for(text, &["@diagnostics"]);
        let out = cargo_like().compress(&input).unwrap();
        assert_eq!(
            out,
            "[codeoid: 1 build lines elided]\nrunning 4 tests\n\
             [codeoid: 2 passing tests elided]\ntest c ... FAILED\n\
             [codeoid: 1 passing tests elided]\n\ntest result: FAILED. 3 passed; 1 failed\n"
        );
    }

    #[test]
    fn facts_win_over_drop_patterns() {
        let text = "test warn_me ... ok\ntest quiet ... ok";
        let input = input_for(text, &["warn_me"]);
        let out = cargo_like().compress(&input).unwrap();
        assert_eq!(
            out,
            "test warn_me ... ok\n[codeoid: 1 passing tests elided]\n"
        );
    }

    #[test]
    fn repeated_failure_details_are_deduplicated_but_facts_are_not() {
        let block = |n: u32| {
            format!(
                "  {n}) test case {n}\n     ** (RuntimeError) lazy_html is missing\n     \
                 Please add to your mix.exs: lazy_html\n     stacktrace:\n       \
                 (phoenix 1.1) lib/phoenix/test/dom.ex:13: ensure_loaded!/0\n       \
                 (phoenix 1.1) lib/phoenix/test/live.ex:329: connect/3\n       \
                 test/x_test.exs:{n}: (test)\n"
            )
        };
        let text = format!("{}{}", block(1), block(2));
        let input = input_for(&text, &["RuntimeError"]);
        let out = cargo_like().compress(&input).unwrap();
        assert!(
            out.ends_with(
                "  2) test case 2\n     ** (RuntimeError) lazy_html is missing\n     \
             Please add to your mix.exs: lazy_html\n     stacktrace:\n       \
             [codeoid: 2 lines elided (repeated from earlier output)]\n       \
             test/x_test.exs:2: (test)\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn nothing_to_drop_means_pass_through() {
        let input = input_for("only\nfailures\nhere", &[]);
        assert!(cargo_like().compress(&input).is_none());
    }
}
