//! Context windows: how many input tokens a model can read, from a built-in table or an override.
//!
//! [`resolve_window`] turns a model id as a harness reports it (`claude-sonnet-4-5-20250929`,
//! `anthropic/claude-opus-4-6`, `models/gemini-2.5-pro`, `us.anthropic.claude-haiku-4-5-v1:0`,
//! `gpt-5-codex`...) into a [`ContextWindow`] that says where the number came from, so a
//! rotation decision can explain itself.
//!
//! Invariants:
//! - Every window that leaves this module lies in [`MIN_WINDOW`]..=[`MAX_WINDOW`]: a zero or
//!   absurd override is an error, never a silent division by zero or a window no model has.
//! - Matching is longest-prefix on a normalized id, and a prefix only matches at a boundary
//!   (`-`, `.`, `@`, `:`, `_` or the end), so `gpt-4` never matches `gpt-4o` and
//!   `claude-opus-4` never shadows `claude-opus-4-6`.
//! - When in doubt the table errs small: an unlisted variant (`gpt-5.9`, `claude-opus-4-9`)
//!   falls back to its family's smallest documented window. Rotating a little early costs
//!   nothing (memory keeps every turn); overflowing the provider's window loses the session to
//!   the provider's own compaction.
//!
//! The window is the limit on what the model *reads* (input + cache read + cache creation):
//! where a provider documents a separate input limit (GPT-5: 400k context, 128k of it reserved
//! for output) the input limit is used, because that is what occupancy is measured against.
//!
//! This module does not fetch anything: the table is data in code, reviewed by hand.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The smallest context window accepted, in tokens. Smaller values are almost certainly a unit
/// mistake (thousands of tokens given as tokens).
pub const MIN_WINDOW: u64 = 1_024;

/// The largest context window accepted, in tokens. No model offers more than a few million today;
/// anything above this is treated as corrupt input.
pub const MAX_WINDOW: u64 = 100_000_000;

/// The window assumed for a model the table does not know, unless configured otherwise: small
/// enough to be safe for any current coding model, large enough not to rotate needlessly.
pub const DEFAULT_WINDOW: u64 = 128_000;

/// The window of Claude Code's `[1m]` model-id suffix (`claude-opus-4-6[1m]`), which asks for the
/// 1M-token context.
const ONE_MILLION: u64 = 1_000_000;

/// A resolved context window and where its size came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextWindow {
    /// Size in tokens, within [`MIN_WINDOW`]..=[`MAX_WINDOW`].
    pub tokens: u64,
    /// Where the size came from.
    pub source: WindowSource,
}

/// Where a [`ContextWindow`]'s size came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WindowSource {
    /// An explicit override (per session, or configured).
    Override,
    /// The built-in table.
    Table {
        /// The table entry (model-id prefix) that matched, such as `claude-sonnet-4-5`.
        entry: String,
    },
    /// A `[1m]` suffix on the model id asked for the 1M-token context.
    OneMillionSuffix,
    /// Nothing matched: the conservative default was assumed.
    Default {
        /// The model id that was not recognized, if one was given.
        model: Option<String>,
    },
}

impl ContextWindow {
    /// A window of `tokens` from an explicit override.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when `tokens` is outside
    /// [`MIN_WINDOW`]..=[`MAX_WINDOW`].
    pub fn overridden(tokens: u64) -> Result<ContextWindow> {
        validate_window(tokens, "context window override")?;
        Ok(ContextWindow {
            tokens,
            source: WindowSource::Override,
        })
    }

    /// `true` when the size was assumed because the model is unknown.
    pub fn is_assumed(&self) -> bool {
        matches!(self.source, WindowSource::Default { .. })
    }

    /// A short phrase saying where the size came from, for decision messages.
    pub fn describe(&self) -> String {
        match &self.source {
            WindowSource::Override => "override".to_string(),
            WindowSource::Table { entry } => format!("table entry {entry:?}"),
            WindowSource::OneMillionSuffix => "[1m] model suffix".to_string(),
            WindowSource::Default { model: Some(model) } => format!(
                "unknown model {model:?}, conservative default assumed; set a context-window \
                 override for this session"
            ),
            WindowSource::Default { model: None } => "no model id reported, conservative default \
                 assumed; set a context-window override for this session"
                .to_string(),
        }
    }
}

