//! Reading typed fields out of untrusted log JSON: strings, token counts, timestamps, images.
//!
//! Logs are written by other programs, by many versions of them, and sometimes cut short, so
//! every accessor here is total: a missing or mistyped field is `None` (or 0 for counts), never
//! a panic. Deciding whether a missing field makes a record malformed is the caller's job.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::canonical::{Image, ImageSource};

/// `obj[key]` as a string slice.
pub(crate) fn str_field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// `obj[key]` as an owned, non-empty string.
pub(crate) fn string_field(obj: &Map<String, Value>, key: &str) -> Option<String> {
    str_field(obj, key)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `obj[key]` as a boolean; anything else is `false`.
pub(crate) fn flag(obj: &Map<String, Value>, key: &str) -> bool {
    obj.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// `obj[key]` as a token count: a non-negative integer (or an integral float, as some writers
/// emit); anything else counts as 0.
pub(crate) fn count(obj: &Map<String, Value>, key: &str) -> u64 {
    match obj.get(key) {
        Some(Value::Number(n)) => n.as_u64().unwrap_or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0 && *f < 9.0e15)
                .map_or(0, |f| f as u64)
        }),
        _ => 0,
    }
}

/// Outcome of reading a timestamp field.
pub(crate) enum Stamp {
    /// No such field.
    Missing,
    /// A valid RFC 3339 instant.
    Valid(DateTime<Utc>),
    /// Present but not an RFC 3339 string; the text says what it was.
    Invalid(String),
}

/// Reads `obj[key]` as an RFC 3339 timestamp.
pub(crate) fn timestamp(obj: &Map<String, Value>, key: &str) -> Stamp {
    match obj.get(key) {
        None | Some(Value::Null) => Stamp::Missing,
        Some(Value::String(s)) => match DateTime::parse_from_rfc3339(s) {
            Ok(t) => Stamp::Valid(t.with_timezone(&Utc)),
            Err(_) => Stamp::Invalid(format!("timestamp {s:?} is not RFC 3339; dropped it")),
        },
        Some(other) => Stamp::Invalid(format!(
            "timestamp is a JSON {}, not a string; dropped it",
            super::jsonl::kind_of(other)
        )),
    }
}

/// An image from a `data:<media type>;base64,<data>` URL or any other URL.
pub(crate) fn image_from_url(url: &str) -> Image {
    if let Some(rest) = url.strip_prefix("data:") {
        if let Some((media, data)) = rest.split_once(";base64,") {
            return Image {
                media_type: (!media.is_empty()).then(|| media.to_owned()),
                source: ImageSource::Base64 {
                    data: data.to_owned(),
                },
            };
        }
    }
    Image {
        media_type: None,
        source: ImageSource::Url {
            url: url.to_owned(),
        },
    }
}

/// An Anthropic-style image `source` object (`base64`, `url` or `file`), when it is one.
pub(crate) fn anthropic_image(block: &Map<String, Value>) -> Option<Image> {
    let source = block.get("source")?.as_object()?;
    let media_type = string_field(source, "media_type");
    let source = match str_field(source, "type")? {
        "base64" => ImageSource::Base64 {
            data: str_field(source, "data")?.to_owned(),
        },
        "url" => ImageSource::Url {
            url: str_field(source, "url")?.to_owned(),
        },
        "file" => ImageSource::File {
            file_id: str_field(source, "file_id")?.to_owned(),
        },
        _ => return None,
    };
    Some(Image { media_type, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_are_total() {
        let obj = json!({"a": 5, "b": -1, "c": "7", "d": 3.0, "e": 2.5});
        let obj = obj.as_object().unwrap();
        assert_eq!(count(obj, "a"), 5);
        assert_eq!(count(obj, "b"), 0);
        assert_eq!(count(obj, "c"), 0);
        assert_eq!(count(obj, "d"), 3);
        assert_eq!(count(obj, "e"), 0);
        assert_eq!(count(obj, "missing"), 0);
    }

    #[test]
    fn data_urls_become_base64_images() {
        let img = image_from_url("data:image/png;base64,AAAA");
        assert_eq!(img.media_type.as_deref(), Some("image/png"));
        assert_eq!(
            img.source,
            ImageSource::Base64 {
                data: "AAAA".into()
            }
        );
        let img = image_from_url("https://example.com/a.png");
        assert!(matches!(img.source, ImageSource::Url { .. }));
    }

    #[test]
    fn bad_timestamps_are_reported_not_fatal() {
        let obj = json!({"t": "yesterday", "u": 5, "v": "2025-06-14T11:00:00Z"});
        let obj = obj.as_object().unwrap();
        assert!(matches!(timestamp(obj, "t"), Stamp::Invalid(_)));
        assert!(matches!(timestamp(obj, "u"), Stamp::Invalid(_)));
        assert!(matches!(timestamp(obj, "v"), Stamp::Valid(_)));
        assert!(matches!(timestamp(obj, "w"), Stamp::Missing));
    }
}
