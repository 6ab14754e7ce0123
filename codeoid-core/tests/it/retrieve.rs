//! Hybrid retrieval on real store files with the real all-MiniLM-L6-v2 model: the four signals
//! and their weights, cosines (within int8 rounding of the stored vectors), meaning, identifiers and paths, filters applied before the
//! candidate cut in both channels; the background worker (lexical fallback with one warning,
//! backfill, model change, a killed process, drop while busy, a model downloaded on the worker
//! thread) in `worker`; one text never taking two hits in `duplicates`; the model's own
//! memory-tool calls never being hits in `memory_tools`; weak hits in `relevance`.
//!
//! Needs `CODEOID_TEST_MODEL_DIR` (see `embed`).

mod duplicates;
mod filters;
mod memory_tools;
mod relevance;
mod worker;

use std::path::Path;

use codeoid_core::canonical::Turn;
use codeoid_core::retrieve::{EmbeddingConfig, Hit, ModelChoice, RecallQuery};
use codeoid_core::store::NewSession;
use codeoid_core::{Memory, MemoryConfig};
use serde_json::{Value, json};

use crate::embed::model_dir;
use crate::store::{at, call, result};

/// A config whose model is the test checkpoint.
pub(crate) fn model_config() -> MemoryConfig {
    MemoryConfig {
        embedding: EmbeddingConfig {
            model: ModelChoice::Dir(model_dir()),
            ..EmbeddingConfig::default()
        },
        ..MemoryConfig::default()
    }
}

/// A memory over `dir/codeoid.db` bound to the workspace `dir/project` (created).
pub(crate) fn open_in(dir: &Path, config: MemoryConfig) -> Memory {
    let workspace = dir.join("project");
    std::fs::create_dir_all(&workspace).unwrap();
    Memory::open(MemoryConfig {
        db_path: Some(dir.join("codeoid.db")),
        workspace_dir: Some(workspace),
        ..config
    })
    .unwrap()
}

/// A new session named `name`.
pub(crate) fn session(memory: &Memory, name: &str) -> String {
    memory
        .start_session(NewSession {
            name: Some(name.into()),
            ..NewSession::default()
        })
        .unwrap()
        .id
}

/// Records a prompt, one tool call and its result at `seconds` (after the store tests' epoch);
/// returns the tool call's episode id.
#[allow(clippy::too_many_arguments)] // one argument per field of the exchange, read at call sites
pub(crate) fn exchange(
    memory: &Memory,
    session: &str,
    key: &str,
    seconds: i64,
    prompt: &str,
    tool: &str,
    input: Value,
    output: &str,
) -> String {
    let turns = [
        at(Turn::user_text(prompt), &format!("{key}-u"), seconds),
        at(
            call(&format!("{key}-c"), tool, input),
            &format!("{key}-a"),
            seconds + 1,
        ),
        at(
            result(&format!("{key}-c"), output, false),
            &format!("{key}-r"),
            seconds + 2,
        ),
    ];
    let recorded = memory.record_turns(session, &turns).unwrap();
    recorded
        .iter()
        .flat_map(|r| r.episode_ids.iter())
        .find(|id| memory.episode(id).unwrap().header.tool_name.as_deref() == Some(tool))
        .cloned()
        .unwrap_or_else(|| panic!("no {tool} episode recorded for {key}"))
}

