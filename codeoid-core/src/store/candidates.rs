//! Reads that complete a retrieval candidate set: headers of episodes the vector index found and
//! the episodes that touched given paths (the path filter of the vector channel); and which of
//! a query's search terms a hit's own text holds ([`Store::query_terms_held`]), counted with the
//! sanitizer and the tokens of the FTS5 index, so it says what a BM25 score is made of.
//!
//! Invariants: scoped to one workspace like every read. The BM25 score of vector candidates is
//! not read here: the lexical search returns the score of every match it scored (see
//! `lexical`), so one FTS5 pass serves both channels.
//!
//! It deliberately does no normalization or fusion.

use std::collections::{HashMap, HashSet};

use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

use super::Store;
use super::connection::db_error;
use super::doc_counts::DocCounts;
use super::episodes::{EpisodeHeader, HEADER_COLUMNS, header_from_row};
use super::fts::{Term, index_text, query_terms};
use super::search_text::tool_call_text;
use crate::error::Result;

/// Parameters bound per `IN (...)` list.
const IN_CHUNK: usize = 500;

/// The headers of the episodes `pks` that belong to `workspace_id`, by primary key, read on
/// `conn`.
pub(crate) fn headers_in(
    conn: &Connection,
    workspace_id: &str,
    pks: &[i64],
) -> rusqlite::Result<HashMap<i64, EpisodeHeader>> {
    let mut out = HashMap::with_capacity(pks.len());
    for chunk in pks.chunks(IN_CHUNK) {
        let marks = vec!["?"; chunk.len()].join(", ");
        // `+e.workspace_id` keeps SQLite off the workspace index: without statistics it takes
        // `workspace_id = ?` for a handful of rows and would scan (and sort) the whole workspace
        // instead of looking the listed episodes up.
        let sql = format!(
            "SELECT {HEADER_COLUMNS}, e.pk FROM episodes e
             WHERE +e.workspace_id = ? AND e.pk IN ({marks})"
        );
        let values = std::iter::once(Value::Text(workspace_id.to_owned()))
            .chain(chunk.iter().map(|&pk| Value::Integer(pk)));
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(values), |r| {
            Ok((r.get::<_, i64>(11)?, header_from_row(r)?))
        })?;
        for row in rows {
            let (pk, header) = row?;
            out.insert(pk, header);
        }
    }
    Ok(out)
}

