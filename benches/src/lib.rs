//! Shared helpers for the codeoid benchmarks.

pub mod real_sessions;