/// Checks that `tokens` is a usable window size; `what` names the value in the message.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] for zero, tiny or absurd sizes.
pub(crate) fn validate_window(tokens: u64, what: &str) -> Result<()> {
    if tokens < MIN_WINDOW {
        return Err(Error::invalid_input(format!(
            "{what} of {tokens} tokens is too small; a context window is at least {MIN_WINDOW} \
             tokens (give the size in tokens, not thousands)"
        )));
    }
    if tokens > MAX_WINDOW {
        return Err(Error::invalid_input(format!(
            "{what} of {tokens} tokens is absurd; no model reads more than {MAX_WINDOW} tokens"
        )));
    }
    Ok(())
}

/// One row of the built-in table: a model-id prefix and its input window in tokens.
struct Entry {
    prefix: &'static str,
    tokens: u64,
}

const fn e(prefix: &'static str, tokens: u64) -> Entry {
    Entry { prefix, tokens }
}

/// The built-in table. Figures checked in November 2026 against the providers' model pages:
/// - Anthropic: platform.claude.com/docs/en/about-claude/models/overview, the per-model pages
///   (platform.claude.com/docs/en/models/opus-4-6/overview: "Context window: 1M tokens") and
///   platform.claude.com/docs/en/build-with-claude/context-windows (Opus 4.6 and later and
///   Sonnet 4.6 and later read 1M tokens; "other Claude models, including Claude Sonnet 4.5,
///   have a 200k-token context window"; the 1M beta of Sonnet 4/4.5 was retired, so they are
///   listed at 200k).
/// - OpenAI: platform.openai.com/docs/models (GPT-5 family: 400,000 context, 128,000 max output,
///   so 272,000 input; GPT-4.1: 1,047,576; GPT-4o: 128,000; o1/o3/o4-mini: 200,000).
///   Later GPT-5.x variants whose figures vary by surface fall back to the GPT-5 input limit.
/// - Google: ai.google.dev/gemini-api/docs/models (input token limit 1,048,576 for Gemini 2.0,
///   2.5, 3 and 3.1 text models; 2,097,152 for Gemini 1.5 Pro; 32,768 for 2.5 Flash Image;
///   65,536 for 3 Pro Image).
///
/// Order does not matter: the longest matching prefix wins.
const TABLE: &[Entry] = &[
    // Anthropic: 1M-token generation.
    e("claude-fable", 1_000_000),
    e("claude-mythos", 1_000_000),
    e("claude-opus-5", 1_000_000),
    e("claude-sonnet-5", 1_000_000),
    e("claude-haiku-5", 1_000_000),
    e("claude-opus-4-8", 1_000_000),
    e("claude-opus-4-7", 1_000_000),
    e("claude-opus-4-6", 1_000_000),
    e("claude-sonnet-4-6", 1_000_000),
    // Anthropic: 200k-token models (and the fallback for unlisted Claude 4 variants).
    e("claude-opus-4-5", 200_000),
    e("claude-opus-4-1", 200_000),
    e("claude-opus-4", 200_000),
    e("claude-sonnet-4-5", 200_000),
    e("claude-sonnet-4", 200_000),
    e("claude-haiku-4-5", 200_000),
    e("claude-haiku-4", 200_000),
    e("claude-3", 200_000),
    // OpenAI.
    e("gpt-5", 272_000),
    e("gpt-4.1", 1_047_576),
    e("gpt-4o", 128_000),
    e("gpt-4-turbo", 128_000),
    e("gpt-4", 8_192),
    e("gpt-3.5-turbo", 16_385),
    e("gpt-oss", 131_072),
    e("o1", 200_000),
    e("o1-mini", 128_000),
    e("o1-preview", 128_000),
    e("o3", 200_000),
    e("o4-mini", 200_000),
    e("codex-mini", 200_000),
    // Google.
    e("gemini-3", 1_048_576),
    e("gemini-3-pro-image", 65_536),
    e("gemini-2.5", 1_048_576),
    e("gemini-2.5-flash-image", 32_768),
    e("gemini-2.0", 1_048_576),
    e("gemini-1.5-pro", 2_097_152),
    e("gemini-1.5-flash", 1_048_576),
];

