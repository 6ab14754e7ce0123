//! Lexical search: BM25 over the FTS5 index with filters applied before the top-k cut (DESIGN §2,
//! `bm25`), planned so that its cost is bounded however common the query's words are.
//!
//! FTS5 has no top-k pruning: it scores every episode that matches any term, about half a
//! microsecond each (most of it the row's length lookup), so a query of common words on a large
//! store costs tens of milliseconds. The plan bounds that work by a *budget* of scored matches,
//! using the document frequencies FTS5 keeps (`episodes_vocab`):
//! 1. Terms that cannot match (a word no episode holds, a phrase with such a word) are dropped;
//!    they add nothing to any score.
//! 2. On stores of [`PRUNE_MIN_ROWS`] episodes or more, single words held by more than half of
//!    them are dropped while a rarer word that occurs remains: FTS5 clamps their IDF to ~0, so
//!    they change no ranking, only the cost.
//! 3. A store of at most budget episodes is searched with every remaining term. On a larger one
//!    the terms are taken rarest first while their frequencies add up to at most the budget. A
//!    query whose frequencies fit is searched exactly as asked; otherwise the common words it
//!    leaves out no longer rank (a deliberate approximation: they carry the least IDF, and the
//!    vector channel still sees them).
//! 4. When even the rarest term does not fit, it alone is searched over its most recent matches
//!    (as many as the budget), newest first: a bounded, recency-biased answer.
//! 5. The counts above are the whole store's. When the scope (the workspace, the filters, the
//!    exclusions) holds no match of the terms kept, the terms left out are planned again (every
//!    word kept that fits) and searched in a second pass, so a common word is not dropped
//!    because a rarer one matches only outside the scope. Its scores add to the first pass's:
//!    bm25 is a sum over terms.
//!
//! Scores are `-bm25()` (higher is better) with FTS5's own statistics, raw, not normalized; a
//! kept term's contribution is exactly what it would be in the full query, since bm25 is a sum
//! over terms. Normalizing over a candidate batch and fusion belong to the retrieval layer.
//!
//! Filters that select episodes (session, tool, time, paths) are joined in the SQL; the
//! exclusions (a session, a live context), which leave out few episodes, are checked on the
//! headers of the best matches, walking on until `k` pass, which spares every other match a row
//! lookup.
//!
//! Invariants: every search is scoped to one workspace and its filters apply before the top-k
//! cut, so a filtered search returns matches whenever the plan's terms have some, and it is
//! empty only when the second pass's terms have none in scope either. Rotation
//! events and the model's own memory-tool calls (a recorded `recall` holds the text of every
//! episode it found, so it would match what they match and nest copies of them) are never hits,
//! nor do they take a slot of the `k`; they stay in the store, the timeline and `get_episode`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

use super::aggregates::memory_tool_sql;
use super::candidates::headers_in;
use super::connection::db_error;
use super::doc_counts::DocCounts;
use super::episodes::EpisodeHeader;
use super::fts::{BM25_WEIGHTS, Term, join_terms, query_terms};
use super::{Store, to_millis};
use crate::canonical::EpisodeKind;
use crate::canonical::tool_input::memory_tool;
use crate::error::{Error, Result};

/// Largest `k` a lexical search accepts.
pub const MAX_LEXICAL_K: usize = 1000;

/// Matches one lexical search scores at most, unless told otherwise: about 3 ms of FTS5 work on
/// the benchmark machine (see `docs/benchmarks.md`).
pub const DEFAULT_LEXICAL_BUDGET: usize = 6_000;

/// Smallest budget accepted: below this a search could not even fill its candidates.
pub const MIN_LEXICAL_BUDGET: usize = 100;

/// Stores smaller than this never drop the words most of their episodes hold.
const PRUNE_MIN_ROWS: i64 = 1000;

/// Filters applied before the top-k cut. `Default` filters nothing.
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

/// What a planned search returned: the top hits, and the score of every match it scored.
#[derive(Debug, Clone, Default)]
pub(crate) struct LexicalMatches {
    /// The `k` best hits of the workspace with their episode keys, best first.
    pub hits: Vec<(i64, LexicalHit)>,
    /// `(episode key, -bm25())` of every scored match, best first. Without filters it may hold
    /// other workspaces' episodes; look keys up, do not list them.
    pub scores: Vec<(i64, f64)>,
    /// The document frequencies the plan read, for the relevance judgement to reuse.
    pub counts: DocCounts,
}

/// What one search runs: the MATCH expression and, when the terms did not fit the budget, how
/// many of the newest matches it scores.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    expression: String,
    newest: Option<usize>,
    /// Terms of the query the plan leaves out (common words, or what did not fit the budget),
    /// searched in a second pass when the first finds no hit in scope.
    left_out: Vec<Term>,
}

