//! Lexical search: identifier-aware FTS5 indexing, a sanitizer that turns any text into a safe
//! MATCH expression, and BM25 search with filters applied inside SQL (DESIGN §2, `bm25`).
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
//! of text is a bounded query. Scores are `-bm25()` (higher is better), raw, not normalized:
//! normalizing over a candidate batch and fusion belong to the retrieval layer.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Transaction, params, params_from_iter};

use super::connection::db_error;
use super::episodes::{EpisodeHeader, HEADER_COLUMNS, header_from_row};
use super::{Store, to_millis};
use crate::error::{Error, Result};

/// Most distinct terms a query keeps (the rest of a very long query is ignored).
const MAX_TERMS: usize = 32;

/// Most tokens in one phrase (a very long dotted or slashed chunk is cut).
const MAX_PHRASE_TOKENS: usize = 12;

/// Stores smaller than this are searched without dropping common terms.
const PRUNE_MIN_ROWS: i64 = 1000;

/// Largest `k` a lexical search accepts.
pub const MAX_LEXICAL_K: usize = 1000;

/// BM25 column weights: summary, content, tool name.
pub(crate) const BM25_WEIGHTS: &str = "2.0, 1.0, 1.0";

/// Words too common to help a ranking when they stand alone.
const STOPWORDS: [&str; 40] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "did", "do", "does", "for", "from",
    "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "our", "so", "that", "the", "this",
    "to", "was", "we", "were", "what", "when", "where", "which", "why", "with", "you",
];

/// Filters applied inside SQL before the top-k cut. `Default` filters nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LexicalFilters {
    /// Only episodes of this session.
    pub session_id: Option<String>,
    /// No episodes of this session (the caller's own, usually).
    pub exclude_session_id: Option<String>,
    /// A session's live context, left out: its episodes from this key on.
    pub exclude_live: Option<(String, i64)>,
    /// Only episodes of this tool (case-insensitive).
    pub tool_name: Option<String>,
    /// Only episodes created at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only episodes created strictly before this time.
    pub until: Option<DateTime<Utc>>,
    /// Only episodes touching one of these paths, in their workspace-relative form (see
    /// [`super::relative_path`]).
    pub paths: Vec<String>,
}

/// One lexical match.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalHit {
    /// The episode.
    pub header: EpisodeHeader,
    /// `-bm25()`: higher is better; only comparable within one query.
    pub bm25: f64,
}

/// Writes the FTS row of the episode with primary key `pk`.
pub(crate) fn index(
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
        index_text(summary).as_ref(),
        index_text(content).as_ref(),
        index_text(tool_name.unwrap_or("")).as_ref()
    ])?;
    Ok(())
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
struct Term {
    /// The quoted FTS5 string (a token or a phrase).
    quoted: String,
    /// The token, when the term is a single token (its document frequency can be looked up).
    token: Option<String>,
}

