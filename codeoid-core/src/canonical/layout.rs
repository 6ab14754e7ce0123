//! The text layout of episode content (DESIGN §1): the sections a tool call's content is written
//! in, and how a tool result's parts become text. The chunker writes it; the FTS side
//! (`store::search_text`) reads the same headers back.

use serde_json::Value;

use super::episode::EpisodeStatus;
use super::turn::{Image, ImageSource, ToolResult, ToolResultPart};

/// The line a tool call's `# User intent` section starts with.
pub(crate) const INTENT_HEADER: &str = "# User intent\n";

/// The line a tool call's `# Reasoning` section starts with.
pub(crate) const REASONING_HEADER: &str = "# Reasoning\n";

/// The content of a tool call's episode: `# User intent` (when there is one), `# Reasoning`
/// (when the assistant said anything before the call), `# Tool: name`, `## Input` as pretty
/// JSON and `## Result` (marked as an error or a cancellation by `status`) with `output`.
pub(crate) fn tool_call_content(
    intent: Option<&str>,
    reasoning: &str,
    name: &str,
    input: &Value,
    status: EpisodeStatus,
    output: &str,
) -> String {
    let mut content = String::with_capacity(output.len() + reasoning.len() + 256);
    if let Some(intent) = intent {
        content.push_str(INTENT_HEADER);
        content.push_str(intent);
        content.push_str("\n\n");
    }
    if !reasoning.trim().is_empty() {
        content.push_str(REASONING_HEADER);
        content.push_str(reasoning);
        content.push_str("\n\n");
    }
    content.push_str("# Tool: ");
    content.push_str(name);
    content.push_str("\n\n## Input\n");
    // Pretty-printing a JSON value cannot fail; fall back to the compact form regardless.
    let input = serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string());
    content.push_str(&input);
    content.push_str(match status {
        EpisodeStatus::Ok => "\n\n## Result\n",
        EpisodeStatus::Failed => "\n\n## Result (error)\n",
        EpisodeStatus::Cancelled => "\n\n## Result (cancelled)\n",
    });
    content.push_str(output);
    content
}

/// The text of a tool result: text parts verbatim, images as placeholders, joined by newlines.
pub(crate) fn result_text(result: &ToolResult) -> String {
    let parts: Vec<String> = result
        .parts
        .iter()
        .map(|p| match p {
            ToolResultPart::Text { text } => text.clone(),
            ToolResultPart::Image(image) => image_placeholder(image),
        })
        .collect();
    parts.join("\n")
}

/// What stands for an image in episode text: its media type and where it is.
pub(crate) fn image_placeholder(image: &Image) -> String {
    let media = image.media_type.as_deref().unwrap_or("unknown type");
    match &image.source {
        ImageSource::Url { url } => format!("[image: {media}, {url}]"),
        ImageSource::File { file_id } => format!("[image: {media}, file {file_id}]"),
        ImageSource::Base64 { data } => format!("[image: {media}, {} base64 bytes]", data.len()),
    }
}
