//! The FTS5 side of lexical search: identifier-aware indexing and a sanitizer that turns any
//! text into safe MATCH terms. Planning and running searches lives in `lexical`.
//!
//! Tokens: FTS5's `unicode61` tokenizer already splits `snake_case`, `path/segments` and
//! `file.ext` at their punctuation. What it cannot split is `camelCase`, so the indexed text is the
//! original followed by the camel-case parts of every word that has them (`RecordTurn` adds
//! `record turn`). A query identifier becomes the phrase of its parts, so `record_turn`,
//! `RecordTurn` and `recordTurn` all find each other, and `store/mod.rs` or `mod.rs` find the
//! path. Terms are OR-ed: ranking, not matching, decides relevance.
//!
//! Invariants: user text is never passed as FTS syntax. Every term is a double-quoted string of
//! letters and digits only, so quotes, parentheses, `NEAR`, `*`, `^`, `-`, `AND`/`OR` and
//! unbalanced brackets are inert; the expression is capped in terms and phrase length, so 100 KB
//! of text is a bounded query.

use std::borrow::Cow;

use rusqlite::{Transaction, params};

use super::search_text;

/// Most distinct terms a query keeps (the rest of a very long query is ignored).
const MAX_TERMS: usize = 32;

/// Most tokens in one phrase (a very long dotted or slashed chunk is cut).
const MAX_PHRASE_TOKENS: usize = 12;

/// BM25 column weights: summary, content, tool name.
pub(crate) const BM25_WEIGHTS: &str = "2.0, 1.0, 1.0";

/// Words too common to help a ranking when they stand alone.
const STOPWORDS: [&str; 40] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "did", "do", "does", "for", "from",
    "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "our", "so", "that", "the", "this",
    "to", "was", "we", "were", "what", "when", "where", "which", "why", "with", "you",
];

/// What FTS5 indexes for one episode, computed before the write (see `prepared`): each column
/// is the stored text as it is, or a rewrite of it (camel-case parts added, a tool call's input
/// unescaped and line gutters dropped).
#[derive(Debug)]
pub(crate) struct FtsRow {
    summary: Option<String>,
    content: Option<String>,
    tool_name: Option<String>,
}

impl FtsRow {
    /// The row of an episode with `summary` and stored `content`; `tool_name` is the tool of a
    /// `tool_call` episode, whose content is indexed as [`search_text::indexed_text`] reads it
    /// (`repeats_intent`: the call's intent is indexed whole on an earlier call).
    pub(crate) fn of(
        summary: &str,
        content: &str,
        tool_name: Option<&str>,
        repeats_intent: bool,
    ) -> FtsRow {
        fn rewritten(text: Cow<'_, str>) -> Option<String> {
            if let Cow::Owned(indexed) = index_text(&text) {
                return Some(indexed);
            }
            match text {
                Cow::Owned(text) => Some(text),
                Cow::Borrowed(_) => None,
            }
        }
        FtsRow {
            summary: rewritten(Cow::Borrowed(summary)),
            content: rewritten(search_text::indexed_text(
                content,
                tool_name,
                repeats_intent,
            )),
            tool_name: rewritten(Cow::Borrowed(tool_name.unwrap_or(""))),
        }
    }

    /// Writes this row for the episode with primary key `pk`; `summary`, `content` and
    /// `tool_name` are the texts [`FtsRow::of`] was computed from.
    pub(crate) fn insert(
        &self,
        tx: &Transaction<'_>,
        pk: i64,
        summary: &str,
        content: &str,
        tool_name: Option<&str>,
    ) -> rusqlite::Result<()> {
        tx.prepare_cached(
            "INSERT INTO episodes_fts (rowid, summary, content, tool_name) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![
            pk,
            self.summary.as_deref().unwrap_or(summary),
            self.content.as_deref().unwrap_or(content),
            self.tool_name.as_deref().unwrap_or(tool_name.unwrap_or(""))
        ])?;
        Ok(())
    }
}