/// A term with its document frequency: exact for a word, an upper bound for a phrase (its
/// rarest word), `None` when unknown (words outside ASCII: FTS5 folds diacritics, the query
/// does not, so the vocabulary cannot be asked).
struct Counted {
    term: Term,
    docs: Option<i64>,
}

/// The plan for `terms` (see the module docs); `prune` drops the words most episodes hold.
fn plan(
    conn: &Connection,
    counts: &mut DocCounts,
    terms: Vec<Term>,
    budget: usize,
    prune: bool,
) -> rusqlite::Result<Option<Plan>> {
    let mut counted = Vec::with_capacity(terms.len());
    for term in terms {
        let mut docs: Option<i64> = None;
        for token in term.tokens.iter().filter(|t| t.is_ascii()) {
            let d = counts.docs(conn, token)?;
            docs = Some(docs.map_or(d, |m: i64| m.min(d)));
        }
        if docs != Some(0) {
            counted.push(Counted { term, docs });
        }
    }
    if counted.is_empty() {
        return Ok(None);
    }
    // At least the row count; an overestimate only makes the plan more cautious.
    let rows = counts.rows(conn)?;
    let (mut counted, mut left_out) = if prune {
        drop_common(rows, counted)
    } else {
        (counted, Vec::new())
    };
    if usize::try_from(rows).unwrap_or(usize::MAX) <= budget {
        // No search can score more episodes than the store holds.
        let terms: Vec<Term> = counted.into_iter().map(|c| c.term).collect();
        return Ok(join_terms(&terms).map(|expression| Plan {
            expression,
            newest: None,
            left_out,
        }));
    }
    // Rarest first; the sort is stable, so equal frequencies keep the query's order.
    counted.sort_by_key(|c| c.docs.unwrap_or(0));
    let mut spent = 0usize;
    let mut kept: Vec<Term> = Vec::new();
    // The terms past the budget, rarest first.
    let mut over: Vec<Term> = Vec::new();
    for c in counted {
        let docs = usize::try_from(c.docs.unwrap_or(0)).unwrap_or(usize::MAX);
        if over.is_empty() && spent.saturating_add(docs) <= budget {
            spent += docs;
            kept.push(c.term);
        } else {
            over.push(c.term);
        }
    }
    let newest = if kept.is_empty() {
        // Even the rarest term is over budget: it alone, over its newest matches.
        kept.push(over.remove(0));
        Some(budget)
    } else {
        None
    };
    left_out.extend(over);
    Ok(join_terms(&kept).map(|expression| Plan {
        expression,
        newest,
        left_out,
    }))
}

/// Drops words held by more than half of a store's `rows` episodes, as long as a rarer word that
/// occurs remains (see the module docs, step 2). Phrases are never dropped here: their count is
/// only a bound, and they may match nothing.
/// Returns the kept terms and the dropped ones.
fn drop_common(rows: i64, counted: Vec<Counted>) -> (Vec<Counted>, Vec<Term>) {
    if counted.len() < 2 || rows < PRUNE_MIN_ROWS {
        return (counted, Vec::new());
    }
    let word = |c: &Counted| c.term.tokens.len() == 1 && c.docs.is_some();
    let common = |c: &Counted| word(c) && c.docs.is_some_and(|d| d * 2 > rows);
    if !counted.iter().any(|c| word(c) && !common(c)) {
        return (counted, Vec::new());
    }
    let (dropped, kept): (Vec<Counted>, Vec<Counted>) = counted.into_iter().partition(common);
    (kept, dropped.into_iter().map(|c| c.term).collect())
}

/// Whether `filters` select episodes by something only the episode row knows (session, tool,
/// time, paths). The exclusions (a session, a live context) leave out few episodes, so they are
/// checked on the headers of the best matches instead (see [`top_hits`]), which spares every
/// other match a row lookup.
fn needs_join(filters: &LexicalFilters) -> bool {
    filters.session_id.is_some()
        || filters.tool_name.is_some()
        || filters.since.is_some()
        || filters.until.is_some()
        || !filters.paths.is_empty()
}

