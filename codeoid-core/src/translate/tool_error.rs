//! The tool-error flag for formats that have none (OpenAI Chat and Responses): encoded in the
//! text, recovered on the way back.
//!
//! Anthropic has `is_error`; Gemini's documented convention is a `response` object with an
//! `error` key instead of `output` (handled in the Gemini module). OpenAI has neither, so a failed
//! result's text starts with the line [`ERROR_MARKER`]: as a prefix line of a string output, or as
//! the first text part of a part list. Models read it as what it is; reading back strips it and
//! sets the flag. A successful output that happens to start with the marker would read back as an
//! error; translators report that case as a change.

/// First line of a failed tool result's text in formats without an error flag.
pub const ERROR_MARKER: &str = "[tool error]";

/// `text` of a failed result, marked.
pub(crate) fn mark(text: &str) -> String {
    let mut out = String::with_capacity(ERROR_MARKER.len() + 1 + text.len());
    out.push_str(ERROR_MARKER);
    out.push('\n');
    out.push_str(text);
    out
}

/// Whether a successful result's text would be mistaken for a marked one.
pub(crate) fn looks_marked(text: &str) -> bool {
    text == ERROR_MARKER || text.starts_with(&format!("{ERROR_MARKER}\n"))
}

/// Splits a string output into (is_error, text). `None` text means the marker stood alone (an
/// error with no text parts).
pub(crate) fn unmark(text: &str) -> (bool, Option<&str>) {
    if text == ERROR_MARKER {
        return (true, None);
    }
    match text
        .strip_prefix(ERROR_MARKER)
        .and_then(|rest| rest.strip_prefix('\n'))
    {
        Some(rest) => (true, Some(rest)),
        None => (false, Some(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_text_round_trips_and_plain_text_is_untouched() {
        assert_eq!(unmark(&mark("boom")), (true, Some("boom")));
        assert_eq!(unmark(&mark("")), (true, Some("")));
        assert_eq!(unmark(ERROR_MARKER), (true, None));
        assert_eq!(
            unmark("[tool error] not a marker"),
            (false, Some("[tool error] not a marker"))
        );
        assert!(looks_marked(&mark("x")));
        assert!(!looks_marked("ok"));
    }
}
