//! Document windows: how one episode (a one-line summary and a possibly huge verbatim content)
//! becomes the few texts that are embedded for it, so the end of a long tool output is findable
//! and not only its first 256 tokens.
//!
//! Every window is `summary + "\n" + a slice of the content`, sized so it fits the model's
//! maximum sequence length; consecutive windows share [`WindowPolicy::overlap_tokens`] tokens so
//! a phrase cut by a boundary is whole in one of them. When the content needs more than
//! [`WindowPolicy::max_windows`] windows, the first half of the budget covers the head and the
//! rest the tail (commands and intents lead, errors and summaries trail); the middle of a huge
//! output is left to BM25. Only the head and tail slices of a huge content are tokenized, so the
//! work per episode is bounded whatever its size.
//!
//! Invariants: at least one window per episode; at most `max_windows`; every window is a prefix
//! of `summary + "\n"` followed by a contiguous substring of the content; the last window ends at
//! the end of the content.
//!
//! Deliberately not here: embedding the windows (`Embedder`), scoring an episode by its best
//! window (retrieval).

use super::tokenize::{TextTokenizer, prefix_at_char_boundary, suffix_at_char_boundary};
use crate::error::{Error, Result};

/// Bytes of content tokenized per token of the window budget when only head and tail are kept.
const BYTES_PER_TOKEN: usize = 64;

/// How long episodes are cut into windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WindowPolicy {
    /// The most windows embedded for one episode (at least 1). Default 8: at most
    /// `8 * max_seq_len` tokens of model work per episode, about 2,000 tokens for MiniLM.
    pub max_windows: usize,
    /// Tokens shared by consecutive windows. Default 32. An overlap above half a window is
    /// treated as half a window, so windows always advance.
    pub overlap_tokens: usize,
}

impl Default for WindowPolicy {
    fn default() -> Self {
        WindowPolicy {
            max_windows: 8,
            overlap_tokens: 32,
        }
    }
}

impl WindowPolicy {
    /// Checks the policy's invariants.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when `max_windows` is 0.
    pub fn validate(&self) -> Result<()> {
        if self.max_windows == 0 {
            return Err(Error::invalid_input(
                "window policy max_windows is 0; use at least 1 (the default is 8)",
            ));
        }
        Ok(())
    }
}

/// Splits an episode into the texts to embed. `specials` is how many ids the tokenizer adds
/// around a sequence; `max_seq_len` includes them.
///
/// # Errors
/// [`crate::ErrorKind::Model`] when the tokenizer fails; [`crate::ErrorKind::InvalidInput`] for
/// an invalid policy.
pub(crate) fn episode_windows(
    tokenizer: &TextTokenizer,
    specials: usize,
    max_seq_len: usize,
    policy: WindowPolicy,
    summary: &str,
    content: &str,
) -> Result<Vec<String>> {
    policy.validate()?;
    let room = max_seq_len.saturating_sub(specials).max(1);
    let summary = cap_summary(tokenizer, summary.trim(), room / 4)?;
    let summary_tokens = if summary.is_empty() {
        0
    } else {
        tokenizer.tokenize_plain(summary)?.len()
    };
    let budget = room.saturating_sub(summary_tokens).max(1);
    // A window advances by at least half its length, so the overlap cannot stall it.
    let stride = budget
        .saturating_sub(policy.overlap_tokens)
        .max(budget.div_ceil(2));
    let compose = |slice: &str| -> String {
        match (summary.is_empty(), slice.is_empty()) {
            (true, _) => slice.to_owned(),
            (false, true) => summary.to_owned(),
            (false, false) => format!("{summary}\n{slice}"),
        }
    };

    let content = content.trim();
    let head_windows = policy.max_windows.div_ceil(2);
    let tail_windows = policy.max_windows - head_windows;
    let side_bytes = head_windows.max(1) * budget * BYTES_PER_TOKEN;

    if content.len() <= 2 * side_bytes {
        let ranges = chunk_ranges(tokenizer, content, budget, stride)?;
        if ranges.len() <= policy.max_windows {
            return Ok(ranges
                .iter()
                .map(|r| compose(&content[r.clone()]))
                .collect());
        }
        let tail_start = ranges.len() - tail_windows;
        let picked = ranges[..head_windows].iter().chain(&ranges[tail_start..]);
        return Ok(picked.map(|r| compose(&content[r.clone()])).collect());
    }

    let head = prefix_at_char_boundary(content, side_bytes);
    let tail = suffix_at_char_boundary(content, side_bytes);
    let head_ranges = chunk_ranges(tokenizer, head, budget, stride)?;
    let tail_ranges = chunk_ranges(tokenizer, tail, budget, stride)?;
    let mut windows: Vec<String> = head_ranges
        .iter()
        .take(head_windows)
        .map(|r| compose(&head[r.clone()]))
        .collect();
    let skip = tail_ranges.len().saturating_sub(tail_windows);
    windows.extend(
        tail_ranges[skip..]
            .iter()
            .map(|r| compose(&tail[r.clone()])),
    );
    Ok(windows)
}

/// `summary` cut to at most `max_tokens` tokens (summaries are one line, but not every caller
/// keeps them short).
fn cap_summary<'a>(
    tokenizer: &TextTokenizer,
    summary: &'a str,
    max_tokens: usize,
) -> Result<&'a str> {
    let encoding = tokenizer.tokenize_plain(summary)?;
    if encoding.len() <= max_tokens {
        return Ok(summary);
    }
    let end = encoding.get_offsets()[..max_tokens.max(1)]
        .last()
        .map_or(0, |&(_, end)| end);
    Ok(summary.get(..end).unwrap_or(summary))
}

/// Byte ranges of `text` covering it in windows of `budget` tokens advancing by `stride`; the
/// last window is aligned to the end of the text. An empty text is one empty range.
fn chunk_ranges(
    tokenizer: &TextTokenizer,
    text: &str,
    budget: usize,
    stride: usize,
) -> Result<Vec<std::ops::Range<usize>>> {
    let encoding = tokenizer.tokenize_plain(text)?;
    let offsets = encoding.get_offsets();
    let n = offsets.len();
    if n <= budget {
        return Ok(std::iter::once(0..text.len()).collect());
    }
    let mut starts: Vec<usize> = (0..)
        .map(|i| i * stride)
        .take_while(|&s| s + budget < n)
        .collect();
    starts.push(n - budget);
    let ranges = starts
        .into_iter()
        .map(|start| {
            let from = offsets[start].0;
            // The final window runs to the end of the text, trailing punctuation included.
            let to = if start + budget >= n {
                text.len()
            } else {
                offsets[start + budget - 1].1
            };
            from..to
        })
        .filter(|r| {
            r.start < r.end && text.is_char_boundary(r.start) && text.is_char_boundary(r.end)
        })
        .collect::<Vec<_>>();
    if ranges.is_empty() {
        return Ok(std::iter::once(0..text.len()).collect());
    }
    Ok(ranges)
}