/// The scoring SQL for `filters`: `?1` is the MATCH expression, `?2` the workspace when the
/// filters need the episode row. With `newest`, only that many matches are scored, newest
/// first, and every filter, the workspace and the exclusions included, is applied before that
/// cut: checked afterwards, another workspace's or an excluded session's newer matches could
/// fill the whole budget and leave none for the caller. Returns the SQL and its bound values
/// after `?1`.
fn scoring_sql(
    workspace_id: &str,
    filters: &LexicalFilters,
    newest: Option<usize>,
) -> (String, Vec<Value>) {
    if newest.is_none() && !needs_join(filters) {
        // Score FTS rows alone: the workspace and the exclusions are checked when the winners'
        // headers are read, which saves a row lookup per match.
        let sql = format!(
            "SELECT episodes_fts.rowid, -bm25(episodes_fts, {BM25_WEIGHTS})
             FROM episodes_fts WHERE episodes_fts MATCH ?1"
        );
        return (sql, Vec::new());
    }
    // CROSS JOIN keeps the FTS table the outer loop, filters checked per match. The exclusions
    // join them only before a `newest` cut; otherwise `top_hits` checks them. Given the
    // choice, SQLite drives a filtered search from the episodes' indexes and probes FTS5 once
    // per episode by rowid; every probe is a new FTS5 query whose bm25() recounts each term's
    // documents over the whole index (seconds on a thousand episodes).
    let mut sql = format!(
        "SELECT episodes_fts.rowid, -bm25(episodes_fts, {BM25_WEIGHTS})
         FROM episodes_fts CROSS JOIN episodes e ON e.pk = episodes_fts.rowid
         WHERE episodes_fts MATCH ?1 AND e.workspace_id = ?2"
    );
    let mut values: Vec<Value> = vec![Value::Text(workspace_id.to_owned())];
    let mut add = |clause: &str, value: Value, sql: &mut String| {
        values.push(value);
        sql.push_str(&clause.replace('?', &format!("?{}", values.len() + 1)));
    };
    if let Some(session) = &filters.session_id {
        add(
            " AND e.session_id = ?",
            Value::Text(session.clone()),
            &mut sql,
        );
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
    if let Some(newest) = newest {
        // Left out before the cut, like every filter: a run of recalls could fill the budget.
        sql.push_str(&format!(
            " AND e.kind <> 'rotation' AND NOT coalesce({}, 0)",
            memory_tool_sql("e.tool_name")
        ));
        if let Some(session) = &filters.exclude_session_id {
            add(
                " AND e.session_id <> ?",
                Value::Text(session.clone()),
                &mut sql,
            );
        }
        if let Some((session, from_pk)) = &filters.exclude_live {
            add(
                " AND NOT (e.session_id = ?",
                Value::Text(session.clone()),
                &mut sql,
            );
            add(" AND e.pk >= ?)", Value::Integer(*from_pk), &mut sql);
        }
        sql.push_str(&format!(" ORDER BY episodes_fts.rowid DESC LIMIT {newest}"));
    }
    (sql, values)
}

impl Store {
    /// BM25 search over summary, content and tool name of `workspace_id`'s episodes: the `k` best
    /// matches of `query` (any text; see [`super::match_expression`]) among the episodes that
    /// pass `filters`, planned within [`DEFAULT_LEXICAL_BUDGET`] (see
    /// [`Store::lexical_search_within`]). Filters are applied before the cut, so a filtered
    /// search returns matches whenever they exist.
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
        self.lexical_search_within(workspace_id, query, filters, k, DEFAULT_LEXICAL_BUDGET)
    }

    /// [`Store::lexical_search`] scoring at most `budget` matches: a query whose terms' document
    /// frequencies add up to at most `budget` is searched exactly; otherwise its most common
    /// words are left out, rarest kept first, and when even the rarest word is over budget only
    /// its `budget` newest matches are scored. Words held by most of a large store's episodes
    /// are dropped whatever the budget when a rarer word remains (their BM25 weight is ~0).
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when `k` is 0 or above [`MAX_LEXICAL_K`], or `budget`
    /// is below [`MIN_LEXICAL_BUDGET`].
    pub fn lexical_search_within(
        &self,
        workspace_id: &str,
        query: &str,
        filters: &LexicalFilters,
        k: usize,
        budget: usize,
    ) -> Result<Vec<LexicalHit>> {
        let matches = self.lexical_matches(workspace_id, query, filters, k, budget)?;
        Ok(matches.hits.into_iter().map(|(_, hit)| hit).collect())
    }

    /// The planned search itself: the top `k` hits and every scored match's score.
    ///
    /// # Errors
    /// As [`Store::lexical_search_within`].
    pub(crate) fn lexical_matches(
        &self,
        workspace_id: &str,
        query: &str,
        filters: &LexicalFilters,
        k: usize,
        budget: usize,
    ) -> Result<LexicalMatches> {
        if k == 0 || k > MAX_LEXICAL_K {
            return Err(Error::invalid_input(format!(
                "lexical search k {k} is out of range; use 1..={MAX_LEXICAL_K}"
            )));
        }
        if budget < MIN_LEXICAL_BUDGET {
            return Err(Error::invalid_input(format!(
                "lexical budget {budget} is too small; use at least {MIN_LEXICAL_BUDGET} \
                 (default {DEFAULT_LEXICAL_BUDGET})"
            )));
        }
        let terms = query_terms(query);
        if terms.is_empty() {
            return Ok(LexicalMatches::default());
        }
        self.read(|conn| {
            let context = || format!("cannot search workspace {workspace_id}");
            let search = || -> rusqlite::Result<LexicalMatches> {
                let mut counts = DocCounts::default();
                let Some(first) = plan(conn, &mut counts, terms, budget, true)? else {
                    return Ok(LexicalMatches {
                        counts,
                        ..LexicalMatches::default()
                    });
                };
                let mut scores = score(conn, workspace_id, filters, &first)?;
                let mut hits = top_hits(conn, workspace_id, filters, &scores, k)?;
                // The terms left out were judged by their counts over the whole store; when the
                // scope (workspace, filters, exclusions) holds no match of the kept ones, they
                // may be all it has.
                if hits.is_empty() {
                    if let Some(rest) = plan(conn, &mut counts, first.left_out, budget, false)? {
                        let more = score(conn, workspace_id, filters, &rest)?;
                        scores = merged(scores, more);
                        hits = top_hits(conn, workspace_id, filters, &scores, k)?;
                    }
                }
                Ok(LexicalMatches {
                    hits,
                    scores,
                    counts,
                })
            };
            search().map_err(|e| db_error(&context(), e))
        })
    }
}

