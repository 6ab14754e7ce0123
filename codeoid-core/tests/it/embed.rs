//! The embedder against the real all-MiniLM-L6-v2 checkpoint: pinned reference vectors from an
//! independent numpy forward pass, both pooling paths, batching invariance, windows, semantic
//! sanity, model identity, and clear errors for broken checkpoints.
//!
//! Needs `CODEOID_TEST_MODEL_DIR` (set it to the output of `./scripts/fetch-test-model.sh`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use codeoid_core::ErrorKind;
use codeoid_core::embed::{Embedder, EmbedderOptions, EpisodeText, Pooling, WindowPolicy};
use serde_json::Value;

pub(crate) mod download;
mod resolve;

/// The test model directory; a clear failure (not a skip) when it is not configured.
pub(crate) fn model_dir() -> PathBuf {
    let dir = std::env::var_os("CODEOID_TEST_MODEL_DIR").map(PathBuf::from).unwrap_or_else(|| {
        panic!("CODEOID_TEST_MODEL_DIR is not set; run: export CODEOID_TEST_MODEL_DIR=$(./scripts/fetch-test-model.sh)")
    });
    assert!(
        dir.join("model.safetensors").is_file(),
        "{} has no model.safetensors",
        dir.display()
    );
    dir
}

fn minilm() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| Embedder::load(model_dir()).unwrap())
}

/// A checkpoint directory in `parent/name` whose files link to the test model's, except those
/// listed in `overrides`, which are written with the given contents.
pub(crate) fn checkpoint_copy(parent: &Path, name: &str, overrides: &[(&str, &[u8])]) -> PathBuf {
    let source = model_dir();
    let dir = parent.join(name);
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    for file in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "1_Pooling/config.json",
        "sentence_bert_config.json",
        "config_sentence_transformers.json",
    ] {
        let target = dir.join(file);
        if let Some((_, bytes)) = overrides.iter().find(|(f, _)| *f == file) {
            std::fs::write(&target, bytes).unwrap();
        } else {
            link_or_copy(&source.join(file), &target);
        }
    }
    dir
}

fn link_or_copy(from: &Path, to: &Path) {
    #[cfg(unix)]
    std::os::unix::fs::symlink(from, to).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(from, to).unwrap();
}

fn reference() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/embed/minilm_reference.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn as_vector(value: &Value) -> Vec<f32> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn assert_matches_reference(embedder: &Embedder, pooling_key: &str) {
    let fixture = reference();
    let cases = fixture["cases"].as_array().unwrap();
    let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
    let vectors = embedder.embed_documents(&texts).unwrap();
    for (case, vector) in cases.iter().zip(&vectors) {
        let expected = as_vector(&case[pooling_key]);
        let diff = max_abs_diff(vector, &expected);
        assert!(
            diff < 1e-4,
            "{pooling_key} vector of {:?} differs by {diff}",
            case["text"]
        );
        let ids = case["ids"].as_array().unwrap().len();
        assert_eq!(
            embedder
                .count_tokens(case["text"].as_str().unwrap())
                .unwrap(),
            ids
        );
    }
}

#[test]
fn mean_pooled_vectors_match_the_numpy_reference() {
    let embedder = minilm();
    assert_eq!(embedder.pooling(), Pooling::Mean);
    assert_eq!(embedder.dim(), 384);
    assert_eq!(
        embedder.max_seq_len(),
        256,
        "from sentence_bert_config.json, not tokenizer.json's 128"
    );
    assert_eq!(embedder.query_instruction(), None);
    assert_matches_reference(embedder, "mean");
    for vector in embedder.embed_documents(&["a", "b c d"]).unwrap() {
        assert!(
            (dot(&vector, &vector) - 1.0).abs() < 1e-5,
            "vectors are L2-normalized"
        );
    }
}

#[test]
fn cls_pooling_and_the_bge_query_instruction_load_through_the_same_code() {
    let temp = tempfile::tempdir().unwrap();
    let pooling = br#"{"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#;
    let dir = checkpoint_copy(
        temp.path(),
        "bge-small-en-v1.5",
        &[("1_Pooling/config.json", pooling)],
    );
    let embedder = Embedder::load(&dir).unwrap();
    assert_eq!(embedder.pooling(), Pooling::Cls);
    assert_matches_reference(&embedder, "cls");

    let instruction = "Represent this sentence for searching relevant passages: ";
    assert_eq!(embedder.query_instruction(), Some(instruction));
    let query = embedder.embed_query("how are turns recorded").unwrap();
    let by_hand = embedder
        .embed_documents(&[&format!("{instruction}how are turns recorded")])
        .unwrap();
    assert!(max_abs_diff(&query, &by_hand[0]) < 1e-6);
    let plain = embedder
        .embed_documents(&["how are turns recorded"])
        .unwrap();
    assert!(
        max_abs_diff(&query, &plain[0]) > 1e-3,
        "the instruction must change the query vector"
    );
}

