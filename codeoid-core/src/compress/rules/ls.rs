//! The `ls` family: `ls`, `ls -l`, `ls -R` and `ls dir1 dir2`, with long directories cut.
//!
//! The output is read as sections (one per directory, each opened by a `dir:` header after a
//! blank line, or a single unnamed section), with `total N` lines kept as they are. Entries keep
//! their exact line; directories (a `d` mode in long format, a trailing `/` with `-F`/`-p`) are
//! always kept because they are where the next command goes, and files are cut by the limits of
//! [`super::listing`] with a count by extension. The short form does not mark directories, so
//! there the entries without an extension (`src`, `tests`, `Makefile`) are kept, up to 50 of them
//! per directory.
//!
//! Returns nothing when no limit is reached: `ls` output has no redundancy to remove otherwise.

use std::borrow::Cow;

use super::Input;
use super::listing::{self, Entry, Group, Params};
use crate::compress::elision::Output;

pub(crate) fn compress(params: &Params, input: &Input<'_>) -> Option<String> {
    let groups = sections(input);
    let mut out = Output::with_capacity(input.text.len() / 2);
    listing::write(params, &groups, &mut out).then(|| out.finish())
}

fn sections<'a>(input: &Input<'a>) -> Vec<Group<'a>> {
    let mut groups: Vec<Group<'a>> = Vec::new();
    let mut current = empty_group(None);
    let mut previous_blank = true;
    for &line in &input.lines {
        if line.is_empty() {
            current.trailer.push(line);
            previous_blank = true;
            continue;
        }
        let is_header = previous_blank && line.ends_with(':') && !is_long_entry(line);
        previous_blank = false;
        if is_header {
            if current.header.is_some()
                || !current.entries.is_empty()
                || !current.trailer.is_empty()
            {
                groups.push(std::mem::replace(&mut current, empty_group(Some(line))));
            } else {
                current.header = Some(Cow::Borrowed(line));
            }
            continue;
        }
        if !current.trailer.is_empty() {
            // Text after a blank line that is not a header: a new unnamed section, so the
            // layout stays as printed.
            groups.push(std::mem::replace(&mut current, empty_group(None)));
        }
        if current.entries.is_empty() && line.starts_with("total ") {
            current.preamble.push(line);
            continue;
        }
        let (name, is_dir) = if is_long_entry(line) {
            (long_name(line), line.starts_with('d'))
        } else {
            (line, line.ends_with('/'))
        };
        current.entries.push(Entry {
            text: Cow::Borrowed(line),
            name: if is_dir && !name.ends_with('/') {
                Cow::Owned(format!("{name}/"))
            } else {
                Cow::Borrowed(name)
            },
            always: is_dir || input.facts.is_fact(line),
        });
    }
    groups.push(current);
    for group in &mut groups {
        keep_possible_directories(group);
    }
    groups
}

/// Entries of a short listing without a `/` or an extension that are kept as if directories,
/// at most: more than this (`ls /usr/bin`) are files, cut like the others.
const MAX_POSSIBLE_DIRECTORIES: usize = 50;

/// In the short form (`ls` without `-l`, `-F` or `-p`) nothing marks a directory, and most
/// directories have no extension: such entries are kept, unless there are more of them than a
/// directory listing plausibly holds.
fn keep_possible_directories(group: &mut Group<'_>) {
    // A name ending in `/` is a directory, already kept (`always`).
    let possible: Vec<usize> = (0..group.entries.len())
        .filter(|&i| {
            let entry = &group.entries[i];
            !entry.always
                && !is_long_entry(&entry.text)
                && !entry.name.trim_start_matches('.').contains('.')
        })
        .collect();
    if possible.len() <= MAX_POSSIBLE_DIRECTORIES {
        for i in possible {
            group.entries[i].always = true;
        }
    }
}

fn empty_group(header: Option<&str>) -> Group<'_> {
    Group {
        header: header.map(Cow::Borrowed),
        preamble: Vec::new(),
        indent: "",
        entries: Vec::new(),
        trailer: Vec::new(),
    }
}