/// `(episode key, -bm25())` of every match `plan` scores, best first.
fn score(
    conn: &Connection,
    workspace_id: &str,
    filters: &LexicalFilters,
    plan: &Plan,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let (sql, values) = scoring_sql(workspace_id, filters, plan.newest);
    let bound = std::iter::once(Value::Text(plan.expression.clone())).chain(values);
    let mut scores: Vec<(i64, f64)> = conn.prepare_cached(&sql).and_then(|mut stmt| {
        stmt.query_map(params_from_iter(bound), |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()
    })?;
    scores.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    Ok(scores)
}

/// The scores of two searches over disjoint terms of one query, as the whole query scores
/// them: bm25 is a sum over terms, so an episode both found gets the sum. Best first.
fn merged(first: Vec<(i64, f64)>, second: Vec<(i64, f64)>) -> Vec<(i64, f64)> {
    let mut by_key: HashMap<i64, f64> = first.into_iter().collect();
    for (pk, score) in second {
        *by_key.entry(pk).or_insert(0.0) += score;
    }
    let mut scores: Vec<(i64, f64)> = by_key.into_iter().collect();
    scores.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    scores
}

/// The first `k` of `scores` (best first) that belong to `workspace_id`, pass the exclusions of
/// `filters` and are neither rotation events nor memory-tool calls, with their headers.
fn top_hits(
    conn: &Connection,
    workspace_id: &str,
    filters: &LexicalFilters,
    scores: &[(i64, f64)],
    k: usize,
) -> rusqlite::Result<Vec<(i64, LexicalHit)>> {
    let excluded = |pk: i64, header: &EpisodeHeader| {
        filters
            .exclude_session_id
            .as_ref()
            .is_some_and(|s| *s == header.session_id)
            || filters
                .exclude_live
                .as_ref()
                .is_some_and(|(s, from_pk)| *s == header.session_id && pk >= *from_pk)
    };
    let mut hits = Vec::with_capacity(k.min(scores.len()));
    // Read headers a batch at a time: usually the first batch is enough; other workspaces'
    // matches (unfiltered searches score them too) only mean another batch.
    for batch in scores.chunks(k.max(64)) {
        let pks: Vec<i64> = batch.iter().map(|(pk, _)| *pk).collect();
        let mut headers: HashMap<i64, EpisodeHeader> = headers_in(conn, workspace_id, &pks)?;
        for (pk, score) in batch {
            if hits.len() == k {
                return Ok(hits);
            }
            // Rotation events are bookkeeping the timeline shows; as hits they would only echo
            // the session's name (and their seed block matches many queries). A memory tool's
            // result is copies of other episodes.
            if let Some(header) = headers.remove(pk).filter(|h| {
                h.kind != EpisodeKind::Rotation
                    && h.tool_name.as_deref().and_then(memory_tool).is_none()
                    && !excluded(*pk, h)
            }) {
                hits.push((
                    *pk,
                    LexicalHit {
                        header,
                        bm25: *score,
                    },
                ));
            }
        }
    }
    Ok(hits)
}
