//! Settings of a [`super::Memory`]: where the store is, which workspace, and the settings of each
//! mechanism (store, rotation, workspace index, compression, retrieval and embeddings).
//!
//! `Default` gives the documented defaults without reading the environment;
//! [`MemoryConfig::from_env`] layers the `CODEOID_*` variables on top, as a thin, separately
//! testable step.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::index::IndexConfig;
use crate::retrieve::{EmbeddingConfig, RetrievalConfig};
use crate::rotate::RotationConfig;
use crate::store::StoreOptions;

/// Seconds after which a command run through memory is killed (`0` or unset: never).
pub const ENV_RUN_TIMEOUT_SECS: &str = "CODEOID_RUN_TIMEOUT_SECS";

/// Everything [`super::Memory::open`] needs.
#[derive(Debug, Clone)]
pub struct MemoryConfig {
    /// The store file; `None` means [`crate::store::default_path`] (`$CODEOID_DB` or the platform
    /// data directory).
    pub db_path: Option<PathBuf>,
    /// A directory inside the workspace (a git checkout or any folder); `None` means the current
    /// directory.
    pub workspace_dir: Option<PathBuf>,
    /// Tenant mixed into the workspace id, so two tenants in one directory do not share memory.
    pub tenant: String,
    /// `false` turns session memory off for the model: rotation seeds degrade to the generic
    /// continuation notice and the workspace index is empty. Turns are still recorded.
    pub memory_enabled: bool,
    /// Store settings.
    pub store: StoreOptions,
    /// Rotation thresholds and guard.
    pub rotation: RotationConfig,
    /// Workspace index budget and rebuild schedule.
    pub index: IndexConfig,
    /// A compression rule file (JSON, see `docs/compression.md`); `None` uses the built-in rules.
    pub compress_rules: Option<PathBuf>,
    /// How recall ranks: weights, half-life, candidates per channel.
    pub retrieval: RetrievalConfig,
    /// Which embedding model, and how the background worker batches.
    pub embedding: EmbeddingConfig,
    /// Hash the files under the workspace root that a live session reads
    /// ([`super::Memory::record_turn`]) right after the read is recorded, so `recall_file` can
    /// say whether a file changed since; files elsewhere are never opened. Default on. Bulk
    /// recording ([`super::Memory::record_turns`], used by imports) never hashes: today's file
    /// says nothing about the one read back then.
    pub hash_live_reads: bool,
    /// Commands run through memory ([`super::Memory::run`]) still running after this long are
    /// killed with everything they started, and their output so far is stored and shown. `None`
    /// (the default) or a zero duration waits as long as a command runs. With a timeout, a
    /// command runs in a process group of its own and cannot read from the terminal. One call
    /// can set its own with [`crate::Memory::run_with_timeout`].
    pub run_timeout: Option<Duration>,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            db_path: None,
            workspace_dir: None,
            tenant: String::new(),
            memory_enabled: true,
            store: StoreOptions::default(),
            rotation: RotationConfig::default(),
            index: IndexConfig::default(),
            compress_rules: None,
            retrieval: RetrievalConfig::default(),
            embedding: EmbeddingConfig::default(),
            hash_live_reads: true,
            run_timeout: None,
        }
    }
}

