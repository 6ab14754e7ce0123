//! The `paths` and `tree` families: path lists grouped by directory.
//!
//! `find` and `fd` print one path per line, repeating the directory on every line; `tree` draws
//! the same information with box characters that cost up to ten bytes per level. Both become
//! groups: a directory header (`src/compress/`) followed by its entries' names, indented, in
//! order of first appearance, and the limits of [`super::listing`] apply. Entries that are
//! themselves directories (they have entries of their own) end with `/`. `tree`'s closing
//! `N directories, M files` line is kept.
//!
//! Nothing is cut unless a limit is reached; the grouping alone usually saves a third or more.
//! Returns nothing for output that does not look like a path list or a tree.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::Input;
use super::listing::{self, Entry, Group, Params};
use crate::compress::elision::Output;

pub(crate) fn compress(params: &Params, input: &Input<'_>) -> Option<String> {
    let paths: Vec<&str> = input
        .lines
        .iter()
        .copied()
        .filter(|l| !l.is_empty())
        .collect();
    // `find -ls`, `-printf` and `fd -l` print columns, not paths: leave those alone.
    let columnar = paths
        .iter()
        .filter(|p| p.split_whitespace().count() > 3)
        .count();
    if paths.is_empty() || columnar * 2 > paths.len() || paths.iter().any(|p| p.contains('\t')) {
        return None;
    }
    let owned: Vec<Cow<'_, str>> = paths.into_iter().map(Cow::Borrowed).collect();
    let mut out = Output::with_capacity(input.text.len() / 2);
    write_grouped(params, &owned, input, &mut out);
    Some(out.finish())
}

/// Groups `paths` by parent directory and writes them.
fn write_grouped(params: &Params, paths: &[Cow<'_, str>], input: &Input<'_>, out: &mut Output) {
    // Each directory's members as (full path, name), borrowed from `paths`: no allocation per
    // entry except for the `/` that marks a directory.
    let mut order: Vec<&str> = Vec::new();
    let mut members: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
    for path in paths {
        let full = path.trim_end_matches('/');
        let (dir, name) = full.rsplit_once('/').unwrap_or(("", full));
        members
            .entry(dir)
            .or_insert_with(|| {
                order.push(dir);
                Vec::new()
            })
            .push((full, name));
    }
    let dirs: HashSet<&str> = order.iter().copied().collect();
    let check_facts = !input.facts.is_empty();
    let mut groups: Vec<Group<'_>> = Vec::with_capacity(order.len());
    for dir in &order {
        let list = members.get(dir).map(Vec::as_slice).unwrap_or_default();
        let entries: Vec<Entry<'_>> = list
            .iter()
            // A top-level directory that has a group of its own (`find .` prints `.` first,
            // `find src` prints `src`) is named by that group's header: listing it under `./`
            // too would show the root as a child of itself.
            .filter(|&&(full, _)| !(dir.is_empty() && members.contains_key(full)))
            .map(|&(full, name)| {
                let text: Cow<'_, str> = if dirs.contains(full) {
                    Cow::Owned(format!("{name}/"))
                } else {
                    Cow::Borrowed(name)
                };
                Entry {
                    name: text.clone(),
                    always: check_facts && input.facts.is_fact(full),
                    text,
                }
            })
            .collect();
        if entries.is_empty() {
            continue;
        }
        let header = if dir.is_empty() {
            "./".to_owned()
        } else {
            format!("{dir}/")
        };
        groups.push(Group {
            header: Some(Cow::Owned(header)),
            preamble: Vec::new(),
            indent: "  ",
            entries,
            trailer: Vec::new(),
        });
    }
    listing::write(params, &groups, out);
}

/// The connectors and continuation units `tree` draws, four characters each (UTF-8 with its
/// no-break spaces, and the `--charset=ascii` forms).
const CONNECTORS: &[&str] = &["├── ", "└── ", "|-- ", "`-- "];
const CONTINUATIONS: &[&str] = &[
    "│\u{a0}\u{a0} ",
    "│   ",
    "    ",
    "\u{a0}\u{a0}\u{a0} ",
    "|   ",
];