#[test]
fn a_declared_query_prompt_wins_over_the_known_model_table() {
    let temp = tempfile::tempdir().unwrap();
    let st = br#"{"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": null}"#;
    let dir = checkpoint_copy(
        temp.path(),
        "bge-small-en-v1.5",
        &[("config_sentence_transformers.json", st)],
    );
    let embedder = Embedder::load(&dir).unwrap();
    assert_eq!(embedder.query_instruction(), Some("query: "));
    assert_eq!(
        embedder.checkpoint().document_instruction(),
        Some("passage: ")
    );
    let doc = embedder.embed_documents(&["cargo build"]).unwrap();
    let by_hand = minilm().embed_documents(&["passage: cargo build"]).unwrap();
    assert!(max_abs_diff(&doc[0], &by_hand[0]) < 1e-5);

    // Windows leave room for the prompt they are sent with: the end of a long output, in the
    // last full window, still reaches the model (cut, its last word would change nothing).
    let ending = "error: linker `cc` not found: the C toolchain is missing on this machine";
    let windows = embedder
        .episode_windows("Bash(cargo build)", &long_log(60, ending))
        .unwrap();
    let last = windows.last().unwrap();
    assert!(last.ends_with(ending));
    let without_last_word = last.trim_end_matches("machine");
    let vectors = embedder
        .embed_documents(&[last.as_str(), without_last_word])
        .unwrap();
    assert!(
        max_abs_diff(&vectors[0], &vectors[1]) > 1e-4,
        "the window's last word was cut off"
    );
}

#[test]
fn a_text_gets_the_same_vector_alone_or_in_any_batch() {
    let embedder = minilm();
    let texts = [
        "short",
        "a considerably longer sentence about database migrations and schema versions",
        "fn main() { println!(\"hello\"); }",
        "",
    ];
    let together = embedder.embed_documents(&texts).unwrap();
    let mut reversed = texts;
    reversed.reverse();
    let backwards = embedder.embed_documents(&reversed).unwrap();
    for (i, text) in texts.iter().enumerate() {
        let alone = embedder.embed_documents(&[text]).unwrap();
        assert!(
            max_abs_diff(&together[i], &alone[0]) < 1e-5,
            "{text:?} depends on its batch"
        );
        assert!(
            max_abs_diff(&together[i], &backwards[texts.len() - 1 - i]) < 1e-5,
            "order lost"
        );
    }
    assert!(embedder.embed_documents(&[]).unwrap().is_empty());
}

#[test]
fn paraphrases_rank_above_unrelated_text() {
    let embedder = minilm();
    let query = embedder.embed_query("the unit tests are failing").unwrap();
    let docs = embedder
        .embed_documents(&[
            "several tests in the test suite did not pass",
            "I baked banana bread with walnuts this weekend",
            "the weather in Lisbon is sunny and warm",
        ])
        .unwrap();
    let scores: Vec<f32> = docs.iter().map(|d| dot(&query, d)).collect();
    assert!(
        scores[0] > scores[1] + 0.2 && scores[0] > scores[2] + 0.2,
        "{scores:?}"
    );

    let code = embedder
        .embed_query("where do we parse the JSON config file")
        .unwrap();
    let candidates = embedder
        .embed_documents(&[
            "fn load_config(path: &Path) -> Result<Config> { let text = fs::read_to_string(path)?; serde_json::from_str(&text) }",
            "fn render_button(ctx: &mut Ui) { ctx.button(\"OK\"); }",
        ])
        .unwrap();
    assert!(
        dot(&code, &candidates[0]) > dot(&code, &candidates[1]),
        "code-ish retrieval"
    );
}

#[test]
fn short_episodes_are_one_window_of_summary_and_content() {
    let embedder = minilm();
    let windows = embedder
        .episode_windows("Bash(cargo test)", "test result: ok. 3 passed")
        .unwrap();
    assert_eq!(
        windows,
        vec!["Bash(cargo test)\ntest result: ok. 3 passed".to_owned()]
    );
    assert_eq!(
        embedder.episode_windows("", "").unwrap(),
        vec![String::new()]
    );
    assert_eq!(
        embedder.episode_windows("only a summary", "  ").unwrap(),
        vec!["only a summary".to_owned()]
    );
}

