//! Shell-output compression that loses nothing.
//!
//! What a shell command prints is mostly noise for a model: passing tests, unchanged context,
//! thousands of untracked files. This module shrinks it before the model reads it, under two
//! guarantees:
//! - **facts survive**: every rule declares fact patterns (failing test names and their failure
//!   blocks, error and warning lines, commit hashes, modified paths, counts), and no fact line is
//!   ever removed; every elision leaves a marker saying what and how many;
//! - **reversible**: the [`Runner`] stores the raw stdout and stderr through a
//!   [`RawOutputSink`] (the episode store) before compressing, and the compressed text ends with
//!   `[codeoid: {rule} kept {x}% — get_episode("{id}") has the raw output]`.
//!
//! The pieces:
//! - [`Registry`]: the ordered rules (first match wins), built from [`Config`] (JSON, rules
//!   declared as data, see `docs/compression.md`); [`Registry::compress`] is a pure function.
//! - [`CommandShape`]: which command a command line really runs (`cd x && VAR=1 sudo cargo test`).
//! - `rules`: one file per family (git diff, status and log; test runners; `ls`; path lists and
//!   `tree`; grep; head/tail).
//! - `facts` ([`DIAGNOSTICS`]), `elision`, `terminal`: fact patterns, marker format, ANSI and
//!   `\r` normalization.
//! - [`Runner`]: runs `sh -c`, stores first, compresses stdout; stderr and exit code untouched.
//! - [`claude_hook`]: the Claude Code `PreToolUse` hook that routes Bash through `codeoid run`.
//!
//! A leaf module: no SQLite, no embeddings. Compressed text never contains ANSI colour codes;
//! output that passes through is returned byte for byte.

mod capture;
mod child;
pub mod claude_hook;
mod command;
mod config;
mod elision;
mod facts;
mod registry;
mod rules;
mod runner;
mod terminal;

pub use command::{CommandShape, Pipeline};
pub use config::{Config, Family, RuleSpec, builtin_rules};
pub use facts::{DIAGNOSTICS, DIAGNOSTICS_NAME};
pub use registry::{BINARY_RULE, Compressed, Registry, RuleInfo};
pub use runner::{MemorySink, RawOutputSink, RunOutput, Runner, Stdin, StoredRaw};
