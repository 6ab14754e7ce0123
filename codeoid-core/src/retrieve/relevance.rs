//! Whether a hit is worth the model's context. Recall always returns its best candidates, even
//! when nothing in memory is about the query, and neither a batch-normalized BM25 (`fts=1.00`
//! for the batch's best match, however weak) nor a cosine (whose range depends on the model)
//! says so. [`Relevance`] does, from two measures that mean the same under any embedding model:
//!
//! - **Terms held**: which of the query's search terms the hit's own text holds, counted with
//!   the lexical search's sanitizer and tokens (an identifier's spellings as one term), and the
//!   **share** of the query's term weight they carry, each term weighted by its BM25 inverse
//!   document frequency: `chart` in a query about a Kubernetes helm chart rollout is a common
//!   word, `kubernetes` and `helm` (in no episode) carry most of the weight. A lexical match is
//!   worth the name when it holds at least [`MIN_SHARE`] of the weight, or, for a query of three
//!   terms, two of them however common (shorter queries are all or nothing, and holding all
//!   is a share of 1): `schema version constant` against the episode reading `SCHEMA_VERSION`
//!   holds two common words of a small store full of schema versions (an IDF near 0) and is no
//!   weak match for lacking the rare third. (A majority for every query length let a long
//!   off-topic prompt's common words through: 99 → 76 of 156 off-topic hits weak on the quality
//!   set; for three terms, 99 → 95, and the relevant hits labelled weak stay the same 10.)
//!   A hit touching a file the query names (path signal at least 0.5) is a lexical match too.
//! - **Lift**: how far the hit's cosine stands above the typical cosine of this query in the
//!   recall's scope, in units of its spread: `(cos - median) / (1.4826 · MAD)` over a sample of
//!   up to [`BASELINE_SAMPLE`] episodes that pass the recall's filters. A robust z-score:
//!   unchanged by any increasing linear map of the cosines, so bge-small's narrow high range
//!   and MiniLM's wide low one give the same lifts for the same ordering and spacing. Clearly
//!   above means above what the best of that many unrelated episodes reaches: the best of `n`
//!   draws of noise lies near `sqrt(2 ln n)` spreads above the median (3.6 for 628 episodes,
//!   4.8 for 100,000), and a query about nothing in memory finds exactly that (a Kubernetes
//!   question on a 628-episode Elixir store: best lifts 3.5, 3.3, 3.1), so the bar is
//!   `sqrt(2 ln n) + `[`LIFT_MARGIN`]. (Two simpler bars were measured first and separate
//!   nothing: a fixed lift, which noise reaches in any large scope, and the spread of the
//!   recall's own candidates, which are the upper tail already.)
//!
//! A hit with neither is **weak**: nothing in it says it is about the query. The tools show a
//! weak hit's header only and, when every hit is weak, say so first. Ranking does not change:
//! this is a label for the reader. The thresholds were set on the quality benchmark (see
//! `docs/benchmarks.md`, "Weak labels").
//!
//! The engine calls [`judge`] with the hits, the candidates' cosines and the [`Baseline`] of
//! the sample the vector scan took; the store counts the terms held. The rest is pure.

use std::collections::HashMap;

use super::fusion::Candidate;
use super::query::Hit;
use crate::error::Result;
use crate::store::{DocCounts, Store};

/// Least share of the query's term weight a lexical match worth the name holds.
pub const MIN_SHARE: f64 = 0.5;

/// Queries of at most this many terms also make a lexical match of a hit holding most of them,
/// however common they are (in effect two of three: with fewer terms, most is all).
const SHORT_QUERY_TERMS: usize = 3;

/// How far above the best of the scope's noise (`sqrt(2 ln n)` spreads above the median, for
/// `n` episodes in scope) a lift must be to count as clearly above the typical similarity.
pub const LIFT_MARGIN: f64 = 0.5;

/// Least path signal (the query names the hit's file, or a file of the same name) that makes a
/// lexical match.
const MIN_PATH: f64 = 0.5;

/// Episodes of the scope whose cosines make the baseline (all of them in a smaller scope).
pub const BASELINE_SAMPLE: usize = 2_048;

/// MAD to standard deviation for normal data, so lifts read as z-scores.
const MAD_TO_SIGMA: f64 = 1.4826;

