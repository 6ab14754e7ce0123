//! The `git_diff` family: unified diffs with the bulk cut and the map kept.
//!
//! Reads `git diff`, `git show` and `git log -p` output: commit headers, then per file a
//! `diff --git` header, extended headers, and hunks. Kept always: every commit header and
//! message, every file header (so every changed path, rename, mode change and "Binary files
//! differ"), every hunk header, and the totals. Cut, each with a marker that gives the count:
//! - lock files and other generated files (`collapse_files`, simple `*` wildcards on the file
//!   name): all their hunks, with their `+`/`-` line counts;
//! - `GIT binary patch` data;
//! - runs of unchanged context longer than `max_context` (they only occur with `-U<n>` or
//!   `--function-context`): the middle of the run;
//! - hunks still longer than `max_hunk_lines` rows once their context is shortened: first their
//!   context again, to one line around each change, then the middle of the hunk, with its
//!   `+`/`-` counts (shortening first keeps the changed lines of a `-U100` hunk, and the rows
//!   the cut keeps are changes more than context);
//! - the hunks of a file after its first `max_file_lines` rows of hunks (their headers stay).
//!
//! Returns nothing when nothing was cut.

use serde::Deserialize;

use super::Input;
use crate::compress::elision::{Output, count_of, marker_saves, marker_text, thousands};

/// Parameters of the `git_diff` family.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Params {
    /// File names whose hunks are elided (`Cargo.lock`, `*.min.js`).
    collapse_files: Vec<String>,
    /// Longest run of unchanged lines kept whole inside a hunk.
    max_context: usize,
    /// Unchanged lines kept on each side of a change when a run is cut.
    context: usize,
    /// Longest hunk body kept whole.
    max_hunk_lines: usize,
    /// Lines kept from the start of a hunk that is cut.
    hunk_head: usize,
    /// Lines kept from the end of a hunk that is cut.
    hunk_tail: usize,
    /// Hunk lines shown per file before the remaining hunks are reduced to their headers.
    max_file_lines: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            collapse_files: Vec::new(),
            max_context: 8,
            context: 3,
            max_hunk_lines: 80,
            hunk_head: 50,
            hunk_tail: 10,
            max_file_lines: 300,
        }
    }
}

/// One file section of a diff: line indexes into the input.
#[derive(Debug, Default)]
struct FileDiff {
    /// `diff --git` up to the first hunk or binary patch.
    header: (usize, usize),
    /// `GIT binary patch` data.
    binary: Option<(usize, usize)>,
    /// Each hunk: its `@@` line and its body.
    hunks: Vec<(usize, usize, usize)>,
    path: String,
}

/// What the parser found, in order.
enum Section {
    /// Lines outside any file: commit headers, messages, `--stat` blocks.
    Plain(usize, usize),
    File(FileDiff),
}

#[derive(Default)]
struct Totals {
    files: usize,
    added: usize,
    removed: usize,
}

pub(crate) fn compress(params: &Params, input: &Input<'_>) -> Option<String> {
    let lines = &input.lines;
    let sections = parse(lines);
    let mut out = Output::with_capacity(input.text.len() / 2);
    let mut totals = Totals::default();
    let mut cut = false;
    for section in &sections {
        match section {
            Section::Plain(start, end) => lines[*start..*end].iter().for_each(|l| out.line(l)),
            Section::File(file) => {
                totals.files += 1;
                cut |= emit_file(params, lines, file, &mut out, &mut totals);
            }
        }
    }
    if !cut {
        return None;
    }
    out.note(&format!(
        "{} in all, +{} -{} lines",
        count_of(totals.files, "file", "files"),
        thousands(totals.added),
        thousands(totals.removed)
    ));
    Some(out.finish())
}

fn parse(lines: &[&str]) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    let mut plain_start: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !is_file_start(line) {
            plain_start.get_or_insert(i);
            i += 1;
            continue;
        }
        if let Some(start) = plain_start.take() {
            sections.push(Section::Plain(start, i));
        }
        let mut file = FileDiff {
            path: path_of(line),
            ..FileDiff::default()
        };
        let header_start = i;
        i += 1;
        while i < lines.len() && !lines[i].starts_with("@@") && !is_file_start(lines[i]) {
            if lines[i] == "GIT binary patch" {
                break;
            }
            if !is_header_line(lines[i]) {
                break;
            }
            i += 1;
        }
        file.header = (header_start, i);
        if i < lines.len() && lines[i] == "GIT binary patch" {
            let start = i;
            i += 1;
            while i < lines.len() && !is_file_start(lines[i]) && !lines[i].starts_with("commit ") {
                i += 1;
            }
            file.binary = Some((start, i));
        }
        while i < lines.len() && lines[i].starts_with("@@") {
            let header = i;
            i += 1;
            let body_start = i;
            while i < lines.len() && is_hunk_body(lines[i]) {
                i += 1;
            }
            file.hunks.push((header, body_start, i));
        }
        sections.push(Section::File(file));
    }
    if let Some(start) = plain_start {
        sections.push(Section::Plain(start, lines.len()));
    }
    sections
}