impl MemoryConfig {
    /// The defaults with the environment applied: `CODEOID_AUTO_ROTATE` and the other rotation
    /// variables, `CODEOID_WORKSPACE_INDEX` and the index variables, `CODEOID_MEMORY=0` (memory
    /// off), `CODEOID_TENANT`, `CODEOID_COMPRESS_RULES`, `CODEOID_RUN_TIMEOUT_SECS`,
    /// `CODEOID_EMBEDDINGS=0` (lexical-only
    /// recall), `CODEOID_RECALL_WEIGHTS` and `CODEOID_RECALL_HALF_LIFE_HOURS`. `CODEOID_DB` is
    /// read when the store path is resolved, `CODEOID_MODEL_DIR` and the Hugging Face variables
    /// when the model is located.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming a variable whose value does not parse.
    pub fn from_env() -> Result<MemoryConfig> {
        MemoryConfig::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`MemoryConfig::run_timeout`] from `secs` seconds (fractions allowed), as every binding
    /// takes it: `None` for 0, at least a nanosecond for any positive value.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming `what` for a negative or non-finite value, or
    /// one over 10^9 s.
    pub fn run_timeout_from_secs(secs: f64, what: &str) -> Result<Option<Duration>> {
        if !(secs.is_finite() && (0.0..=1e9).contains(&secs)) {
            return Err(Error::invalid_input(format!(
                "{what} is {secs}; expected a number of seconds from 0 (no timeout) to 10^9"
            )));
        }
        // A positive time too small for a nanosecond is the shortest timeout, not none.
        Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs).max(Duration::from_nanos(1))))
    }

    /// [`MemoryConfig::from_env`] over any variable lookup (tests pass a map).
    ///
    /// # Errors
    /// As [`MemoryConfig::from_env`].
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<MemoryConfig> {
        let mut config = MemoryConfig {
            rotation: RotationConfig::from_lookup(&lookup)?,
            index: IndexConfig::from_lookup(&lookup)?,
            retrieval: RetrievalConfig::from_lookup(&lookup)?,
            embedding: EmbeddingConfig::from_lookup(&lookup)?,
            ..MemoryConfig::default()
        };
        if let Some(value) = lookup("CODEOID_MEMORY") {
            config.memory_enabled = crate::env::switch("CODEOID_MEMORY", &value)?;
        }
        if let Some(tenant) = lookup("CODEOID_TENANT") {
            config.tenant = tenant;
        }
        if let Some(rules) = lookup("CODEOID_COMPRESS_RULES").filter(|v| !v.is_empty()) {
            config.compress_rules = Some(PathBuf::from(rules));
        }
        if let Some(value) = lookup(ENV_RUN_TIMEOUT_SECS).filter(|v| !v.is_empty()) {
            let secs = value.trim().parse::<f64>().map_err(|_| {
                Error::invalid_input(format!(
                    "{ENV_RUN_TIMEOUT_SECS}={value:?} is not a number of seconds; expected e.g. 120"
                ))
            })?;
            config.run_timeout = MemoryConfig::run_timeout_from_secs(secs, ENV_RUN_TIMEOUT_SECS)?;
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::lookup;

    #[test]
    fn environment_switches_memory_and_rotation() {
        let config = MemoryConfig::from_lookup(lookup(&[
            ("CODEOID_MEMORY", "0"),
            ("CODEOID_AUTO_ROTATE", "1"),
        ]))
        .unwrap();
        assert!(!config.memory_enabled);
        assert!(config.rotation.auto_rotate);
        let defaults = MemoryConfig::from_lookup(lookup(&[])).unwrap();
        assert!(defaults.memory_enabled);
        assert!(!defaults.rotation.auto_rotate);
    }

    #[test]
    fn the_run_timeout_is_seconds_and_zero_is_none() {
        let config = MemoryConfig::from_lookup(lookup(&[(ENV_RUN_TIMEOUT_SECS, "1.5")])).unwrap();
        assert_eq!(config.run_timeout, Some(Duration::from_millis(1500)));
        let err = MemoryConfig::from_lookup(lookup(&[(ENV_RUN_TIMEOUT_SECS, "soon")])).unwrap_err();
        assert!(err.message().contains(ENV_RUN_TIMEOUT_SECS), "{err}");
        assert!(MemoryConfig::from_lookup(lookup(&[(ENV_RUN_TIMEOUT_SECS, "-1")])).is_err());
        let zero = MemoryConfig::from_lookup(lookup(&[(ENV_RUN_TIMEOUT_SECS, "0")])).unwrap();
        assert_eq!(zero.run_timeout, None);
        // Too small for a nanosecond is still a timeout, the shortest one.
        assert_eq!(
            MemoryConfig::run_timeout_from_secs(4e-10, "t").unwrap(),
            Some(Duration::from_nanos(1))
        );
        assert!(MemoryConfig::run_timeout_from_secs(2e9, "t").is_err());
        assert!(MemoryConfig::run_timeout_from_secs(f64::NAN, "t").is_err());
    }

    #[test]
    fn a_bad_switch_names_the_variable() {
        let err = MemoryConfig::from_lookup(lookup(&[("CODEOID_MEMORY", "maybe")])).unwrap_err();
        assert!(err.message().contains("CODEOID_MEMORY"), "{err}");
    }
}
