//! Who may receive a thinking block: signatures go back only to the provider (and model family)
//! that produced them; everything else is dropped or, by explicit option, rendered as text.
//!
//! A thinking part is *native* to a backend when the backend's format can carry it as thinking and:
//! - it is signed (or redacted) and the signature's provider and model family match the backend
//!   ([`SignatureMatch`]); or
//! - it is unsigned, the format has an unsigned form (Gemini `thought` parts, OpenAI-compatible
//!   `reasoning_content`), and the turn that holds it came from the same provider or does not say.
//!
//! Everything else is *foreign* and handled by [`ForeignThinking`]. Reading back stamps signatures
//! with the backend's provider and model, so sending a native signature whose recorded model
//! differs from the backend's is reported as a change.

use crate::canonical::{Signature, Thinking};

use super::backend::{Backend, ForeignThinking, Format, Options, SignatureMatch};
use super::loss::{LossKind, Losses};

/// Whether a thinking part may be sent to a backend as thinking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Native,
    Foreign,
}

/// The model family: the id without date, version and preview suffixes; every Claude model is one
/// family because Anthropic signatures are valid across them.
pub(crate) fn family<'m>(provider: &str, model: &'m str) -> &'m str {
    if provider == "anthropic" {
        return "";
    }
    let mut family = model.split('@').next().unwrap_or(model);
    while let Some((head, last)) = family.rsplit_once('-') {
        let dated = last.len() >= 2 && last.bytes().all(|b| b.is_ascii_digit());
        if dated || matches!(last, "latest" | "preview" | "exp") {
            family = head;
        } else {
            break;
        }
    }
    family
}

/// Whether `signature` may be sent to `backend`.
pub(crate) fn signature_matches(
    signature: &Signature,
    backend: &Backend,
    rule: SignatureMatch,
) -> bool {
    if signature.provider != backend.provider {
        return false;
    }
    let (Some(made_by), Some(target)) = (&signature.model, &backend.model) else {
        return true;
    };
    match rule {
        SignatureMatch::Provider => true,
        SignatureMatch::Family => {
            family(&signature.provider, made_by) == family(&backend.provider, target)
        }
        SignatureMatch::Model => made_by == target,
    }
}

/// Classifies `thinking` held by a turn from `turn_provider` for `backend`.
pub(crate) fn classify(
    thinking: &Thinking,
    turn_provider: Option<&str>,
    backend: &Backend,
    options: &Options,
) -> Verdict {
    let signed_slot = matches!(
        backend.format,
        Format::Anthropic | Format::OpenaiResponses | Format::Gemini
    );
    let native = match &thinking.signature {
        _ if thinking.redacted && backend.format != Format::Anthropic => false,
        Some(signature) => {
            signed_slot && signature_matches(signature, backend, options.signature_match)
        }
        None if thinking.redacted => false,
        None => {
            let unsigned_slot = match backend.format {
                Format::Gemini => true,
                Format::OpenaiChat => options.chat_reasoning_content,
                Format::Anthropic | Format::OpenaiResponses => false,
            };
            unsigned_slot && turn_provider.is_none_or(|p| p == backend.provider)
        }
    };
    if native {
        Verdict::Native
    } else {
        Verdict::Foreign
    }
}

/// Reports that a native signature will read back stamped with the backend's provider and model.
pub(crate) fn note_restamp(
    signature: &Signature,
    backend: &Backend,
    at: (usize, usize),
    losses: &mut Losses,
) {
    if signature.model.as_deref() != backend.model.as_deref() {
        losses.part(
            at,
            LossKind::Changed,
            format!(
                "signature made by model {:?} reads back as made by {:?}",
                signature.model.as_deref().unwrap_or("unknown"),
                backend.model.as_deref().unwrap_or("unknown")
            ),
        );
    }
}

fn describe(thinking: &Thinking) -> String {
    let what = if thinking.redacted {
        "redacted thinking"
    } else {
        "thinking"
    };
    match &thinking.signature {
        Some(Signature {
            provider,
            model: Some(model),
            ..
        }) => format!("{what} signed by {provider} ({model})"),
        Some(Signature { provider, .. }) => format!("{what} signed by {provider}"),
        None => format!("unsigned {what}"),
    }
}