fn is_file_start(line: &str) -> bool {
    line.starts_with("diff --git ")
        || line.starts_with("diff --cc ")
        || line.starts_with("diff --combined ")
}

/// Extended header lines git prints between `diff --git` and the first hunk.
fn is_header_line(line: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "index ",
        "--- ",
        "+++ ",
        "old mode ",
        "new mode ",
        "deleted file mode ",
        "new file mode ",
        "copy from ",
        "copy to ",
        "rename from ",
        "rename to ",
        "similarity index ",
        "dissimilarity index ",
        "Binary files ",
    ];
    PREFIXES.iter().any(|p| line.starts_with(p))
}

fn is_hunk_body(line: &str) -> bool {
    matches!(line.as_bytes().first(), Some(b' ' | b'+' | b'-' | b'\\'))
}

/// The new path of a `diff --git a/x b/x` line (or the whole rest when it cannot be split).
fn path_of(line: &str) -> String {
    let rest = line.split_once(' ').map_or(line, |(_, r)| r);
    let rest = rest.split_once(' ').map_or(rest, |(_, r)| r);
    match rest.rfind(" b/") {
        Some(at) => rest[at + 3..].to_owned(),
        None => rest.to_owned(),
    }
}

/// Writes one file; returns whether anything was cut.
fn emit_file(
    params: &Params,
    lines: &[&str],
    file: &FileDiff,
    out: &mut Output,
    totals: &mut Totals,
) -> bool {
    lines[file.header.0..file.header.1]
        .iter()
        .for_each(|l| out.line(l));
    let mut cut = false;
    if let Some((start, end)) = file.binary {
        out.marker(
            "",
            end - start,
            if end - start == 1 {
                "line of binary patch"
            } else {
                "lines of binary patch"
            },
        );
        cut = true;
    }
    let (added, removed) = count_changes(lines, &file.hunks);
    totals.added += added;
    totals.removed += removed;
    if collapsed(params, &file.path) && !file.hunks.is_empty() {
        let detail = format!(
            "{}, +{} -{} lines",
            count_of(file.hunks.len(), "hunk", "hunks"),
            thousands(added),
            thousands(removed)
        );
        let body: usize = file.hunks.iter().map(|(h, _, e)| e - h).sum();
        out.marker_with("", body, "lines of generated-file diff", &detail);
        return true;
    }
    let mut shown = 0usize;
    for &(header, start, end) in &file.hunks {
        out.line(lines[header]);
        let body = &lines[start..end];
        if shown >= params.max_file_lines {
            let (a, r) = count_changes(lines, &[(header, start, end)]);
            let detail = format!(
                "+{} -{}; file has over {} lines of hunks",
                thousands(a),
                thousands(r),
                params.max_file_lines
            );
            out.marker_with("", body.len(), "hunk lines", &detail);
            cut = true;
            continue;
        }
        let (hunk_cut, rows) = emit_hunk(params, body, out);
        shown += rows;
        cut |= hunk_cut;
    }
    cut
}

fn count_changes(lines: &[&str], hunks: &[(usize, usize, usize)]) -> (usize, usize) {
    changes(
        hunks
            .iter()
            .flat_map(|&(_, start, end)| lines[start..end].iter().copied()),
    )
}

/// Added and removed lines among `lines`, by their first byte.
fn changes<'a>(lines: impl IntoIterator<Item = &'a str>) -> (usize, usize) {
    lines.into_iter().fold((0, 0), |(added, removed), line| {
        match line.as_bytes().first() {
            Some(b'+') => (added + 1, removed),
            Some(b'-') => (added, removed + 1),
            _ => (added, removed),
        }
    })
}

/// One row of a hunk as shown: a line, or a run of unchanged lines shortened to a marker.
enum Row<'a> {
    Line(&'a str),
    Unchanged(usize),
}

impl Row<'_> {
    /// The hunk lines this row stands for.
    fn lines(&self) -> usize {
        match self {
            Row::Line(_) => 1,
            Row::Unchanged(n) => *n,
        }
    }
}