/// Depth (1 for the root's children) and name of a `tree` entry line.
fn tree_entry(line: &str) -> Option<(usize, &str)> {
    let mut rest = line;
    let mut depth = 1;
    loop {
        if let Some(name) = CONNECTORS.iter().find_map(|c| rest.strip_prefix(c)) {
            return Some((depth, name));
        }
        rest = CONTINUATIONS.iter().find_map(|c| rest.strip_prefix(c))?;
        depth += 1;
    }
}

pub(crate) fn compress_tree(params: &Params, input: &Input<'_>) -> Option<String> {
    let lines = &input.lines;
    let root = lines.first()?;
    let mut stack: Vec<&str> = Vec::new();
    let mut paths: Vec<Cow<'_, str>> = Vec::new();
    let mut trailer: Vec<&str> = Vec::new();
    for line in &lines[1..] {
        let Some((depth, name)) = tree_entry(line) else {
            trailer.push(line);
            continue;
        };
        if !trailer.is_empty() || depth > stack.len() + 1 {
            return None;
        }
        stack.truncate(depth - 1);
        // `tree -l` and symlinks print `name -> target`: the name is what the path is.
        let name = name.split_once(" -> ").map_or(name, |(n, _)| n);
        let mut path = String::from(*root);
        for part in &stack {
            path.push('/');
            path.push_str(part);
        }
        path.push('/');
        path.push_str(name);
        paths.push(Cow::Owned(path));
        stack.push(name);
    }
    if paths.is_empty() {
        return None;
    }
    let mut out = Output::with_capacity(input.text.len() / 2);
    write_grouped(params, &paths, input, &mut out);
    trailer.iter().for_each(|l| out.line(l));
    Some(out.finish())
}

#[cfg(test)]
mod tests {
    use super::super::tests::input_for;
    use super::*;

    #[test]
    fn find_output_is_grouped_by_directory() {
        let text = "./src\n./src/a.rs\n./src/sub\n./src/sub/b.rs\n./src/c.rs\n./README.md\n";
        let input = input_for(text, &[]);
        let out = compress(&Params::default(), &input).unwrap();
        assert_eq!(
            out,
            "./\n  src/\n  README.md\n./src/\n  a.rs\n  sub/\n  c.rs\n./src/sub/\n  b.rs\n"
        );
        // `find .` prints the root first: it is the `./` group, not a child of it.
        let rooted = format!(".\n{text}");
        let again = compress(&Params::default(), &input_for(&rooted, &[])).unwrap();
        assert_eq!(again, out);
        // So is `find src`'s `src`, named by its group's header.
        let named = "src\nsrc/a.rs\nsrc/b.rs\n";
        let out = compress(&Params::default(), &input_for(named, &[])).unwrap();
        assert_eq!(out, "src/\n  a.rs\n  b.rs\n");
    }

    #[test]
    fn tree_output_becomes_groups_and_keeps_its_summary() {
        let text = "src\n├── ast\n│\u{a0}\u{a0} ├── mod.rs\n│\u{a0}\u{a0} └── parse.rs\n\
                    ├── lib.rs\n└── link -> ast\n\n1 directory, 3 files\n";
        let input = input_for(text, &[]);
        let out = compress_tree(&Params::default(), &input).unwrap();
        assert_eq!(
            out,
            "src/\n  ast/\n  lib.rs\n  link\nsrc/ast/\n  mod.rs\n  parse.rs\n\n1 directory, 3 files\n"
        );
    }

    #[test]
    fn ascii_tree_and_non_tree_output() {
        let text = ".\n|-- a\n|   `-- b.txt\n`-- c.txt\n";
        let out = compress_tree(&Params::default(), &input_for(text, &[])).unwrap();
        assert_eq!(out, "./\n  a/\n  c.txt\n./a/\n  b.txt\n");
        assert!(compress_tree(&Params::default(), &input_for("just\ntext\n", &[])).is_none());
    }
}
