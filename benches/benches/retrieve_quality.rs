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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use codeoid_benches::real_sessions::{
    claude_sessions, model_dir, percentile, record_copy, workspace,
};
use codeoid_core::canonical::{EpisodeKind, Part, PathAccess, Role, ToolResultPart};
use codeoid_core::import::ImportedSession;
use codeoid_core::retrieve::{
    EmbeddingConfig, ModelChoice, RecallFilters, RecallQuery, RetrievalConfig, Retriever, Weights,
};
use codeoid_core::store::{
    DEFAULT_LEXICAL_BUDGET, EpisodeHeader, MIN_LEXICAL_BUDGET, Store, StoredEpisode,
};

/// Bumped when the way the store is built changes (v2: vectors stored as f16; v3: harness-injected
/// turns are context episodes, tool calls anchored on their turn; v4: task notifications are
/// context too, and a long path's summary keeps its end; v5: tool calls indexed by their words,
/// JSON escapes decoded and line-number gutters left out; v6: shell commands that show a file are
/// reads of it, and memory-tool calls name no path; v7: a repeated intent indexed by its head).
const STORE_VERSION: &str = "v7";
/// Hits asked for; MRR counts 0 beyond.
const DEPTH: usize = 10;
/// Longest query kept (characters); a pasted log is cut.
const MAX_QUERY_CHARS: usize = 2_000;
/// An error line found in more episodes than this does not identify one.
const MAX_ERROR_MATCHES: usize = 5;

/// One derived query.
struct Query {
    family: &'static str,
    text: String,
    relevant: HashSet<String>,
    as_of: DateTime<Utc>,
    until: Option<DateTime<Utc>>,
}

impl Query {
    /// Half 0 or 1, from a hash of the text (FNV-1a), fixed before any result is seen.
    fn half(&self) -> usize {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.text.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        (h >> 7) as usize % 2
    }
}

fn store_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/bench-data")
        .join(format!("quality-{STORE_VERSION}"))
}

fn retriever(store: &Arc<Store>, weights: Weights, lexical_budget: usize) -> Retriever {
    Retriever::new(
        Arc::clone(store),
        workspace(),
        RetrievalConfig {
            weights,
            lexical_budget,
            ..RetrievalConfig::default()
        },
        EmbeddingConfig {
            model: ModelChoice::Dir(model_dir()),
            ..EmbeddingConfig::default()
        },
    )
    .unwrap()
}

