//! The `test_runner` family: drop what passed, keep every failure and the summary.
//!
//! Declared almost entirely as data, so one algorithm serves cargo test and nextest, pytest, go
//! test, jest, vitest, mocha, bun, rspec, ExUnit and whatever a user configures. The rule's
//! `drop` patterns name the lines that carry no news (a passing test, a progress line, a build
//! step), each with what it is called in markers. The algorithm keeps every other line, so a
//! failure block of a format nobody anticipated survives whole. Fact lines are kept even when a
//! drop pattern also matches them. A drop pattern marked `heading` (`=== RUN TestX`) drops its
//! line only when the next line is dropped too: output a test printed keeps its test's name.
//!
//! With `dedupe_repeats` (the default), a run of lines that each already appeared earlier in the
//! kept output (the same stack frames and advice under every failure of a run where all tests
//! fail for one reason) becomes one marker, when it holds at least `min_repeat_lines` lines that
//! are not short and `min_repeat_bytes` bytes. Fact lines are never deduplicated.
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
    /// Multi-line blocks to elide (a passing TAP test and its YAML details).
    drop_blocks: Vec<BlockSpec>,
    /// Elide runs of lines repeated from earlier output.
    dedupe_repeats: bool,
    /// A repeated run is elided only if its lines add up to at least this many bytes.
    min_repeat_bytes: usize,
    /// ... and only if it has at least this many lines that are not short.
    min_repeat_lines: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            drop: Vec::new(),
            drop_blocks: Vec::new(),
            dedupe_repeats: true,
            min_repeat_bytes: 100,
            min_repeat_lines: 2,
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
    /// A heading (`=== RUN TestX`, pytest's `path::test ` before a test's own output): dropped
    /// only when the line after it is dropped too, so the output a test printed keeps the name
    /// of the test that printed it.
    #[serde(default)]
    heading: bool,
}

/// One `drop_blocks` entry: from a line matching `start` through the next line matching `end`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockSpec {
    /// Regular expression for the first line of a block.
    start: String,
    /// Regular expression for the last line of a block.
    end: String,
    /// What one block is called in the marker, plural.
    what: String,
    /// A block longer than this is not a block (its end is missing): only the start line is
    /// treated as an ordinary line.
    #[serde(default = "default_block_lines")]
    max_lines: usize,
}

fn default_block_lines() -> usize {
    40
}

/// Counts a waiting heading as dropped: the line after it was not kept.
fn drop_heading(heading: &mut Option<(&str, &str)>, tally: &mut Tally, elided_any: &mut bool) {
    if let Some((_, what)) = heading.take() {
        tally.add(what);
        *elided_any = true;
    }
}

/// A compiled `drop_blocks` entry.
#[derive(Debug, Clone)]
struct Block {
    start: Regex,
    end: Regex,
    what: String,
    max_lines: usize,
}

/// Lines shorter than this (trimmed) do not count towards a repeated run: blank lines and `},`
/// repeat by nature. They are elided only inside a run of longer repeated lines.
const MIN_DEDUPE_LINE: usize = 16;

