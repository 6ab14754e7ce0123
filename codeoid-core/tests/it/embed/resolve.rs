//! Model resolution order, with explicit inputs only (no process environment, so these tests
//! cannot race): explicit directory, then `CODEOID_MODEL_DIR`, then the Hugging Face cache.

use std::path::{Path, PathBuf};

use codeoid_core::ErrorKind;
use codeoid_core::embed::{ModelLocator, ModelSource};

use super::checkpoint_copy;

fn offline(cache: Option<&Path>) -> ModelLocator {
    let mut locator = ModelLocator::from_vars(|_| None);
    locator.hf_cache = cache.map(Path::to_path_buf);
    locator.download = None;
    locator
}

/// A Hugging Face cache holding the test model as `BAAI/bge-small-en-v1.5` at `commit`, with
/// `refs/main` pointing at it when `with_ref`.
fn hf_cache(root: &Path, commit: &str, with_ref: bool) -> PathBuf {
    let repo = root.join("models--BAAI--bge-small-en-v1.5");
    let snapshot = checkpoint_copy(&repo.join("snapshots"), commit, &[]);
    if with_ref {
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), commit).unwrap();
    }
    snapshot
}

#[test]
fn explicit_beats_env_beats_cache() {
    let temp = tempfile::tempdir().unwrap();
    let explicit = checkpoint_copy(temp.path(), "explicit", &[]);
    let env = checkpoint_copy(temp.path(), "env", &[]);
    let cache = temp.path().join("hub");
    let snapshot = hf_cache(&cache, "abc123", true);

    let mut locator = offline(Some(&cache));
    locator.explicit_dir = Some(explicit.clone());
    locator.env_dir = Some(env.clone());
    let found = locator.locate().unwrap();
    assert_eq!(
        (found.source, &found.dir),
        (ModelSource::Explicit, &explicit)
    );
    assert_eq!(found.repo, None);

    locator.explicit_dir = None;
    let found = locator.locate().unwrap();
    assert_eq!((found.source, &found.dir), (ModelSource::Env, &env));

    locator.env_dir = None;
    let found = locator.resolve(None).unwrap();
    assert_eq!(
        (found.source, &found.dir),
        (ModelSource::HfCache, &snapshot)
    );
    assert_eq!(found.repo.as_deref(), Some("BAAI/bge-small-en-v1.5"));
    assert!(
        found
            .load()
            .unwrap()
            .model_id()
            .starts_with("bge-small-en-v1.5@")
    );
}

#[test]
fn a_configured_but_broken_directory_is_an_error_not_a_fallback() {
    let temp = tempfile::tempdir().unwrap();
    let cache = temp.path().join("hub");
    hf_cache(&cache, "abc123", true);
    let mut locator = offline(Some(&cache));
    locator.env_dir = Some(temp.path().join("typo"));
    let err = locator.resolve(None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ModelUnavailable);
    assert!(
        err.message().contains("CODEOID_MODEL_DIR") && err.message().contains("typo"),
        "{}",
        err.message()
    );

    let incomplete = checkpoint_copy(temp.path(), "incomplete", &[]);
    std::fs::remove_file(incomplete.join("tokenizer.json")).unwrap();
    locator.env_dir = None;
    locator.explicit_dir = Some(incomplete);
    let err = locator.locate().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ModelUnavailable);
    assert!(
        err.message().contains("tokenizer.json"),
        "{}",
        err.message()
    );
}

#[test]
fn the_cache_is_searched_without_refs_and_incomplete_snapshots_are_skipped() {
    let temp = tempfile::tempdir().unwrap();
    let cache = temp.path().join("hub");
    let complete = hf_cache(&cache, "complete", false);
    let partial = hf_cache(&cache, "partial", true);
    std::fs::remove_file(partial.join("model.safetensors")).unwrap();

    let found = offline(Some(&cache)).locate().unwrap();
    assert_eq!(
        found.dir, complete,
        "refs/main names a partial snapshot; the complete one is used"
    );
}

#[test]
fn nothing_found_offline_says_where_it_looked_and_what_to_do() {
    let temp = tempfile::tempdir().unwrap();
    let locator = offline(Some(temp.path()));
    assert!(!locator.is_available());
    let err = locator.resolve(None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ModelUnavailable);
    let message = err.message();
    assert!(message.contains("BAAI/bge-small-en-v1.5"), "{message}");
    assert!(
        message.contains(&temp.path().display().to_string()),
        "{message}"
    );
    assert!(message.contains("; set CODEOID_MODEL_DIR"), "{message}");

    assert_eq!(
        offline(None).locate().unwrap_err().kind(),
        ErrorKind::ModelUnavailable
    );
}