/// Unrelated but realistic filler: tool calls about other parts of a code base.
pub(crate) const FILLER: [(&str, &str, &str); 12] = [
    (
        "format the changelog",
        "docs/CHANGELOG.md",
        "## 0.3.0\n- Added a JSON exporter\n- Fixed the Windows installer",
    ),
    (
        "check the CI matrix",
        ".github/workflows/ci.yml",
        "jobs:\n  test:\n    strategy:\n      matrix:\n        os: [ubuntu-latest, macos-latest]",
    ),
    (
        "look at the license header",
        "LICENSE",
        "Permission is hereby granted, free of charge, to any person obtaining a copy",
    ),
    (
        "what does the http client do",
        "src/net/client.rs",
        "pub async fn get(&self, url: &Url) -> Result<Response> { self.pool.acquire().await?.send(url).await }",
    ),
    (
        "see the color palette",
        "assets/theme.css",
        ":root { --accent: #3b82f6; --background: #0f172a; }",
    ),
    (
        "open the README",
        "README.md",
        "Install with pip install widget, then run widget serve --port 8080",
    ),
    (
        "inspect the Dockerfile",
        "Dockerfile",
        "FROM debian:bookworm-slim\nRUN apt-get update && apt-get install -y ca-certificates",
    ),
    (
        "review the date helpers",
        "src/time/calendar.rs",
        "fn days_in_month(year: i32, month: u32) -> u32 { match month { 2 => if leap(year) { 29 } else { 28 }, _ => 31 } }",
    ),
    (
        "check the logging setup",
        "src/log.rs",
        "tracing_subscriber::fmt().with_env_filter(EnvFilter::from_default_env()).init();",
    ),
    (
        "read the image resize code",
        "src/media/resize.rs",
        "let thumbnail = image.resize(256, 256, FilterType::Lanczos3);",
    ),
    (
        "look at the database migrations",
        "migrations/0003_users.sql",
        "ALTER TABLE users ADD COLUMN last_login TIMESTAMP;",
    ),
    (
        "check the translation strings",
        "locales/fr.json",
        "{\"greeting\": \"Bonjour\", \"farewell\": \"Au revoir\"}",
    ),
];

/// Records the filler as `Read` calls in `session`, starting at `seconds`.
pub(crate) fn record_filler(memory: &Memory, session: &str, seconds: i64) {
    for (i, (prompt, path, output)) in FILLER.iter().enumerate() {
        exchange(
            memory,
            session,
            &format!("filler{i}"),
            seconds + i as i64 * 10,
            prompt,
            "Read",
            json!({"file_path": path}),
            output,
        );
    }
}

fn ids(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.header.id.as_str()).collect()
}

/// Best-window cosine of `query` against the stored vectors of `episode`, computed here from
/// the store's f32 vectors and a fresh query embedding, independently of the index.
fn stored_cosine(memory: &Memory, episode: &str, query: &str) -> f64 {
    let embedder = memory.retriever().embedder().unwrap();
    let q = embedder.embed_query(query).unwrap();
    let mut best = f64::NEG_INFINITY;
    memory
        .store()
        .for_each_vector(memory.workspace().id(), embedder.model_id(), |v| {
            if v.episode_id == episode {
                let dot: f32 = v.vector.iter().zip(&q).map(|(a, b)| a * b).sum();
                best = best.max(f64::from(dot));
            }
            Ok(())
        })
        .unwrap();
    best
}

