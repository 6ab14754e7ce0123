//! Rotation seed blocks inside user text: recognising codeoid's own `<rotation_context>` block
//! wherever a harness put it, so that it is never taken for what the person typed.
//!
//! A harness puts the seed into the first message after a rotation, usually first, but not
//! always: some put a `<system-reminder>` before it, or the seed after the prompt. Wherever it
//! is, it stays in the stored turn (verbatim history) and is left out of the text the chunker
//! and the rotation anchor read, so a seed never becomes the `# User intent` of the calls after
//! it and seeds never nest. Formatting seeds is `crate::rotate::seed`'s job.

use std::borrow::Cow;

/// Opening tag of the block a rotation seed puts into the first message after a rotation.
pub(crate) const ROTATION_SEED_OPEN: &str = "<rotation_context>";
/// Closing tag of that block.
pub(crate) const ROTATION_SEED_CLOSE: &str = "</rotation_context>";

/// `text` without its rotation seed blocks: every complete `<rotation_context>` …
/// `</rotation_context>` block is left out, with the whitespace around it (the text on its two
/// sides is joined by a blank line), and the result is trimmed. Text without a complete block is
/// returned as it is, borrowed.
pub(crate) fn without_rotation_seed(text: &str) -> Cow<'_, str> {
    let Some(first) = block_at(text, 0) else {
        return Cow::Borrowed(text);
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut from = 0;
    let mut next = Some(first);
    while let Some((start, end)) = next {
        kept.push(&text[from..start]);
        from = end;
        next = block_at(text, from);
    }
    kept.push(&text[from..]);
    let pieces: Vec<&str> = kept
        .into_iter()
        .map(str::trim)
        .filter(|piece| !piece.is_empty())
        .collect();
    Cow::Owned(pieces.join("\n\n"))
}

/// The byte range of the first complete seed block of `text` at or after `from`. Blocks nest
/// (an old seed whose anchor quoted a seed): a block ends at the close tag that balances its
/// open tag. An open tag that is never balanced starts no block.
fn block_at(text: &str, from: usize) -> Option<(usize, usize)> {
    let mut search = from;
    loop {
        let start = search + text[search..].find(ROTATION_SEED_OPEN)?;
        if let Some(end) = balanced_end(text, start) {
            return Some((start, end));
        }
        search = start + ROTATION_SEED_OPEN.len();
    }
}

/// Where the block opened at `start` ends, counting nested blocks; `None` when it never closes.
fn balanced_end(text: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut at = start;
    loop {
        let rest = &text[at..];
        let close = rest.find(ROTATION_SEED_CLOSE)?;
        match rest.find(ROTATION_SEED_OPEN) {
            Some(open) if open < close => {
                depth += 1;
                at += open + ROTATION_SEED_OPEN.len();
            }
            _ => {
                depth -= 1;
                at += close + ROTATION_SEED_CLOSE.len();
                if depth == 0 {
                    return Some(at);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: &str = "<rotation_context>\nThis session's backing context was just rotated.\n\
                        Most recent user turn before the rotation:\n---\nfix it\n---\n\
                        </rotation_context>";

    #[test]
    fn a_seed_is_left_out_wherever_it_stands() {
        assert_eq!(
            without_rotation_seed(&format!("{SEED}\n\nkeep going")),
            "keep going"
        );
        assert_eq!(
            without_rotation_seed(&format!(
                "<system-reminder>x</system-reminder>\n{SEED}\nnow go"
            )),
            "<system-reminder>x</system-reminder>\n\nnow go"
        );
        assert_eq!(without_rotation_seed(&format!("go on\n{SEED}")), "go on");
        assert_eq!(without_rotation_seed(&format!("  {SEED}  ")), "");
    }

    #[test]
    fn several_seeds_and_a_seed_quoting_a_seed_all_go() {
        let nested = format!("{SEED}\n{SEED}\nand then");
        assert_eq!(without_rotation_seed(&nested), "and then");
        // An older seed whose anchor quoted a seed: the whole outer block goes.
        let quoting = format!("<rotation_context>\n---\n{SEED}\n---\n</rotation_context>\nok");
        assert_eq!(without_rotation_seed(&quoting), "ok");
        // An open tag never closed starts no block; a complete block after it still goes.
        let unclosed = format!("<rotation_context> typed by hand {SEED} rest");
        assert_eq!(
            without_rotation_seed(&unclosed),
            "<rotation_context> typed by hand\n\nrest"
        );
    }

    #[test]
    fn text_without_a_complete_block_is_borrowed_as_it_is() {
        for text in [
            "plain",
            "<rotation_context> never closed",
            "</rotation_context> only",
            "",
        ] {
            assert!(matches!(without_rotation_seed(text), Cow::Borrowed(t) if t == text));
        }
    }
}