/// Resolves the context window for `model`.
///
/// Precedence: `override_tokens` (a per-session or configured override), then a `[1m]` suffix on
/// the id, then the built-in table, then `default_tokens` with a [`WindowSource::Default`] that
/// names the unknown model.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] when `override_tokens` or `default_tokens` is outside
/// [`MIN_WINDOW`]..=[`MAX_WINDOW`].
pub fn resolve_window(
    model: Option<&str>,
    override_tokens: Option<u64>,
    default_tokens: u64,
) -> Result<ContextWindow> {
    if let Some(tokens) = override_tokens {
        return ContextWindow::overridden(tokens);
    }
    validate_window(default_tokens, "default context window")?;
    let raw = model.map(str::trim).filter(|m| !m.is_empty());
    let Some(raw) = raw else {
        return Ok(ContextWindow {
            tokens: default_tokens,
            source: WindowSource::Default { model: None },
        });
    };
    let lowered = raw.to_ascii_lowercase();
    if lowered.contains("[1m]") {
        return Ok(ContextWindow {
            tokens: ONE_MILLION,
            source: WindowSource::OneMillionSuffix,
        });
    }
    let id = normalize(&lowered);
    match lookup(id) {
        Some(entry) => Ok(ContextWindow {
            tokens: entry.tokens,
            source: WindowSource::Table {
                entry: entry.prefix.to_string(),
            },
        }),
        None => Ok(ContextWindow {
            tokens: default_tokens,
            source: WindowSource::Default {
                model: Some(raw.to_string()),
            },
        }),
    }
}

/// Strips routing prefixes so the id starts with the model family: `openai/gpt-5` and
/// `models/gemini-2.5-pro` lose everything up to the last `/`, Bedrock ids
/// (`us.anthropic.claude-...`) lose everything up to `anthropic.`.
fn normalize(lowered: &str) -> &str {
    let tail = lowered.rsplit('/').next().unwrap_or(lowered);
    match tail.find("anthropic.") {
        Some(at) => &tail[at + "anthropic.".len()..],
        None => tail,
    }
}

fn lookup(id: &str) -> Option<&'static Entry> {
    TABLE
        .iter()
        .filter(|entry| matches_at_boundary(id, entry.prefix))
        .max_by_key(|entry| entry.prefix.len())
}