/// The store with every session once, embedded by the worker. Returns it and the session ids.
fn build(sessions: &[ImportedSession]) -> (Arc<Store>, Vec<String>) {
    let dir = store_dir();
    let db = dir.join("codeoid.db");
    let marker = dir.join("complete");
    let ids: Vec<String> = sessions
        .iter()
        .map(|s| format!("copy0:{}", s.session_id))
        .collect();
    if marker.is_file() {
        return (Arc::new(Store::open(&db).unwrap()), ids);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let started = Instant::now();
    let store = Arc::new(Store::open(&db).unwrap());
    assert_eq!(record_copy(&store, sessions, 0), ids);
    let r = retriever(&store, Weights::default(), DEFAULT_LEXICAL_BUDGET);
    r.flush().unwrap();
    let status = r.status();
    let stats = store.workspace_stats(workspace().id()).unwrap();
    assert_eq!(
        status.indexed_episodes as u64 + status.failed_episodes,
        stats.episodes,
        "every episode embedded: {status:?}"
    );
    println!(
        "built the quality store: {} episodes, {} windows, in {:.1?}",
        stats.episodes,
        status.indexed_windows,
        started.elapsed()
    );
    std::fs::write(&marker, stats.episodes.to_string()).unwrap();
    (store, ids)
}

/// The user's own words in a turn: its text parts, unless it is harness markup (slash
/// commands, caveats, hook output start with `<`) or a compaction summary.
fn user_intent(parts: &[Part], meta_compaction: bool) -> Option<String> {
    if meta_compaction {
        return None;
    }
    let text: Vec<&str> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let text = text.join("\n");
    let text = text.trim();
    if text.starts_with('<') || text.split_whitespace().count() < 3 {
        return None;
    }
    Some(text.chars().take(MAX_QUERY_CHARS).collect())
}

/// The first line of a failed result that names an error, cut to 200 characters.
fn error_line(parts: &[ToolResultPart]) -> Option<String> {
    parts
        .iter()
        .filter_map(|p| match p {
            ToolResultPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .flat_map(str::lines)
        .map(|l| {
            l.trim()
                .trim_start_matches("<tool_use_error>")
                .trim_end_matches("</tool_use_error>")
                .trim()
        })
        .find(|l| l.to_ascii_lowercase().contains("error") && l.split_whitespace().count() >= 3)
        .map(|l| l.chars().take(200).collect())
}

/// The off-topic queries: every user prompt of the other harnesses' logs in evaldata, as
/// [`user_intent`] reads it, once.
fn off_topic(end: DateTime<Utc>) -> Vec<Query> {
    let root = codeoid_benches::real_sessions::evaldata();
    let mut queries: Vec<Query> = Vec::new();
    for dir in ["swe-agent-trajectories", "codex-gemini-fixtures"] {
        let import = codeoid_core::import::read_path(&root.join(dir)).unwrap();
        for session in import.sessions {
            for turn in session.turns.iter().filter(|t| t.role == Role::User) {
                let Some(text) = user_intent(&turn.parts, false) else {
                    continue;
                };
                if queries.iter().all(|q| q.text != text) {
                    queries.push(Query {
                        family: "off-topic",
                        text,
                        relevant: HashSet::new(),
                        as_of: end,
                        until: None,
                    });
                }
            }
        }
    }
    queries
}

fn derive(store: &Store, sessions: &[ImportedSession], ids: &[String]) -> Vec<Query> {
    let ws = workspace();
    // Every episode, whole, in time order.
    let mut episodes: Vec<StoredEpisode> = Vec::new();
    let mut by_call: HashMap<(String, String), usize> = HashMap::new();
    for id in ids {
        for header in store.session_episodes(id).unwrap() {
            let episode = store.episode(ws.id(), &header.id).unwrap();
            if let Some(call) = &header.call_id {
                by_call.insert((id.clone(), call.clone()), episodes.len());
            }
            episodes.push(episode);
        }
    }
    let end = episodes.iter().map(|e| e.header.created_at).max().unwrap();
    let reads_of = |e: &StoredEpisode| -> Vec<String> {
        e.paths
            .iter()
            .filter(|p| p.access == PathAccess::Read)
            .map(|p| p.relative.clone())
            .collect()
    };
    let earlier_readers = |path: &str, before: &EpisodeHeader| -> Vec<String> {
        episodes
            .iter()
            .filter(|e| e.header.created_at < before.created_at)
            .filter(|e| reads_of(e).iter().any(|p| p == path))
            .map(|e| e.header.id.clone())
            .collect()
    };

    let mut queries = Vec::new();
    let mut seen_text: HashSet<String> = HashSet::new();
    for (session, id) in sessions.iter().zip(ids) {
        // The open prompt and the re-read it led to.
        let mut open: Option<Query> = None;
        // The assistant's words since the open prompt.
        let mut intent = String::new();
        // Tool name of each call, by call id.
        let mut tools: HashMap<String, String> = HashMap::new();
        let close =
            |open: &mut Option<Query>, queries: &mut Vec<Query>, seen: &mut HashSet<String>| {
                if let Some(q) = open.take() {
                    if !q.relevant.is_empty() && seen.insert(format!("reread:{}", q.text)) {
                        queries.push(q);
                    }
                }
            };
        for turn in &session.turns {
            if turn.role == Role::User {
                let compaction =
                    turn.meta.get("compaction_summary") == Some(&serde_json::Value::Bool(true));
                if let Some(text) = user_intent(&turn.parts, compaction) {
                    close(&mut open, &mut queries, &mut seen_text);
                    intent.clear();
                    open = Some(Query {
                        family: "reread (prompt)",
                        text,
                        relevant: HashSet::new(),
                        as_of: end,
                        until: None,
                    });
                }
                for part in &turn.parts {
                    let Part::ToolResult(result) = part else {
                        continue;
                    };
                    let bash = tools.get(&result.call_id).is_some_and(|n| n == "Bash");
                    if !result.is_error && !bash {
                        continue;
                    }
                    let Some(line) = error_line(&result.parts) else {
                        continue;
                    };
                    if !seen_text.insert(format!("error:{line}")) {
                        continue;
                    }
                    let relevant: HashSet<String> = episodes
                        .iter()
                        .filter(|e| {
                            // A hook's report of the error (a `context` episode) is where it
                            // was reported too.
                            matches!(
                                e.header.kind,
                                EpisodeKind::ToolCall | EpisodeKind::Error | EpisodeKind::Context
                            )
                        })
                        .filter(|e| e.content.contains(&line))
                        .map(|e| e.header.id.clone())
                        .collect();
                    if !relevant.is_empty() && relevant.len() <= MAX_ERROR_MATCHES {
                        queries.push(Query {
                            family: "error",
                            text: line,
                            relevant,
                            as_of: end,
                            until: None,
                        });
                    }
                }
            }
            let Some(q) = open.as_mut() else {
                continue;
            };
            for part in &turn.parts {
                if let Part::Text { text } = part {
                    if turn.role == Role::Assistant {
                        intent.push_str(text);
                        intent.push('\n');
                    }
                    continue;
                }
                let Part::ToolCall(call) = part else {
                    continue;
                };
                tools.insert(call.id.clone(), call.name.clone());
                let Some(&at) = by_call.get(&(id.clone(), call.id.clone())) else {
                    continue;
                };
                let episode = &episodes[at];
                for path in reads_of(episode) {
                    let earlier = earlier_readers(&path, &episode.header);
                    if earlier.is_empty() {
                        continue;
                    }
                    if q.until.is_none() {
                        // Asked at the first re-read: what memory held just before it.
                        q.until = Some(episode.header.created_at);
                        q.as_of = episode.header.created_at;
                    }
                    let words = intent.trim();
                    if words.split_whitespace().count() >= 3 {
                        let text: String = words.chars().take(MAX_QUERY_CHARS).collect();
                        if seen_text.insert(format!("intent:{text}")) {
                            queries.push(Query {
                                family: "reread (intent)",
                                text,
                                relevant: earlier.iter().cloned().collect(),
                                as_of: episode.header.created_at,
                                until: Some(episode.header.created_at),
                            });
                        }
                    }
                    // Only reads memory could have returned then.
                    let cutoff = q.until.unwrap();
                    q.relevant.extend(earlier.into_iter().filter(|e| {
                        episodes
                            .iter()
                            .any(|x| &x.header.id == e && x.header.created_at < cutoff)
                    }));
                }
            }
        }
        close(&mut open, &mut queries, &mut seen_text);
    }
    queries
}

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
fn weak_labels(
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

#[derive(Default, Clone, Copy)]
struct Metrics {
    n: usize,
    hit1: f64,
    hit5: f64,
    mrr: f64,
}

impl Metrics {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            self.hit1 += f64::from(u8::from(r == 1));
            self.hit5 += f64::from(u8::from(r <= 5));
            self.mrr += 1.0 / r as f64;
        }
    }

    fn row(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{:.3} | {:.3} | {:.3}",
            self.hit1 / n,
            self.hit5 / n,
            self.mrr / n
        )
    }

    fn mrr(&self) -> f64 {
        self.mrr / self.n.max(1) as f64
    }
}

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