/// Writes a hunk body: long runs of unchanged lines shortened first, then the middle cut when
/// what remains is still too long, so the changed lines are what a long hunk keeps. Returns
/// whether anything was cut and how many rows were written.
fn emit_hunk(params: &Params, body: &[&str], out: &mut Output) -> (bool, usize) {
    let (head, tail) = (params.hunk_head, params.hunk_tail);
    let mut rows = shorten_context(params.max_context, params.context, body);
    if rows.len() > params.max_hunk_lines && head + tail < rows.len() {
        // Still too long: one line of context around each change, so the rows the cut keeps
        // hold changes rather than context (a `-U10` hunk of many small edits).
        rows = shorten_context(
            params.max_context.min(TIGHT_MAX_CONTEXT),
            params.context.min(TIGHT_CONTEXT),
            body,
        );
    }
    let shortened = rows.len() < body.len();
    if rows.len() <= params.max_hunk_lines || head + tail >= rows.len() {
        rows.iter().for_each(|row| emit_row(row, out));
        return (shortened, rows.len());
    }
    rows[..head].iter().for_each(|row| emit_row(row, out));
    let middle = &rows[head..rows.len() - tail];
    let (added, removed) = changes(middle.iter().filter_map(|row| match row {
        Row::Line(line) => Some(*line),
        Row::Unchanged(_) => None,
    }));
    let detail = format!("+{} -{}", thousands(added), thousands(removed));
    let count = middle.iter().map(Row::lines).sum();
    out.marker_with("", count, "hunk lines", &detail);
    rows[rows.len() - tail..]
        .iter()
        .for_each(|row| emit_row(row, out));
    (true, head + 1 + tail)
}

fn emit_row(row: &Row<'_>, out: &mut Output) {
    match row {
        Row::Line(line) => out.line(line),
        Row::Unchanged(n) => out.marker("", *n, UNCHANGED),
    }
}

/// Context kept around each change of a hunk that is too long even with `context` lines.
const TIGHT_CONTEXT: usize = 1;

/// Longest run of unchanged lines kept whole in a hunk that is too long even with `context`.
const TIGHT_MAX_CONTEXT: usize = 2;

/// The rows of a hunk body with runs of unchanged lines longer than `max_context` shortened
/// to `context` lines on each side of a marker (none at the hunk's edges), where the marker is
/// shorter than the lines it stands for.
fn shorten_context<'a>(max_context: usize, context: usize, body: &[&'a str]) -> Vec<Row<'a>> {
    let mut rows = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if !body[i].starts_with(' ') {
            rows.push(Row::Line(body[i]));
            i += 1;
            continue;
        }
        let start = i;
        while i < body.len() && body[i].starts_with(' ') {
            i += 1;
        }
        let run = &body[start..i];
        let keep_before = if start == 0 { 0 } else { context };
        let keep_after = if i == body.len() { 0 } else { context };
        let long = run.len() > max_context && run.len() > keep_before + keep_after + 1;
        if long && shorter_as_marker(&run[keep_before..run.len() - keep_after]) {
            rows.extend(run[..keep_before].iter().map(|l| Row::Line(l)));
            rows.push(Row::Unchanged(run.len() - keep_before - keep_after));
            rows.extend(run[run.len() - keep_after..].iter().map(|l| Row::Line(l)));
        } else {
            rows.extend(run.iter().map(|l| Row::Line(l)));
        }
    }
    rows
}

/// Whether a marker for `lines` takes fewer bytes than the lines themselves.
fn shorter_as_marker(lines: &[&str]) -> bool {
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    marker_saves(&marker_text(lines.len(), UNCHANGED, ""), bytes)
}

/// What an [`Row::Unchanged`] marker counts.
const UNCHANGED: &str = "unchanged lines";

fn collapsed(params: &Params, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    params
        .collapse_files
        .iter()
        .any(|pattern| wildcard(pattern, name))
}

