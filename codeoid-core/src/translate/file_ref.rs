//! Provider file references: which provider issued a file id, so that a writer never sends one
//! to a provider that cannot resolve it.
//!
//! A canonical image can name a file the provider stores (`{"kind": "file", "file_id"}`): an
//! Anthropic Files API id, an OpenAI file id, a Gemini file URI. Only the provider that issued it
//! can resolve it, and a request naming another provider's file fails whole. The issuer is not
//! recorded on the image (the canonical form predates this check, and stored turns must keep
//! reading); it is inferred from the id's documented shape, which differs between providers:
//!
//! | issuer | shape |
//! |---|---|
//! | `anthropic` | `file_…` (`file_011CNha8iCJcU1wXNR6q4V8w`) |
//! | `openai` | `file-…` (`file-6F2ksmvXxt4VdoqmHRw6kL`) |
//! | `gemini` | `files/…`, or a URI on `generativelanguage.googleapis.com` |
//!
//! A reference of another shape (a `gs://` object, which Vertex resolves) has no known issuer
//! and is sent as it is. Writers drop, with a loss, a reference whose issuer is not the backend's
//! provider. This concerns file ids only: URLs anyone can fetch are sent everywhere.

use crate::canonical::{Image, ImageSource};

use super::backend::{Backend, Format};
use super::loss::{LossKind, Losses};
use super::media;

/// The provider that issued `file_id`, when its shape says.
pub(crate) fn issuer(file_id: &str) -> Option<&'static str> {
    if file_id.starts_with("file_") {
        Some("anthropic")
    } else if file_id.starts_with("file-") {
        Some("openai")
    } else if file_id.starts_with("files/")
        || file_id.contains("generativelanguage.googleapis.com/")
    {
        Some("gemini")
    } else {
        None
    }
}

/// Whether `image` can be sent to `backend` in `format` at all: a media type the format accepts
/// ([`media::accepts_declared`]) and a source it can resolve ([`resolvable`]). What fails is
/// reported as dropped, and the caller leaves the image out.
pub(crate) fn sendable(
    image: &Image,
    format: Format,
    backend: &Backend,
    at: (usize, usize),
    losses: &mut Losses,
) -> bool {
    media::accepts_declared(image, format, at, losses) && resolvable(image, backend, at, losses)
}

/// Whether `image` can be sent to `backend` as far as its source goes: `false` (reported as
/// dropped) for a file reference another provider issued.
pub(crate) fn resolvable(
    image: &Image,
    backend: &Backend,
    at: (usize, usize),
    losses: &mut Losses,
) -> bool {
    let ImageSource::File { file_id } = &image.source else {
        return true;
    };
    match issuer(file_id) {
        Some(issuer) if issuer != backend.provider => {
            losses.part(
                at,
                LossKind::Dropped,
                format!(
                    "image file {file_id:?} is stored by {issuer}; {} cannot resolve another \
                     provider's files (upload it there, or record the image inline)",
                    backend.provider
                ),
            );
            false
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::translate::Format;

    #[test]
    fn issuers_are_told_apart_by_the_shape_of_their_ids() {
        assert_eq!(issuer("file_011CNha8iCJcU1wXNR6q4V8w"), Some("anthropic"));
        assert_eq!(issuer("file-6F2ksmvXxt4VdoqmHRw6kL"), Some("openai"));
        assert_eq!(issuer("files/abc-123"), Some("gemini"));
        assert_eq!(
            issuer("https://generativelanguage.googleapis.com/v1beta/files/abc-123"),
            Some("gemini")
        );
        assert_eq!(issuer("gs://bucket/a.png"), None);
        assert_eq!(issuer("abc"), None);
    }

    #[test]
    fn only_the_issuer_gets_a_file_reference() {
        let image = |file_id: &str| Image {
            media_type: None,
            source: ImageSource::File {
                file_id: file_id.into(),
            },
        };
        let mut losses = Losses::default();
        let gemini = Backend::new(Format::Gemini);
        assert!(resolvable(&image("files/x"), &gemini, (0, 0), &mut losses));
        assert!(resolvable(
            &image("gs://b/x.png"),
            &gemini,
            (0, 0),
            &mut losses
        ));
        assert!(losses.list.is_empty());
        assert!(!resolvable(&image("file_01"), &gemini, (0, 1), &mut losses));
        assert_eq!(losses.list[0].kind, LossKind::Dropped);
        assert!(
            losses.list[0].what.contains("stored by anthropic"),
            "{:?}",
            losses.list
        );
        // A compatible provider in OpenAI's format cannot resolve OpenAI's files either.
        let compatible = Backend::new(Format::OpenaiResponses).with_provider("xai");
        assert!(!resolvable(
            &image("file-1"),
            &compatible,
            (0, 2),
            &mut losses
        ));
    }
}
