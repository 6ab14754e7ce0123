//! What a `grep`-like command line searched for, so that a long match line can be cut around
//! its match rather than after its first characters (a minified file or a one-line JSON
//! document matches far into the line).
//!
//! Read from the command's own words: the first operand of `grep`, `egrep`, `fgrep`, `rg`, `ag`,
//! `ack` or `git grep`, or the values of `-e`/`--regexp`. `-i`/`--ignore-case` (and `-S`,
//! `--smart-case` with a lowercase pattern) make it case-insensitive, `-F`/`--fixed-strings`
//! (and `fgrep`, `-Q` of `ag`) literal. Patterns are read as Rust regular expressions; one that
//! does not compile (a basic-regex `\(`, a PCRE look-around) is searched for literally, and a
//! line where nothing is found is cut as before. Best effort by design: the worst case is the
//! old cut.

use regex::{Regex, RegexBuilder};

use crate::compress::command::stage_words;

/// Options of the supported programs that take a value as the next word (the pattern options
/// excepted): the value is not an operand.
const VALUED: &[&str] = &[
    "-f",
    "--file",
    "-m",
    "--max-count",
    "-A",
    "-B",
    "-C",
    "--after-context",
    "--before-context",
    "--context",
    "-d",
    "-D",
    "--directories",
    "--devices",
    "-g",
    "--glob",
    "--iglob",
    "-t",
    "--type",
    "-T",
    "--type-not",
    "-j",
    "--threads",
    "-M",
    "--max-columns",
    "--color",
    "--colour",
    "--include",
    "--exclude",
    "--exclude-dir",
    "-G",
    "--file-search-regex",
];

/// The patterns a command line searches for, compiled; empty when it names none.
pub(crate) fn query(command: &str) -> Vec<Regex> {
    stage_words(command)
        .iter()
        .filter_map(|words| search_of(words))
        .flat_map(|search| search.compile())
        .collect()
}

/// One search: its patterns and how they match.
#[derive(Debug, Default, PartialEq, Eq)]
struct Search {
    patterns: Vec<String>,
    ignore_case: bool,
    smart_case: bool,
    literal: bool,
}

impl Search {
    fn compile(self) -> Vec<Regex> {
        self.patterns
            .iter()
            .filter(|p| !p.is_empty())
            .filter_map(|pattern| {
                let insensitive = self.ignore_case
                    || (self.smart_case && !pattern.chars().any(char::is_uppercase));
                let build = |source: &str| {
                    RegexBuilder::new(source)
                        .case_insensitive(insensitive)
                        .size_limit(1 << 20)
                        .build()
                        .ok()
                };
                let literal = || build(&regex::escape(pattern));
                if self.literal {
                    literal()
                } else {
                    build(pattern).or_else(literal)
                }
            })
            .collect()
    }
}

/// The search of one stage's words, when the stage runs a grep-like program.
fn search_of(words: &[String]) -> Option<Search> {
    let start = words.iter().position(|w| {
        let name = w.rsplit('/').next().unwrap_or(w);
        matches!(
            name,
            "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "ack-grep"
        )
    });
    let (program, args) = match start {
        Some(at) => (words[at].rsplit('/').next().unwrap_or(""), &words[at + 1..]),
        None => {
            let git = words.iter().position(|w| w == "git")?;
            let grep = git + 1 + words[git + 1..].iter().position(|w| w == "grep")?;
            ("git grep", &words[grep + 1..])
        }
    };
    let mut search = Search {
        literal: program == "fgrep",
        ..Search::default()
    };
    let mut operands = Vec::new();
    let mut args = args.iter();
    let mut options_done = false;
    while let Some(arg) = args.next() {
        let arg = arg.as_str();
        if options_done || !arg.starts_with('-') || arg == "-" {
            operands.push(arg.to_owned());
            continue;
        }
        match arg {
            "--" => options_done = true,
            "-e" | "--regexp" => search.patterns.extend(args.next().cloned()),
            "-i" | "--ignore-case" | "-y" => search.ignore_case = true,
            "-S" | "--smart-case" => search.smart_case = true,
            "-F" | "--fixed-strings" | "-Q" | "--literal" => search.literal = true,
            _ if VALUED.contains(&arg) => {
                args.next();
            }
            _ if arg.starts_with("--regexp=") => {
                search.patterns.push(arg["--regexp=".len()..].to_owned());
            }
            _ if arg.starts_with("-e") && !arg.starts_with("--") => {
                search.patterns.push(arg[2..].to_owned());
            }
            _ if !arg.starts_with("--") => {
                // Bundled short flags: `-rniF`.
                let flags = &arg[1..];
                search.ignore_case |= flags.contains('i');
                search.literal |= flags.contains('F');
            }
            _ => {}
        }
    }
    if search.patterns.is_empty() {
        search.patterns.extend(operands.into_iter().next());
    }
    (!search.patterns.is_empty()).then_some(search)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(command: &str, line: &str) -> Option<usize> {
        query(command)
            .iter()
            .filter_map(|re| re.find(line).map(|m| m.start()))
            .min()
    }

    #[test]
    fn the_pattern_is_the_first_operand_or_the_e_values() {
        assert_eq!(found("grep -rn needle conf/*.json", "a needle b"), Some(2));
        assert_eq!(
            found(
                "cd x && rg -n -g '*.rs' 'fn \\w+_id' src",
                "pub fn user_id()"
            ),
            Some(4)
        );
        assert_eq!(found("grep -e alpha -e beta .", "x beta alpha"), Some(2));
        assert_eq!(
            found("git --no-pager grep -n -i NEEDLE", "a needle"),
            Some(2)
        );
        assert_eq!(
            found("grep -rniF 'a.b' .", "axb A.B"),
            Some(4),
            "literal, any case"
        );
        assert_eq!(found("fgrep 'x(' f", "a x( b"), Some(2));
        assert_eq!(
            found("rg -S needle", "NEEDLE"),
            Some(0),
            "smart case, lowercase"
        );
        assert_eq!(found("rg -S Needle", "NEEDLE"), None);
        assert_eq!(found("grep -A 3 -m 5 needle f", "needle"), Some(0));
        // Not a Rust regular expression (a basic regex's literal parenthesis): literally.
        assert_eq!(found("grep 'a(b' f", "xa(b"), Some(1));
    }

    proptest::proptest! {
        #[test]
        fn any_command_line_reads_without_panicking(command in "(grep|rg|git grep|fgrep) .{0,60}") {
            let _ = query(&command);
        }
    }

    #[test]
    fn commands_without_a_search_give_nothing() {
        assert!(query("cargo test").is_empty());
        assert!(query("grep").is_empty());
        assert!(query("grep -r").is_empty());
    }
}
