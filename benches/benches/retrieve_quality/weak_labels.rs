//! The weak-label report: relevant hits of the hybrid labelled weak, and the off-topic
//! queries' hits at the tool's default limit.

use std::sync::Arc;

use codeoid_core::retrieve::{RecallFilters, RecallQuery, Weights};
use codeoid_core::store::{DEFAULT_LEXICAL_BUDGET, Store};

use crate::DEPTH;
use crate::quality_store::retriever;
use crate::query::Query;

/// Asks `queries` (with their vectors) of the hybrid at the default settings.
fn hybrid_hits(
    store: &Arc<Store>,
    queries: &[Query],
    vectors: &[Vec<f32>],
    limit: usize,
) -> Vec<Vec<codeoid_core::retrieve::Hit>> {
    let r = retriever(store, Weights::default(), DEFAULT_LEXICAL_BUDGET);
    r.flush().unwrap();
    queries
        .iter()
        .zip(vectors)
        .map(|(q, v)| {
            let mut query = RecallQuery::new(q.text.clone())
                .limit(limit)
                .filters(RecallFilters {
                    until: q.until,
                    ..RecallFilters::default()
                });
            query.as_of = Some(q.as_of);
            r.recall_embedded(&query, v).unwrap()
        })
        .collect()
}

/// Prints (and bounds) the weak labels: relevant hits of the hybrid's top 10 labelled weak, per
/// family, and the off-topic queries' hits at the tool's default limit.
pub(crate) fn weak_labels(
    store: &Arc<Store>,
    queries: &[Query],
    vectors: &[Vec<f32>],
    off_topic: &[Query],
    off_vectors: &[Vec<f32>],
) {
    println!(
        "\n| queries | relevant hits in the top 10 | weak | weak in the top 6 |\n|---|---|---|---|"
    );
    let hits = hybrid_hits(store, queries, vectors, DEPTH);
    let mut weak_relevant = Vec::new();
    for family in ["reread (prompt)", "reread (intent)", "error", "all"] {
        let (mut relevant, mut weak, mut weak_shown) = (0, 0, 0);
        for (q, hits) in queries.iter().zip(&hits) {
            if family != "all" && q.family != family {
                continue;
            }
            for (rank, h) in hits.iter().enumerate() {
                if !q.relevant.contains(&h.header.id) {
                    continue;
                }
                relevant += 1;
                if h.relevance.weak {
                    weak += 1;
                    weak_shown += usize::from(rank < 6);
                    if family == "all" {
                        weak_relevant.push((q.family, rank + 1, h));
                    }
                }
            }
        }
        println!("| {family} | {relevant} | {weak} | {weak_shown} |");
        if family == "error" {
            assert_eq!(weak, 0, "an error line's episodes hold its words");
        }
    }
    for (family, rank, h) in &weak_relevant {
        let r = &h.relevance;
        println!(
            "  weak but relevant ({family}, rank {rank}): {} — {} of {} terms, share {:.2}, lift \
             {:.2} (needed {:.2})",
            h.header.summary,
            r.held.len(),
            r.terms,
            r.share,
            r.lift.unwrap_or(f64::NAN),
            r.lift_needed.unwrap_or(f64::NAN)
        );
    }
    let hits = hybrid_hits(store, off_topic, off_vectors, 6);
    let total: usize = hits.iter().map(Vec::len).sum();
    let weak: usize = hits.iter().flatten().filter(|h| h.relevance.weak).count();
    let all_weak = hits
        .iter()
        .filter(|h| !h.is_empty() && h.iter().all(|h| h.relevance.weak))
        .count();
    println!(
        "off-topic: {} queries, {total} hits at limit 6, {weak} weak; {all_weak} queries with \
         only weak hits",
        off_topic.len()
    );
    assert!(
        off_topic.len() >= 5,
        "too few off-topic prompts: {}",
        off_topic.len()
    );
    assert!(
        weak * 2 > total,
        "most off-topic hits are weak: {weak} of {total}"
    );
}