fn matches_at_boundary(id: &str, prefix: &str) -> bool {
    match id.strip_prefix(prefix) {
        Some(rest) => rest.is_empty() || rest.starts_with(['-', '.', '@', ':', '_']),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn window(model: &str) -> ContextWindow {
        resolve_window(Some(model), None, DEFAULT_WINDOW).unwrap()
    }

    #[test]
    fn dated_and_routed_ids_match_their_family() {
        let cases = [
            ("claude-sonnet-4-5-20250929", 200_000, "claude-sonnet-4-5"),
            ("claude-sonnet-4-5", 200_000, "claude-sonnet-4-5"),
            ("claude-opus-4-6", 1_000_000, "claude-opus-4-6"),
            ("claude-opus-4-1-20250805", 200_000, "claude-opus-4-1"),
            ("claude-haiku-4-5-20251001", 200_000, "claude-haiku-4-5"),
            ("claude-3-7-sonnet-20250219", 200_000, "claude-3"),
            ("anthropic/claude-opus-4-6", 1_000_000, "claude-opus-4-6"),
            (
                "us.anthropic.claude-haiku-4-5-20251001-v1:0",
                200_000,
                "claude-haiku-4-5",
            ),
            ("claude-sonnet-4-5@20250929", 200_000, "claude-sonnet-4-5"),
            ("gpt-5", 272_000, "gpt-5"),
            ("gpt-5-codex", 272_000, "gpt-5"),
            ("gpt-5.1-2025-11-13", 272_000, "gpt-5"),
            ("openai/gpt-4.1-mini", 1_047_576, "gpt-4.1"),
            ("gpt-4.1-2025-04-14", 1_047_576, "gpt-4.1"),
            ("gpt-4o-2024-08-06", 128_000, "gpt-4o"),
            ("gpt-4-0613", 8_192, "gpt-4"),
            ("o3", 200_000, "o3"),
            ("o3-mini-2025-01-31", 200_000, "o3"),
            ("o1-mini", 128_000, "o1-mini"),
            ("o4-mini", 200_000, "o4-mini"),
            ("gemini-2.5-pro", 1_048_576, "gemini-2.5"),
            ("models/gemini-2.5-flash-lite", 1_048_576, "gemini-2.5"),
            (
                "gemini-2.5-flash-image-preview",
                32_768,
                "gemini-2.5-flash-image",
            ),
            ("gemini-3-pro-preview", 1_048_576, "gemini-3"),
            ("gemini-3.1-pro-preview", 1_048_576, "gemini-3"),
            ("gemini-1.5-pro-002", 2_097_152, "gemini-1.5-pro"),
            ("CLAUDE-OPUS-4-6", 1_000_000, "claude-opus-4-6"),
        ];
        for (model, tokens, entry) in cases {
            let w = window(model);
            assert_eq!(w.tokens, tokens, "{model}");
            assert_eq!(
                w.source,
                WindowSource::Table {
                    entry: entry.to_string()
                },
                "{model}"
            );
        }
    }

    #[test]
    fn a_prefix_only_matches_at_a_boundary() {
        // "o3" must not claim "o30-preview"; "gpt-4" must not claim "gpt-4o-like".
        assert!(window("o30-preview").is_assumed());
        assert_eq!(window("gpt-4o").tokens, 128_000);
        assert!(window("gpt-40").is_assumed());
    }

    #[test]
    fn unlisted_variants_fall_back_to_the_smaller_family_window() {
        assert_eq!(window("claude-opus-4-9").tokens, 200_000);
        assert_eq!(window("gpt-5.9-pro").tokens, 272_000);
    }

    #[test]
    fn unknown_models_get_the_default_and_say_so() {
        let w = window("mystery-model-7b");
        assert_eq!(w.tokens, DEFAULT_WINDOW);
        assert!(w.is_assumed());
        assert!(
            w.describe().contains("mystery-model-7b"),
            "{}",
            w.describe()
        );
        let none = resolve_window(None, None, 64_000).unwrap();
        assert_eq!(none.tokens, 64_000);
        assert_eq!(none.source, WindowSource::Default { model: None });
        assert!(
            resolve_window(Some("  "), None, DEFAULT_WINDOW)
                .unwrap()
                .is_assumed()
        );
    }

    #[test]
    fn one_million_suffix_and_override() {
        let w = window("claude-sonnet-4-5[1m]");
        assert_eq!(
            (w.tokens, w.source),
            (1_000_000, WindowSource::OneMillionSuffix)
        );
        let o = resolve_window(Some("claude-opus-4-6"), Some(200_000), DEFAULT_WINDOW).unwrap();
        assert_eq!((o.tokens, o.source), (200_000, WindowSource::Override));
    }

    #[test]
    fn zero_and_absurd_windows_are_rejected() {
        for bad in [0, 1, 1_023, MAX_WINDOW + 1, u64::MAX] {
            let err = resolve_window(Some("gpt-5"), Some(bad), DEFAULT_WINDOW).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            assert!(
                err.message().contains(&bad.to_string()),
                "{}",
                err.message()
            );
            let err = resolve_window(Some("gpt-5"), None, bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
        }
    }

    #[test]
    fn every_table_entry_is_valid_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for entry in TABLE {
            assert!(
                validate_window(entry.tokens, entry.prefix).is_ok(),
                "{}",
                entry.prefix
            );
            assert!(
                seen.insert(entry.prefix),
                "duplicate entry {}",
                entry.prefix
            );
            assert_eq!(entry.prefix, entry.prefix.to_ascii_lowercase());
        }
    }
}