/// Fewest cosines a baseline needs for a median and a spread to mean anything.
const MIN_BASELINE: usize = 8;

/// How well one hit matches its query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Relevance {
    /// The query's search terms (0 when it has none: only stop words or symbols).
    pub terms: usize,
    /// The terms the hit's text holds, by their words (`record turn` for `record_turn`), in the
    /// query's order.
    pub held: Vec<String>,
    /// The share of the query's term weight (each term's BM25 inverse document frequency) that
    /// the held terms carry, in [0, 1]: a rare word counts more than a common one.
    pub share: f64,
    /// The hit's cosine above the scope's median cosine, in units of its spread; `None` without
    /// a vector for the hit or a baseline (no model, or fewer than 8 embedded episodes in scope).
    pub lift: Option<f64>,
    /// The lift that counts as clearly above the typical similarity in this scope:
    /// `sqrt(2 ln n) + LIFT_MARGIN` for `n` embedded episodes in scope; `None` without a
    /// baseline.
    pub lift_needed: Option<f64>,
    /// Neither a lexical match worth the name nor a similarity clearly above the typical one.
    pub weak: bool,
}

impl Relevance {
    /// The judgement for a hit holding `held` of `terms` query terms, `share` of their weight,
    /// with path signal `path` and `lift` against `baseline`.
    pub(crate) fn judge(
        terms: usize,
        held: Vec<String>,
        share: f64,
        path: f64,
        lift: Option<f64>,
        baseline: Option<&Baseline>,
    ) -> Relevance {
        let majority = terms <= SHORT_QUERY_TERMS && held.len() * 2 > terms;
        let lexical = (!held.is_empty() && (share >= MIN_SHARE || majority)) || path >= MIN_PATH;
        let lift_needed = baseline.map(|b| b.needed);
        let similar = lift.zip(lift_needed).is_some_and(|(l, n)| l >= n);
        Relevance {
            terms,
            weak: !lexical && !similar,
            held,
            share,
            lift,
            lift_needed,
        }
    }
}

/// The typical cosine of a query in a recall's scope: median and spread of a sample, and the
/// lift above which a hit stands out of that many episodes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Baseline {
    median: f64,
    spread: f64,
    needed: f64,
}

impl Baseline {
    /// The baseline of `cosines` (non-finite ones ignored), a sample of a scope of `scope`
    /// episodes; `None` with fewer than 8 cosines or no spread at all (every cosine equal), when
    /// no hit can stand out of them.
    pub(crate) fn of(scope: usize, cosines: impl IntoIterator<Item = f64>) -> Option<Baseline> {
        let mut values: Vec<f64> = cosines.into_iter().filter(|c| c.is_finite()).collect();
        if values.len() < MIN_BASELINE {
            return None;
        }
        let median = median_of(&mut values);
        let mut deviations: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
        let spread = median_of(&mut deviations) * MAD_TO_SIGMA;
        let n = scope.max(values.len()) as f64;
        let needed = (2.0 * n.ln()).sqrt() + LIFT_MARGIN;
        (spread > 0.0).then_some(Baseline {
            median,
            spread,
            needed,
        })
    }

    /// How far `cosine` stands above the median, in spreads.
    pub(crate) fn lift(&self, cosine: f64) -> f64 {
        (cosine - self.median) / self.spread
    }
}

