//! The cost of the C ABI over the Rust API (issue 7 target: the FFI layer adds < 5 µs per small
//! call).
//!
//! A real store: the Claude Code logs of `../shared/evaldata/claude-code-sessions/spotter`,
//! imported through `codeoid_memory_import` (12 sessions, 627 episodes of real tool traffic). The
//! benches read the 64 newest episodes, cycling, by both paths:
//!
//! - `ffi/get_episode/rust` vs `ffi/get_episode/c`: the text `get_episode` shows a model,
//!   through `Memory::episode_text` and through `codeoid_memory_episode_text` (argument checks,
//!   panic boundary, copy into a `codeoid_string`, `codeoid_string_free`).
//! - `ffi/episode_json/rust` vs `ffi/episode_json/c`: the whole episode as the C ABI hands it out,
//!   `Memory::episode` vs `codeoid_memory_episode`, whose extra cost is mostly building the JSON.
//! - `ffi/error/rust` vs `ffi/error/c`: a call that fails (an unknown id), with the full message
//!   built (Rust) or the error read and freed (C).
//!
//! - `ffi/*/paired`: the same pairs interleaved call by call (100 rounds over the ids), printing
//!   the median of the paired differences, which load drift between criterion runs cannot skew.
//!
//! Every bench asserts its result. `docs/benchmarks.md` records the figures.

#![warn(clippy::undocumented_unsafe_blocks)]

use std::cell::Cell;
use std::ffi::CStr;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use codeoid::{
    CODEOID_ERROR_NOT_FOUND, codeoid_error_code, codeoid_error_free, codeoid_error_message,
    codeoid_memory, codeoid_memory_episode, codeoid_memory_episode_text, codeoid_memory_free,
    codeoid_memory_import, codeoid_memory_open, codeoid_memory_timeline, codeoid_string,
    codeoid_string_free,
};
use criterion::{Criterion, criterion_group, criterion_main};

/// Panics with the error's message when `err` is not NULL.
fn ok(err: *mut codeoid::codeoid_error) {
    if err.is_null() {
        return;
    }
    // SAFETY: a live error from codeoid, freed once.
    let message = unsafe {
        let m = CStr::from_ptr(codeoid_error_message(err))
            .to_string_lossy()
            .into_owned();
        codeoid_error_free(err);
        m
    };
    panic!("codeoid call failed: {message}");
}

/// Takes the text of a filled string and frees it.
fn take(s: &mut codeoid_string) -> String {
    let text = s.to_str().expect("UTF-8").to_string();
    // SAFETY: filled by codeoid.
    unsafe { codeoid_string_free(s) };
    text
}

struct Fixture {
    _dir: tempfile::TempDir,
    memory: *mut codeoid_memory,
    ids: Vec<String>,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // SAFETY: opened once, freed once.
        unsafe { codeoid_memory_free(self.memory) };
    }
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().join("spotter");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let config = serde_json::json!({
        "db_path": dir.path().join("codeoid.db"),
        "workspace_dir": workspace,
        // No embedding worker competing with the calls measured, and no model download.
        "embeddings": {"enabled": false},
    })
    .to_string();
    let mut memory = std::ptr::null_mut();
    // SAFETY: valid text and out-pointer.
    ok(unsafe { codeoid_memory_open(config.as_ptr().cast(), config.len(), &mut memory) });
    let logs = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/evaldata/claude-code-sessions/spotter")
        .to_string_lossy()
        .into_owned();
    let options = serde_json::json!({"workspace_dir": workspace}).to_string();
    let mut out = codeoid_string::empty();
    // SAFETY: valid arguments.
    ok(unsafe {
        codeoid_memory_import(
            memory,
            logs.as_ptr().cast(),
            logs.len(),
            options.as_ptr().cast(),
            options.len(),
            &mut out,
        )
    });
    let summary: serde_json::Value = serde_json::from_str(&take(&mut out)).expect("JSON");
    assert!(
        summary["episodes_added"].as_u64().expect("a count") > 500,
        "{summary}"
    );
    let query = r#"{"limit": 64}"#;
    // SAFETY: valid arguments.
    ok(unsafe { codeoid_memory_timeline(memory, query.as_ptr().cast(), query.len(), &mut out) });
    let page: serde_json::Value = serde_json::from_str(&take(&mut out)).expect("JSON");
    let ids: Vec<String> = page["episodes"]
        .as_array()
        .expect("episodes")
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(ids.len(), 64);
    Fixture {
        _dir: dir,
        memory,
        ids,
    }
}

