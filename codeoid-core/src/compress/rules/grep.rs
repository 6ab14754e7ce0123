//! The `grep` family: matches grouped by file, long files and long lines cut.
//!
//! `grep -rn`, `rg`, `ag`, `ack` and `git grep` print `path:line:text` (or `path:text`, and
//! `path-line-text` for context lines), repeating the path on every line. When most lines carry
//! such a prefix, they are grouped: one `path (N matches)` header per file, in order of first
//! appearance, then the lines without the path, indented. Each file shows at most `per_file`
//! lines and the output at most `max_files` files, each cut marked with the count; a note at the
//! top gives the total number of matches and files. Output without path prefixes (a single-file
//! grep) keeps its first `max_plain_lines` lines. Either way, a line longer than `max_line`
//! characters (minified code, data files) is cut with the number of characters elided.
//! Per-file counts (`grep -c`, `rg -c`: `path:N` on every line) are not matches: the files with
//! matches are listed up to `max_files` under the total, and files with none are counted.
//!
//! Returns nothing when nothing is cut and there are no prefixes to factor out.

use std::collections::HashMap;

use serde::Deserialize;

use regex::Regex;

use super::{Input, grep_query};
use crate::compress::elision::{Output, by_extension, count_of, thousands};

/// Parameters of the `grep` family.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Params {
    /// Lines shown per file.
    per_file: usize,
    /// Files shown.
    max_files: usize,
    /// Lines shown when the output has no path prefixes.
    max_plain_lines: usize,
    /// Longest line shown whole, in characters.
    max_line: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            per_file: 20,
            max_files: 100,
            max_plain_lines: 150,
            max_line: 300,
        }
    }
}

/// The path a `path:…` line starts with, when it looks like one: no whitespace, not empty.
fn colon_path(line: &str) -> Option<&str> {
    let (path, _) = line.split_once(':')?;
    let plausible = !path.is_empty()
        && !path.contains(char::is_whitespace)
        && (path.contains('/') || path.contains('.'));
    plausible.then_some(path)
}

struct FileGroup<'a> {
    path: &'a str,
    /// Lines with the path removed (`12:text`, `13-text`).
    lines: Vec<&'a str>,
    matches: usize,
}

pub(crate) fn compress(params: &Params, input: &Input<'_>) -> Option<String> {
    let lines: Vec<&str> = input.lines.iter().copied().filter(|l| *l != "--").collect();
    if lines.is_empty() {
        return None;
    }
    if let Some(counted) = counts_of(&lines) {
        return counts(params, &counted, input);
    }
    let prefixed = (0..lines.len())
        .filter(|&n| colon_path(lines[n]).is_some() || context_path(&lines, n).is_some())
        .count();
    if prefixed * 5 >= lines.len() * 4 {
        grouped(params, &lines, input)
    } else {
        plain(params, &lines, input)
    }
}

/// `grep -c` / `rg -c` output, `path:count` on every line, as `(line, count)`; `None` for
/// any other output.
fn counts_of<'a>(lines: &[&'a str]) -> Option<Vec<(&'a str, u64)>> {
    if lines.len() < 2 {
        return None;
    }
    lines
        .iter()
        .map(|&line| {
            let path = colon_path(line)?;
            let count = &line[path.len() + 1..];
            let count = count
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| count.parse::<u64>().ok())??;
            Some((line, count))
        })
        .collect()
}

