//! The words a tool call's content gives the FTS index, which are not always its bytes.
//!
//! A `tool_call` episode's content is laid out as DESIGN §1 says: intent, reasoning,
//! `# Tool: name`, `## Input` as pretty JSON, `## Result` and the output. Two parts of that layout
//! are encodings, not text, and indexing their bytes as words does harm:
//! - **JSON string escapes in the input.** An `Edit`'s `new_string` or a `Write`'s file is one
//!   JSON string, every line break written `\n`. `unicode61` reads `\nexport` as the word
//!   `nexport`, so the first word of every unindented line was unfindable, and the lone `n` of an
//!   indented line was the most frequent word of the whole index. The input's strings are read as
//!   the JSON they are: escapes become the characters they stand for (control characters a space).
//! - **Line-number gutters in the result.** Claude Code shows a file read (and an edited file's
//!   snippet) with each line behind its number, `     42→text`. Those numbers were an eighth of
//!   all indexed words, matched any query with a number in it, and said nothing about the file.
//!   A line's leading `digits→` is left out.
//!
//! One part is repeated, and indexing every copy costs more than it finds:
//! - **A repeated intent.** Every call of an exchange carries its prompt as `# User intent`, and
//!   a pasted log or spec of 15 KB was tokenized again for each call, on the write path of every
//!   result however small. The FTS row of a call that repeats the intent (flagged by the chunker,
//!   [`crate::canonical::Episode::repeats_intent`]) holds its first
//!   [`REPEATED_INTENT_INDEXED_CHARS`] characters; the exchange's first call holds all of it.
//!   Left out entirely, the repeats took what a prompt's words are for (finding every call made
//!   for it) from `retrieve_quality`'s re-read queries; a query keeps a prompt's first 32 terms,
//!   which its head holds.
//!
//! Nothing here changes what is stored: the episode keeps its exact bytes; only the FTS row is
//! derived from this text. Every other kind of episode, and any content that does not follow the
//! layout (an excerpt of a capped one included), is indexed as it is, or as far as it follows it.

use std::borrow::Cow;

use crate::canonical::layout::{INTENT_HEADER, REASONING_HEADER};

/// Characters of a repeated `# User intent` that the FTS row of a call holds.
pub(crate) const REPEATED_INTENT_INDEXED_CHARS: usize = 1_000;

/// The text the FTS row of an episode holds: [`tool_call_text`] of its content, with the intent
/// of a call that `repeats_intent` cut to its first [`REPEATED_INTENT_INDEXED_CHARS`]
/// characters. Borrowed when nothing in it needs rewriting.
pub(crate) fn indexed_text<'a>(
    content: &'a str,
    tool_name: Option<&str>,
    repeats_intent: bool,
) -> Cow<'a, str> {
    let cut = tool_name
        .filter(|_| repeats_intent)
        .and_then(|name| repeated_intent_cut(content, name));
    let Some(cut) = cut else {
        return tool_call_text(content, tool_name);
    };
    let mut shortened = String::with_capacity(content.len() - cut.len());
    shortened.push_str(&content[..cut.start]);
    shortened.push_str(&content[cut.end..]);
    let rewritten = match tool_call_text(&shortened, tool_name) {
        Cow::Owned(text) => Some(text),
        Cow::Borrowed(_) => None,
    };
    Cow::Owned(rewritten.unwrap_or(shortened))
}

