//! How compressed output is written: kept lines, and markers that say what was elided.
//!
//! Every elision leaves a marker on its own line, `[codeoid: {count} {what} elided]`, optionally
//! followed by a detail in parentheses (`(.rs 40, .md 2)`), so a reader always knows what is
//! missing and how much; the raw output itself is one `get_episode` away (see
//! [`super::Compressed::hint`]). [`Output`] builds the text; [`Tally`] counts elided things by
//! kind for markers that cover several kinds at once.
//!
//! This module formats; it never decides what to elide, only whether a marker is shorter than
//! the lines it would stand for ([`marker_saves`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The text a rule builds, line by line.
#[derive(Debug, Default)]
pub(crate) struct Output {
    text: String,
}

impl Output {
    /// An empty output with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Output {
        Output {
            text: String::with_capacity(capacity),
        }
    }

    /// Appends a kept line.
    pub(crate) fn line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// Appends `[codeoid: {count} {what} elided]`, with `indent` before it.
    pub(crate) fn marker(&mut self, indent: &str, count: usize, what: &str) {
        self.marker_with(indent, count, what, "");
    }

    /// Appends `[codeoid: {count} {what} elided ({detail})]`; an empty `detail` is left out.
    pub(crate) fn marker_with(&mut self, indent: &str, count: usize, what: &str, detail: &str) {
        self.text.push_str(indent);
        self.text.push_str(&marker_text(count, what, detail));
        self.text.push('\n');
    }

    /// Appends a free-form `[codeoid: {note}]` line (for statements that are not elisions, such
    /// as a total).
    pub(crate) fn note(&mut self, note: &str) {
        self.text.push_str("[codeoid: ");
        self.text.push_str(note);
        self.text.push_str("]\n");
    }

    /// The finished text.
    pub(crate) fn finish(self) -> String {
        self.text
    }
}

/// `[codeoid: {count} {what} elided ({detail})]` without indent or newline.
pub(crate) fn marker_text(count: usize, what: &str, detail: &str) -> String {
    let mut text = format!("[codeoid: {} {what} elided", thousands(count));
    if !detail.is_empty() {
        let _ = write!(text, " ({detail})");
    }
    text.push(']');
    text
}

/// Whether the marker line `marker` (its newline counted) is shorter than the `bytes` of the
/// lines it would stand for: a marker never replaces lines shorter than itself.
pub(crate) fn marker_saves(marker: &str, bytes: usize) -> bool {
    bytes > marker.len() + 1
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 file`, `2 files`: `plural` is used for every count but one.
pub(crate) fn count_of(n: usize, singular: &str, plural: &str) -> String {
    format!(
        "{} {}",
        thousands(n),
        if n == 1 { singular } else { plural }
    )
}

/// Counts of elided things by kind, in first-seen order, written as one marker.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    kinds: Vec<(String, usize)>,
}

impl Tally {
    /// Counts one more `what`.
    pub(crate) fn add(&mut self, what: &str) {
        match self.kinds.iter_mut().find(|(k, _)| k == what) {
            Some((_, n)) => *n += 1,
            None => self.kinds.push((what.to_owned(), 1)),
        }
    }

    /// Writes the marker(s) and resets the tally: one kind gives `[codeoid: 12 passing tests
    /// elided]`, several give `[codeoid: 12 passing tests, 3 build progress lines elided]`.
    pub(crate) fn flush(&mut self, out: &mut Output, indent: &str) {
        if self.kinds.is_empty() {
            return;
        }
        let parts: Vec<String> = self
            .kinds
            .iter()
            .map(|(what, n)| format!("{} {what}", thousands(*n)))
            .collect();
        out.text.push_str(indent);
        out.text.push_str("[codeoid: ");
        out.text.push_str(&parts.join(", "));
        out.text.push_str(" elided]\n");
        self.kinds.clear();
    }
}

/// A short breakdown of names by extension: `.rs 40, .md 2, no extension 1`, the most common
/// first, at most `max` kinds and then `…`.
pub(crate) fn by_extension<'a>(names: impl IntoIterator<Item = &'a str>, max: usize) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for name in names {
        let base = name.trim_end_matches('/');
        let base = base.rsplit('/').next().unwrap_or(base);
        let kind = if name.ends_with('/') {
            "directories".to_owned()
        } else {
            extension(base).map_or_else(|| "no extension".to_owned(), |e| format!(".{e}"))
        };
        *counts.entry(kind).or_default() += 1;
    }
    let mut sorted: Vec<(String, usize)> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut parts: Vec<String> = sorted
        .iter()
        .take(max)
        .map(|(kind, n)| format!("{kind} {}", thousands(*n)))
        .collect();
    if sorted.len() > max {
        parts.push("…".to_owned());
    }
    parts.join(", ")
}

/// The extension of a file name: up to eight letters and digits after the last dot, with at
/// least one letter, so `libc.so.6` and `python3.11` count as having none.
fn extension(name: &str) -> Option<&str> {
    let dot = name.rfind('.')?;
    let ext = &name[dot + 1..];
    let plausible = dot > 0
        && (1..=8).contains(&ext.len())
        && ext.bytes().all(|b| b.is_ascii_alphanumeric())
        && ext.bytes().any(|b| b.is_ascii_alphabetic());
    plausible.then_some(ext)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_say_what_and_how_many() {
        let mut out = Output::default();
        out.line("kept");
        out.marker("  ", 1234, "passing tests");
        out.marker_with("", 3, "untracked paths", ".rs 2, .md 1");
        assert_eq!(
            out.finish(),
            "kept\n  [codeoid: 1,234 passing tests elided]\n\
             [codeoid: 3 untracked paths elided (.rs 2, .md 1)]\n"
        );
    }

    #[test]
    fn tally_groups_kinds_in_first_seen_order() {
        let mut tally = Tally::default();
        let mut out = Output::default();
        tally.flush(&mut out, "");
        tally.add("passing tests");
        tally.add("build lines");
        tally.add("passing tests");
        tally.flush(&mut out, "");
        assert!(tally.kinds.is_empty());
        assert_eq!(
            out.finish(),
            "[codeoid: 2 passing tests, 1 build lines elided]\n"
        );
    }

    #[test]
    fn thousands_and_plurals() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(52_428_800), "52,428,800");
        assert_eq!(count_of(1, "file", "files"), "1 file");
        assert_eq!(count_of(2, "file", "files"), "2 files");
    }

    #[test]
    fn extensions_are_counted_most_common_first() {
        let names = [
            "a.rs",
            "b.rs",
            "c.md",
            "Makefile",
            "src/",
            ".gitignore",
            "x/y.rs",
        ];
        assert_eq!(by_extension(names, 3), ".rs 3, no extension 2, .md 1, …");
    }
}