fn long_log(lines: usize, last: &str) -> String {
    let mut log: String = (0..lines)
        .map(|i| format!("test store::tests::case_{i} ... ok\n"))
        .collect();
    log.push_str(last);
    log
}

#[test]
fn long_content_is_covered_by_overlapping_windows_that_reach_the_end() {
    let embedder = minilm();
    let ending = "error: linker `cc` not found: the C toolchain is missing on this machine";
    let content = long_log(60, ending);
    let windows = embedder
        .episode_windows("Bash(cargo build)", &content)
        .unwrap();
    assert!(
        windows.len() > 1 && windows.len() <= 8,
        "{} windows",
        windows.len()
    );
    for window in &windows {
        assert!(window.starts_with("Bash(cargo build)\n"));
        assert!(embedder.count_tokens(window).unwrap() <= embedder.max_seq_len());
        let body = &window["Bash(cargo build)\n".len()..];
        assert!(
            content.contains(body),
            "a window is a contiguous slice of the content"
        );
    }
    assert!(windows.last().unwrap().ends_with(ending));
    assert!(windows[0].contains("case_0 "));

    let vectors = embedder
        .embed_episode_windows("Bash(cargo build)", &content)
        .unwrap();
    assert_eq!(vectors.len(), windows.len());
    let query = embedder
        .embed_query("linker cc not found, C toolchain missing")
        .unwrap();
    let best = vectors
        .iter()
        .map(|v| dot(&query, v))
        .fold(f32::MIN, f32::max);
    let head_only = dot(&query, &vectors[0]);
    assert!(
        best > head_only + 0.1,
        "the end is findable: best {best} vs head {head_only}"
    );
}

#[test]
fn huge_content_is_capped_to_head_and_tail_windows() {
    let embedder = minilm();
    let ending = "FINAL: 2 tests failed in tests/it/rotate.rs";
    let content = long_log(40_000, ending); // about 1.4 MB
    let started = std::time::Instant::now();
    let windows = embedder
        .episode_windows("Bash(cargo test)", &content)
        .unwrap();
    assert_eq!(windows.len(), 8);
    assert!(windows[0].contains("case_0 "));
    assert!(windows[3].contains("case_"), "head windows");
    assert!(windows[7].ends_with(ending));
    assert!(
        !windows.iter().any(|w| w.contains("case_20000 ")),
        "the middle is left to BM25"
    );
    assert!(
        started.elapsed().as_secs() < 5,
        "bounded work: {:?}",
        started.elapsed()
    );

    let policy = WindowPolicy {
        max_windows: 3,
        overlap_tokens: 16,
    };
    let options = EmbedderOptions {
        windows: policy,
        ..EmbedderOptions::default()
    };
    let small = Embedder::load_with(model_dir(), options).unwrap();
    let windows = small.episode_windows("s", &content).unwrap();
    assert_eq!(windows.len(), 3);
    assert!(windows[2].ends_with(ending));
    assert_ne!(
        small.model_id(),
        minilm().model_id(),
        "the window policy is part of the recipe"
    );
}

#[test]
fn episodes_embedded_in_one_batch_match_one_by_one() {
    let embedder = minilm();
    let long = long_log(50, "done");
    let episodes = [
        EpisodeText {
            summary: "Read(src/lib.rs)",
            content: "pub mod store;",
        },
        EpisodeText {
            summary: "Bash(cargo test)",
            content: &long,
        },
        EpisodeText {
            summary: "user: fix the bug",
            content: "# User\nfix the bug",
        },
    ];
    let batched = embedder.embed_episodes(&episodes).unwrap();
    assert_eq!(batched.len(), 3);
    for (episode, vectors) in episodes.iter().zip(&batched) {
        let alone = embedder
            .embed_episode_windows(episode.summary, episode.content)
            .unwrap();
        assert_eq!(alone.len(), vectors.len());
        for (a, b) in alone.iter().zip(vectors) {
            assert!(max_abs_diff(a, b) < 1e-5);
        }
    }
    assert!(batched[1].len() > 1);
}

#[test]
fn the_embedder_is_shared_across_threads() {
    let embedder = minilm();
    let expected = embedder.embed_query("shared across threads").unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| embedder.embed_query("shared across threads").unwrap()))
            .collect();
        for handle in handles {
            assert!(max_abs_diff(&handle.join().unwrap(), &expected) < 1e-6);
        }
    });
}