/// `*` matches any run of characters; everything else matches itself.
fn wildcard(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return name.is_empty();
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (n, part) in parts.iter().enumerate() {
        if n + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::super::tests::input_for;
    use super::*;

    fn params() -> Params {
        Params {
            collapse_files: vec!["Cargo.lock".into(), "*.min.js".into()],
            max_hunk_lines: 20,
            hunk_head: 5,
            hunk_tail: 3,
            ..Params::default()
        }
    }

    #[test]
    fn wildcards() {
        assert!(wildcard("Cargo.lock", "Cargo.lock"));
        assert!(!wildcard("Cargo.lock", "Cargo.locks"));
        assert!(wildcard("*.min.js", "app.min.js"));
        assert!(!wildcard("*.min.js", "app.js"));
        assert!(wildcard("*lock*", "yarn.lock"));
        assert!(wildcard("a*b*c", "aXbYc"));
        assert!(!wildcard("a*b*c", "aXcYb"));
    }

    #[test]
    fn lock_files_and_long_hunks_are_cut_headers_kept() {
        let mut text = String::from(
            "diff --git a/Cargo.lock b/Cargo.lock\nindex 1..2 100644\n--- a/Cargo.lock\n+++ b/Cargo.lock\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n",
        );
        text.push_str("diff --git a/src/x.rs b/src/x.rs\n--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,0 +1,30 @@ fn x\n");
        for n in 0..30 {
            text.push_str(&format!("+line {n}\n"));
        }
        let input = input_for(&text, &[r"^diff --git .+$"]);
        let out = compress(&params(), &input).unwrap();
        assert!(out.contains("+++ b/Cargo.lock\n[codeoid: 4 lines of generated-file diff elided (1 hunk, +1 -1 lines)]\n"), "{out}");
        assert!(out.contains("@@ -1,0 +1,30 @@ fn x\n+line 0\n"));
        assert!(
            out.contains("+line 4\n[codeoid: 22 hunk lines elided (+22 -0)]\n+line 27\n"),
            "{out}"
        );
        assert!(out.ends_with("[codeoid: 2 files in all, +31 -1 lines]\n"));
        assert!(input.facts.missing(&text, &out).is_empty());
    }

    #[test]
    fn long_context_runs_are_shortened() {
        let mut text =
            String::from("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,25 +1,25 @@\n-x\n+y\n");
        for n in 0..15 {
            text.push_str(&format!(" same {n}\n"));
        }
        text.push_str("-p\n+q\n");
        let input = input_for(&text, &[]);
        let out = compress(&params(), &input).unwrap();
        assert!(
            out.contains(
                "+y\n same 0\n same 1\n same 2\n[codeoid: 9 unchanged lines elided]\n same 12\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn a_wide_context_hunk_keeps_its_changes() {
        // `git diff -U100` of a one-line change in the middle of a 200-line file.
        let mut text = String::from("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,200 +1,200 @@\n");
        for n in 1..=200 {
            if n == 100 {
                text.push_str("-old 100\n+new 100\n");
            } else {
                text.push_str(&format!(" line {n}\n"));
            }
        }
        let input = input_for(&text, &[]);
        let out = compress(&params(), &input).unwrap();
        assert!(
            out.contains(
                " line 99\n-old 100\n+new 100\n line 101\n line 102\n line 103\n\
                 [codeoid: 97 unchanged lines elided]\n"
            ),
            "{out}"
        );
        assert!(out.starts_with(
            "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,200 +1,200 @@\n\
             [codeoid: 96 unchanged lines elided]\n line 97\n"
        ));
    }

    #[test]
    fn a_hunk_of_many_edits_keeps_more_edits_than_context() {
        // `git diff -U10` of twelve one-line edits twelve lines apart: one hunk, where each edit
        // comes with six context rows and a marker at the usual context of three.
        let mut text = String::from("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,156 +1,156 @@\n");
        for n in 1..=156 {
            if n % 13 == 0 {
                text.push_str(&format!("-old {n}\n+new {n}\n"));
            } else {
                text.push_str(&format!(" line {n}\n"));
            }
        }
        let input = input_for(&text, &[]);
        let defaults = Params::default();
        let out = compress(&defaults, &input).unwrap();
        let edits = |out: &str| out.lines().filter(|l| l.starts_with("+new")).count();
        // At three lines of context the hunk takes 105 rows and the cut keeps 6 of its edits;
        // at one line it takes 59, so all 12 show.
        assert_eq!(edits(&out), 12, "{out}");
        assert!(out.contains(" line 12\n-old 13\n+new 13\n line 14\n[codeoid: 10 unchanged lines elided]\n line 25\n-old 26\n"), "{out}");
        assert!(!out.contains("hunk lines elided"), "{out}");
        // A hunk that fits at three lines of context keeps them.
        let short: String = text
            .lines()
            .take(4 + 40)
            .map(|l| format!("{l}\n"))
            .collect();
        let out = compress(&defaults, &input_for(&short, &[])).unwrap();
        assert!(
            out.contains(" line 10\n line 11\n line 12\n-old 13\n"),
            "{out}"
        );
    }

    #[test]
    fn binary_patches_are_elided() {
        let text = "diff --git a/i.png b/i.png\nnew file mode 100644\nindex 0..1\nGIT binary patch\nliteral 10\nzcmeAS@N?\n\nliteral 0\nHcmV?d00001\n\n";
        let input = input_for(text, &[]);
        let out = compress(&params(), &input).unwrap();
        assert_eq!(
            out,
            "diff --git a/i.png b/i.png\nnew file mode 100644\nindex 0..1\n\
             [codeoid: 7 lines of binary patch elided]\n[codeoid: 1 file in all, +0 -0 lines]\n"
        );
    }

    #[test]
    fn small_diffs_pass_through() {
        let text = "commit abcdef1\n\n    msg\n\ndiff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n";
        assert!(compress(&params(), &input_for(text, &[])).is_none());
    }
}