/// `drwxr-xr-x 2 user group 4096 Jan 1 12:00 name`: a mode string first.
fn is_long_entry(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes.len() > 11
        && b"-dlcbps".contains(&bytes[0])
        && bytes[1..10].iter().all(|b| b"rwxsStT-".contains(b))
}

/// The name of a long-format entry: everything after the eighth column (and before ` -> ` for
/// a symlink).
fn long_name(line: &str) -> &str {
    let mut rest = line;
    for _ in 0..8 {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        rest = &rest[end..];
    }
    let name = rest.trim_start();
    name.split_once(" -> ").map_or(name, |(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::super::tests::input_for;
    use super::*;

    fn small() -> Params {
        Params {
            per_dir: 2,
            max_entries: 100,
            max_dirs: 10,
        }
    }

    #[test]
    fn long_format_keeps_directories_and_cuts_files() {
        let text = "total 20\n\
            drwxr-xr-x 2 u g 4096 Nov 30 05:59 ast\n\
            -rw-r--r-- 1 u g 3615 Nov 30 05:59 debug.rs\n\
            -rw-r--r-- 1 u g  194 Nov 30 05:59 either.rs\n\
            lrwxrwxrwx 1 u g    5 Nov 30 05:59 link -> ast\n\
            -rw-r--r-- 1 u g 10511 Nov 30 05:59 my file.md\n";
        let out = compress(&small(), &input_for(text, &[])).unwrap();
        assert_eq!(
            out,
            "total 20\ndrwxr-xr-x 2 u g 4096 Nov 30 05:59 ast\n\
             -rw-r--r-- 1 u g 3615 Nov 30 05:59 debug.rs\n\
             -rw-r--r-- 1 u g  194 Nov 30 05:59 either.rs\n\
             [codeoid: 2 more entries elided (.md 1, no extension 1)]\n"
        );
    }

    #[test]
    fn recursive_listing_keeps_every_section_header() {
        let text = "src:\nast\na.rs\nb.rs\nc.rs\n\nsrc/ast:\nmod.rs\nparse.rs\nprint.rs\n";
        let out = compress(&small(), &input_for(text, &[])).unwrap();
        assert_eq!(
            out,
            "src:\nast\na.rs\nb.rs\n[codeoid: 1 more entry elided (.rs 1)]\n\n\
             src/ast:\nmod.rs\nparse.rs\n[codeoid: 1 more entry elided (.rs 1)]\n"
        );
    }

    #[test]
    fn a_short_listing_keeps_what_may_be_directories() {
        let mut text: String = (0..6).map(|n| format!("data_{n}.csv\n")).collect();
        text.push_str("src\ntests\n.github\nzz_important_dir\n");
        let out = compress(&small(), &input_for(&text, &[])).unwrap();
        assert_eq!(
            out,
            "data_0.csv\ndata_1.csv\nsrc\ntests\n.github\nzz_important_dir\n\
             [codeoid: 4 more entries elided (.csv 4)]\n"
        );
        // `ls /usr/bin`: hundreds of extensionless files are cut like any files.
        let text: String = (0..60).map(|n| format!("tool{n}\n")).collect();
        let out = compress(&small(), &input_for(&text, &[])).unwrap();
        assert!(
            out.ends_with("[codeoid: 58 more entries elided (no extension 58)]\n"),
            "{out}"
        );
    }

    #[test]
    fn short_listing_within_limits_passes() {
        assert!(compress(&Params::default(), &input_for("a\nb\nc\n", &[])).is_none());
    }

    #[test]
    fn long_names() {
        assert_eq!(
            long_name("-rw-r--r-- 1 u g 1 Nov 30 05:59 a b.txt"),
            "a b.txt"
        );
        assert_eq!(long_name("lrwxrwxrwx 1 u g 5 Nov 30 2023 l -> t"), "l");
    }
}