/// The bytes of `content` (a call of tool `name`) to leave out of the index: its intent past
/// the first [`REPEATED_INTENT_INDEXED_CHARS`] characters, cut back to the end of a word.
/// `None` when the intent is shorter, or the content does not start with one.
fn repeated_intent_cut(content: &str, name: &str) -> Option<std::ops::Range<usize>> {
    let intent = content.strip_prefix(INTENT_HEADER)?;
    // The intent ends where the chunker's next section starts. An intent quoting one of those
    // headers seems to end there, which only leaves more of it in the index.
    // The reasoning comes before the tool header, so it is looked for only before it: an
    // episode without reasoning is not read to its end (a 64 KB result) for a header it lacks.
    let reasoning_header = format!("\n\n{REASONING_HEADER}");
    let tool_header = format!("\n\n# Tool: {name}\n\n## Input\n");
    let end = match intent.find(&tool_header) {
        Some(tool) => intent[..tool].find(&reasoning_header).unwrap_or(tool),
        None => intent.find(&reasoning_header)?,
    };
    let (mut keep, _) = intent[..end]
        .char_indices()
        .nth(REPEATED_INTENT_INDEXED_CHARS)?;
    if intent[keep..].starts_with(char::is_alphanumeric) {
        // Mid-word: a fragment of a word would be indexed as a word of its own.
        keep = intent[..keep]
            .rfind(|c: char| !c.is_alphanumeric())
            .unwrap_or(keep);
    }
    Some(INTENT_HEADER.len() + keep..INTENT_HEADER.len() + end)
}

/// The text of `content` to index, for an episode of tool `tool_name` (`None`: not a tool call,
/// indexed as it is). Borrowed when nothing in it needs rewriting.
pub(crate) fn tool_call_text<'a>(content: &'a str, tool_name: Option<&str>) -> Cow<'a, str> {
    let Some(sections) = tool_name.and_then(|name| Sections::find(content, name)) else {
        return Cow::Borrowed(content);
    };
    let input = &content[sections.input.clone()];
    let result = &content[sections.result_start..];
    let escaped = input.contains('\\');
    let gutters = has_gutter(result);
    if !escaped && !gutters {
        return Cow::Borrowed(content);
    }
    let mut text = String::with_capacity(content.len());
    text.push_str(&content[..sections.input.start]);
    if escaped {
        push_json_unescaped(&mut text, input);
    } else {
        text.push_str(input);
    }
    text.push_str(&content[sections.input.end..sections.result_start]);
    if gutters {
        push_without_gutters(&mut text, result);
    } else {
        text.push_str(result);
    }
    Cow::Owned(text)
}

/// Where the input JSON and the result are in a tool call's content.
struct Sections {
    /// The byte range of the pretty JSON input.
    input: std::ops::Range<usize>,
    /// Where the output starts (after the `## Result` line); the content's length when the
    /// content ends before one.
    result_start: usize,
}

impl Sections {
    /// The sections of `content`, a tool call of `name`; `None` when it has no input header.
    /// The first `# Tool: name` header followed by `## Input` is the chunker's: an intent or
    /// reasoning that quotes the same header first only gets its own escapes read as JSON.
    fn find(content: &str, name: &str) -> Option<Sections> {
        let header = ["# Tool: ", name, "\n\n## Input\n"];
        let mut from = 0;
        let start = loop {
            let at = from + content[from..].find(header[0])?;
            let rest = &content[at + header[0].len()..];
            if rest
                .strip_prefix(name)
                .is_some_and(|tail| tail.starts_with(header[2]))
            {
                break at + header.iter().map(|h| h.len()).sum::<usize>();
            }
            from = at + header[0].len();
        };
        let end = json_value_end(content.as_bytes(), start);
        let result_start = content[end..]
            .strip_prefix("\n\n## Result")
            .and_then(|rest| {
                rest.find('\n')
                    .map(|nl| content.len() - rest.len() + nl + 1)
            })
            .unwrap_or(content.len());
        Some(Sections {
            input: start..end,
            result_start,
        })
    }
}

/// The byte just past the JSON value that starts at `start` (the end of `bytes` when it never
/// closes, as in a cut excerpt). The value is serde's pretty output, so tracking strings and
/// bracket depth is enough; a scalar at top level ends at the first newline.
fn json_value_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut i = start;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => {
                    in_string = false;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return i + 1;
                    }
                }
                b'\n' if depth == 0 => return i,
                _ => {}
            }
        }
        i += 1;
    }
    bytes.len()
}