/// The terms of `query`: identifier-ish chunks (words joined by `_ . / - : \`) as quoted
/// phrases of their parts, single words as quoted tokens, stop words dropped, at most
/// [`MAX_TERMS`] distinct terms.
fn query_terms(query: &str) -> Vec<Term> {
    let mut terms: Vec<Term> = Vec::new();
    let mut push = |quoted: String, token: Option<String>| {
        if terms.len() < MAX_TERMS && !terms.iter().any(|t| t.quoted == quoted) {
            terms.push(Term { quoted, token });
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
                    push(quote(only), Some(only.clone()));
                }
            }
            many => {
                push(quote(&many.join(" ")), None);
                // `record_turn` and `RecordTurn` may also be written `recordturn`.
                if !chunk.contains(['.', '/', '\\', ':']) {
                    let joined = many.concat();
                    push(quote(&joined), Some(joined.clone()));
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

/// The MATCH expression [`Store::lexical_search`] runs for `query` on `conn`: [`match_expression`]
/// after dropping the store's common terms. `None` when nothing searchable is left.
pub(crate) fn pruned_expression(
    conn: &Connection,
    query: &str,
) -> rusqlite::Result<Option<String>> {
    let terms = drop_common_terms(conn, query_terms(query))?;
    Ok(join_terms(&terms))
}

fn join_terms(terms: &[Term]) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    let quoted: Vec<&str> = terms.iter().map(|t| t.quoted.as_str()).collect();
    Some(quoted.join(" OR "))
}

/// Drops single-token terms that occur in more than half of all episodes, as long as a
/// single-token term that occurs somewhere remains. FTS5's bm25 clamps the IDF of such terms to ~0, so they do
/// not change the ranking of documents that match another term; matching them, though, means
/// scoring most of the table. Small stores (under [`PRUNE_MIN_ROWS`] episodes) are searched
/// exactly as asked.
fn drop_common_terms(conn: &Connection, terms: Vec<Term>) -> rusqlite::Result<Vec<Term>> {
    if terms.len() < 2 {
        return Ok(terms);
    }
    // Keys are distinct positive integers, so the largest is at least the row count; it is the
    // count exactly until `sync_turns` deletes the episodes of replaced turns. One index seek
    // instead of a count. An overestimate only makes pruning more cautious: fewer terms pass
    // as common, so the query stays closer to what was asked.
    let rows: i64 = conn
        .prepare_cached("SELECT coalesce(max(pk), 0) FROM episodes")?
        .query_row([], |r| r.get(0))?;
    if rows < PRUNE_MIN_ROWS {
        return Ok(terms);
    }
    let mut scored = Vec::with_capacity(terms.len());
    for term in terms {
        // Phrases are never common in this sense; their tokens may be.
        let docs: Option<i64> = match &term.token {
            Some(token) => Some(
                conn.prepare_cached("SELECT doc FROM episodes_vocab WHERE term = ?1")?
                    .query_row([token], |r| r.get(0))
                    .optional()?
                    .unwrap_or(0),
            ),
            None => None,
        };
        scored.push((docs, term));
    }
    let is_common = |docs: &Option<i64>| docs.is_some_and(|d| d * 2 > rows);
    // Only a single token known to occur counts: a phrase may match nothing, and dropping the
    // common terms then would leave a query with no matches where matches exist.
    let useful_rest = scored
        .iter()
        .any(|(docs, _)| !is_common(docs) && docs.is_some_and(|d| d > 0));
    if !useful_rest {
        return Ok(scored.into_iter().map(|(_, t)| t).collect());
    }
    Ok(scored
        .into_iter()
        .filter(|(docs, _)| !is_common(docs))
        .map(|(_, term)| term)
        .collect())
}

/// A double-quoted FTS5 string. Tokens hold only letters and digits, but quotes are doubled
/// anyway so the function is safe on its own.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

impl Store {
    /// BM25 search over summary, content and tool name of `workspace_id`'s episodes: the `k` best
    /// matches of `query` (any text; see [`match_expression`]) among the episodes that pass
    /// `filters`. Filters are applied before the cut, so a filtered search returns matches
    /// whenever they exist.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when `k` is 0 or above [`MAX_LEXICAL_K`].
    pub fn lexical_search(
        &self,
        workspace_id: &str,
        query: &str,
        filters: &LexicalFilters,
        k: usize,
    ) -> Result<Vec<LexicalHit>> {
        if k == 0 || k > MAX_LEXICAL_K {
            return Err(Error::invalid_input(format!(
                "lexical search k {k} is out of range; use 1..={MAX_LEXICAL_K}"
            )));
        }
        let terms = query_terms(query);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        // Two phases: score and cut on (pk, score) alone, then read the k headers. Sorting whole
        // header rows of every match was most of the cost on common words.
        //
        // CROSS JOIN keeps the FTS table the outer loop, filters checked per match. Given the
        // choice, SQLite drives a filtered search (a session, a time range) from the episodes'
        // indexes and probes FTS5 once per episode by rowid; every probe is a new FTS5 query
        // whose bm25() recounts each term's documents over the whole index: 1 to 2.5 s per
        // search on a thousand episodes against 1 to 3 ms unfiltered (the quality benchmark's
        // time-bounded queries).
        let mut sql = format!(
            "SELECT episodes_fts.rowid AS pk, -bm25(episodes_fts, {BM25_WEIGHTS}) AS score
             FROM episodes_fts CROSS JOIN episodes e ON e.pk = episodes_fts.rowid
             WHERE episodes_fts MATCH ?1 AND e.workspace_id = ?2"
        );
        // ?1 is the MATCH expression, known once the terms are pruned inside the read.
        let mut values: Vec<Value> = vec![Value::Null, Value::Text(workspace_id.to_owned())];
        let mut add = |clause: &str, value: Value, sql: &mut String| {
            values.push(value);
            sql.push_str(&clause.replace('?', &format!("?{}", values.len())));
        };
        if let Some(session) = &filters.session_id {
            add(
                " AND e.session_id = ?",
                Value::Text(session.clone()),
                &mut sql,
            );
        }
        if let Some(session) = &filters.exclude_session_id {
            add(
                " AND e.session_id <> ?",
                Value::Text(session.clone()),
                &mut sql,
            );
        }
        if let Some((session, from_pk)) = &filters.exclude_live {
            add(
                " AND (e.session_id <> ?",
                Value::Text(session.clone()),
                &mut sql,
            );
            add(" OR e.pk < ?)", Value::Integer(*from_pk), &mut sql);
        }
        if let Some(tool) = &filters.tool_name {
            add(
                " AND lower(e.tool_name) = lower(?)",
                Value::Text(tool.clone()),
                &mut sql,
            );
        }
        if let Some(since) = filters.since {
            add(
                " AND e.created_at >= ?",
                Value::Integer(to_millis(since)),
                &mut sql,
            );
        }
        if let Some(until) = filters.until {
            add(
                " AND e.created_at < ?",
                Value::Integer(to_millis(until)),
                &mut sql,
            );
        }
        if !filters.paths.is_empty() {
            sql.push_str(
                " AND e.pk IN (SELECT p.episode_pk FROM episode_paths p
                   WHERE p.workspace_id = ?2 AND p.relative IN (",
            );
            for (i, path) in filters.paths.iter().enumerate() {
                if i > 0 {
                    sql.push_str(", ");
                }
                add("?", Value::Text(path.clone()), &mut sql);
            }
            sql.push_str("))");
        }
        values.push(Value::Integer(k as i64));
        sql.push_str(&format!(
            " ORDER BY score DESC, pk DESC LIMIT ?{}",
            values.len()
        ));
        let sql = format!(
            "SELECT {HEADER_COLUMNS}, hits.score FROM ({sql}) hits JOIN episodes e ON e.pk = hits.pk
             ORDER BY hits.score DESC, hits.pk DESC"
        );
        self.read(|conn| {
            let context = || format!("cannot search workspace {workspace_id}");
            let terms = drop_common_terms(conn, terms).map_err(|e| db_error(&context(), e))?;
            let Some(expression) = join_terms(&terms) else {
                return Ok(Vec::new());
            };
            values[0] = Value::Text(expression);
            conn.prepare_cached(&sql)
                .and_then(|mut stmt| {
                    stmt.query_map(params_from_iter(values.iter()), |row| {
                        Ok(LexicalHit {
                            header: header_from_row(row)?,
                            bm25: row.get(11)?,
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| db_error(&format!("cannot search workspace {workspace_id}"), e))
        })
    }
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
