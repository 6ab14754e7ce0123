//! Token usage as harnesses receive it: the canonical usage object, or the `usage` (Gemini:
//! `usageMetadata`) object of a provider's own response, read into canonical [`Usage`].
//!
//! Canonical `input_tokens` are the *uncached* input tokens, the way Anthropic counts them. The
//! other providers count cached tokens inside their input total, so reading their object
//! subtracts the cached part (else cached tokens would count twice and a session would rotate
//! early):
//!
//! | format | input | cache read | cache write | output |
//! |---|---|---|---|---|
//! | Anthropic | `input_tokens` | `cache_read_input_tokens` | `cache_creation_input_tokens` | `output_tokens` |
//! | OpenAI Chat | `prompt_tokens` − cached | `prompt_tokens_details.cached_tokens` | — | `completion_tokens` |
//! | OpenAI Responses | `input_tokens` − cached | `input_tokens_details.cached_tokens` | — | `output_tokens` |
//! | Gemini | `promptTokenCount` + `toolUsePromptTokenCount` − cached | `cachedContentTokenCount` | — | `candidatesTokenCount` + `thoughtsTokenCount` |
//!
//! Other fields of a provider's object (totals, reasoning details, service tiers) are ignored;
//! a count that is present must be a non-negative integer.

use serde_json::Value;

use super::Format;
use crate::canonical::{CallUsage, Usage};
use crate::error::{Error, Result};

/// Reads `value` as usage: the canonical object (`{"calls": [...]}`, or one call's
/// `input_tokens`, `output_tokens`, `cache_read_tokens`, `cache_creation_tokens` …) first; when
/// it is not that and `format` is given, the usage object of that provider's response.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] naming the field that is wrong and the shapes expected.
pub fn read_usage(value: &Value, format: Option<Format>) -> Result<Usage> {
    let canonical = if value.get("calls").is_some() {
        serde_json::from_value::<Usage>(value.clone())
    } else {
        serde_json::from_value::<CallUsage>(value.clone()).map(|call| Usage { calls: vec![call] })
    };
    let canonical_error = match canonical {
        Ok(usage) => return Ok(usage),
        Err(e) => e,
    };
    let expected = "expected {\"calls\": [...]} or one call's counts: input_tokens, \
                    output_tokens, cache_read_tokens, cache_creation_tokens (non-negative \
                    integers), primary (bool), model, request_id";
    let Some(format) = format.filter(|_| value.is_object()) else {
        return Err(Error::invalid_input(format!(
            "usage: {canonical_error}; {expected}"
        )));
    };
    provider_usage(format, value).map_err(|provider_error| {
        Error::invalid_input(format!(
            "usage is neither canonical ({canonical_error}) nor {format}'s own usage object \
             ({provider_error}); {expected}, or the usage object of the provider's response"
        ))
    })
}

