//! Retrieval quality on the real Claude Code sessions in `../shared/evaldata`: hit@1, hit@5 and
//! MRR of BM25 alone, vectors alone and the hybrid (DESIGN §2 weights).
//!
//! The store: every session recorded once into `target/bench-data/quality-<version>/` and
//! embedded by the real worker with the test model (built once, reused).
//!
//! Queries are derived mechanically from the logs, never picked by hand:
//! - `reread (prompt)`: a user prompt after which the assistant reads a file that some earlier
//!   episode already read. Query: the prompt's text. Relevant: every earlier episode that read
//!   one of those files. Asked as of the first such re-read, seeing only the episodes before it
//!   (`filters.until`), with recency measured from then.
//! - `reread (intent)`: the same re-reads, one query per re-read call: the assistant's own
//!   words since the prompt, up to that call (what a model would have in mind when it reaches
//!   for memory instead; its first 2,000 characters, as for prompts), or nothing if it wrote
//!   none. Relevant: every earlier read of that
//!   file. Asked as of that call, seeing only the episodes before it.
//! - `error`: a failed tool result, or any Bash result (a command's output can report errors
//!   while the command succeeds, as `mix test | head` does). Query: its first line that says
//!   "error" in three words or more (the message, not the exit code). Relevant: every tool-call,
//!   error or context (a hook's report) episode whose content holds that line.
//!   Asked as of the end of the recorded history. Lines found in more than five episodes (a
//!   harness's stock refusal) are not specific enough to name an episode and are skipped.
//!
//! - `off-topic` (for the weak labels only): the prompts of the other harnesses' logs in
//!   evaldata (SWE-agent trajectories, the Codex and Gemini fixtures), about other projects.
//!   Nothing in the Claude Code sessions is relevant to them.
//!
//! Weak labels ([`codeoid_core::retrieve::Relevance`]): of the relevant hits in the hybrid's
//! top 10, how many are labelled weak (the tools would show their header only), and of the
//! off-topic queries' hits at the tool's default limit (6), how many are weak and how many
//! queries have only weak hits.
//!
//! The first three modes only change `RetrievalConfig::weights`: `bm25` is `0,1,0,0`, `vectors`
//! is `1,0,0,0`, `hybrid` the defaults. They see the same candidates (top 50 of each channel),
//! so a single-signal mode is that signal's ranking of the union. The `budget 100` modes also
//! set `lexical_budget` to its minimum, so this small store is searched the way a large one is
//! (common words left out), which shows what that approximation costs. Metrics are over
//! the top 10 (MRR counts 0 beyond rank 10). Queries are split by a hash of their text into two
//! halves, reported separately, so any weight change can be chosen on one and checked on the
//! other.
//!
//! Run: `CODEOID_TEST_MODEL_DIR=$(./scripts/fetch-test-model.sh) cargo bench -p codeoid-benches
//! --bench retrieve_quality`. Asserts that queries were derived, that metrics are in range, and
//! prints the table.

#![allow(clippy::unwrap_used)]

// The submodules live in `retrieve_quality/`: a crate root looks for `mod` files beside itself,
// hence the paths.
#[path = "retrieve_quality/derive.rs"]
mod derive;
#[path = "retrieve_quality/metrics.rs"]
mod metrics;
#[path = "retrieve_quality/quality_store.rs"]
mod quality_store;
#[path = "retrieve_quality/query.rs"]
mod query;
#[path = "retrieve_quality/weak_labels.rs"]
mod weak_labels;

use std::collections::BTreeMap;
use std::time::Instant;

use codeoid_benches::real_sessions::{claude_sessions, percentile};
use codeoid_core::retrieve::{RecallFilters, RecallQuery, Weights};
use codeoid_core::store::{DEFAULT_LEXICAL_BUDGET, MIN_LEXICAL_BUDGET};

use crate::derive::{derive, off_topic};
use crate::metrics::Metrics;
use crate::quality_store::{build, retriever};
use crate::weak_labels::weak_labels;