/// Judges each of `hits` (see [`super::relevance`]): the terms of `query` its own text holds,
/// weighted as BM25 weighs them (with the lexical plan's document `counts`), and its cosine
/// against the scope's `baseline`.
///
/// # Errors
/// A database error reading the terms' frequencies.
pub(super) fn judge(
    store: &Store,
    query: &str,
    baseline: Option<Baseline>,
    counts: &mut DocCounts,
    candidates: &[Candidate],
    hits: &mut [Hit],
) -> Result<()> {
    let cosine: HashMap<&str, f64> = candidates
        .iter()
        .filter_map(|c| Some((c.header.id.as_str(), c.cosine?)))
        .collect();
    let lifts: Vec<Option<f64>> = hits
        .iter()
        .map(|h| Some(baseline.as_ref()?.lift(*cosine.get(h.header.id.as_str())?)))
        .collect();
    let texts: Vec<(&str, &str, Option<&str>)> = hits
        .iter()
        .map(|h| {
            let tool = h.header.tool_name.as_deref();
            (h.header.summary.as_str(), h.content.as_str(), tool)
        })
        .collect();
    let terms = store.query_terms_held(query, &texts, counts)?;
    let total: f64 = terms.weights.iter().sum();
    for ((hit, held), lift) in hits.iter_mut().zip(terms.held).zip(lifts) {
        let weight = held.iter().fold(0.0, |sum, &i| sum + terms.weights[i]);
        let share = if total > 0.0 { weight / total } else { 0.0 };
        let held = held.into_iter().map(|i| terms.terms[i].clone()).collect();
        let path = hit.components.path;
        hit.relevance = Relevance::judge(
            terms.terms.len(),
            held,
            share,
            path,
            lift,
            baseline.as_ref(),
        );
    }
    Ok(())
}

/// The median of `values` (not empty), reordering them.
fn median_of(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("t{i}")).collect()
    }

    #[test]
    fn a_hit_is_weak_without_the_querys_weight_a_named_file_or_a_clear_lift() {
        let judge = |held_n, share, path, lift| {
            let flat: Vec<f64> = (0..100).map(|i| f64::from(i % 10) / 100.0).collect();
            let baseline = Baseline::of(1000, flat).unwrap();
            Relevance::judge(4, held(held_n), share, path, lift, Some(&baseline))
        };
        assert!(judge(1, 0.2, 0.0, None).weak, "a common word of four");
        assert!(
            judge(3, 0.3, 0.0, None).weak,
            "most of four common words: a long query"
        );
        // A short query: most of its terms make a match, however common they are.
        let short = |held_n| Relevance::judge(3, held(held_n), 0.05, 0.0, None, None).weak;
        assert!(!short(2), "two of three, in every episode of a small store");
        assert!(short(1));
        // Two terms: one is no majority.
        assert!(Relevance::judge(2, held(1), 0.05, 0.0, None, None).weak);
        assert!(!judge(1, 0.6, 0.0, None).weak, "the rare word of four");
        assert!(!judge(0, 0.0, 1.0, None).weak, "the file the query names");
        assert!(judge(0, 0.0, 0.25, None).weak);
        // sqrt(2 ln 1000) = 3.72, plus the margin.
        assert!(
            judge(0, 0.0, 0.0, Some(4.0)).weak,
            "what noise reaches in 1,000 episodes"
        );
        assert!(!judge(0, 0.0, 0.0, Some(4.3)).weak);
        let none = Relevance::judge(0, held(0), 0.0, 0.0, None, None);
        assert!(
            none.weak && none.lift_needed.is_none(),
            "no terms, no vector"
        );
        assert!(!Relevance::judge(1, held(1), 1.0, 0.0, None, None).weak);
    }

    #[test]
    fn lifts_do_not_depend_on_the_models_cosine_range() {
        // A flat scope with one outlier, in a MiniLM-like range and squeezed into a bge-like one.
        let minilm: Vec<f64> = (0..40)
            .map(|i| 0.20 + 0.002 * f64::from(i % 10))
            .chain([0.55])
            .collect();
        let bge: Vec<f64> = minilm.iter().map(|c| 0.72 + 0.3 * c).collect();
        let a = Baseline::of(41, minilm.iter().copied()).unwrap();
        let b = Baseline::of(41, bge.iter().copied()).unwrap();
        for (x, y) in minilm.iter().zip(&bge) {
            assert!((a.lift(*x) - b.lift(*y)).abs() < 1e-9);
        }
        assert!(a.lift(0.55) > a.needed);
        assert!(a.lift(0.218) < a.needed);
        // The bar grows with the scope: the best of more noise is higher.
        let big = Baseline::of(100_000, minilm.iter().copied()).unwrap();
        assert!((big.needed - (2.0 * 100_000f64.ln()).sqrt() - LIFT_MARGIN).abs() < 1e-12);
        assert!(big.needed > a.needed);
        assert_eq!(Baseline::of(20, [0.5; 20]), None, "no spread");
        assert_eq!(Baseline::of(3, [0.1, 0.2, f64::NAN]), None, "too few");
    }
}