fn bench(c: &mut Criterion) {
    let fx = fixture();
    // SAFETY: the handle lives until `fx` drops, after the benches.
    let memory = unsafe { &*fx.memory };
    let rust = memory.memory();
    let next = Cell::new(0usize);
    let id = || {
        let i = next.get();
        next.set((i + 1) % fx.ids.len());
        &fx.ids[i]
    };

    // Both paths give the same text for every id.
    for id in &fx.ids {
        let expected = rust.episode_text(None, id).expect("episode text");
        let mut out = codeoid_string::empty();
        // SAFETY: valid arguments.
        ok(unsafe {
            codeoid_memory_episode_text(
                memory,
                std::ptr::null(),
                0,
                id.as_ptr().cast(),
                id.len(),
                &mut out,
            )
        });
        assert_eq!(take(&mut out), expected);
        // SAFETY: valid arguments.
        ok(unsafe { codeoid_memory_episode(memory, id.as_ptr().cast(), id.len(), &mut out) });
        let json: serde_json::Value = serde_json::from_str(&take(&mut out)).expect("JSON");
        assert_eq!(
            json["content"],
            rust.episode(id).expect("episode").content.as_str()
        );
    }

    let mut group = c.benchmark_group("ffi");
    group.bench_function("get_episode/rust", |b| {
        b.iter(|| {
            let text = rust.episode_text(None, black_box(id())).expect("text");
            assert!(text.len() > 10);
            text
        })
    });
    group.bench_function("get_episode/c", |b| {
        b.iter(|| {
            let id = black_box(id());
            let mut out = codeoid_string::empty();
            // SAFETY: valid arguments; the string is freed below.
            let err = unsafe {
                codeoid_memory_episode_text(
                    memory,
                    std::ptr::null(),
                    0,
                    id.as_ptr().cast(),
                    id.len(),
                    &mut out,
                )
            };
            assert!(err.is_null() && out.len > 10);
            // SAFETY: filled above.
            unsafe { codeoid_string_free(&mut out) };
        })
    });
    group.bench_function("episode_json/rust", |b| {
        b.iter(|| {
            let episode = rust.episode(black_box(id())).expect("episode");
            assert!(!episode.content.is_empty());
            episode
        })
    });
    group.bench_function("episode_json/c", |b| {
        b.iter(|| {
            let id = black_box(id());
            let mut out = codeoid_string::empty();
            // SAFETY: valid arguments; the string is freed below.
            let err =
                unsafe { codeoid_memory_episode(memory, id.as_ptr().cast(), id.len(), &mut out) };
            assert!(err.is_null() && out.len > 10);
            // SAFETY: filled above.
            unsafe { codeoid_string_free(&mut out) };
        })
    });
    group.bench_function("error/rust", |b| {
        let missing = "ep_0000000000000000";
        b.iter(|| {
            let err = rust.episode(black_box(missing)).expect_err("missing");
            assert_eq!(err.kind().code(), CODEOID_ERROR_NOT_FOUND);
            err.full_message()
        })
    });
    group.bench_function("error/c", |b| {
        let missing = "ep_0000000000000000";
        b.iter(|| {
            // SAFETY: valid arguments; the error is read and freed.
            unsafe {
                let mut out = codeoid_string::empty();
                let err = codeoid_memory_episode(
                    memory,
                    missing.as_ptr().cast(),
                    missing.len(),
                    &mut out,
                );
                assert_eq!(codeoid_error_code(err), CODEOID_ERROR_NOT_FOUND);
                codeoid_error_free(err);
            }
        })
    });
    group.finish();

    // Criterion's runs are minutes apart on a shared machine, and the load drifts in between.
    // Interleaving the two paths call by call and taking the median of the paired differences
    // measures the layer's own cost despite the drift.
    paired(
        "get_episode",
        &fx.ids,
        |id| {
            let text = rust.episode_text(None, id).expect("text");
            assert!(text.len() > 10);
        },
        |id| {
            let mut out = codeoid_string::empty();
            // SAFETY: valid arguments; the string is freed below.
            let err = unsafe {
                codeoid_memory_episode_text(
                    memory,
                    std::ptr::null(),
                    0,
                    id.as_ptr().cast(),
                    id.len(),
                    &mut out,
                )
            };
            assert!(err.is_null() && out.len > 10);
            // SAFETY: filled above.
            unsafe { codeoid_string_free(&mut out) };
        },
    );
    paired(
        "episode_json",
        &fx.ids,
        |id| {
            assert!(!rust.episode(id).expect("episode").content.is_empty());
        },
        |id| {
            let mut out = codeoid_string::empty();
            // SAFETY: valid arguments; the string is freed below.
            let err =
                unsafe { codeoid_memory_episode(memory, id.as_ptr().cast(), id.len(), &mut out) };
            assert!(err.is_null() && out.len > 10);
            // SAFETY: filled above.
            unsafe { codeoid_string_free(&mut out) };
        },
    );
    let missing = vec!["ep_0000000000000000".to_string()];
    paired(
        "error",
        &missing,
        |id| {
            let err = rust.episode(id).expect_err("missing");
            assert!(!err.full_message().is_empty());
        },
        |id| {
            let mut out = codeoid_string::empty();
            // SAFETY: valid arguments; the error is read and freed.
            unsafe {
                let err = codeoid_memory_episode(memory, id.as_ptr().cast(), id.len(), &mut out);
                assert_eq!(codeoid_error_code(err), CODEOID_ERROR_NOT_FOUND);
                codeoid_error_free(err);
            }
        },
    );
}

/// Times `rust` and `c` alternately on every id, 100 rounds, and prints the medians and the
/// median of the paired differences (C minus Rust).
fn paired(name: &str, ids: &[String], rust: impl Fn(&str), c: impl Fn(&str)) {
    let mut rust_ns = Vec::new();
    let mut c_ns = Vec::new();
    let mut diff_ns = Vec::new();
    for round in 0..100 {
        for id in ids {
            let (first, second) = if round % 2 == 0 { (0, 1) } else { (1, 0) };
            let mut t = [0i64; 2];
            for which in [first, second] {
                let start = Instant::now();
                if which == 0 {
                    rust(black_box(id));
                } else {
                    c(black_box(id));
                }
                t[which] = start.elapsed().as_nanos() as i64;
            }
            rust_ns.push(t[0]);
            c_ns.push(t[1]);
            diff_ns.push(t[1] - t[0]);
        }
    }
    let median = |v: &mut Vec<i64>| {
        v.sort_unstable();
        v[v.len() / 2] as f64 / 1000.0
    };
    println!(
        "ffi/{name}/paired: rust median {:.2} µs, c median {:.2} µs, median paired overhead {:.2} µs ({} pairs)",
        median(&mut rust_ns),
        median(&mut c_ns),
        median(&mut diff_ns),
        diff_ns.len()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
