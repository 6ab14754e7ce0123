//! The `head_tail` family: the first and last lines, every fact line between them.
//!
//! Used for `cat`/`head`/`tail` of long files and as the fallback for commands no other rule
//! knows. Runs of identical consecutive lines collapse to one line and a count first (a flood of
//! the same warning costs one line); then the first `head` and last `tail` lines are kept, and
//! between them every fact line (errors, warnings…) stays in place while the other lines become
//! markers that give their count and line range, so a reader can ask for exactly those lines.
//! With `after_fact` set, up to that many lines after each fact stay too, up to a blank line: a
//! compiler's `expected String, found i64` and its `help:` follow the `error[E0308]` line, and a
//! traceback's source lines follow its `File "…", line N` lines. A fact inside a box (Terraform
//! draws each diagnostic as `╷`, `│ Error: …`, its body on `│` lines, `╵`) keeps the whole box
//! instead, its edges included, up to [`BOX_LINES`] lines: a Terraform error's explanation
//! comes after a blank `│` line and is often longer than `after_fact`. Those lines are context,
//! not facts: at most `fact_context` of them in all, so a flood of warnings cannot keep
//! everything.
//!
//! Returns nothing when no line would be elided.

use serde::Deserialize;

use super::Input;
use crate::compress::elision::{Output, marker_saves, marker_text, thousands};

/// Parameters of the `head_tail` family.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Params {
    /// Lines kept from the start.
    head: usize,
    /// Lines kept from the end.
    tail: usize,
    /// Identical consecutive lines beyond this many collapse into a count.
    max_repeats: usize,
    /// Lines kept after each fact line, up to the next blank line.
    after_fact: usize,
    /// Most lines kept in all as context after facts.
    fact_context: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            head: 40,
            tail: 40,
            max_repeats: 2,
            after_fact: 0,
            fact_context: 200,
        }
    }
}

/// A run of identical consecutive lines.
struct Run<'a> {
    line: &'a str,
    /// Index of the first line of the run.
    start: usize,
    len: usize,
}

pub(crate) fn compress(params: &Params, input: &Input<'_>) -> Option<String> {
    let runs = runs(&input.lines);
    let collapsed = runs.iter().any(|r| r.len > params.max_repeats.max(1));
    if runs.len() <= params.head + params.tail && !collapsed {
        return None;
    }
    let mut out = Output::with_capacity(input.text.len() / 4);
    let tail_start = runs.len().saturating_sub(params.tail).max(params.head);
    // Runs waiting to be elided, as a range of indexes into `runs`.
    let mut gap: Option<(usize, usize)> = None;
    let mut context = Context::new(params);
    for (index, run) in runs.iter().enumerate() {
        let fact = input.facts.is_fact(run.line);
        let kept_as_context = if fact {
            context.fact(run.line);
            false
        } else {
            context.keeps(run.line)
        };
        let keep = index < params.head || index >= tail_start || fact || kept_as_context;
        if !keep {
            gap = Some(gap.map_or((index, index + 1), |(first, _)| (first, index + 1)));
            continue;
        }
        if let Some((first, mut end)) = gap.take() {
            // A box's top edge, just before the fact that opens it, stays with the box.
            let top = fact && context.in_box() && runs[end - 1].line.trim() == BOX_TOP;
            if top {
                end -= 1;
            }
            close_gap(&mut out, &runs[first..end]);
            if top {
                let edge = &runs[end];
                emit_run_parts(&mut out, edge.line, edge.len, params.max_repeats);
            }
        }
        emit_run_parts(&mut out, run.line, run.len, params.max_repeats);
    }
    if let Some((first, end)) = gap {
        close_gap(&mut out, &runs[first..end]);
    }
    Some(out.finish())
}

/// Most lines of one box kept after the fact that opens it.
const BOX_LINES: usize = 40;

/// The side, top and bottom edges of a Terraform diagnostic box.
const BOX_SIDE: char = '│';
const BOX_TOP: &str = "╷";
const BOX_BOTTOM: &str = "╵";

/// Which lines after a fact stay as its context.
struct Context {
    /// [`Params::after_fact`].
    after_fact: usize,
    /// Lines still to keep after the latest fact, up to a blank line.
    after: usize,
    /// Context lines left in all ([`Params::fact_context`]).
    left: usize,
    /// Lines still to keep of the box the latest fact opened, up to its bottom edge; 0 outside
    /// a box.
    boxed: usize,
}

impl Context {
    fn new(params: &Params) -> Context {
        Context {
            after_fact: params.after_fact,
            after: 0,
            left: params.fact_context,
            boxed: 0,
        }
    }

    /// True while the lines of a box a fact opened are being kept.
    fn in_box(&self) -> bool {
        self.boxed > 0
    }

    /// Starts the context of fact `line`. A fact inside the box of an earlier one (Terraform's
    /// `│   on main.tf line 12` location line) does not lengthen that box.
    fn fact(&mut self, line: &str) {
        if self.after_fact == 0 || !line.trim_start().starts_with(BOX_SIDE) {
            self.boxed = 0;
            self.after = self.after_fact;
            return;
        }
        self.after = 0;
        if self.boxed == 0 {
            self.boxed = BOX_LINES.max(self.after_fact);
        }
    }