/// `text` followed, when it has any, by the camel-case parts of its words. Borrowed when there
/// is nothing to add (most text), so indexing allocates only for identifiers.
pub(crate) fn index_text(text: &str) -> Cow<'_, str> {
    // One byte scan finds humps; only the words holding one are decoded and split.
    let bytes = text.as_bytes();
    let mut extra = String::new();
    let mut i = 1;
    while i < bytes.len() {
        if !hump_at(bytes, i) {
            i += 1;
            continue;
        }
        // A hump is ASCII, so `i` is a character boundary; widen it to its whole word.
        let start = text[..i]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric())
            .last()
            .map_or(i, |(at, _)| at);
        let end = text[i..]
            .char_indices()
            .find(|(_, c)| !c.is_alphanumeric())
            .map_or(text.len(), |(at, _)| i + at);
        split_camel(&text[start..end], |part| {
            extra.push_str(part);
            extra.push(' ');
        });
        // A separator so the parts of two words never form a phrase across them.
        extra.push_str(". ");
        i = end + 1;
    }
    if extra.is_empty() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{text}\n{extra}"))
    }
}

/// Maximal runs of letters and digits, as the `unicode61` tokenizer sees words.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// `true` when the camel-case hump rule fires at byte `i` of `bytes` (see [`split_camel`]).
/// Humps are ASCII-only, so byte offsets are character boundaries and index and query agree.
fn hump_at(bytes: &[u8], i: usize) -> bool {
    if i == 0 || !bytes[i].is_ascii_uppercase() {
        return false;
    }
    let prev = bytes[i - 1];
    let next_is_lower = bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
    prev.is_ascii_lowercase()
        || prev.is_ascii_digit()
        || (prev.is_ascii_uppercase() && next_is_lower)
}

/// Calls `emit` with `word` split at camel-case humps: `RecordTurn` → `Record`, `Turn`;
/// `HTTPServer` → `HTTP`, `Server`; `utf8Decoder` → `utf8`, `Decoder`. Only ASCII letters form
/// humps (`étéDone` stays whole). A word without humps is emitted whole. Allocates nothing.
fn split_camel<'w>(word: &'w str, mut emit: impl FnMut(&'w str)) {
    let bytes = word.as_bytes();
    let mut start = 0;
    for i in 1..bytes.len() {
        if hump_at(bytes, i) {
            emit(&word[start..i]);
            start = i;
        }
    }
    emit(&word[start..]);
}

/// One term of a sanitized query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Term {
    /// The quoted FTS5 string (a token or a phrase).
    pub quoted: String,
    /// Its lowercase tokens: one for a word, several for a phrase.
    pub tokens: Vec<String>,
}

/// The terms of `query`: identifier-ish chunks (words joined by `_ . / - : \`) as quoted
/// phrases of their parts, single words as quoted tokens, stop words dropped, at most
/// [`MAX_TERMS`] distinct terms.
pub(crate) fn query_terms(query: &str) -> Vec<Term> {
    let mut terms: Vec<Term> = Vec::new();
    let mut push = |quoted: String, tokens: Vec<String>| {
        if terms.len() < MAX_TERMS && !terms.iter().any(|t| t.quoted == quoted) {
            terms.push(Term { quoted, tokens });
        }
    };
    let is_joiner = |c: char| matches!(c, '_' | '.' | '/' | '-' | ':' | '\\');
    for chunk in query.split(|c: char| !(c.is_alphanumeric() || is_joiner(c))) {
        let mut tokens: Vec<String> = Vec::new();
        for word in words(chunk) {
            split_camel(word, |part| tokens.push(part.to_lowercase()));
        }
        tokens.truncate(MAX_PHRASE_TOKENS);
        match tokens.as_slice() {
            [] => {}
            [only] => {
                if !STOPWORDS.contains(&only.as_str()) {
                    push(quote(only), vec![only.clone()]);
                }
            }
            many => {
                push(quote(&many.join(" ")), many.to_vec());
                // `record_turn` and `RecordTurn` may also be written `recordturn`.
                if !chunk.contains(['.', '/', '\\', ':']) {
                    let joined = many.concat();
                    push(quote(&joined), vec![joined.clone()]);
                }
            }
        }
    }
    terms
}

