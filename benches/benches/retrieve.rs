//! Retrieval benchmarks (issue 3 targets).
//!
//! - `retrieve/vector_index/{10k,100k,1m}`: the int8 vector index alone, top 50 of N episodes
//!   of three 384-dimensional windows on average (MiniLM's 256-token windows over real episode
//!   sizes give 3.2), unfiltered and with a session filter; p50/p99 over 200 queries are printed
//!   with the index's memory. Target at 100k: well under 10 ms, so a whole recall fits.
//! - `retrieve/recall_{10k,100k}/*`: whole hybrid recalls on a real store of 10,000 or 100,000
//!   episodes (every Claude Code session in `../shared/evaldata`, recorded again and again) with
//!   real MiniLM vectors: with the query already embedded (target at 100k: p50 < 10 ms) and end
//!   to end. Also prints how long loading the vectors into the index takes.
//! - RSS: a child process opens that store with the model, loads the index, answers recalls and
//!   reports VmRSS/VmHWM. Target: < 400 MB.
//! - `burst`: recall latency while the worker embeds a backlog of 2,000 episodes, against the
//!   same recalls idle.
//!
//! Run: `CODEOID_TEST_MODEL_DIR=$(./scripts/fetch-test-model.sh) cargo bench -p codeoid-benches
//! --bench retrieve`. The stores are built once into `target/bench-data/` (a few minutes each)
//! and reused. Every benchmark asserts its result.

#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use codeoid_benches::real_sessions::{
    claude_sessions, model_dir, percentile, record_copy, rss_kib, workspace,
};
use codeoid_core::embed::{Embedder, EpisodeText};
use codeoid_core::retrieve::{
    EmbeddingConfig, EntryMeta, IndexFilter, ModelChoice, RecallQuery, VectorIndex,
};
use codeoid_core::store::Store;
use codeoid_core::{Memory, MemoryConfig};
use criterion::Criterion;

/// Set in the child process that measures memory; names the store file.
const RSS_CHILD: &str = "CODEOID_BENCH_RSS_DB";
const DIM: usize = 384;
/// Bumped when the way the stores are built changes (v2: vectors stored as f16).
const STORE_VERSION: &str = "v2";

const QUERIES: [&str; 6] = [
    "failing test in the transcript renderer",
    "mix test session_live",
    "how is the JSONL transcript parsed",
    "set up credo and dialyxir",
    "useTodos hook state",
    "error: undefined function",
];