    /// True when `line`, not a fact, is kept as context of the latest fact.
    fn keeps(&mut self, line: &str) -> bool {
        if self.left == 0 {
            return false;
        }
        let trimmed = line.trim();
        let keep = if self.boxed > 0 {
            if trimmed.starts_with(BOX_SIDE) {
                self.boxed -= 1;
                true
            } else {
                // The bottom edge closes the box and stays with it; any other line ends it.
                self.boxed = 0;
                trimmed == BOX_BOTTOM
            }
        } else if self.after > 0 && !trimmed.is_empty() {
            self.after -= 1;
            true
        } else {
            self.after = 0;
            false
        };
        if keep {
            self.left -= 1;
        }
        keep
    }
}

/// Writes a marker for `gap`, or its lines (every repeat) when they are no longer than the
/// marker would be.
fn close_gap(out: &mut Output, gap: &[Run<'_>]) {
    let (Some(first), Some(last)) = (gap.first(), gap.last()) else {
        return;
    };
    let (start, end) = (first.start, last.start + last.len);
    let marker = lines_marker_text(start, end);
    let bytes: usize = gap.iter().map(|r| (r.line.len() + 1) * r.len).sum();
    if !marker_saves(&marker, bytes) {
        for run in gap {
            (0..run.len).for_each(|_| out.line(run.line));
        }
    } else {
        out.line(&marker);
    }
}

/// Writes a run: its line up to `max_repeats` times, then a count of the remaining repeats,
/// unless writing those repeats takes no more room than the count.
fn emit_run_parts(out: &mut Output, line: &str, len: usize, max_repeats: usize) {
    let shown = len.min(max_repeats.max(1));
    for _ in 0..shown {
        out.line(line);
    }
    if len == shown {
        return;
    }
    let marker = marker_text(len - shown, REPEATS, "");
    if !marker_saves(&marker, (line.len() + 1) * (len - shown)) {
        (shown..len).for_each(|_| out.line(line));
    } else {
        out.line(&marker);
    }
}

/// What a count of collapsed repeats is a count of.
const REPEATS: &str = "repeats of the line above";

/// `[codeoid: 920 lines elided (output lines 41–960)]`, with 1-based, inclusive numbers of the
/// lines of the output (for `sed -n 300,600p` or `tail`, not the file's line numbers).
fn lines_marker_text(start: usize, end: usize) -> String {
    let detail = format!("output lines {}–{}", thousands(start + 1), thousands(end));
    marker_text(
        end - start,
        if end - start == 1 { "line" } else { "lines" },
        &detail,
    )
}

fn runs<'a>(lines: &[&'a str]) -> Vec<Run<'a>> {
    let mut runs: Vec<Run<'a>> = Vec::new();
    for (index, &line) in lines.iter().enumerate() {
        match runs.last_mut() {
            Some(run) if run.line == line => run.len += 1,
            _ => runs.push(Run {
                line,
                start: index,
                len: 1,
            }),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::super::tests::input_for;
    use super::*;

    fn params(head: usize, tail: usize) -> Params {
        Params {
            head,
            tail,
            ..Params::default()
        }
    }

    #[test]
    fn keeps_head_tail_and_facts_between() {
        let lines: Vec<String> = (1..=100)
            .map(|n| {
                if n == 50 {
                    "error: boom".to_owned()
                } else {
                    format!("line {n}")
                }
            })
            .collect();
        let text = lines.join("\n");
        let input = input_for(&text, &["@diagnostics"]);
        let out = compress(&params(3, 2), &input).unwrap();
        assert_eq!(
            out,
            "line 1\nline 2\nline 3\n[codeoid: 46 lines elided (output lines 4–49)]\nerror: boom\n\
             [codeoid: 48 lines elided (output lines 51–98)]\nline 99\nline 100\n"
        );
    }

    #[test]
    fn lines_after_a_fact_stay_up_to_a_blank_line_and_the_budget() {
        let mut lines: Vec<String> = (1..=40).map(|n| format!("   Compiling unit{n}")).collect();
        lines.extend(
            [
                "error[E0308]: mismatched types",
                "  --> src/main.rs:10:21",
                "   |",
                "10 |     let x: String = 5;",
                "   |            ------   ^ expected `String`, found integer",
                "",
                "   Compiling after",
            ]
            .map(str::to_owned),
        );
        lines.extend((41..=80).map(|n| format!("   Compiling unit{n}")));
        let text = lines.join("\n");
        let input = input_for(&text, &["@diagnostics"]);
        let with = |after_fact, fact_context| Params {
            after_fact,
            fact_context,
            ..params(2, 2)
        };
        let out = compress(&with(6, 200), &input).unwrap();
        assert!(out.contains(
            "  --> src/main.rs:10:21\n   |\n10 |     let x: String = 5;\n   |            ------   ^ \
             expected `String`, found integer\n[codeoid: "
        ));
        assert!(
            !out.contains("Compiling after"),
            "the blank line ends the context"
        );
        // Two lines of context at most: the rest of the block is elided.
        let out = compress(&with(6, 2), &input).unwrap();
        assert!(out.contains("src/main.rs:10:21\n   |\n10 |     let x: String = 5;\n[codeoid: "));
        assert!(!out.contains("expected `String`"));
        // Off: only the facts.
        let out = compress(&with(0, 200), &input).unwrap();
        assert!(out.contains("src/main.rs:10:21\n[codeoid: "), "{out}");
    }

    #[test]
    fn a_boxed_error_keeps_its_whole_box_and_nothing_after() {
        let mut lines: Vec<String> = (1..=40)
            .map(|n| format!("  # data.x[{n}] will be read"))
            .collect();
        let box_lines = [
            "╷",
            "│ Error: Invalid reference",
            "│ ",
            "│   on main.tf line 12, in resource \"aws_s3_bucket\" \"b\":",
            "│   12:   bucket = var.nme",
            "│ ",
            "│ A reference to a resource type must be followed by at least one attribute",
            "│ access, specifying the resource name.",
            "│ ",
            "│ Did you mean var.name?",
            "╵",
        ];
        lines.extend(box_lines.map(str::to_owned));
        lines.extend((41..=80).map(|n| format!("  + tag_{n} = \"x\"")));
        let text = lines.join("\n");
        let input = input_for(&text, &["@diagnostics"]);
        let params = Params {
            after_fact: 3,
            ..params(2, 2)
        };
        let out = compress(&params, &input).unwrap();
        let expected = format!(
            "[codeoid: 38 lines elided (output lines 3–40)]\n{}\n[codeoid: 38 lines elided",
            box_lines.join("\n")
        );
        assert!(out.contains(&expected), "{out}");
        // Without context after facts, only the box's fact lines stay (and the one-line gap
        // between them, shorter than a marker).
        let out = compress(&params_with_after(0), &input).unwrap();
        let facts_only = "41)]\n│ Error: Invalid reference\n│ \n│   on main.tf line 12, in \
                          resource \"aws_s3_bucket\" \"b\":\n[codeoid: ";
        assert!(out.contains(facts_only), "{out}");
        // A box longer than BOX_LINES keeps its first BOX_LINES lines after the fact.
        let mut long = vec!["│ Error: Too long".to_owned()];
        long.extend((0..100).map(|n| format!("│ line {n:03} of the explanation")));
        long.push("╵".to_owned());
        let text = format!(
            "{}\n{}\n{}",
            "head\n".repeat(3),
            long.join("\n"),
            "tail\n".repeat(3)
        );
        let out = compress(&params, &input_for(&text, &["@diagnostics"])).unwrap();
        assert!(
            out.contains(&format!("│ line {:03} of", BOX_LINES - 1)),
            "{out}"
        );
        assert!(!out.contains(&format!("│ line {BOX_LINES:03} of")), "{out}");
    }

    fn params_with_after(after_fact: usize) -> Params {
        Params {
            after_fact,
            ..params(2, 2)
        }
    }

    #[test]
    fn short_output_without_repeats_is_left_alone() {
        let input = input_for("a\nb\nc", &[]);
        assert!(compress(&params(2, 2), &input).is_none());
    }

    #[test]
    fn repeated_lines_collapse_with_their_count() {
        let text = format!("start\n{}end", "same\n".repeat(1000));
        let input = input_for(&text, &[]);
        let out = compress(&params(10, 10), &input).unwrap();
        assert_eq!(
            out,
            "start\nsame\nsame\n[codeoid: 998 repeats of the line above elided]\nend\n"
        );
    }

    #[test]
    fn a_marker_never_replaces_fewer_bytes_than_it_takes() {
        // Eight repeats of a two-byte line, two shown: the six left (12 bytes) are shorter than
        // their count's marker, so they stay.
        let text = format!("start\n{}end\nz", "x\n".repeat(8));
        let input = input_for(&text, &[]);
        let out = compress(&params(10, 10), &input).unwrap();
        assert_eq!(out, format!("start\n{}end\nz\n", "x\n".repeat(8)));
        // A gap of nine one-byte lines (18 bytes) stays whole: its marker would be longer.
        let short = "abcdefghijk"
            .chars()
            .map(String::from)
            .collect::<Vec<_>>()
            .join("\n");
        let out = compress(&params(1, 1), &input_for(&short, &[])).unwrap();
        assert_eq!(out, format!("{short}\n"));
        // Nine ten-byte lines (99 bytes) take the marker.
        let long = (0..11)
            .map(|i| format!("line {i:05}"))
            .collect::<Vec<_>>()
            .join("\n");
        let out = compress(&params(1, 1), &input_for(&long, &[])).unwrap();
        assert_eq!(
            out,
            "line 00000\n[codeoid: 9 lines elided (output lines 2–10)]\nline 00010\n"
        );
    }
}
