//! Tokenization and batching: text to token ids the model accepts, and inputs grouped into
//! forward passes of bounded size.
//!
//! Invariants: every sequence [`TextTokenizer::encode`] returns has the checkpoint's special
//! tokens and at most `max_seq_len` ids (truncation keeps the trailing special tokens, as
//! sentence-transformers does); the tokenizer never pads (a checkpoint's `tokenizer.json` may ask
//! for fixed padding to 128, which would make short texts pay for 128 tokens: it is switched off;
//! the forward pass packs sequences instead of padding them). [`plan_batches`] bounds each
//! forward pass in sequences and in tokens, which bounds its activation memory.
//!
//! Deliberately not here: the model forward pass and pooling; window selection for long
//! documents (`windows`), which uses [`TextTokenizer::tokenize_plain`].

use std::path::Path;

use tokenizers::{Encoding, Tokenizer};

use crate::error::{Error, ErrorKind, Result};

/// Bytes of text kept per input before tokenizing, per token of `max_seq_len`.
///
/// Tokenizing a 1 MiB tool output only to truncate it to 256 tokens wastes milliseconds; a BERT
/// token covers at least one character, so 64 bytes per token keeps every token the model can see
/// unless the text is mostly whitespace runs.
const BYTES_PER_TOKEN_CUT: usize = 64;

/// A checkpoint's tokenizer, configured for codeoid (no padding, truncation by us).
#[derive(Debug, Clone)]
pub(crate) struct TextTokenizer {
    inner: Tokenizer,
    max_seq_len: usize,
}

impl TextTokenizer {
    /// Loads `tokenizer.json` from `dir`, padding and truncation switched off.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the file cannot be parsed.
    pub(crate) fn load(dir: &Path, max_seq_len: usize) -> Result<TextTokenizer> {
        let path = dir.join("tokenizer.json");
        let mut inner = Tokenizer::from_file(&path).map_err(|err| {
            Error::new(
                ErrorKind::Model,
                format!(
                    "{} is not a valid tokenizer.json; re-download the model",
                    path.display()
                ),
            )
            .with_source(err)
        })?;
        inner.with_padding(None);
        inner.with_truncation(None).map_err(|err| {
            Error::new(
                ErrorKind::Model,
                format!("cannot configure the tokenizer of {}", dir.display()),
            )
            .with_source(err)
        })?;
        Ok(TextTokenizer { inner, max_seq_len })
    }

    /// Token ids of each text, special tokens added, truncated to `max_seq_len`.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the tokenizer fails (it does not for any valid UTF-8 with a
    /// well-formed BERT tokenizer; a broken `tokenizer.json` might).
    pub(crate) fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        let cut = self.max_seq_len * BYTES_PER_TOKEN_CUT;
        let inputs: Vec<&str> = texts
            .iter()
            .map(|t| prefix_at_char_boundary(t, cut))
            .collect();
        let encodings = self.inner.encode_batch_fast(inputs, true).map_err(|err| {
            Error::new(ErrorKind::Model, "the tokenizer failed on an input text").with_source(err)
        })?;
        Ok(encodings.iter().map(|e| self.truncated_ids(e)).collect())
    }

    /// Tokens of `text` without special tokens or truncation, with byte offsets: the raw material
    /// for cutting a long document into windows.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the tokenizer fails.
    pub(crate) fn tokenize_plain(&self, text: &str) -> Result<Encoding> {
        self.inner.encode(text, false).map_err(|err| {
            Error::new(ErrorKind::Model, "the tokenizer failed on an input text").with_source(err)
        })
    }

    /// How many ids the special tokens add around one sequence (2 for BERT: `[CLS]`, `[SEP]`).
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the tokenizer fails.
    pub(crate) fn special_token_count(&self) -> Result<usize> {
        let with = self.encode_raw("a", true)?;
        let without = self.encode_raw("a", false)?;
        Ok(with.len().saturating_sub(without.len()))
    }

    fn encode_raw(&self, text: &str, special: bool) -> Result<Vec<u32>> {
        self.inner
            .encode_fast(text, special)
            .map(|e| e.get_ids().to_vec())
            .map_err(|err| {
                Error::new(ErrorKind::Model, "the tokenizer failed on an input text")
                    .with_source(err)
            })
    }

    /// Truncates to `max_seq_len`, keeping the trailing special tokens (`[SEP]`).
    fn truncated_ids(&self, encoding: &Encoding) -> Vec<u32> {
        let ids = encoding.get_ids();
        if ids.len() <= self.max_seq_len {
            return ids.to_vec();
        }
        let specials = encoding.get_special_tokens_mask();
        let suffix = specials
            .iter()
            .rev()
            .take_while(|&&s| s == 1)
            .count()
            .min(self.max_seq_len / 2);
        let mut out = Vec::with_capacity(self.max_seq_len);
        out.extend_from_slice(&ids[..self.max_seq_len - suffix]);
        out.extend_from_slice(&ids[ids.len() - suffix..]);
        out
    }
}

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a char boundary.
pub(crate) fn prefix_at_char_boundary(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The longest suffix of `text` of at most `max_bytes` bytes that starts on a char boundary.
pub(crate) fn suffix_at_char_boundary(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut start = text.len() - max_bytes;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Groups sequence indices into batches of at most `max_batch` sequences and at most
/// `max_tokens` tokens (a longer sequence gets a batch of its own), longest first so similar
/// lengths share a batch. Every index appears in exactly one batch.
pub(crate) fn plan_batches(
    lengths: &[usize],
    max_batch: usize,
    max_tokens: usize,
) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    // Stable sort: equal lengths keep input order, which keeps results reproducible.
    order.sort_by(|&a, &b| lengths[b].cmp(&lengths[a]));
    let mut batches = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut current_tokens = 0;
    for index in order {
        let len = lengths[index];
        let full = current.len() == max_batch.max(1) || current_tokens + len > max_tokens;
        if !current.is_empty() && full {
            batches.push(std::mem::take(&mut current));
            current_tokens = 0;
        }
        current.push(index);
        current_tokens += len;
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_every_index_once_and_respect_limits() {
        let lengths = [5, 120, 7, 7, 64, 3, 250, 9, 9, 9];
        let batches = plan_batches(&lengths, 3, 400);
        let mut seen: Vec<usize> = batches.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..lengths.len()).collect::<Vec<_>>());
        for batch in &batches {
            assert!(batch.len() <= 3);
            let longest = batch.iter().map(|&i| lengths[i]).max().unwrap_or(0);
            let tokens: usize = batch.iter().map(|&i| lengths[i]).sum();
            assert!(batch.len() == 1 || tokens <= 400, "{batch:?}");
            // Longest first inside a batch.
            assert_eq!(lengths[batch[0]], longest);
        }
        assert_eq!(
            batches[0],
            vec![6, 1],
            "250 + 120 tokens fit in 400; 64 more would not"
        );
    }

    #[test]
    fn char_boundary_cuts_never_split_a_char() {
        let text = "héllo wörld";
        for n in 0..text.len() + 2 {
            let head = prefix_at_char_boundary(text, n);
            let tail = suffix_at_char_boundary(text, n);
            assert!(head.len() <= n && text.starts_with(head));
            assert!(tail.len() <= n && text.ends_with(tail));
        }
    }
}
