//! Image media types and `data:` URLs shared by the provider modules.
//!
//! Anthropic and Gemini require a media type on inline images; canonical images may lack one
//! (an importer that did not know it). The documented repair is to sniff it from the first bytes
//! of the base64 data (PNG, JPEG, GIF, WebP); when that fails the translator drops the image and
//! reports it rather than sending a request the provider will reject. OpenAI carries inline images
//! as `data:{media type};base64,{data}` URLs.
//!
//! Every writer also checks the media type against the image types its format accepts
//! ([`accepted_images`]), so that a PDF or a video that an importer recorded as an image, or a
//! BMP, is left out and reported instead of failing the whole request. The check is one table
//! for all formats; it does not convert images.

use std::borrow::Cow;

use crate::canonical::{Image, ToolResult, ToolResultPart};

use super::backend::Format;
use super::loss::{LossKind, Losses};

/// A tool result's texts and images apart, for formats whose result carries only text and sends
/// its images after it: each image as `image` makes it (`None`: left out, its loss reported by
/// `image`), and a text following a kept image reported as moved before the images.
pub(crate) fn texts_then_images<'r, T>(
    result: &'r ToolResult,
    at: (usize, usize),
    losses: &mut Losses,
    mut image: impl FnMut(&'r Image, &mut Losses) -> Option<T>,
) -> (Vec<&'r str>, Vec<T>) {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for part in &result.parts {
        match part {
            ToolResultPart::Text { text } => {
                if !images.is_empty() {
                    losses.part(
                        at,
                        LossKind::Moved,
                        "tool result text after an image reads back before the images",
                    );
                }
                texts.push(text.as_str());
            }
            ToolResultPart::Image(img) => images.extend(image(img, losses)),
        }
    }
    (texts, images)
}

/// The image media types `format` accepts: JPEG, PNG, GIF and WebP for Anthropic and OpenAI
/// (their documented lists); PNG, JPEG, WebP, HEIC and HEIF for Gemini, which documents no GIF.
pub(crate) const fn accepted_images(format: Format) -> &'static [&'static str] {
    match format {
        Format::Anthropic | Format::OpenaiChat | Format::OpenaiResponses => {
            &["image/jpeg", "image/png", "image/gif", "image/webp"]
        }
        Format::Gemini => &[
            "image/png",
            "image/jpeg",
            "image/webp",
            "image/heic",
            "image/heif",
        ],
    }
}

/// Whether `format` accepts an image of `media_type`; reports the image as dropped when not.
fn accepts(format: Format, media_type: &str, at: (usize, usize), losses: &mut Losses) -> bool {
    let accepted = accepted_images(format);
    if accepted.contains(&media_type) {
        return true;
    }
    losses.part(
        at,
        LossKind::Dropped,
        format!(
            "{media_type} image; {} accepts {} only",
            format.vendor(),
            accepted.join(", ")
        ),
    );
    false
}

/// Whether `image` may be sent to `format` as far as its declared media type goes: an image
/// without one passes (base64 data is sniffed by [`inline_media_type`]), an image whose type
/// `format` does not accept is reported as dropped and the caller leaves it out.
pub(crate) fn accepts_declared(
    image: &Image,
    format: Format,
    at: (usize, usize),
    losses: &mut Losses,
) -> bool {
    image
        .media_type
        .as_deref()
        .is_none_or(|media_type| accepts(format, media_type, at, losses))
}

/// The media type to send to `format` with base64 image `data` whose canonical media type is
/// `declared`: the declared one (checked by [`accepts_declared`] before), or one sniffed from the
/// bytes (reported as a change). `None` when neither is known, or the sniffed type is one
/// `format` does not accept; the image is then reported as dropped and the caller leaves it out.
pub(crate) fn inline_media_type<'a>(
    declared: Option<&'a str>,
    data: &str,
    format: Format,
    at: (usize, usize),
    losses: &mut Losses,
) -> Option<Cow<'a, str>> {
    if let Some(media_type) = declared {
        return Some(Cow::Borrowed(media_type));
    }
    let target = format.vendor();
    match sniff(data) {
        Some(media_type) if !accepts(format, media_type, at, losses) => None,
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
    fn images_of_types_a_format_does_not_accept_are_dropped_with_a_loss() {
        use crate::canonical::ImageSource;
        let image = |media_type: Option<&str>| Image {
            media_type: media_type.map(Into::into),
            source: ImageSource::Url {
                url: "https://example.com/x".into(),
            },
        };
        let mut losses = Losses::default();
        for format in Format::ALL {
            assert!(accepts_declared(
                &image(Some("image/png")),
                format,
                (0, 0),
                &mut losses
            ));
            assert!(accepts_declared(&image(None), format, (0, 0), &mut losses));
            assert!(!accepts_declared(
                &image(Some("application/pdf")),
                format,
                (0, 1),
                &mut losses
            ));
            assert!(!accepts_declared(
                &image(Some("video/mp4")),
                format,
                (0, 2),
                &mut losses
            ));
        }
        assert_eq!(losses.list.len(), 8);
        assert!(losses.list.iter().all(|l| l.kind == LossKind::Dropped));
        assert_eq!(
            losses.list[0].what,
            "application/pdf image; anthropic accepts image/jpeg, image/png, image/gif, \
             image/webp only"
        );
        // Gemini documents no GIF: a sniffed one is dropped too.
        let mut losses = Losses::default();
        let gif = "R0lGODlhAQABAIAAAP";
        assert_eq!(
            inline_media_type(None, gif, Format::Gemini, (0, 0), &mut losses),
            None
        );
        assert_eq!(
            inline_media_type(None, gif, Format::Anthropic, (0, 0), &mut losses).as_deref(),
            Some("image/gif")
        );
        let kinds: Vec<LossKind> = losses.list.iter().map(|l| l.kind).collect();
        assert_eq!(kinds, [LossKind::Dropped, LossKind::Changed]);
    }

    #[test]
    fn data_urls_round_trip_and_plain_urls_are_not_data() {
        let url = data_url("image/png", "AAAA");
        assert_eq!(parse_data_url(&url), Some(("image/png", "AAAA")));
        assert_eq!(parse_data_url("https://example.com/a.png"), None);
        assert_eq!(parse_data_url("data:text/plain,hello"), None);
    }
}