/// A `test_runner` rule ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    any_drop: Option<Regex>,
    /// Each drop pattern, what it drops and whether it is a heading.
    drops: Vec<(Regex, String, bool)>,
    blocks: Vec<Block>,
    dedupe_repeats: bool,
    min_repeat_bytes: usize,
    min_repeat_lines: usize,
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
            .map(|d| {
                Ok((
                    compile(rule, "drop", &d.pattern)?,
                    d.what.clone(),
                    d.heading,
                ))
            })
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
        let blocks = params
            .drop_blocks
            .iter()
            .map(|b| {
                Ok(Block {
                    start: compile(rule, "block start", &b.start)?,
                    end: compile(rule, "block end", &b.end)?,
                    what: b.what.clone(),
                    max_lines: b.max_lines,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Compiled {
            any_drop,
            drops,
            blocks,
            dedupe_repeats: params.dedupe_repeats,
            min_repeat_bytes: params.min_repeat_bytes,
            min_repeat_lines: params.min_repeat_lines,
        })
    }

    pub(crate) fn compress(&self, input: &Input<'_>) -> Option<String> {
        let mut out = Output::with_capacity(input.text.len() / 3);
        let mut tally = Tally::default();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut repeats: Vec<&str> = Vec::new();
        let mut elided_any = false;
        // A heading waiting for the line after it: shown before a kept line, else dropped.
        let mut heading: Option<(&str, &str)> = None;
        let lines = &input.lines;
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            i += 1;
            if !input.facts.is_fact(line) {
                if let Some((what, len)) = self.block_at(&lines[i - 1..], input) {
                    self.flush_repeats(&mut out, &mut repeats, &mut elided_any);
                    drop_heading(&mut heading, &mut tally, &mut elided_any);
                    tally.add(what);
                    elided_any = true;
                    i += len - 1;
                    continue;
                }
                if let Some((what, is_heading)) = self.dropped(line) {
                    self.flush_repeats(&mut out, &mut repeats, &mut elided_any);
                    drop_heading(&mut heading, &mut tally, &mut elided_any);
                    if is_heading {
                        heading = Some((line, what));
                    } else {
                        tally.add(what);
                        elided_any = true;
                    }
                    continue;
                }
                if self.dedupe_repeats && seen.contains(line) {
                    drop_heading(&mut heading, &mut tally, &mut elided_any);
                    tally.flush(&mut out, indent_of(line));
                    repeats.push(line);
                    continue;
                }
            }
            self.flush_repeats(&mut out, &mut repeats, &mut elided_any);
            let first = heading.map_or(line, |(shown, _)| shown);
            tally.flush(&mut out, indent_of(first));
            if let Some((shown, _)) = heading.take() {
                out.line(shown);
                seen.insert(shown);
            }
            out.line(line);
            seen.insert(line);
        }
        self.flush_repeats(&mut out, &mut repeats, &mut elided_any);
        drop_heading(&mut heading, &mut tally, &mut elided_any);
        tally.flush(&mut out, "");
        elided_any.then(|| out.finish())
    }

    /// When `lines` starts with a droppable block (no fact line inside): what it is called and
    /// how many lines it has.
    fn block_at(&self, lines: &[&str], input: &Input<'_>) -> Option<(&str, usize)> {
        let first = lines.first()?;
        let block = self.blocks.iter().find(|b| b.start.is_match(first))?;
        let window = &lines[1..lines.len().min(block.max_lines)];
        let end = window.iter().position(|l| block.end.is_match(l))?;
        let body = &window[..=end];
        if body.iter().any(|l| input.facts.is_fact(l)) {
            return None;
        }
        Some((block.what.as_str(), end + 2))
    }

    /// What `line` is called if a drop pattern matches it, and whether it is a heading.
    fn dropped(&self, line: &str) -> Option<(&str, bool)> {
        if !self.any_drop.as_ref()?.is_match(line) {
            return None;
        }
        self.drops
            .iter()
            .find(|(re, _, _)| re.is_match(line))
            .map(|(_, what, heading)| (what.as_str(), *heading))
    }

    /// Writes a pending run of repeated lines: as one marker when that saves space, else as is.
    fn flush_repeats(&self, out: &mut Output, repeats: &mut Vec<&str>, elided_any: &mut bool) {
        // Short lines (blank lines, `},`) at the edges stay visible, so the marker replaces
        // only the substance and the layout around it survives.
        let is_long = |l: &&str| l.trim().len() >= MIN_DEDUPE_LINE;
        let first = repeats.iter().position(is_long).unwrap_or(repeats.len());
        let last = repeats.iter().rposition(is_long).map_or(first, |n| n + 1);
        let core = &repeats[first..last];
        let long = core.iter().filter(|l| is_long(l)).count();
        let bytes: usize = core.iter().map(|l| l.len() + 1).sum();
        let what = if core.len() == 1 { "line" } else { "lines" };
        let detail = "repeated from earlier output";
        let marker = marker_text(core.len(), what, detail);
        let worth_it = long >= self.min_repeat_lines
            && bytes >= self.min_repeat_bytes
            && bytes > marker.len() + 1;
        if worth_it {
            repeats[..first].iter().for_each(|l| out.line(l));
            out.marker_with(indent_of(core[0]), core.len(), what, detail);
            repeats[last..].iter().for_each(|l| out.line(l));
            *elided_any = true;
        } else {
            repeats.iter().for_each(|l| out.line(l));
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
    fn a_heading_stays_with_the_output_under_it() {
        let params: Params = serde_json::from_str(
            r#"{"drop": [
                {"pattern": "^=== RUN ", "what": "test progress lines", "heading": true},
                {"pattern": "^--- (?:PASS|SKIP): ", "what": "passing tests"}]}"#,
        )
        .unwrap();
        let go = Compiled::new("go-test", params).unwrap();
        let text = "=== RUN   TestQuiet\n--- PASS: TestQuiet (0.00s)\n\
                    === RUN   TestSkipped\n    db_test.go:5: database unavailable\n\
                    --- SKIP: TestSkipped (0.00s)\n\
                    === RUN   TestBad\n    bad_test.go:9: expected 5 rows, got 4\n\
                    --- FAIL: TestBad (0.00s)\n=== RUN   TestLast\n";
        let out = go.compress(&input_for(text, &["@diagnostics"])).unwrap();
        assert_eq!(
            out,
            "[codeoid: 1 test progress lines, 1 passing tests elided]\n\
             === RUN   TestSkipped\n    db_test.go:5: database unavailable\n\
             [codeoid: 1 passing tests elided]\n\
             === RUN   TestBad\n    bad_test.go:9: expected 5 rows, got 4\n\
             --- FAIL: TestBad (0.00s)\n[codeoid: 1 test progress lines elided]\n"
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
             [codeoid: 4 lines elided (repeated from earlier output)]\n       \
             test/x_test.exs:2: (test)\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn blocks_are_dropped_whole_unless_they_hold_a_fact() {
        let params: Params = serde_json::from_str(
            r#"{"drop_blocks": [{"start": "^ok \\d+ - ", "end": "^  \\.\\.\\.$", "what": "passing tests"}]}"#,
        )
        .unwrap();
        let runner = Compiled::new("tap", params).unwrap();
        let text = "ok 1 - a\n  ---\n  duration_ms: 1\n  ...\nnot ok 2 - b\n  ---\n  ...\n\
                    ok 3 - c\n  ---\n  error: boom\n  ...\nok 4 - no end";
        let input = input_for(text, &["@diagnostics"]);
        let out = runner.compress(&input).unwrap();
        assert_eq!(
            out,
            "[codeoid: 1 passing tests elided]\nnot ok 2 - b\n  ---\n  ...\n\
             ok 3 - c\n  ---\n  error: boom\n  ...\nok 4 - no end\n"
        );
    }

    #[test]
    fn nothing_to_drop_means_pass_through() {
        let input = input_for("only\nfailures\nhere", &[]);
        assert!(cargo_like().compress(&input).is_none());
    }
}