/// Per-file counts: the files with matches, up to `max_files`, under a note with the total;
/// files with none (`grep -c` lists them with 0) are counted, not shown.
fn counts(params: &Params, counted: &[(&str, u64)], input: &Input<'_>) -> Option<String> {
    let with: Vec<&(&str, u64)> = counted.iter().filter(|(_, n)| *n > 0).collect();
    let none = counted.len() - with.len();
    if none == 0 && with.len() <= params.max_files {
        return None;
    }
    let total: u64 = with.iter().map(|(_, n)| n).sum();
    let mut out = Output::with_capacity(input.text.len() / 2);
    out.note(&format!(
        "{} in {}",
        count_of(
            usize::try_from(total).unwrap_or(usize::MAX),
            "match",
            "matches"
        ),
        count_of(with.len(), "file", "files")
    ));
    for (line, _) in with.iter().take(params.max_files) {
        out.line(line);
    }
    if with.len() > params.max_files {
        let rest = &with[params.max_files..];
        let matches: u64 = rest.iter().map(|(_, n)| n).sum();
        let detail = count_of(
            usize::try_from(matches).unwrap_or(usize::MAX),
            "match",
            "matches",
        );
        let what = if rest.len() == 1 {
            "more file with matches"
        } else {
            "more files with matches"
        };
        out.marker_with("", rest.len(), what, &detail);
    }
    if none > 0 {
        let what = if none == 1 {
            "file without a match"
        } else {
            "files without a match"
        };
        out.marker("", none, what);
    }
    Some(out.finish())
}

fn grouped(params: &Params, lines: &[&str], input: &Input<'_>) -> Option<String> {
    let mut groups: Vec<FileGroup<'_>> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut loose: Vec<(usize, &str)> = Vec::new();
    for (n, &line) in lines.iter().enumerate() {
        // A context line `path-12-text` belongs to the file of the nearest match line.
        let (path, rest, is_match) = match colon_path(line) {
            Some(path) => (path, &line[path.len() + 1..], true),
            None => match context_path(lines, n) {
                Some(path) => (path, &line[path.len() + 1..], false),
                None => {
                    loose.push((groups.len(), line));
                    continue;
                }
            },
        };
        let at = *index.entry(path).or_insert_with(|| {
            groups.push(FileGroup {
                path,
                lines: Vec::new(),
                matches: 0,
            });
            groups.len() - 1
        });
        groups[at].lines.push(rest);
        groups[at].matches += usize::from(is_match);
    }
    let total: usize = groups.iter().map(|g| g.matches).sum();
    let mut out = Output::with_capacity(input.text.len() / 2);
    out.note(&format!(
        "{} in {}",
        count_of(total, "match", "matches"),
        count_of(groups.len(), "file", "files")
    ));
    let mut loose = loose.into_iter().peekable();
    let mut cutter = LineCutter::new(params.max_line, input.command);
    for (n, group) in groups.iter().enumerate() {
        while let Some((_, line)) = loose.next_if(|(before, _)| *before <= n) {
            cutter.write(&mut out, "", line);
        }
        if n == params.max_files {
            let rest = &groups[n..];
            let matches: usize = rest.iter().map(|g| g.matches).sum();
            let detail = format!(
                "{}; {}",
                count_of(matches, "match", "matches"),
                by_extension(rest.iter().map(|g| g.path), 6)
            );
            out.marker_with(
                "",
                rest.len(),
                if rest.len() == 1 {
                    "more file"
                } else {
                    "more files"
                },
                &detail,
            );
            break;
        }
        out.line(&format!(
            "{} ({})",
            group.path,
            count_of(group.matches, "match", "matches")
        ));
        for line in group.lines.iter().take(params.per_file) {
            cutter.write(&mut out, "  ", line);
        }
        if group.lines.len() > params.per_file {
            let hidden = group.lines.len() - params.per_file;
            out.marker(
                "  ",
                hidden,
                if hidden == 1 {
                    "more line"
                } else {
                    "more lines"
                },
            );
        }
    }
    for (_, line) in loose {
        cutter.write(&mut out, "", line);
    }
    Some(out.finish())
}

/// For a line that is not `path:…`, the path of the closest match line above or below whose
/// path it starts with, followed by `-` (grep's context line form).
fn context_path<'a>(lines: &[&'a str], n: usize) -> Option<&'a str> {
    let line = lines[n];
    let nearest = lines[..n]
        .iter()
        .rev()
        .chain(lines[n + 1..].iter())
        .take(64)
        .filter_map(|l| colon_path(l));
    for path in nearest {
        if line.len() > path.len() && line.starts_with(path) && line[path.len()..].starts_with('-')
        {
            return Some(path);
        }
    }
    None
}

