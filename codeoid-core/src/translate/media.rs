//! Image media types and `data:` URLs shared by the provider modules.
//!
//! Anthropic and Gemini require a media type on inline images; canonical images may lack one
//! (an importer that did not know it). The documented repair is to sniff it from the first bytes
//! of the base64 data (PNG, JPEG, GIF, WebP); when that fails the translator drops the image and
//! reports it rather than sending a request the provider will reject. OpenAI carries inline images
//! as `data:{media type};base64,{data}` URLs.

use std::borrow::Cow;

use super::loss::{LossKind, Losses};

/// The media type to send with base64 image `data` whose canonical media type is `declared`:
/// the declared one, or one sniffed from the bytes (reported as a change). `None` when neither is
/// known; the image is then reported as dropped and the caller leaves it out.
pub(crate) fn inline_media_type<'a>(
    declared: Option<&'a str>,
    data: &str,
    target: &str,
    at: (usize, usize),
    losses: &mut Losses,
) -> Option<Cow<'a, str>> {
    if let Some(media_type) = declared {
        return Some(Cow::Borrowed(media_type));
    }
    match sniff(data) {
        Some(media_type) => {
            losses.part(
                at,
                LossKind::Changed,
                format!("image without a media type sent to {target} as {media_type}, sniffed from its bytes"),
            );
            Some(Cow::Borrowed(media_type))
        }
        None => {
            losses.part(
                at,
                LossKind::Dropped,
                format!(
                    "inline image without a media type, and its bytes are not PNG, JPEG, GIF or \
                     WebP; {target} requires one"
                ),
            );
            None
        }
    }
}

/// The media type of base64 image data, sniffed from its magic bytes.
pub(crate) fn sniff(base64: &str) -> Option<&'static str> {
    // The base64 of each format's magic number; long enough to be unambiguous.
    const MAGIC: [(&str, &str); 4] = [
        ("iVBORw0KGgo", "image/png"),
        ("/9j/", "image/jpeg"),
        ("R0lGOD", "image/gif"),
        ("UklGR", "image/webp"),
    ];
    MAGIC
        .iter()
        .find(|(prefix, _)| base64.starts_with(prefix))
        .map(|(_, media_type)| *media_type)
}

/// `data:{media_type};base64,{data}`.
pub(crate) fn data_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

/// `(media_type, data)` of a base64 `data:` URL; `None` for any other URL.
pub(crate) fn parse_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (header, data) = rest.split_once(',')?;
    let media_type = header.strip_suffix(";base64")?;
    Some((media_type, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_common_formats_and_refuses_to_guess() {
        assert_eq!(sniff("iVBORw0KGgoAAAANSUhEUg"), Some("image/png"));
        assert_eq!(sniff("/9j/4AAQSkZJRg"), Some("image/jpeg"));
        assert_eq!(sniff("R0lGODlhAQABAIAAAP"), Some("image/gif"));
        assert_eq!(sniff("UklGRiQAAABXRUJQ"), Some("image/webp"));
        assert_eq!(sniff("SGVsbG8="), None);
    }

    #[test]
    fn data_urls_round_trip_and_plain_urls_are_not_data() {
        let url = data_url("image/png", "AAAA");
        assert_eq!(parse_data_url(&url), Some(("image/png", "AAAA")));
        assert_eq!(parse_data_url("https://example.com/a.png"), None);
        assert_eq!(parse_data_url("data:text/plain,hello"), None);
    }
}
