//! Weak hits: recall still returns its best candidates when nothing in memory is about the
//! query, but each hit says how many of the query's terms it holds, and a hit with neither a
//! lexical match worth the name nor a similarity clearly above what unrelated episodes reach is
//! weak: the tool shows its header only, and says so first when every hit is.

use codeoid_core::retrieve::RecallQuery;
use serde_json::json;

use super::{exchange, model_config, open_in, record_filler, session};
use crate::tools::lexical_config;

/// Records the filler and one episode with a weak word (`chart`) of the off-topic query.
fn memory_with_a_chart(
    config: codeoid_core::MemoryConfig,
) -> (tempfile::TempDir, codeoid_core::Memory, String) {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), config);
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    let chart = exchange(
        &memory,
        &s,
        "chart",
        500,
        "draw the signup figure",
        "Read",
        json!({"file_path": "docs/figures.md"}),
        "A bar chart of weekly signups, one bar per week, drawn with plotters.",
    );
    (dir, memory, chart)
}

#[test]
fn one_common_word_is_not_a_match_and_weak_hits_cost_a_header() {
    let (_dir, memory, chart) = memory_with_a_chart(lexical_config());
    let hits = memory
        .recall(None, &RecallQuery::new("kubernetes helm chart rollout"))
        .unwrap();
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    assert_eq!(hit.header.id, chart);
    // The batch's best BM25 is 1 however weak it is; the terms say what it is made of.
    assert_eq!(hit.components.bm25, 1.0);
    assert_eq!(
        (hit.relevance.held.as_slice(), hit.relevance.terms),
        (&["chart".to_owned()][..], 4)
    );
    assert!(hit.relevance.share < 0.5, "{:?}", hit.relevance);
    assert!(hit.relevance.weak && hit.relevance.lift.is_none());

    let out = memory.call_tool(
        None,
        "recall",
        &json!({"query": "kubernetes helm chart rollout"}).to_string(),
    );
    assert!(!out.is_error);
    assert!(
        out.text.starts_with(
            "No episode in this workspace's memory clearly matches \"kubernetes helm chart \
             rollout\": "
        ),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("\n- terms: 1 of 4 (chart)\n- weak match: "),
        "{}",
        out.text
    );
    assert!(
        out.text.ends_with(&format!("- episode_id: {chart}")),
        "{}",
        out.text
    );
    assert!(
        !out.text.contains("weekly signups"),
        "no content: {}",
        out.text
    );

    // The same episode asked for by its own words is shown whole, with no notice.
    let out = memory.call_tool(
        None,
        "recall",
        &json!({"query": "bar chart of weekly signups"}).to_string(),
    );
    assert!(
        out.text.starts_with("### [1] Read(docs/figures.md)"),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("\n- terms: 4 of 4 (bar, chart, weekly, signups)\n- episode_id: ")
    );
    assert!(out.text.contains("weekly signups, one bar per week"));
    // A file the query names is a match whatever the words.
    let hits = memory
        .recall(None, &RecallQuery::new("what is in docs/figures.md"))
        .unwrap();
    assert_eq!(hits[0].header.id, chart);
    assert!(!hits[0].relevance.weak, "{:?}", hits[0].relevance);
}

#[test]
fn with_vectors_meaning_counts_only_above_what_unrelated_episodes_reach() {
    let (_dir, memory, chart) = memory_with_a_chart(model_config());
    memory.flush().unwrap();
    // Nothing about payments: the vector channel still returns its nearest episodes, all weak.
    let hits = memory
        .recall(None, &RecallQuery::new("stripe payment webhook signature"))
        .unwrap();
    assert!(hits.len() > 1);
    for hit in &hits {
        let r = &hit.relevance;
        assert!(r.weak, "{} {r:?}", hit.header.summary);
        assert!(r.lift.is_some() && r.lift_needed.is_some(), "{r:?}");
    }
    // No shared word, the same meaning: the lift carries it.
    let q = "a graph showing how many people signed up each week";
    let hits = memory.recall(None, &RecallQuery::new(q)).unwrap();
    let ranked: Vec<(&str, &Option<f64>)> = hits
        .iter()
        .map(|h| (h.header.summary.as_str(), &h.relevance.lift))
        .collect();
    assert_eq!(hits[0].header.id, chart, "{ranked:?}");
    let r = &hits[0].relevance;
    assert!(r.held.is_empty() || r.share < 0.5, "{r:?}");
    assert!(!r.weak, "{r:?}");
}