/// Appends `json` with the escapes inside its strings replaced by what they stand for: `\"`,
/// `\\` and `\/` by their character, `\uXXXX` by its character (a pair of surrogates by the one
/// character they encode), and control characters (`\n`, `\t`, `\r`, `\b`, `\f`, `\u0000`...) by a
/// space. Text outside strings, and a malformed escape, are copied as they are.
fn push_json_unescaped(out: &mut String, json: &str) {
    let mut in_string = false;
    let mut rest = json;
    while let Some(at) = rest.find(['"', '\\']) {
        out.push_str(&rest[..at]);
        let bytes = rest.as_bytes();
        if bytes[at] == b'"' {
            in_string = !in_string;
            out.push('"');
            rest = &rest[at + 1..];
            continue;
        }
        if !in_string {
            out.push('\\');
            rest = &rest[at + 1..];
            continue;
        }
        let (decoded, used) = unescape(&rest[at..]);
        match decoded {
            Some(c) if c.is_control() => out.push(' '),
            Some(c) => out.push(c),
            None => out.push_str(&rest[at..at + used]),
        }
        rest = &rest[at + used..];
    }
    out.push_str(rest);
}

/// The character the escape at the start of `escape` (which starts with `\`) stands for, and
/// how many bytes it takes; `None` for a malformed escape (then only the backslash is used, or
/// the backslash and the character after it).
fn unescape(escape: &str) -> (Option<char>, usize) {
    let Some(kind) = escape[1..].chars().next() else {
        return (None, 1);
    };
    let simple = match kind {
        '"' => Some('"'),
        '\\' => Some('\\'),
        '/' => Some('/'),
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        _ => None,
    };
    if let Some(c) = simple {
        return (Some(c), 2);
    }
    if kind != 'u' {
        return (None, 1 + kind.len_utf8());
    }
    let Some(high) = hex4(&escape[2..]) else {
        return (None, 2);
    };
    let low = escape[6..].strip_prefix("\\u").and_then(hex4);
    if let Some(low) =
        low.filter(|low| (0xD800..0xDC00).contains(&high) && (0xDC00..0xE000).contains(low))
    {
        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        return (char::from_u32(code), 12);
    }
    // A lone surrogate stands for no character: a space, like a control character.
    (Some(char::from_u32(high).unwrap_or('\u{0}')), 6)
}

