//! Tool call ids on the wire: what each format accepts, and a deterministic, reversible remapping
//! for ids it does not.
//!
//! Constraints: Anthropic ids must match `^[a-zA-Z0-9_-]+$`; OpenAI Chat rejects ids longer than 40
//! characters and Responses `call_id`s longer than 64; Gemini accepts any string.
//!
//! The mapping is a bijection so that no table has to travel with the JSON:
//! - an id the format accepts, and which does not start with [`ENCODED_PREFIX`], is sent as is;
//! - any other id is sent as [`ENCODED_PREFIX`] + the lowercase hex of its UTF-8 bytes, which every
//!   format accepts and which [`canonical_id`] decodes back exactly;
//! - only when that would exceed the format's length limit is the id replaced by
//!   [`HASHED_PREFIX`] + 32 hex digits of its SHA-256. That one cannot be decoded; the translator
//!   reports it as a [`crate::translate::LossKind::Changed`].
//!
//! Ids the models themselves generate (`toolu_…`, `call_…`) never start with the prefixes, so
//! decoding leaves them alone.

use std::borrow::Cow;
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use super::backend::Format;
use super::loss::{LossKind, Losses};

/// Marks an id sent as hex because the format does not accept it as is.
pub const ENCODED_PREFIX: &str = "cdx_";
/// Marks an id replaced by its hash because even the hex form was too long for the format.
pub const HASHED_PREFIX: &str = "cdh_";

/// An id as sent to a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WireId<'a> {
    /// Sent unchanged.
    Same(&'a str),
    /// Hex-encoded; decodes back.
    Encoded(String),
    /// Hashed; does not decode back.
    Hashed(String),
}

#[cfg(test)]
impl WireId<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            WireId::Same(id) => id,
            WireId::Encoded(id) | WireId::Hashed(id) => id,
        }
    }
}

fn max_len(format: Format) -> Option<usize> {
    match format {
        Format::Anthropic | Format::Gemini => None,
        Format::OpenaiChat => Some(40),
        Format::OpenaiResponses => Some(64),
    }
}

fn accepts(format: Format, id: &str) -> bool {
    if id.is_empty() || max_len(format).is_some_and(|max| id.chars().count() > max) {
        return false;
    }
    match format {
        Format::Anthropic => id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
        _ => true,
    }
}

/// The id to send for canonical tool call id `id` in `format`.
pub(crate) fn wire_id(format: Format, id: &str) -> WireId<'_> {
    if accepts(format, id) && !id.starts_with(ENCODED_PREFIX) {
        return WireId::Same(id);
    }
    let mut encoded = String::with_capacity(ENCODED_PREFIX.len() + 2 * id.len());
    encoded.push_str(ENCODED_PREFIX);
    for byte in id.bytes() {
        // Writing to a String cannot fail.
        let _ = write!(encoded, "{byte:02x}");
    }
    if max_len(format).is_none_or(|max| encoded.len() <= max) {
        return WireId::Encoded(encoded);
    }
    let digest = Sha256::digest(id.as_bytes());
    let mut hashed = String::with_capacity(HASHED_PREFIX.len() + 32);
    hashed.push_str(HASHED_PREFIX);
    for byte in &digest[..16] {
        let _ = write!(hashed, "{byte:02x}");
    }
    WireId::Hashed(hashed)
}

/// The wire id for `id`, reporting a hashed (irreversible) replacement as a change at `at`.
pub(crate) fn send<'a>(
    format: Format,
    id: &'a str,
    at: (usize, usize),
    losses: &mut Losses,
) -> Cow<'a, str> {
    match wire_id(format, id) {
        WireId::Same(id) => Cow::Borrowed(id),
        WireId::Encoded(wire) => Cow::Owned(wire),
        WireId::Hashed(wire) => {
            losses.part(
                at,
                LossKind::Changed,
                format!(
                    "tool call id {id:?} is too long for {format} and was replaced by {wire:?}, \
                     which reads back as is"
                ),
            );
            Cow::Owned(wire)
        }
    }
}

/// The canonical id for an id read from provider JSON: decodes [`ENCODED_PREFIX`] ids, returns
/// every other id unchanged.
pub fn canonical_id(wire: &str) -> Cow<'_, str> {
    let Some(hex) = wire.strip_prefix(ENCODED_PREFIX) else {
        return Cow::Borrowed(wire);
    };
    if hex.len() % 2 != 0 || hex.is_empty() {
        return Cow::Borrowed(wire);
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect();
    match bytes.and_then(|b| String::from_utf8(b).ok()) {
        Some(decoded) => Cow::Owned(decoded),
        None => Cow::Borrowed(wire),
    }
}

/// The id `format` receives for canonical tool call id `id`: unchanged when the format accepts
/// it, otherwise a deterministic replacement that [`canonical_id`] maps back (unless the
/// replacement had to be a hash, see the module documentation).
pub fn provider_id(format: Format, id: &str) -> Cow<'_, str> {
    match wire_id(format, id) {
        WireId::Same(id) => Cow::Borrowed(id),
        WireId::Encoded(id) | WireId::Hashed(id) => Cow::Owned(id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anthropic_ok(id: &str) -> bool {
        !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    #[test]
    fn accepted_ids_pass_through_unchanged() {
        assert_eq!(
            wire_id(Format::Anthropic, "toolu_01ABC-x"),
            WireId::Same("toolu_01ABC-x")
        );
        assert_eq!(
            wire_id(Format::OpenaiChat, "call|1"),
            WireId::Same("call|1")
        );
    }

    #[test]
    fn foreign_ids_are_remapped_for_anthropic_and_mapped_back() {
        for id in [
            "functions.read_file:0",
            "call abc",
            "ünï",
            "fc_1/2",
            "cdx_looks_encoded",
        ] {
            let wire = wire_id(Format::Anthropic, id);
            assert!(matches!(wire, WireId::Encoded(_)), "{id}");
            assert!(anthropic_ok(wire.as_str()), "{}", wire.as_str());
            assert_eq!(canonical_id(wire.as_str()), id);
            // Deterministic: the same id always maps to the same wire id.
            assert_eq!(wire_id(Format::Anthropic, id), wire);
        }
    }

    #[test]
    fn ids_too_long_even_as_hex_are_hashed_within_the_limit() {
        let long = "x".repeat(41);
        let wire = wire_id(Format::OpenaiChat, &long);
        assert!(matches!(wire, WireId::Hashed(_)));
        assert_eq!(wire.as_str().len(), 36);
        assert!(anthropic_ok(wire.as_str()));
        assert_eq!(canonical_id(wire.as_str()), wire.as_str());
        assert!(matches!(
            wire_id(Format::OpenaiResponses, &long),
            WireId::Same(_)
        ));
    }

    #[test]
    fn provider_generated_ids_never_decode() {
        for id in ["toolu_01", "call_xyz", "cdx_zz", "cdx_", "cdx_f", "cdx_ff"] {
            assert_eq!(canonical_id(id), id);
        }
    }
}