fn plain(params: &Params, lines: &[&str], input: &Input<'_>) -> Option<String> {
    let long = lines.iter().any(|l| l.chars().count() > params.max_line);
    if lines.len() <= params.max_plain_lines && !long {
        return None;
    }
    let mut out = Output::with_capacity(input.text.len() / 2);
    let mut cutter = LineCutter::new(params.max_line, input.command);
    for line in lines.iter().take(params.max_plain_lines) {
        cutter.write(&mut out, "", line);
    }
    if lines.len() > params.max_plain_lines {
        let hidden = lines.len() - params.max_plain_lines;
        out.marker(
            "",
            hidden,
            if hidden == 1 {
                "more line"
            } else {
                "more lines"
            },
        );
    }
    out.note(&format!(
        "{} in all",
        count_of(lines.len(), "line", "lines")
    ));
    Some(out.finish())
}

/// Writes match lines, cutting those longer than `max_line` characters: after their first
/// `max_line` characters, or, when the command's match lies beyond those, as their first third
/// and a window that shows the match, with the characters elided on each side counted.
struct LineCutter<'c> {
    max_line: usize,
    command: &'c str,
    /// The command's patterns, compiled at the first long line.
    query: Option<Vec<Regex>>,
    buf: String,
}

impl<'c> LineCutter<'c> {
    fn new(max_line: usize, command: &'c str) -> LineCutter<'c> {
        LineCutter {
            max_line,
            command,
            query: None,
            buf: String::new(),
        }
    }

    /// Writes `indent` + `line`, cut as the type says.
    fn write(&mut self, out: &mut Output, indent: &str, line: &str) {
        self.buf.clear();
        self.buf.push_str(indent);
        let Some((cut_at, _)) = line.char_indices().nth(self.max_line) else {
            self.buf.push_str(line);
            out.line(&self.buf);
            return;
        };
        // The first match, when it does not end within the characters a plain cut keeps.
        let far_match = self
            .query
            .get_or_insert_with(|| grep_query::query(self.command))
            .iter()
            .filter_map(|re| re.find(line))
            .min_by_key(|m| m.start())
            .filter(|m| m.end() > cut_at);
        match far_match {
            Some(m) => self.around(line, m.start()),
            None => {
                self.buf.push_str(&line[..cut_at]);
                elided(&mut self.buf, line[cut_at..].chars().count(), " more");
            }
        }
        out.line(&self.buf);
    }

    /// Appends `line`'s first third and a window around the match at byte `at`.
    fn around(&mut self, line: &str, at: usize) {
        let total = line.chars().count();
        let head = self.max_line / 3;
        let matched = line[..at].chars().count();
        let start = matched.saturating_sub(self.max_line / 6).max(head);
        let end = (start + self.max_line - head).min(total);
        let byte = |chars: usize| {
            line.char_indices()
                .nth(chars)
                .map_or(line.len(), |(b, _)| b)
        };
        self.buf.push_str(&line[..byte(head)]);
        elided(&mut self.buf, start - head, "");
        self.buf.push('…');
        self.buf.push_str(&line[byte(start)..byte(end)]);
        if end < total {
            elided(&mut self.buf, total - end, " more");
        }
    }
}

/// Appends ` …[codeoid: N{more} characters elided]`.
fn elided(buf: &mut String, chars: usize, more: &str) {
    buf.push_str(" …[codeoid: ");
    buf.push_str(&thousands(chars));
    buf.push_str(more);
    buf.push_str(" characters elided]");
}

#[cfg(test)]
mod tests {
    use super::super::tests::input_for;
    use super::*;

    fn small() -> Params {
        Params {
            per_file: 2,
            max_files: 2,
            max_plain_lines: 2,
            max_line: 20,
        }
    }

