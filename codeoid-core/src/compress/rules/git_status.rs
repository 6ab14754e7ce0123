//! The `git_status` family: every tracked change kept, long untracked lists elided.
//!
//! Reads the long format (`git status`), the short format (`git status -s`, `--porcelain`) and
//! porcelain v2. What an agent needs from a status is which files changed and how, so every
//! staged, unstaged and unmerged entry and every branch line stays exactly as printed, however
//! many there are. Two things go:
//! - an untracked list longer than `untracked_keep` entries keeps its first entries and ends with
//!   a marker giving how many more there are, by extension;
//! - the `(use "git …")` advice lines, counted in one marker at the end.
//!
//! Returns nothing when nothing was elided.

use serde::Deserialize;

use super::Input;
use crate::compress::elision::{Output, by_extension, count_of};

/// Parameters of the `git_status` family.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Params {
    /// Untracked entries kept in each untracked list.
    untracked_keep: usize,
    /// Drop the `(use "git …")` advice lines.
    drop_advice: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            untracked_keep: 20,
            drop_advice: true,
        }
    }
}

/// The untracked path of `line`, if it is an untracked entry of the format being read.
fn untracked_path(line: &str, in_untracked_section: bool) -> Option<&str> {
    if in_untracked_section {
        if let Some(path) = line.strip_prefix('\t') {
            return Some(path);
        }
    }
    line.strip_prefix("?? ").or_else(|| line.strip_prefix("? "))
}

fn is_advice(line: &str) -> bool {
    let trimmed = line.trim();
    line.starts_with("  ") && trimmed.starts_with('(') && trimmed.ends_with(')')
}

pub(crate) fn compress(params: &Params, input: &Input<'_>) -> Option<String> {
    let mut out = Output::with_capacity(input.text.len() / 3);
    let mut in_untracked_section = false;
    let mut untracked: Vec<&str> = Vec::new();
    let mut indent = "";
    let mut advice = 0usize;
    let mut elided_untracked = false;
    for &line in &input.lines {
        if let Some(path) = untracked_path(line, in_untracked_section) {
            if !input.facts.is_fact(line) {
                if untracked.is_empty() {
                    indent = if line.starts_with('\t') { "\t" } else { "" };
                }
                untracked.push(path);
                if untracked.len() <= params.untracked_keep {
                    out.line(line);
                }
                continue;
            }
        }
        elided_untracked |=
            flush_untracked(&mut out, &mut untracked, indent, params.untracked_keep);
        if !line.starts_with('\t') && !line.starts_with(' ') {
            // A section header (or anything unindented) ends the previous section.
            in_untracked_section = line == "Untracked files:" || line == "Ignored files:";
        }
        if params.drop_advice && is_advice(line) && !input.facts.is_fact(line) {
            advice += 1;
            continue;
        }
        out.line(line);
    }
    elided_untracked |= flush_untracked(&mut out, &mut untracked, indent, params.untracked_keep);
    if advice > 0 {
        out.marker(
            "",
            advice,
            if advice == 1 {
                "git advice line"
            } else {
                "git advice lines"
            },
        );
    }
    (elided_untracked || advice > 0).then(|| out.finish())
}

/// Ends an untracked list: a marker for the entries beyond `keep`. Returns whether it elided.
fn flush_untracked(out: &mut Output, untracked: &mut Vec<&str>, indent: &str, keep: usize) -> bool {
    let elided = untracked.len().saturating_sub(keep);
    if elided > 0 {
        let detail = format!(
            "{} in all; {}",
            count_of(untracked.len(), "untracked path", "untracked paths"),
            by_extension(untracked[keep..].iter().copied(), 6)
        );
        let what = if elided == 1 {
            "more untracked path"
        } else {
            "more untracked paths"
        };
        out.marker_with(indent, elided, what, &detail);
    }
    untracked.clear();
    elided > 0
}

#[cfg(test)]
mod tests {
    use super::super::tests::input_for;
    use super::*;

    const FACTS: &[&str] = &[
        r"^\t(?:modified|new file|deleted|renamed):\s+.+$",
        r"^[MADRCU ][MADRCU ] \S",
    ];

    #[test]
    fn long_format_keeps_every_change_and_elides_untracked_tail() {
        let mut text = String::from(
            "On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n",
        );
        for n in 0..5 {
            text.push_str(&format!("\tmodified:   src/m{n}.rs\n"));
        }
        text.push_str("\nUntracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n");
        for n in 0..30 {
            text.push_str(&format!("\tnew/u{n}.txt\n"));
        }
        text.push_str("\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n");
        let input = input_for(&text, FACTS);
        let params = Params {
            untracked_keep: 2,
            drop_advice: true,
        };
        let out = compress(&params, &input).unwrap();
        for n in 0..5 {
            assert!(out.contains(&format!("\tmodified:   src/m{n}.rs\n")));
        }
        assert!(
            out.contains(
                "\tnew/u0.txt\n\tnew/u1.txt\n\t[codeoid: 28 more untracked paths elided \
             (30 untracked paths in all; .txt 28)]\n\nno changes added"
            ),
            "{out}"
        );
        assert!(
            out.ends_with("[codeoid: 2 git advice lines elided]\n"),
            "{out}"
        );
        assert!(input.facts.missing(&text, &out).is_empty());
    }

    #[test]
    fn short_format_elides_untracked_only() {
        let mut text = String::from("## main...origin/main\n M a.rs\nA  b.rs\n");
        for n in 0..10 {
            text.push_str(&format!("?? junk{n}.log\n"));
        }
        let input = input_for(&text, FACTS);
        let params = Params {
            untracked_keep: 3,
            drop_advice: true,
        };
        let out = compress(&params, &input).unwrap();
        assert_eq!(
            out,
            "## main...origin/main\n M a.rs\nA  b.rs\n?? junk0.log\n?? junk1.log\n?? junk2.log\n\
             [codeoid: 7 more untracked paths elided (10 untracked paths in all; .log 7)]\n"
        );
    }

    #[test]
    fn nothing_to_elide_is_pass_through() {
        let input = input_for("## main\n M a.rs\n?? b\n", FACTS);
        assert!(compress(&Params::default(), &input).is_none());
    }
}
