//! Directory listings with limits: the shared writer of the `ls`, `paths` and `tree` families.
//!
//! A listing is a sequence of groups (one per directory), each a header line and entry lines.
//! [`write`] keeps every header up to `max_dirs` directories and entries up to `per_dir` per
//! directory and `max_entries` in all; entries the family marks as always kept (directories,
//! fact lines) do not count against the limits. Every cut leaves a marker with the count and a
//! breakdown by extension, so the counts of files survive even where names do not.
//!
//! This module writes; parsing each command's format is its family's job.

use std::borrow::Cow;

use serde::Deserialize;

use crate::compress::elision::{Output, by_extension, count_of};

/// Parameters of the `ls`, `paths` and `tree` families.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Params {
    /// Entries shown per directory.
    pub(crate) per_dir: usize,
    /// Entries shown in all.
    pub(crate) max_entries: usize,
    /// Directories shown with their header; the rest are counted in one marker.
    pub(crate) max_dirs: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            per_dir: 30,
            max_entries: 300,
            max_dirs: 150,
        }
    }
}

/// One entry of a group.
pub(crate) struct Entry<'a> {
    /// The line as written (without the group's indent).
    pub(crate) text: Cow<'a, str>,
    /// The file name, for the extension breakdown; ends with `/` for a directory.
    pub(crate) name: Cow<'a, str>,
    /// Kept whatever the limits (a directory in `ls -l`, a fact line).
    pub(crate) always: bool,
}

/// One directory's worth of entries.
pub(crate) struct Group<'a> {
    /// The header line, or `None` when the format has none (a plain `ls` of one directory).
    pub(crate) header: Option<Cow<'a, str>>,
    /// Lines written right after the header, never counted or cut (`total 48` in `ls -l`).
    pub(crate) preamble: Vec<&'a str>,
    /// Written before each entry.
    pub(crate) indent: &'static str,
    pub(crate) entries: Vec<Entry<'a>>,
    /// Lines written after the entries (a blank separator in `ls -R`).
    pub(crate) trailer: Vec<&'a str>,
}

/// Writes `groups` within the limits of `params`. Returns whether anything was cut.
pub(crate) fn write(params: &Params, groups: &[Group<'_>], out: &mut Output) -> bool {
    let mut cut = false;
    let mut shown_total = 0usize;
    let mut line = String::new();
    for (index, group) in groups.iter().enumerate() {
        if index >= params.max_dirs {
            let rest = &groups[index..];
            let entries: usize = rest.iter().map(|g| g.entries.len()).sum();
            let names = rest
                .iter()
                .flat_map(|g| g.entries.iter().map(|e| e.name.as_ref()));
            let detail = format!(
                "{}; {}",
                count_of(entries, "entry", "entries"),
                by_extension(names, 6)
            );
            let what = if rest.len() == 1 {
                "more directory"
            } else {
                "more directories"
            };
            out.marker_with("", rest.len(), what, &detail);
            return true;
        }
        if let Some(header) = &group.header {
            out.line(header);
        }
        group.preamble.iter().for_each(|l| out.line(l));
        let mut shown_here = 0usize;
        let mut hidden: Vec<&str> = Vec::new();
        for entry in &group.entries {
            let fits = shown_here < params.per_dir && shown_total < params.max_entries;
            if entry.always || fits {
                line.clear();
                line.push_str(group.indent);
                line.push_str(&entry.text);
                out.line(&line);
                if !entry.always {
                    shown_here += 1;
                    shown_total += 1;
                }
            } else {
                hidden.push(&entry.name);
            }
        }
        if !hidden.is_empty() {
            let what = if hidden.len() == 1 {
                "more entry"
            } else {
                "more entries"
            };
            let detail = by_extension(hidden.iter().copied(), 6);
            out.marker_with(group.indent, hidden.len(), what, &detail);
            cut = true;
        }
        group.trailer.iter().for_each(|l| out.line(l));
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(header: &str, names: &[&'static str]) -> Group<'static> {
        Group {
            header: Some(Cow::Owned(header.to_owned())),
            preamble: Vec::new(),
            indent: "  ",
            entries: names
                .iter()
                .map(|n| Entry {
                    text: Cow::Borrowed(*n),
                    name: Cow::Borrowed(*n),
                    always: n.ends_with('/'),
                })
                .collect(),
            trailer: Vec::new(),
        }
    }

    #[test]
    fn limits_per_directory_total_and_directories() {
        let groups = [
            group("a/", &["1.rs", "2.rs", "sub/", "3.md"]),
            group("b/", &["4.rs", "5.rs"]),
            group("c/", &["6.rs"]),
        ];
        let params = Params {
            per_dir: 2,
            max_entries: 3,
            max_dirs: 2,
        };
        let mut out = Output::default();
        assert!(write(&params, &groups, &mut out));
        assert_eq!(
            out.finish(),
            "a/\n  1.rs\n  2.rs\n  sub/\n  [codeoid: 1 more entry elided (.md 1)]\n\
             b/\n  4.rs\n  [codeoid: 1 more entry elided (.rs 1)]\n\
             [codeoid: 1 more directory elided (1 entry; .rs 1)]\n"
        );
    }

    #[test]
    fn within_limits_nothing_is_cut() {
        let groups = [group("a/", &["1.rs", "2.rs"])];
        let mut out = Output::default();
        assert!(!write(&Params::default(), &groups, &mut out));
        assert_eq!(out.finish(), "a/\n  1.rs\n  2.rs\n");
    }
}