#[test]
fn model_ids_follow_content_not_location() {
    let temp = tempfile::tempdir().unwrap();
    let copy = checkpoint_copy(temp.path(), "all-MiniLM-L6-v2", &[]);
    let same = Embedder::load(&copy).unwrap();
    assert_eq!(same.model_id(), minilm().model_id());
    assert!(minilm().model_id().starts_with("all-MiniLM-L6-v2@"));

    let config = std::fs::read_to_string(model_dir().join("sentence_bert_config.json")).unwrap();
    let changed = config.replace("256", "128");
    let other = checkpoint_copy(
        temp.path(),
        "shorter",
        &[("sentence_bert_config.json", changed.as_bytes())],
    );
    let shorter = Embedder::load(&other).unwrap();
    assert_eq!(shorter.max_seq_len(), 128);
    assert_ne!(
        shorter.model_id().split('@').nth(1),
        minilm().model_id().split('@').nth(1)
    );
}

#[test]
fn broken_checkpoints_give_clear_errors() {
    let temp = tempfile::tempdir().unwrap();
    let missing = Embedder::load(temp.path().join("nowhere")).unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::ModelUnavailable);
    assert!(
        missing.message().contains("nowhere"),
        "{}",
        missing.message()
    );

    let dir = checkpoint_copy(temp.path(), "no-weights", &[]);
    std::fs::remove_file(dir.join("model.safetensors")).unwrap();
    let err = Embedder::load(&dir).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ModelUnavailable);
    assert!(
        err.message().contains("model.safetensors"),
        "{}",
        err.message()
    );

    let cases: [(&str, &[u8], &str); 5] = [
        ("config.json", b"{not json", "config.json"),
        ("config.json", br#"{"model_type": "gpt2", "vocab_size": 1, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 8, "max_position_embeddings": 8}"#, "gpt2"),
        ("1_Pooling/config.json", br#"{"pooling_mode_max_tokens": true}"#, "pooling"),
        ("tokenizer.json", b"[]", "tokenizer.json"),
        ("model.safetensors", b"\x08\x00\x00\x00\x00\x00\x00\x00{}", "model.safetensors"),
    ];
    for (i, (file, bytes, needle)) in cases.into_iter().enumerate() {
        let dir = checkpoint_copy(temp.path(), &format!("broken-{i}"), &[(file, bytes)]);
        let err = Embedder::load(&dir).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::Model,
            "{file}: {}",
            err.full_message()
        );
        assert!(err.message().contains(needle), "{file}: {}", err.message());
        assert!(
            err.message().contains(';'),
            "a hint after ';': {}",
            err.message()
        );
    }

    let truncated = {
        let weights = std::fs::read(model_dir().join("model.safetensors")).unwrap();
        weights[..weights.len() / 2].to_vec()
    };
    let dir = checkpoint_copy(
        temp.path(),
        "truncated",
        &[("model.safetensors", &truncated)],
    );
    let err = Embedder::load(&dir).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Model, "{}", err.full_message());

    let bad = Embedder::load_with(
        model_dir(),
        EmbedderOptions {
            max_batch: 0,
            ..EmbedderOptions::default()
        },
    );
    assert_eq!(bad.unwrap_err().kind(), ErrorKind::InvalidInput);
}

#[test]
fn a_tokenizer_without_special_tokens_still_embeds_and_windows() {
    let mut tokenizer: Value =
        serde_json::from_slice(&std::fs::read(model_dir().join("tokenizer.json")).unwrap())
            .unwrap();
    tokenizer["post_processor"] = Value::Null;
    let bytes = serde_json::to_vec(&tokenizer).unwrap();
    let temp = tempfile::tempdir().unwrap();
    let dir = checkpoint_copy(temp.path(), "no-specials", &[("tokenizer.json", &bytes)]);
    let embedder = Embedder::load(&dir).unwrap();
    let vectors = embedder
        .embed_documents(&["", "cargo test passed"])
        .unwrap();
    assert!(
        vectors[0].iter().all(|v| *v == 0.0),
        "no tokens, zero vector"
    );
    assert!((dot(&vectors[1], &vectors[1]) - 1.0).abs() < 1e-5);
    assert_eq!(
        embedder.count_tokens("cargo test passed").unwrap(),
        minilm().count_tokens("cargo test passed").unwrap() - 2
    );
    let windows = embedder.episode_windows("s", &long_log(60, "end")).unwrap();
    assert!(windows.len() > 1 && windows.last().unwrap().ends_with("end"));
}
