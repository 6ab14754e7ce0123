//! Shared helpers for the codeoid benchmarks.

pub mod real_sessions;

/// `true` when the bench runs as a benchmark (`cargo bench` passes `--bench`), `false` when
/// `cargo test --all-targets` runs it as a test. Benches whose setup takes minutes (a 100k store
/// with real vectors, a 1M index) run a small smoke version in test mode, so the test suite
/// still exercises their code without their cost.
pub fn benchmarking() -> bool {
    std::env::args().any(|arg| arg == "--bench")
}