/// The canonical usage of one call from `format`'s own usage object.
fn provider_usage(format: Format, value: &Value) -> std::result::Result<Usage, String> {
    let count = |path: &[&str]| -> std::result::Result<u64, String> {
        let mut at = value;
        for key in path {
            match at.get(key) {
                Some(next) => at = next,
                None => return Ok(0),
            }
        }
        match at {
            Value::Null => Ok(0),
            other => other.as_u64().ok_or_else(|| {
                format!("{} is {other}, not a non-negative integer", path.join("."))
            }),
        }
    };
    let require = |key: &str| {
        if value.get(key).is_some() {
            Ok(())
        } else {
            Err(format!("it has no {key}"))
        }
    };
    // OpenAI counts the cached tokens inside its input total.
    let cached_inside = |input: &str, cached: &[&str], output: &str| {
        require(input)?;
        let cached = count(cached)?;
        Ok::<_, String>(CallUsage {
            input_tokens: count(&[input])?.saturating_sub(cached),
            output_tokens: count(&[output])?,
            cache_read_tokens: cached,
            ..CallUsage::default()
        })
    };
    let call = match format {
        Format::Anthropic => {
            require("input_tokens")?;
            CallUsage {
                input_tokens: count(&["input_tokens"])?,
                output_tokens: count(&["output_tokens"])?,
                cache_read_tokens: count(&["cache_read_input_tokens"])?,
                cache_creation_tokens: count(&["cache_creation_input_tokens"])?,
                ..CallUsage::default()
            }
        }
        Format::OpenaiChat => cached_inside(
            "prompt_tokens",
            &["prompt_tokens_details", "cached_tokens"],
            "completion_tokens",
        )?,
        Format::OpenaiResponses => cached_inside(
            "input_tokens",
            &["input_tokens_details", "cached_tokens"],
            "output_tokens",
        )?,
        Format::Gemini => {
            require("promptTokenCount")?;
            let cached = count(&["cachedContentTokenCount"])?;
            let prompt =
                count(&["promptTokenCount"])?.saturating_add(count(&["toolUsePromptTokenCount"])?);
            CallUsage {
                input_tokens: prompt.saturating_sub(cached),
                output_tokens: count(&["candidatesTokenCount"])?
                    .saturating_add(count(&["thoughtsTokenCount"])?),
                cache_read_tokens: cached,
                ..CallUsage::default()
            }
        }
    };
    Ok(Usage { calls: vec![call] })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn one(usage: &Usage) -> (u64, u64, u64, u64) {
        let [call] = &usage.calls[..] else {
            panic!("{usage:?}")
        };
        (
            call.input_tokens,
            call.output_tokens,
            call.cache_read_tokens,
            call.cache_creation_tokens,
        )
    }

    #[test]
    fn canonical_usage_reads_whatever_the_format() {
        let usage = read_usage(
            &json!({"input_tokens": 10, "output_tokens": 2, "cache_read_tokens": 100}),
            Some(Format::Gemini),
        )
        .unwrap();
        assert_eq!(one(&usage), (10, 2, 100, 0));
        let calls = read_usage(&json!({"calls": [{"input_tokens": 1}]}), None).unwrap();
        assert_eq!(one(&calls), (1, 0, 0, 0));
    }

    #[test]
    fn each_providers_own_usage_counts_cached_input_once() {
        let anthropic = json!({"input_tokens": 12, "output_tokens": 30,
            "cache_read_input_tokens": 190_000, "cache_creation_input_tokens": 500,
            "service_tier": "standard", "server_tool_use": {"web_search_requests": 0}});
        let chat = json!({"prompt_tokens": 190_012, "completion_tokens": 30, "total_tokens": 190_042,
            "prompt_tokens_details": {"cached_tokens": 190_000, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 10}});
        let responses = json!({"input_tokens": 190_012, "output_tokens": 30, "total_tokens": 190_042,
            "input_tokens_details": {"cached_tokens": 190_000},
            "output_tokens_details": {"reasoning_tokens": 10}});
        let gemini = json!({"promptTokenCount": 190_010, "toolUsePromptTokenCount": 2,
            "cachedContentTokenCount": 190_000, "candidatesTokenCount": 20,
            "thoughtsTokenCount": 10, "totalTokenCount": 190_042});
        for (format, usage, cache_write) in [
            (Format::Anthropic, anthropic, 500),
            (Format::OpenaiChat, chat, 0),
            (Format::OpenaiResponses, responses, 0),
            (Format::Gemini, gemini, 0),
        ] {
            let read = read_usage(&usage, Some(format)).unwrap();
            assert_eq!(one(&read), (12, 30, 190_000, cache_write), "{format}");
            assert!(read.calls[0].primary);
        }
    }

    #[test]
    fn bad_usage_names_the_field_and_both_shapes() {
        let err = read_usage(&json!({"prompt_tokens": -1}), Some(Format::OpenaiChat)).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("prompt_tokens is -1, not a non-negative integer"),
            "{message}"
        );
        assert!(
            message.contains("nor openai_chat's own usage object"),
            "{message}"
        );
        // Without a format only the canonical shape is accepted.
        let err = read_usage(&json!({"prompt_tokens": 5}), None).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `prompt_tokens`"),
            "{err}"
        );
        // Another provider's object is not this one's.
        let err = read_usage(&json!({"promptTokenCount": 5}), Some(Format::Anthropic)).unwrap_err();
        assert!(err.to_string().contains("it has no input_tokens"), "{err}");
    }
}