impl Store {
    /// The headers of the episodes `pks` that belong to `workspace_id`, by primary key.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub(crate) fn headers_by_pk(
        &self,
        workspace_id: &str,
        pks: &[i64],
    ) -> Result<HashMap<i64, EpisodeHeader>> {
        self.read(|conn| {
            headers_in(conn, workspace_id, pks)
                .map_err(|e| db_error("cannot read episode headers", e))
        })
    }

    /// The primary keys of `workspace_id`'s episodes that touched any of `relatives`
    /// (workspace-relative paths, see [`super::relative_path`]).
    ///
    /// # Errors
    /// A database error if the read fails.
    pub(crate) fn episodes_touching(
        &self,
        workspace_id: &str,
        relatives: &[String],
    ) -> Result<HashSet<i64>> {
        let mut out = HashSet::new();
        self.read(|conn| {
            for chunk in relatives.chunks(IN_CHUNK) {
                let marks = vec!["?"; chunk.len()].join(", ");
                let sql = format!(
                    "SELECT episode_pk FROM episode_paths
                     WHERE workspace_id = ? AND relative IN ({marks})"
                );
                let values = std::iter::once(workspace_id).chain(chunk.iter().map(String::as_str));
                let rows = conn
                    .prepare(&sql)
                    .and_then(|mut stmt| {
                        stmt.query_map(params_from_iter(values), |r| r.get::<_, i64>(0))?
                            .collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .map_err(|e| db_error("cannot find episodes by path", e))?;
                out.extend(rows);
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// The text of one hit as the FTS5 row indexes it: summary, content (a tool call's read as
/// `search_text` reads it) and tool name.
pub(crate) type HitText<'a> = (&'a str, &'a str, Option<&'a str>);

/// A query's terms as [`query_terms`] makes them, an identifier's alternatives (the phrase
/// `record turn` and the word `recordturn`) grouped as one term, with how each is shown.
struct TermGroups {
    /// Per term, the token sequences that match it.
    groups: Vec<Vec<Vec<String>>>,
    shown: Vec<String>,
}

impl TermGroups {
    fn new(query: &str) -> TermGroups {
        let mut groups: Vec<Vec<Vec<String>>> = Vec::new();
        let mut shown = Vec::new();
        let mut previous: Option<Term> = None;
        for term in query_terms(query) {
            // `query_terms` follows an identifier's phrase with its parts joined.
            let alternative = previous.as_ref().is_some_and(|p| {
                p.tokens.len() > 1 && term.tokens.len() == 1 && term.tokens[0] == p.tokens.concat()
            });
            match groups.last_mut() {
                Some(group) if alternative => group.push(term.tokens.clone()),
                _ => {
                    shown.push(term.tokens.join(" "));
                    groups.push(vec![term.tokens.clone()]);
                }
            }
            previous = Some(term);
        }
        TermGroups { groups, shown }
    }

    /// The indexes of the terms `text` holds.
    fn held_by(&self, (summary, content, tool_name): HitText<'_>) -> Vec<usize> {
        let content = tool_call_text(content, tool_name);
        // Phrases match within one column, as in FTS5.
        let columns: Vec<Vec<String>> = [summary, &content, tool_name.unwrap_or("")]
            .iter()
            .map(|column| tokens(&index_text(column)))
            .collect();
        (0..self.groups.len())
            .filter(|&i| {
                self.groups[i].iter().any(|phrase| {
                    columns.iter().any(|tokens| {
                        tokens
                            .windows(phrase.len())
                            .any(|w| w.iter().zip(phrase).all(|(a, b)| a == b))
                    })
                })
            })
            .collect()
    }
}

/// The lowercase words of `text`: maximal runs of letters and digits, as `unicode61` splits
/// them (it also folds diacritics, which is not done here: a word outside ASCII written with
/// and without its accents does not count as the same).
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A query's terms with what each weighs, and which of them each hit text holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TermsHeld {
    /// Each term, by its words (`record turn` for `record_turn`), in the query's order.
    pub terms: Vec<String>,
    /// Each term's inverse document frequency as FTS5's BM25 weighs it,
    /// `ln((N - n + 0.5) / (n + 0.5))` (at least 1e-6), `n` the episodes holding it (a phrase:
    /// its rarest word, a bound) and `N` the largest episode key (the store's episode count
    /// until a replaced tail deletes some; see `DocCounts::rows`).
    pub weights: Vec<f64>,
    /// For each text, the indexes of the terms it holds.
    pub held: Vec<Vec<usize>>,
}

impl Store {
    /// The search terms of `query` (what the lexical search ORs: stop words dropped, at most
    /// 32, an identifier's spellings counted as one term) with their weights, and for each of
    /// `texts` the terms it holds: a word as one of its words, a phrase as consecutive words of
    /// one field (summary, content, tool name), after the same camel-case splitting and
    /// tool-call reading as the index. Document frequencies already in `counts` (the lexical
    /// plan's) are not read again.
    ///
    /// # Errors
    /// A database error reading the index's document frequencies.
    pub(crate) fn query_terms_held(
        &self,
        query: &str,
        texts: &[HitText<'_>],
        counts: &mut DocCounts,
    ) -> Result<TermsHeld> {
        let groups = TermGroups::new(query);
        if groups.groups.is_empty() {
            return Ok(TermsHeld {
                held: vec![Vec::new(); texts.len()],
                ..TermsHeld::default()
            });
        }
        let weights = self.read(|conn| {
            idf_weights(conn, counts, &groups)
                .map_err(|e| db_error("cannot read term frequencies", e))
        })?;
        Ok(TermsHeld {
            held: texts.iter().map(|t| groups.held_by(*t)).collect(),
            terms: groups.shown,
            weights,
        })
    }
}

/// The BM25 inverse document frequency of each term group: of its first spelling, a phrase's
/// frequency bounded by its rarest word's (as the lexical plan counts them).
fn idf_weights(
    conn: &Connection,
    counts: &mut DocCounts,
    groups: &TermGroups,
) -> rusqlite::Result<Vec<f64>> {
    let rows = counts.rows(conn)?;
    let mut weights = Vec::with_capacity(groups.groups.len());
    for group in &groups.groups {
        let mut docs: Option<i64> = None;
        for token in group.first().into_iter().flatten() {
            let d = counts.docs(conn, token)?;
            docs = Some(docs.map_or(d, |m| m.min(d)));
        }
        let n = docs.unwrap_or(0).clamp(0, rows) as f64;
        let idf = ((rows as f64 - n + 0.5) / (n + 0.5)).ln();
        weights.push(idf.max(1e-6));
    }
    Ok(weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(query: &str, summary: &str, content: &str) -> (Vec<String>, Vec<usize>) {
        let store = Store::open_in_memory().unwrap();
        let mut out = store
            .query_terms_held(
                query,
                &[(summary, content, None)],
                &mut DocCounts::default(),
            )
            .unwrap();
        (out.terms, out.held.remove(0))
    }

    #[test]
    fn terms_are_counted_as_the_index_matches_them() {
        let (terms, got) = held(
            "kubernetes helm chart rollout",
            "Read(chart.md)",
            "a bar chart",
        );
        assert_eq!(terms, ["kubernetes", "helm", "chart", "rollout"]);
        assert_eq!(got, [2]);
        // An identifier is one term, whichever way the text spells it.
        let (terms, got) = held("why does record_turn fail", "", "call RecordTurn now");
        assert_eq!(terms, ["record turn", "fail"]);
        assert_eq!(got, [0]);
        assert_eq!(held("record_turn", "", "record_turn()").1, [0]);
        assert_eq!(held("record_turn", "", "recordturn").1, [0]);
        // A phrase needs its words in order.
        assert_eq!(
            held("store/mod.rs", "", "mod store rs").1,
            Vec::<usize>::new()
        );
        assert_eq!(held("store/mod.rs", "", "see ./store/mod.rs:12").1, [0]);
        // Stop words are no terms; a query of none has no terms.
        assert_eq!(held("the of and", "", "the of and").0, Vec::<String>::new());
        assert_eq!(held("Café", "", "café").1, [0]);
    }

    #[test]
    fn a_tool_calls_input_is_read_as_json() {
        let store = Store::open_in_memory().unwrap();
        let content =
            "# Tool: Write\n\n## Input\n{\n  \"content\": \"a\\nexport b\"\n}\n\n## Result\nok";
        let text = ("Write(a.js)", content, Some("Write"));
        let out = store
            .query_terms_held("export", &[text], &mut DocCounts::default())
            .unwrap();
        assert_eq!(out.held, [vec![0]]);
        assert_eq!(out.weights.len(), 1);
    }
}
