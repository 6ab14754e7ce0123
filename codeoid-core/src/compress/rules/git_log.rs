//! The `git_log` family: the newest and oldest commits in full, every commit between as one line.
//!
//! Reads the default `git log` format (and `--stat`, `--name-status`, `--format=medium|full|
//! fuller`): blocks that start with `commit <hash>`. The first `head_commits` and last
//! `tail_commits` blocks are kept as printed. Each commit between them keeps its full hash,
//! decorations and subject on one line, plus its `--stat` summary when there is one, so no
//! commit and no hash is ever lost; what goes is author, date, message body and per-file stats,
//! announced by one marker with the line count.
//!
//! Returns nothing for formats without `commit` lines (`--oneline`, custom formats: already one
//! line per commit), for `--graph` output, for output containing diffs (that is the `git_diff`
//! family's job), and when there are too few commits to condense.

use serde::Deserialize;

use super::Input;
use crate::compress::elision::{Output, count_of, thousands};

/// Parameters of the `git_log` family.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Params {
    /// Newest commits kept in full.
    head_commits: usize,
    /// Oldest commits kept in full.
    tail_commits: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            head_commits: 10,
            tail_commits: 3,
        }
    }
}

/// `commit <hash>` or `commit <hash> (<decorations>)`: the hash and the decorations (with their
/// leading space), or `None` for any other line.
fn commit_header(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("commit ")?;
    let hex = rest
        .bytes()
        .take_while(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        .count();
    let (hash, decorations) = rest.split_at(hex);
    let well_formed = (7..=64).contains(&hex)
        && (decorations.is_empty()
            || (decorations.starts_with(" (") && decorations.ends_with(')')));
    well_formed.then_some((hash, decorations))
}

/// One commit block: its line range in the input.
struct Block {
    start: usize,
    end: usize,
}

pub(crate) fn compress(params: &Params, input: &Input<'_>) -> Option<String> {
    let lines = &input.lines;
    if lines.iter().any(|l| l.starts_with("diff --git ")) {
        return None;
    }
    let mut blocks: Vec<Block> = Vec::new();
    let mut preamble_end = lines.len();
    for (index, line) in lines.iter().enumerate() {
        if commit_header(line).is_some() {
            if let Some(last) = blocks.last_mut() {
                last.end = index;
            } else {
                preamble_end = index;
            }
            blocks.push(Block {
                start: index,
                end: lines.len(),
            });
        }
    }
    if blocks.len() <= params.head_commits + params.tail_commits {
        return None;
    }
    let mut out = Output::with_capacity(input.text.len() / 3);
    for line in &lines[..preamble_end] {
        out.line(line);
    }
    let middle_end = blocks.len() - params.tail_commits;
    for block in &blocks[..params.head_commits] {
        emit_full(&mut out, lines, block);
    }
    let middle = &blocks[params.head_commits..middle_end];
    let elided_lines: usize = middle.iter().map(|b| b.end - b.start - 1).sum();
    let detail = format!(
        "author, date, message body and stats of {}; each is kept below as hash and subject",
        count_of(middle.len(), "commit", "commits")
    );
    out.marker_with("", elided_lines, "lines", &detail);
    for block in middle {
        out.line(&condensed(lines, block, input));
    }
    if !middle.is_empty() {
        out.line("");
    }
    for block in &blocks[middle_end..] {
        emit_full(&mut out, lines, block);
    }
    out.note(&format!("{} commits in all", thousands(blocks.len())));
    Some(out.finish())
}

fn emit_full(out: &mut Output, lines: &[&str], block: &Block) {
    for line in &lines[block.start..block.end] {
        out.line(line);
    }
}

/// `<hash><decorations> <subject>` plus ` [<stat summary>]`, and any fact line of the block
/// after it.
fn condensed(lines: &[&str], block: &Block, input: &Input<'_>) -> String {
    let header = lines[block.start];
    let (hash, decorations) = commit_header(header).unwrap_or((header, ""));
    let body = &lines[block.start + 1..block.end];
    let subject = body
        .iter()
        .skip_while(|l| !l.is_empty())
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut line = format!("{hash}{decorations} {subject}");
    if let Some(stat) = body.iter().find(|l| is_stat_summary(l)) {
        line.push_str(" [");
        line.push_str(stat.trim());
        line.push(']');
    }
    for fact in body.iter().filter(|l| input.facts.is_fact(l)) {
        line.push('\n');
        line.push_str(fact);
    }
    line
}

fn is_stat_summary(line: &str) -> bool {
    line.starts_with(' ')
        && line.contains(" changed")
        && (line.contains("file") || line.contains("files"))
}

#[cfg(test)]
mod tests {
    use super::super::tests::input_for;
    use super::*;

    fn log(commits: usize) -> String {
        let mut text = String::new();
        for n in 0..commits {
            text.push_str(&format!(
                "commit {n:040x}{}\nAuthor: A <a@example.com>\nDate:   Mon Jan 1 00:00:00 2024 +0000\n\n    subject {n}\n\n    body of {n}\n\n 2 files changed, 3 insertions(+), 1 deletion(-)\n\n",
                if n == 0 { " (HEAD -> main)" } else { "" }
            ));
        }
        text
    }

    #[test]
    fn middle_commits_keep_hash_and_subject() {
        let text = log(8);
        let input = input_for(&text, &[r"^commit ([0-9a-f]{7,64})"]);
        let params = Params {
            head_commits: 2,
            tail_commits: 1,
        };
        let out = compress(&params, &input).unwrap();
        assert!(out.starts_with(&format!("commit {:040x} (HEAD -> main)\n", 0)));
        assert!(out.contains(&format!(
            "{:040x} subject 4 [2 files changed, 3 insertions(+), 1 deletion(-)]\n",
            4
        )));
        assert!(out.contains(
            "[codeoid: 45 lines elided (author, date, message body and stats of 5 commits;"
        ));
        assert!(out.contains("    body of 7\n"));
        assert!(!out.contains("body of 4"));
        assert!(out.ends_with("[codeoid: 8 commits in all]\n"));
        assert!(input.facts.missing(&text, &out).is_empty());
    }

    #[test]
    fn commit_headers() {
        let hash = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(commit_header(&format!("commit {hash}")), Some((hash, "")));
        assert_eq!(
            commit_header(&format!("commit {hash} (HEAD -> main, tag: v1)")),
            Some((hash, " (HEAD -> main, tag: v1)"))
        );
        assert_eq!(commit_header("commit abc"), None);
        assert_eq!(commit_header(&format!("commit {hash}x")), None);
        assert_eq!(commit_header("commit message: fix"), None);
    }

    #[test]
    fn few_commits_oneline_and_patches_pass_through() {
        let facts: &[&str] = &[];
        assert!(compress(&Params::default(), &input_for(&log(13), facts)).is_none());
        let oneline = "abc1234 one\ndef5678 two\n".repeat(50);
        assert!(compress(&Params::default(), &input_for(&oneline, facts)).is_none());
        let patch = format!("{}diff --git a/x b/x\n", log(30));
        assert!(compress(&Params::default(), &input_for(&patch, facts)).is_none());
    }
}