/// The value of the four hex digits `text` starts with.
fn hex4(text: &str) -> Option<u32> {
    let digits = text.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// The gutter arrow of Claude Code's numbered file views.
const GUTTER_ARROW: char = '→';

/// The length of the `   42→` gutter `line` starts with, if it has one: spaces, at least one
/// digit, the arrow.
fn gutter_len(line: &str) -> Option<usize> {
    let digits_at = line.len() - line.trim_start_matches(' ').len();
    let after_spaces = &line[digits_at..];
    let digits = after_spaces.len()
        - after_spaces
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    (digits > 0 && after_spaces[digits..].starts_with(GUTTER_ARROW))
        .then(|| digits_at + digits + GUTTER_ARROW.len_utf8())
}

/// Whether any line of `text` starts with a gutter.
fn has_gutter(text: &str) -> bool {
    text.contains(GUTTER_ARROW) && text.split('\n').any(|line| gutter_len(line).is_some())
}

/// Appends `text` with the gutter of every line left out (the line break kept).
fn push_without_gutters(out: &mut String, text: &str) {
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&line[gutter_len(line).unwrap_or(0)..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, input: &serde_json::Value, output: &str) -> String {
        format!(
            "# User intent\nfix it\n\n# Tool: {name}\n\n## Input\n{}\n\n## Result\n{output}",
            serde_json::to_string_pretty(input).unwrap()
        )
    }

    #[test]
    fn escapes_in_the_input_become_the_characters_they_stand_for() {
        let input = serde_json::json!({
            "file_path": "C:\\new\\test.rs",
            "new_string": "import x\nexport default\tApp;\r\n\"quoted\" caf\u{e9} \u{1}end 🎉",
        });
        let content = call("Edit", &input, "ok \\n stays");
        let text = tool_call_text(&content, Some("Edit"));
        assert_eq!(
            text,
            "# User intent\nfix it\n\n# Tool: Edit\n\n## Input\n{\n  \"file_path\": \
             \"C:\\new\\test.rs\",\n  \"new_string\": \"import x export default App;  \
             \"quoted\" café  end 🎉\"\n}\n\n## Result\nok \\n stays"
        );
    }

    #[test]
    fn gutters_of_numbered_views_are_left_out_of_the_result_only() {
        let input = serde_json::json!({"file_path": "/r/a.rs", "note": "1→ in input stays"});
        let output = "     1→fn main() {\n    42→    run();\n  \n 7 → not a gutter\n1234→}";
        let content = call("Read", &input, output);
        let text = tool_call_text(&content, Some("Read"));
        assert!(text.contains("\"note\": \"1→ in input stays\""), "{text}");
        assert!(
            text.ends_with("## Result\nfn main() {\n    run();\n  \n 7 → not a gutter\n}"),
            "{text}"
        );
    }

    #[test]
    fn content_without_anything_to_rewrite_is_borrowed() {
        let content = call("Bash", &serde_json::json!({"command": "ls"}), "a\nb");
        assert!(matches!(
            tool_call_text(&content, Some("Bash")),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            tool_call_text("any \\n text 1→x", None),
            Cow::Borrowed(_)
        ));
        // Another tool's header is not this tool's.
        let content = call("Bash", &serde_json::json!({"command": "a\nb"}), "");
        assert!(matches!(
            tool_call_text(&content, Some("Read")),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_quoted_header_in_the_intent_does_not_move_the_sections() {
        let content = format!(
            "# User intent\nwhy does # Tool: Bash print\n\n# Tool: Bash\n\n## Input\n{}\n\n## \
             Result\n 1→x",
            serde_json::to_string_pretty(&serde_json::json!({"command": "a\nb"})).unwrap()
        );
        let text = tool_call_text(&content, Some("Bash"));
        assert!(text.contains("\"command\": \"a b\""), "{text}");
        assert!(text.ends_with("## Result\nx"), "{text}");
    }

    #[test]
    fn scalar_inputs_cut_excerpts_and_bad_escapes_are_handled() {
        let content = call("T", &serde_json::json!("one\ntwo"), "3→z");
        assert!(tool_call_text(&content, Some("T")).ends_with("\"one two\"\n\n## Result\nz"));
        // An excerpt cut inside the input: the rest is input, there is no result.
        let cut = "# Tool: T\n\n## Input\n{\n  \"a\": \"x\\ny";
        assert_eq!(
            tool_call_text(cut, Some("T")),
            "# Tool: T\n\n## Input\n{\n  \"a\": \"x y"
        );
        let mut out = String::new();
        push_json_unescaped(&mut out, r#""\q \u12 \ud83d\ude00 \ud800x \"#);
        assert_eq!(out, "\"\\q \\u12 😀  x \\");
    }

    #[test]
    fn json_values_end_where_serde_ends_them() {
        let pretty = "{\n  \"a\": \"}\\\"{\",\n  \"b\": [1, {\"c\": 2}]\n}\n\n## Result";
        assert_eq!(
            json_value_end(pretty.as_bytes(), 0),
            pretty.find("\n\n##").unwrap()
        );
        assert_eq!(json_value_end(b"42\n\nrest", 0), 2);
        assert_eq!(json_value_end(b"\"s\\\"\"tail", 0), 5);
    }

    /// A call of `name` whose intent is `intent`, with reasoning and an escaped input.
    fn call_with_intent(intent: &str, name: &str) -> String {
        format!(
            "# User intent\n{intent}\n\n# Reasoning\nchecking\n\n# Tool: {name}\n\n## Input\n\
             {{\n  \"command\": \"a\\nb\"\n}}\n\n## Result\nok"
        )
    }

    #[test]
    fn a_repeated_intent_keeps_its_head_to_the_end_of_a_word() {
        let intent = format!("{} tail words here", "alpha betas ".repeat(200));
        let content = call_with_intent(&intent, "Bash");
        let whole = indexed_text(&content, Some("Bash"), false);
        assert_eq!(whole, tool_call_text(&content, Some("Bash")));
        assert!(whole.contains("tail words here"));
        let cut = indexed_text(&content, Some("Bash"), true);
        // 1,000 characters of "alpha betas " end inside a word: it goes, and the space before it.
        let head = "alpha betas ".repeat(200);
        let kept = &head[..head[..REPEATED_INTENT_INDEXED_CHARS].rfind(' ').unwrap()];
        assert_eq!(
            cut,
            format!(
                "# User intent\n{kept}\n\n# Reasoning\nchecking\n\n# Tool: Bash\n\n## Input\n\
                 {{\n  \"command\": \"a b\"\n}}\n\n## Result\nok"
            )
        );
    }

    #[test]
    fn a_short_or_absent_intent_is_left_as_it_is() {
        let short = call_with_intent(&"x".repeat(REPEATED_INTENT_INDEXED_CHARS), "Bash");
        assert_eq!(
            indexed_text(&short, Some("Bash"), true),
            tool_call_text(&short, Some("Bash"))
        );
        let orphan = format!(
            "# Tool: T\n\n## Input\nnull\n\n## Result\n{}",
            "y ".repeat(900)
        );
        assert!(matches!(
            indexed_text(&orphan, Some("T"), true),
            Cow::Borrowed(_)
        ));
        let long = "word ".repeat(400);
        assert!(matches!(indexed_text(&long, None, true), Cow::Borrowed(_)));
    }

    #[test]
    fn an_intent_quoting_a_section_header_is_cut_no_further_than_the_quote() {
        let intent = format!(
            "{}\n\n# Tool: Bash\n\n## Input\nquoted {}",
            "a ".repeat(10),
            "b ".repeat(900)
        );
        let content = call_with_intent(&intent, "Bash");
        let cut = indexed_text(&content, Some("Bash"), true);
        assert_eq!(
            cut,
            tool_call_text(&content, Some("Bash")),
            "shorter than the cap"
        );
        let intent = format!(
            "{}\n\n# Reasoning\nquoted {}",
            "a ".repeat(900),
            "b ".repeat(900)
        );
        let content = call_with_intent(&intent, "Bash");
        let cut = indexed_text(&content, Some("Bash"), true);
        assert!(
            cut.contains("quoted b b"),
            "what follows the quote stays: {cut}"
        );
        assert!(!cut.contains(&"a ".repeat(600)));
    }

    #[test]
    fn a_call_without_reasoning_ends_its_intent_at_the_tool_header_whatever_its_result_holds() {
        let intent = "c ".repeat(900);
        let content = format!(
            "# User intent\n{intent}\n\n# Tool: Read\n\n## Input\n{{}}\n\n## Result\n\
             text\n\n# Reasoning\nquoted in the file {}",
            "d ".repeat(900)
        );
        let cut = indexed_text(&content, Some("Read"), true);
        let kept = "c ".repeat(REPEATED_INTENT_INDEXED_CHARS / 2);
        assert!(
            cut.starts_with(&format!(
                "# User intent\n{}\n\n# Tool: Read",
                kept.trim_end()
            )),
            "{cut}"
        );
        assert!(
            cut.ends_with(&"d ".repeat(900)),
            "the result is indexed whole"
        );
    }

    #[test]
    fn characters_outside_ascii_are_cut_on_their_boundaries() {
        let intent = "é".repeat(3 * REPEATED_INTENT_INDEXED_CHARS);
        let content = call_with_intent(&intent, "Bash");
        let cut = indexed_text(&content, Some("Bash"), true);
        let expected = "é".repeat(REPEATED_INTENT_INDEXED_CHARS);
        assert!(
            cut.starts_with(&format!("# User intent\n{expected}\n\n# Reasoning")),
            "{cut}"
        );
    }
}