/// Hits asked for; MRR counts 0 beyond.
const DEPTH: usize = 10;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if !codeoid_benches::benchmarking() {
        // Test mode (`cargo test --all-targets`): embedding every session takes minutes.
        println!("retrieve_quality: skipped in test mode; run it with `cargo bench`");
        return;
    }
    let sessions = claude_sessions();
    let (store, ids) = build(&sessions);
    let queries = derive(&store, &sessions, &ids);
    let count = |family: &str| queries.iter().filter(|q| q.family == family).count();
    let families = ["reread (prompt)", "reread (intent)", "error"];
    println!(
        "derived {} queries: {} (halves: {} / {})",
        queries.len(),
        families
            .iter()
            .map(|f| format!("{} {f}", count(f)))
            .collect::<Vec<_>>()
            .join(", "),
        queries.iter().filter(|q| q.half() == 0).count(),
        queries.iter().filter(|q| q.half() == 1).count(),
    );
    for f in families {
        assert!(count(f) >= 10, "too few {f} queries: {}", count(f));
    }

    let bm25_only = Weights {
        vec: 0.0,
        bm25: 1.0,
        recency: 0.0,
        path: 0.0,
    };
    // (name, weights, lexical budget). The store is smaller than the default budget, so the
    // first three search every term; the last two force the plan of a large store (common
    // words left out, or scored over their newest matches) to show what it costs.
    let modes: Vec<(&str, Weights, usize)> = vec![
        ("bm25", bm25_only, DEFAULT_LEXICAL_BUDGET),
        (
            "vectors",
            Weights {
                vec: 1.0,
                bm25: 0.0,
                recency: 0.0,
                path: 0.0,
            },
            DEFAULT_LEXICAL_BUDGET,
        ),
        ("hybrid", Weights::default(), DEFAULT_LEXICAL_BUDGET),
        ("bm25, budget 100", bm25_only, MIN_LEXICAL_BUDGET),
        ("hybrid, budget 100", Weights::default(), MIN_LEXICAL_BUDGET),
    ];
    // The query vectors, once, with the model every mode uses.
    let first = retriever(&store, Weights::default(), DEFAULT_LEXICAL_BUDGET);
    let model = first.embedder().expect("the test model loads");
    let vectors: Vec<Vec<f32>> = queries
        .iter()
        .map(|q| model.embed_query(&q.text).unwrap())
        .collect();
    drop(first);

    let end = queries.iter().map(|q| q.as_of).max().unwrap();
    let off_topic = off_topic(end);
    let off_vectors: Vec<Vec<f32>> = off_topic
        .iter()
        .map(|q| model.embed_query(&q.text).unwrap())
        .collect();
    weak_labels(&store, &queries, &vectors, &off_topic, &off_vectors);

    // With CODEOID_QUALITY_DUMP set, one JSON line per query (the off-topic ones too) with every
    // candidate as `[relevant, vec, bm25, recency, path, terms, terms held, share, lift,
    // lift needed, weak]`, for studying fusion and the weak labels offline.
    if let Some(path) = std::env::var_os("CODEOID_QUALITY_DUMP") {
        let r = retriever(&store, Weights::default(), DEFAULT_LEXICAL_BUDGET);
        r.flush().unwrap();
        let mut out = String::new();
        for (q, v) in queries
            .iter()
            .zip(&vectors)
            .chain(off_topic.iter().zip(&off_vectors))
        {
            let mut query = RecallQuery::new(q.text.clone())
                .limit(codeoid_core::retrieve::MAX_RECALL_LIMIT)
                .filters(RecallFilters {
                    until: q.until,
                    ..RecallFilters::default()
                });
            query.as_of = Some(q.as_of);
            let hits: Vec<serde_json::Value> = r
                .recall_embedded(&query, v)
                .unwrap()
                .iter()
                .map(|h| {
                    let c = h.components;
                    let r = &h.relevance;
                    serde_json::json!([
                        q.relevant.contains(&h.header.id),
                        c.vec,
                        c.bm25,
                        c.recency,
                        c.path,
                        r.terms,
                        r.held.len(),
                        r.share,
                        r.lift,
                        r.lift_needed,
                        r.weak
                    ])
                })
                .collect();
            let line = serde_json::json!({"family": q.family, "half": q.half(), "hits": hits});
            out.push_str(&format!("{line}\n"));
        }
        std::fs::write(path, out).unwrap();
    }

    // results[mode][(family, half)]
    let mut results: BTreeMap<(usize, &str, usize), Metrics> = BTreeMap::new();
    for (m, (name, weights, budget)) in modes.iter().enumerate() {
        let r = retriever(&store, *weights, *budget);
        r.flush().unwrap();
        let mut took = Vec::with_capacity(queries.len());
        for (q, v) in queries.iter().zip(&vectors) {
            let mut query = RecallQuery::new(q.text.clone())
                .limit(DEPTH)
                .filters(RecallFilters {
                    until: q.until,
                    ..RecallFilters::default()
                });
            query.as_of = Some(q.as_of);
            let started = Instant::now();
            let hits = r.recall_embedded(&query, v).unwrap();
            took.push(started.elapsed());
            let rank = hits
                .iter()
                .position(|h| q.relevant.contains(&h.header.id))
                .map(|p| p + 1);
            for family in [q.family, "all"] {
                for half in [q.half(), 2] {
                    results.entry((m, family, half)).or_default().add(rank);
                }
            }
        }
        println!(
            "{name}: {} recalls, query embedded: p50 {:.1?}, max {:.1?}",
            took.len(),
            percentile(&mut took, 50.0),
            percentile(&mut took, 100.0)
        );
    }

    println!("\n| queries | mode | n | hit@1 | hit@5 | MRR@10 |\n|---|---|---|---|---|---|");
    for family in families.into_iter().chain(["all"]) {
        for (half, label) in [(2, "both halves"), (0, "half A"), (1, "half B")] {
            for (m, (name, _, _)) in modes.iter().enumerate() {
                let metrics = results[&(m, family, half)];
                assert!(metrics.n > 0);
                assert!((0.0..=1.0).contains(&metrics.mrr()));
                println!(
                    "| {family}, {label} | {name} | {} | {} |",
                    metrics.n,
                    metrics.row()
                );
            }
        }
    }
}