/// Handles a foreign thinking part: returns the text to send in its place, if any, and reports
/// what happened.
pub(crate) fn foreign(
    thinking: &Thinking,
    backend: &Backend,
    options: &Options,
    at: (usize, usize),
    losses: &mut Losses,
) -> Option<String> {
    let what = describe(thinking);
    let target = &backend.provider;
    if options.foreign_thinking == ForeignThinking::AsText
        && !thinking.redacted
        && !thinking.text.is_empty()
    {
        losses.part(
            at,
            LossKind::AsText,
            format!("{what} is not accepted by {target}; sent as plain text"),
        );
        return Some(format!("<thinking>\n{}\n</thinking>", thinking.text));
    }
    losses.part(
        at,
        LossKind::Dropped,
        format!("{what} is not accepted by {target}; left out"),
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(provider: &str, model: Option<&str>) -> Thinking {
        Thinking {
            text: "plan".into(),
            signature: Some(Signature {
                provider: provider.into(),
                model: model.map(Into::into),
                value: "sig".into(),
            }),
            redacted: false,
        }
    }

    #[test]
    fn families_strip_snapshot_suffixes_only() {
        assert_eq!(family("openai", "gpt-5-2025-08-07"), "gpt-5");
        assert_eq!(family("openai", "o3-mini-2025-01-31"), "o3-mini");
        assert_eq!(
            family("gemini", "gemini-2.5-pro-preview-05-06"),
            "gemini-2.5-pro"
        );
        assert_eq!(family("gemini", "gemini-2.0-flash-001"), "gemini-2.0-flash");
        assert_eq!(family("gemini", "gemini-3-pro-preview"), "gemini-3-pro");
        assert_ne!(
            family("gemini", "gemini-2.5-flash"),
            family("gemini", "gemini-2.5-flash-lite")
        );
        assert_eq!(
            family("anthropic", "claude-opus-4-1"),
            family("anthropic", "claude-sonnet-4-5")
        );
    }

    #[test]
    fn signatures_go_back_only_to_their_provider_and_family() {
        let options = Options::default();
        let claude = Backend::new(Format::Anthropic).with_model("claude-opus-4-1");
        let gpt = Backend::new(Format::OpenaiResponses).with_model("gpt-5");
        let gemini = Backend::new(Format::Gemini).with_model("gemini-2.5-pro");
        let from_claude = signed("anthropic", Some("claude-sonnet-4-5-20250929"));
        assert_eq!(
            classify(&from_claude, None, &claude, &options),
            Verdict::Native
        );
        assert_eq!(
            classify(&from_claude, None, &gpt, &options),
            Verdict::Foreign
        );
        assert_eq!(
            classify(&from_claude, None, &gemini, &options),
            Verdict::Foreign
        );
        let from_mini = signed("openai", Some("gpt-5-mini"));
        assert_eq!(classify(&from_mini, None, &gpt, &options), Verdict::Foreign);
        let by_provider = Options {
            signature_match: SignatureMatch::Provider,
            ..Options::default()
        };
        assert_eq!(
            classify(&from_mini, None, &gpt, &by_provider),
            Verdict::Native
        );
        let from_flash = signed("gemini", Some("gemini-2.5-flash"));
        assert_eq!(
            classify(&from_flash, None, &gemini, &options),
            Verdict::Foreign
        );
    }

    #[test]
    fn unsigned_thinking_is_native_only_where_the_format_has_an_unsigned_form() {
        let options = Options::default();
        let plain = Thinking {
            text: "hmm".into(),
            signature: None,
            redacted: false,
        };
        let gemini = Backend::new(Format::Gemini);
        assert_eq!(classify(&plain, None, &gemini, &options), Verdict::Native);
        assert_eq!(
            classify(&plain, Some("deepseek"), &gemini, &options),
            Verdict::Foreign
        );
        let anthropic = Backend::new(Format::Anthropic);
        assert_eq!(
            classify(&plain, None, &anthropic, &options),
            Verdict::Foreign
        );
        let deepseek = Backend::new(Format::OpenaiChat).with_provider("deepseek");
        assert_eq!(
            classify(&plain, Some("deepseek"), &deepseek, &options),
            Verdict::Foreign
        );
        let with_reasoning = Options {
            chat_reasoning_content: true,
            ..Options::default()
        };
        assert_eq!(
            classify(&plain, Some("deepseek"), &deepseek, &with_reasoning),
            Verdict::Native
        );
    }

    #[test]
    fn foreign_thinking_is_dropped_or_rendered_by_explicit_option() {
        let backend = Backend::new(Format::Gemini);
        let thinking = signed("anthropic", None);
        let mut losses = Losses::default();
        assert_eq!(
            foreign(
                &thinking,
                &backend,
                &Options::default(),
                (1, 0),
                &mut losses
            ),
            None
        );
        assert_eq!(losses.list[0].kind, LossKind::Dropped);
        let as_text = Options {
            foreign_thinking: ForeignThinking::AsText,
            ..Options::default()
        };
        let text = foreign(&thinking, &backend, &as_text, (1, 0), &mut losses).unwrap();
        assert_eq!(text, "<thinking>\nplan\n</thinking>");
        assert_eq!(losses.list[1].kind, LossKind::AsText);
    }
}