/// A deterministic pseudo-random unit vector (SplitMix64).
fn unit(seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    let mut v: Vec<f32> = (0..DIM)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// Windows of episode `i`: 1 to 5, three on average.
fn windows_of(i: usize) -> usize {
    [1, 2, 3, 4, 5, 3][i % 6]
}

fn synthetic_index(n: usize) -> VectorIndex {
    let sessions: Vec<String> = (0..10).map(|s| format!("ses_{s}")).collect();
    let mut index = VectorIndex::new(DIM);
    let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    for i in 0..n {
        let windows: Vec<Vec<f32>> = (0..windows_of(i))
            .map(|w| unit((i * 8 + w) as u64))
            .collect();
        let meta = EntryMeta {
            pk: i as i64,
            session_id: &sessions[i % 10],
            tool_name: Some("Bash"),
            created_at: start + chrono::Duration::seconds(i as i64),
        };
        index.add(meta, &windows).unwrap();
    }
    index
}

fn vector_index(c: &mut Criterion, sizes: &[(&str, usize)]) {
    let mut group = c.benchmark_group("retrieve/vector_index");
    group.sample_size(20);
    for &(name, n) in sizes {
        if !criterion_wants(&format!("retrieve/vector_index/{name}")) {
            continue;
        }
        let built = Instant::now();
        let index = synthetic_index(n);
        let build = built.elapsed();
        let session = IndexFilter {
            session_id: Some("ses_3"),
            ..IndexFilter::default()
        };
        // Asserted: a query equal to an indexed window finds its episode first, exactly.
        let probe = n / 2 + 1;
        let hits = index.search(&unit((probe * 8) as u64), &IndexFilter::default(), 50);
        assert_eq!(hits.len(), 50);
        assert_eq!(hits[0].0, probe as i64);
        assert!(hits[0].1 > 0.99, "{:?}", hits[0]);
        let filtered = index.search(&unit((probe * 8) as u64), &session, 50);
        assert!(filtered.iter().all(|(pk, _)| pk % 10 == 3));
        let mut plain = Vec::new();
        let mut with_filter = Vec::new();
        for q in 0..200u64 {
            let query = unit(u64::MAX - q);
            let t = Instant::now();
            black_box(index.search(&query, &IndexFilter::default(), 50));
            plain.push(t.elapsed());
            let t = Instant::now();
            black_box(index.search(&query, &session, 50));
            with_filter.push(t.elapsed());
        }
        println!(
            "retrieve/vector_index/{name}: {n} episodes, {} windows, {:.1} MB of index (built in \
             {build:.1?}); top 50 p50 {:.2?} p99 {:.2?}; with a 10% session filter p50 {:.2?} p99 \
             {:.2?}",
            index.rows(),
            index.memory_bytes() as f64 / 1e6,
            percentile(&mut plain, 50.0),
            percentile(&mut plain, 99.0),
            percentile(&mut with_filter, 50.0),
            percentile(&mut with_filter, 99.0),
        );
        let query = unit(12345);
        group.bench_function(format!("{name}/top50"), |b| {
            b.iter(|| black_box(index.search(&query, &IndexFilter::default(), 50)))
        });
        group.bench_function(format!("{name}/top50_session_filter"), |b| {
            b.iter(|| black_box(index.search(&query, &session, 50)))
        });
    }
    group.finish();
}

/// `true` unless a filter given on the command line excludes `name` (so `--bench retrieve
/// vector_index` does not build the 100k store).
fn criterion_wants(name: &str) -> bool {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

/// A store of at least `target` episodes with real vectors, built once into
/// `target/bench-data/retrieve-{label}-*`.
fn real_store(embedder: &Embedder, label: &str, target: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/bench-data")
        .join(format!("retrieve-{label}-{STORE_VERSION}"));
    let db = dir.join("codeoid.db");
    let marker = dir.join(format!("complete-{}", embedder.model_id()));
    if marker.is_file() {
        return db;
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let started = Instant::now();
    let store = Store::open(&db).unwrap();
    let sessions = claude_sessions();
    // Copy 0 is embedded for real; every later copy has the same turns, hence the same
    // episodes in the same order, and reuses copy 0's vectors.
    let first = record_copy(&store, &sessions, 0);
    let mut windows: Vec<Vec<Vec<Vec<f32>>>> = Vec::new();
    let mut per_copy = 0;
    for session in &first {
        let headers = store.session_episodes(session).unwrap();
        per_copy += headers.len();
        let episodes: Vec<(String, String)> = headers
            .iter()
            .map(|h| {
                let e = store.episode(workspace().id(), &h.id).unwrap();
                (e.header.summary, e.content)
            })
            .collect();
        let mut vectors = Vec::new();
        for chunk in episodes.chunks(16) {
            let texts: Vec<EpisodeText<'_>> = chunk
                .iter()
                .map(|(summary, content)| EpisodeText { summary, content })
                .collect();
            vectors.extend(embedder.embed_episodes(&texts).unwrap());
        }
        windows.push(vectors);
    }
    let copies = target.div_ceil(per_copy);
    println!(
        "building the {label} store: {per_copy} episodes per copy of evaldata, {copies} copies; \
         copy 0 embedded in {:.1?}",
        started.elapsed()
    );
    for copy in 0..copies {
        let ids = if copy == 0 {
            first.clone()
        } else {
            record_copy(&store, &sessions, copy)
        };
        let mut batch = Vec::new();
        for (session, vectors) in ids.iter().zip(&windows) {
            let headers = store.session_episodes(session).unwrap();
            assert_eq!(headers.len(), vectors.len(), "copies chunk identically");
            batch.extend(
                headers
                    .into_iter()
                    .map(|h| h.id)
                    .zip(vectors.iter().cloned()),
            );
        }
        for chunk in batch.chunks(2_000) {
            store.put_vectors(embedder.model_id(), chunk).unwrap();
        }
    }
    let stats = store.workspace_stats(workspace().id()).unwrap();
    assert!(stats.episodes as usize >= target);
    println!(
        "built the {label} store ({} episodes) in {:.1?}",
        stats.episodes,
        started.elapsed()
    );
    std::fs::write(&marker, stats.episodes.to_string()).unwrap();
    db
}

fn memory_on(db: &Path) -> Memory {
    let store = Arc::new(Store::open(db).unwrap());
    let config = MemoryConfig {
        embedding: EmbeddingConfig {
            model: ModelChoice::Dir(model_dir()),
            ..EmbeddingConfig::default()
        },
        ..MemoryConfig::default()
    };
    Memory::for_workspace(store, workspace(), config).unwrap()
}

fn recall(c: &mut Criterion, label: &str, target: usize) {
    let name = format!("retrieve/recall_{label}");
    if !criterion_wants(&name) {
        return;
    }
    let embedder = Embedder::load(model_dir()).unwrap();
    let db = real_store(&embedder, label, target);
    let opened = Instant::now();
    let memory = memory_on(&db);
    memory.flush().unwrap();
    let status = memory.embedding_status();
    println!(
        "{name}: index of {} episodes / {} windows ({:.1} MB) loaded in {:.1?}",
        status.indexed_episodes,
        status.indexed_windows,
        status.index_bytes as f64 / 1e6,
        opened.elapsed()
    );
    assert!(status.indexed_episodes >= target, "{status:?}");
    let retriever = memory.retriever();
    let model = retriever.embedder().unwrap();
    let vectors: Vec<Vec<f32>> = QUERIES
        .iter()
        .map(|q| model.embed_query(q).unwrap())
        .collect();
    // A recall from a session, as a harness makes it: its live context is excluded (the
    // whole session here, which never rotated), the path every real recall takes.
    let caller = memory
        .sessions()
        .unwrap()
        .into_iter()
        .max_by_key(|s| s.created_at)
        .unwrap()
        .id;
    let mut embedded = Vec::new();
    let mut end_to_end = Vec::new();
    let mut from_session = Vec::new();
    for round in 0..20 {
        for (q, v) in QUERIES.iter().zip(&vectors) {
            let t = Instant::now();
            let hits = retriever.recall_embedded(&RecallQuery::new(*q), v).unwrap();
            embedded.push(t.elapsed());
            assert_eq!(hits.len(), 6, "{q}");
            assert!(
                hits[0].components.vec > 0.2,
                "{q}: {:?}",
                hits[0].components
            );
            if round < 5 {
                let t = Instant::now();
                black_box(memory.recall(None, &RecallQuery::new(*q)).unwrap());
                end_to_end.push(t.elapsed());
                let t = Instant::now();
                let hits = memory.recall(Some(&caller), &RecallQuery::new(*q)).unwrap();
                from_session.push(t.elapsed());
                assert!(hits.iter().all(|h| h.header.session_id != caller), "{q}");
            }
        }
    }
    println!(
        "{name}: query embedded p50 {:.2?} p99 {:.2?} ({} recalls); end to end \
         p50 {:.2?} p99 {:.2?} ({} recalls)",
        percentile(&mut embedded, 50.0),
        percentile(&mut embedded, 99.0),
        embedded.len(),
        percentile(&mut end_to_end, 50.0),
        percentile(&mut end_to_end, 99.0),
        end_to_end.len()
    );
    println!(
        "{name}: end to end from a session (its live context excluded) p50 {:.2?} p99 {:.2?} \
         ({} recalls)",
        percentile(&mut from_session, 50.0),
        percentile(&mut from_session, 99.0),
        from_session.len()
    );
    let mut group = c.benchmark_group(&name);
    group.sample_size(30);
    let mut i = 0;
    group.bench_function("query_embedded", |b| {
        b.iter(|| {
            i = (i + 1) % QUERIES.len();
            black_box(
                retriever
                    .recall_embedded(&RecallQuery::new(QUERIES[i]), &vectors[i])
                    .unwrap(),
            )
        })
    });
    group.bench_function("end_to_end", |b| {
        b.iter(|| {
            i = (i + 1) % QUERIES.len();
            black_box(memory.recall(None, &RecallQuery::new(QUERIES[i])).unwrap())
        })
    });
    group.finish();
    drop(memory);
    if target >= 100_000 {
        rss(&db);
    }
}

/// Runs the memory measurement in a fresh process (this binary, `RSS_CHILD` set) so nothing
/// this process built counts, and checks the target.
fn rss(db: &Path) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env(RSS_CHILD, db)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().find(|l| l.starts_with("RSS ")).unwrap();
    println!("retrieve/rss_100k: {line}");
    let rss_kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(rss_kib < 400 * 1024, "RSS {rss_kib} KiB is over 400 MB");
}

/// The child: model + 100k-episode index + recalls, then VmRSS/VmHWM.
fn rss_child(db: &Path) {
    let (before, _) = rss_kib();
    let memory = memory_on(db);
    memory.flush().unwrap();
    for q in QUERIES {
        assert_eq!(memory.recall(None, &RecallQuery::new(q)).unwrap().len(), 6);
    }
    let (rss, hwm) = rss_kib();
    let status = memory.embedding_status();
    println!(
        "RSS {rss} KiB (peak {hwm} KiB; {before} KiB at start) with the model and {} episodes / \
         {} windows indexed ({:.1} MB of index)",
        status.indexed_episodes,
        status.indexed_windows,
        status.index_bytes as f64 / 1e6
    );
}

/// Recall latency while the worker embeds a backlog, against the same recalls idle.
fn burst(_c: &mut Criterion) {
    if !criterion_wants("retrieve/burst") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("codeoid.db");
    {
        let store = Store::open(&db).unwrap();
        let sessions = claude_sessions();
        let mut copy = 0;
        while store.workspace_stats(workspace().id()).unwrap().episodes < 2_000 {
            record_copy(&store, &sessions, copy);
            copy += 1;
        }
    }
    let memory = memory_on(&db);
    // The worker starts on this first recall and loads the model; measure once it embeds.
    memory.recall(None, &RecallQuery::new("warm up")).unwrap();
    let mut busy = Vec::new();
    let started = Instant::now();
    let indexed_before = memory.embedding_status().indexed_episodes;
    while started.elapsed() < Duration::from_secs(20) {
        let q = QUERIES[busy.len() % QUERIES.len()];
        let t = Instant::now();
        black_box(memory.recall(None, &RecallQuery::new(q)).unwrap());
        busy.push(t.elapsed());
        std::thread::sleep(Duration::from_millis(50));
    }
    let indexed_during = memory.embedding_status().indexed_episodes - indexed_before;
    assert!(
        indexed_during > 0,
        "the worker embedded nothing during the measurement"
    );
    memory.flush().unwrap();
    let mut idle = Vec::new();
    for i in 0..busy.len().min(120) {
        let t = Instant::now();
        let hits = memory
            .recall(None, &RecallQuery::new(QUERIES[i % QUERIES.len()]))
            .unwrap();
        idle.push(t.elapsed());
        assert_eq!(hits.len(), 6);
    }
    println!(
        "retrieve/burst: {} recalls while the worker embedded {indexed_during} episodes: p50 \
         {:.1?} p99 {:.1?} max {:.1?}; idle afterwards: p50 {:.1?} p99 {:.1?}",
        busy.len(),
        percentile(&mut busy, 50.0),
        percentile(&mut busy, 99.0),
        percentile(&mut busy, 100.0),
        percentile(&mut idle, 50.0),
        percentile(&mut idle, 99.0),
    );
}

fn main() {
    if let Some(db) = std::env::var_os(RSS_CHILD) {
        rss_child(Path::new(&db));
        return;
    }
    let mut criterion = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    if !codeoid_benches::benchmarking() {
        // Test mode: the index alone at 10k; the 100k store and the burst take minutes.
        vector_index(&mut criterion, &[("10k", 10_000)]);
        return;
    }
    vector_index(
        &mut criterion,
        &[("10k", 10_000), ("100k", 100_000), ("1m", 1_000_000)],
    );
    recall(&mut criterion, "10k", 10_000);
    recall(&mut criterion, "100k", 100_000);
    burst(&mut criterion);
    criterion.final_summary();
}