#[test]
fn meaning_identifiers_and_paths_each_find_their_episode() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), model_config());
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    let rotation = exchange(
        &memory,
        &s,
        "rot",
        500,
        "explain the policy",
        "Read",
        json!({"file_path": "src/rotate/policy.rs"}),
        "/// When the conversation fills 90% of the model's context window, the backing context is \
         replaced by a fresh one seeded with a summary of where we are; the session continues.",
    );
    let borrow = exchange(
        &memory,
        &s,
        "err",
        600,
        "run the tests",
        "Bash",
        json!({"command": "cargo test -p codeoid-core"}),
        "error[E0502]: cannot borrow `candidates` as mutable because it is also borrowed as \
         immutable\n  --> codeoid-core/src/retrieve/engine.rs:270:21",
    );
    let fts = exchange(
        &memory,
        &s,
        "fts",
        700,
        "fix the sanitizer",
        "Edit",
        json!({"file_path": "codeoid-core/src/store/fts.rs", "old_string": "a", "new_string": "b"}),
        "The file codeoid-core/src/store/fts.rs has been updated.",
    );
    memory.flush().unwrap();
    assert_eq!(memory.warnings(), Vec::<String>::new());

    // Meaning: no word of the query occurs in the episode.
    let q = "what happens when the prompt gets too long for the LLM";
    let hits = memory.recall(None, &RecallQuery::new(q)).unwrap();
    assert_eq!(hits[0].header.id, rotation, "{:#?}", ids(&hits));
    assert_eq!(hits[0].components.bm25, 0.0, "no shared word");
    assert!(
        hits[1..]
            .iter()
            .all(|h| h.components.vec < hits[0].components.vec),
        "{hits:#?}"
    );

    // An identifier and an error code: BM25 carries them.
    let hits = memory.recall(None, &RecallQuery::new("E0502")).unwrap();
    assert_eq!(hits[0].header.id, borrow);
    assert_eq!(hits[0].components.bm25, 1.0);

    // A path, in its absolute form: the path signal matches the relative one stored.
    let absolute = dir.path().join("project/codeoid-core/src/store/fts.rs");
    let q = format!("changes to {}", absolute.display());
    let hits = memory.recall(None, &RecallQuery::new(&q)).unwrap();
    assert_eq!(hits[0].header.id, fts);
    assert_eq!(hits[0].components.path, 1.0);

    // Every hit: components in [0, 1], the design's weighted sum, and the cosine of the stored
    // f32 vectors up to the index's int8 rounding.
    let q = "borrow checker complains about mutable borrow";
    let hits = memory.recall(None, &RecallQuery::new(q).limit(10)).unwrap();
    assert_eq!(hits.len(), 10);
    assert_eq!(hits[0].header.id, borrow);
    for hit in &hits {
        let c = hit.components;
        for v in [c.vec, c.bm25, c.recency, c.path] {
            assert!((0.0..=1.0).contains(&v), "{c:?}");
        }
        let expected = 0.55 * c.vec + 0.25 * c.bm25 + 0.12 * c.recency + 0.08 * c.path;
        assert!(
            (hit.score - expected).abs() < 1e-9,
            "{} vs {expected}",
            hit.score
        );
        let exact = stored_cosine(&memory, &hit.header.id, q).max(0.0);
        assert!((c.vec - exact).abs() < 5e-3, "{} vs {exact}", c.vec);
        assert_eq!(hit.content, memory.episode(&hit.header.id).unwrap().content);
    }
    let scores: Vec<f64> = hits.iter().map(|h| h.score).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

#[test]
fn weights_and_half_life_are_configurable() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = model_config();
    // Only recency counts: the newest episode wins whatever the query says.
    config.retrieval.weights = codeoid_core::retrieve::Weights {
        vec: 0.0,
        bm25: 0.0,
        recency: 1.0,
        path: 0.0,
    };
    config.retrieval.half_life_hours = 1.0;
    let memory = open_in(dir.path(), config);
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    memory.flush().unwrap();
    let mut query = RecallQuery::new("the README install instructions").limit(3);
    // Two hours after the last filler episode (recorded at 110 s + 2): two half-lives.
    query.as_of = Some(crate::store::time(112 + 7200));
    let hits = memory.recall(None, &query).unwrap();
    assert_eq!(hits[0].header.summary, "Read(locales/fr.json)");
    assert!((hits[0].components.recency - 0.25).abs() < 1e-9);
    assert!((hits[0].score - 0.25).abs() < 1e-9);
}

#[test]
fn any_text_is_a_valid_query_and_bad_limits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let memory = open_in(dir.path(), model_config());
    let s = session(&memory, "work");
    record_filler(&memory, &s, 0);
    memory.flush().unwrap();
    for q in [
        "",
        "   ",
        "NEAR(\"a\" b*) -c ^d OR AND ((",
        "🎉🎉",
        &"x ".repeat(50_000),
    ] {
        let hits = memory.recall(None, &RecallQuery::new(q)).unwrap();
        assert!(hits.len() <= 6);
    }
    for limit in [0, 101] {
        let err = memory
            .recall(None, &RecallQuery::new("x").limit(limit))
            .unwrap_err();
        assert_eq!(err.kind(), codeoid_core::ErrorKind::InvalidInput);
        assert!(err.message().contains(&format!("limit {limit}")), "{err}");
    }
    let err = memory
        .recall(Some("ses_unknown"), &RecallQuery::new("x"))
        .unwrap_err();
    assert_eq!(err.kind(), codeoid_core::ErrorKind::NotFound);
}