    #[test]
    fn per_file_counts_add_up_and_files_without_matches_are_counted() {
        let text = "src/a.rs:2\nsrc/b.rs:0\nsrc/c.rs:4\nsrc/d.rs:1\nsrc/e.rs:0\n";
        let out = compress(&small(), &input_for(text, &[])).unwrap();
        assert_eq!(
            out,
            "[codeoid: 7 matches in 3 files]\nsrc/a.rs:2\nsrc/c.rs:4\n\
             [codeoid: 1 more file with matches elided (1 match)]\n\
             [codeoid: 2 files without a match elided]\n"
        );
        // Counts alone with nothing to leave out pass through.
        assert!(compress(&small(), &input_for("a.rs:1\nb.rs:3\n", &[])).is_none());
    }

    #[test]
    fn matches_are_grouped_by_file_with_counts() {
        let text = "src/a.rs:1:fn a()\nsrc/a.rs:5:fn b()\nsrc/b.rs:3:fn c()\nsrc/a.rs:9:fn d()\n\
                    lib/c.py:1:def x\nREADME.md:2:# fn\n";
        let out = compress(&small(), &input_for(text, &[])).unwrap();
        assert_eq!(
            out,
            "[codeoid: 6 matches in 4 files]\nsrc/a.rs (3 matches)\n  1:fn a()\n  5:fn b()\n  \
             [codeoid: 1 more line elided]\nsrc/b.rs (1 match)\n  3:fn c()\n\
             [codeoid: 2 more files elided (2 matches; .md 1, .py 1)]\n"
        );
    }

    #[test]
    fn context_lines_join_their_file() {
        let text = "src/a-b.rs-1-before\nsrc/a-b.rs:2:hit\nsrc/a-b.rs-3-after\n--\nx.rs:7:hit\n";
        let params = Params {
            per_file: 10,
            ..Params::default()
        };
        let out = compress(&params, &input_for(text, &[])).unwrap();
        assert_eq!(
            out,
            "[codeoid: 2 matches in 2 files]\nsrc/a-b.rs (1 match)\n  1-before\n  2:hit\n  3-after\n\
             x.rs (1 match)\n  7:hit\n"
        );
    }

    #[test]
    fn plain_output_and_long_lines_are_cut() {
        let text = "short\nthis line is much longer than twenty characters\nthird\n";
        let out = compress(&small(), &input_for(text, &[])).unwrap();
        assert_eq!(
            out,
            "short\nthis line is much lo …[codeoid: 27 more characters elided]\n\
             [codeoid: 1 more line elided]\n[codeoid: 3 lines in all]\n"
        );
        assert!(compress(&Params::default(), &input_for("a: b\nc\n", &[])).is_none());
    }

    proptest::proptest! {
        #[test]
        fn a_match_in_a_long_line_is_always_shown(
            prefix in "[a-zé€ ]{0,400}",
            suffix in "[a-zé€ ]{0,400}",
            max_line in 36usize..300,
        ) {
            let text = format!("f.json:{prefix}needle{suffix}\ng.json:x\n");
            let mut input = input_for(&text, &[]);
            input.command = "grep -rn needle .";
            let params = Params { max_line, ..Params::default() };
            if let Some(out) = compress(&params, &input) {
                proptest::prop_assert!(out.contains("needle"), "{}", out);
            }
        }
    }

    #[test]
    fn a_long_line_is_cut_around_a_match_beyond_its_start() {
        let json = format!("{{{}\"needle\": 1, \"z\": 2}}", "\"key\": 0, ".repeat(20));
        let text = format!("conf/a.json:{json}\nconf/b.json:{json}\nconf/c.json:short needle\n");
        let mut input = input_for(&text, &[]);
        input.command = "grep -rn needle conf";
        let params = Params {
            max_line: 60,
            ..small()
        };
        let out = compress(&params, &input).unwrap();
        let a = out.lines().nth(2).unwrap();
        assert_eq!(
            a,
            "  {\"key\": 0, \"key\": 0, …[codeoid: 172 characters elided]…key\": 0, \"needle\": \
             1, \"z\": 2}"
        );
        // Without a query the cut is after the first characters, as for a match within them.
        let mut plain = input_for(&text, &[]);
        plain.command = "";
        assert!(
            compress(&params, &plain)
                .unwrap()
                .contains(" …[codeoid: 161 more characters elided]")
        );
    }
}
