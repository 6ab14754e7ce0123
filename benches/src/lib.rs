//! Shared helpers for the codeoid benchmarks.