/// Turns any text into a safe FTS5 MATCH expression: an OR of quoted terms and phrases. `None`
/// when the text holds no searchable word (then nothing can match).
pub fn match_expression(query: &str) -> Option<String> {
    join_terms(&query_terms(query))
}

/// The terms joined into one MATCH expression, `None` when there are none.
pub(crate) fn join_terms(terms: &[Term]) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    let quoted: Vec<&str> = terms.iter().map(|t| t.quoted.as_str()).collect();
    Some(quoted.join(" OR "))
}

/// A double-quoted FTS5 string. Tokens hold only letters and digits, but quotes are doubled
/// anyway so the function is safe on its own.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camel_parts(word: &str) -> Vec<&str> {
        let mut parts = Vec::new();
        split_camel(word, |p| parts.push(p));
        let expanded = index_text(word);
        assert_eq!(expanded.len() > word.len(), parts.len() > 1, "{word}");
        parts
    }

    #[test]
    fn camel_case_splits_at_humps_and_acronyms() {
        assert_eq!(camel_parts("RecordTurn"), ["Record", "Turn"]);
        assert_eq!(camel_parts("recordTurnBatch"), ["record", "Turn", "Batch"]);
        assert_eq!(camel_parts("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(camel_parts("utf8Decoder"), ["utf8", "Decoder"]);
        assert_eq!(camel_parts("lowercase"), ["lowercase"]);
        assert_eq!(camel_parts("ALLCAPS"), ["ALLCAPS"]);
        assert_eq!(camel_parts("Étéd"), ["Étéd"]);
        assert_eq!(camel_parts("étéDone"), ["étéDone"]);
        assert_eq!(camel_parts("parseÉtéDone"), ["parseÉtéDone"]);
        assert_eq!(camel_parts("getÉtat2Value"), ["getÉtat2", "Value"]);
        assert_eq!(camel_parts("x"), ["x"]);
    }

    #[test]
    fn index_text_appends_camel_parts_only_when_there_are_some() {
        assert_eq!(index_text("plain words here"), "plain words here");
        assert_eq!(
            index_text("call RecordTurn now"),
            "call RecordTurn now\nRecord Turn . "
        );
        assert_eq!(
            index_text("été fooBar, x=HTTPServer→getÉtat2Value"),
            "été fooBar, x=HTTPServer→getÉtat2Value\nfoo Bar . HTTP Server . getÉtat2 Value . "
        );
    }

    #[test]
    fn queries_become_quoted_terms_and_phrases() {
        assert_eq!(
            match_expression("record_turn").as_deref(),
            Some("\"record turn\" OR \"recordturn\"")
        );
        assert_eq!(
            match_expression("RecordTurn").as_deref(),
            Some("\"record turn\" OR \"recordturn\"")
        );
        assert_eq!(
            match_expression("store/mod.rs").as_deref(),
            Some("\"store mod rs\"")
        );
        assert_eq!(
            match_expression("where is the flaky test?").as_deref(),
            Some("\"flaky\" OR \"test\"")
        );
        assert_eq!(
            match_expression("NEAR(\"a\" b*) -c ^d OR AND").as_deref(),
            Some("\"near\" OR \"b\" OR \"c\" OR \"d\"")
        );
        assert_eq!(match_expression("  *** (( \"\" 🎉 "), None);
        let long = "word ".repeat(20_000) + &(0..100).map(|i| format!("w{i} ")).collect::<String>();
        let expr = match_expression(&long).unwrap();
        assert_eq!(expr.matches(" OR ").count(), MAX_TERMS - 1);
    }
}
