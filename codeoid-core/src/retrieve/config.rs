//! Settings of retrieval and of the embedding worker: the four signal weights, the recency
//! half-life, the candidate pool, and which embedding model to use.
//!
//! `Default` gives DESIGN §2: `0.55 vec + 0.25 bm25 + 0.12 recency + 0.08 path`, a 48-hour
//! half-life, 50 candidates per channel and a lexical budget of 6,000 scored matches; the model
//! is found automatically. The
//! `from_lookup` constructors read `CODEOID_*` variables through any lookup, so tests never
//! touch the process environment.

use std::path::PathBuf;
use std::time::Duration;

use crate::embed::ModelLocator;
use crate::error::{Error, Result};
use crate::store::{DEFAULT_LEXICAL_BUDGET, MAX_LEXICAL_K, MIN_LEXICAL_BUDGET};

/// Environment variable: `0` turns embeddings off (lexical-only memory).
pub const ENV_EMBEDDINGS: &str = "CODEOID_EMBEDDINGS";
/// Environment variable: the four weights, `vec,bm25,recency,path` (e.g. `0.55,0.25,0.12,0.08`).
pub const ENV_WEIGHTS: &str = "CODEOID_RECALL_WEIGHTS";
/// Environment variable: the recency half-life in hours.
pub const ENV_HALF_LIFE_HOURS: &str = "CODEOID_RECALL_HALF_LIFE_HOURS";
/// Environment variable: the lexical budget (most matches the BM25 channel scores per recall).
pub const ENV_LEXICAL_BUDGET: &str = "CODEOID_RECALL_LEXICAL_BUDGET";

/// How much each signal counts in a hit's score. Each weight is finite and non-negative and at
/// least one is positive; they need not sum to 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Cosine similarity of the query and the episode's best window.
    pub vec: f64,
    /// BM25, normalized over the candidate batch.
    pub bm25: f64,
    /// `0.5 ^ (age_hours / half_life_hours)`.
    pub recency: f64,
    /// Overlap of the query's paths and the episode's.
    pub path: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            vec: 0.55,
            bm25: 0.25,
            recency: 0.12,
            path: 0.08,
        }
    }
}

impl Weights {
    fn validate(&self) -> Result<()> {
        let all = [self.vec, self.bm25, self.recency, self.path];
        if all.iter().any(|w| !w.is_finite() || *w < 0.0) || all.iter().all(|w| *w == 0.0) {
            return Err(Error::invalid_input(format!(
                "recall weights vec={}, bm25={}, recency={}, path={} are invalid; use finite, \
                 non-negative weights, at least one positive (default 0.55,0.25,0.12,0.08)",
                self.vec, self.bm25, self.recency, self.path
            )));
        }
        Ok(())
    }
}

/// How recall ranks episodes.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievalConfig {
    /// Signal weights.
    pub weights: Weights,
    /// Hours after which the recency signal halves. Default 48.
    pub half_life_hours: f64,
    /// Candidates taken from each channel (vector, BM25) after the filters, before fusion.
    /// Default 50, at most [`MAX_LEXICAL_K`].
    pub candidates: usize,
    /// Most matches the lexical channel scores per recall (see
    /// [`Store::lexical_search_within`](crate::store::Store::lexical_search_within)): a bound on
    /// its cost however common the query's words are. Default [`DEFAULT_LEXICAL_BUDGET`], at
    /// least [`MIN_LEXICAL_BUDGET`].
    pub lexical_budget: usize,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            weights: Weights::default(),
            half_life_hours: 48.0,
            candidates: 50,
            lexical_budget: DEFAULT_LEXICAL_BUDGET,
        }
    }
}

impl RetrievalConfig {
    /// Checks every field.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the field that is out of range.
    pub fn validate(&self) -> Result<()> {
        self.weights.validate()?;
        if !self.half_life_hours.is_finite() || self.half_life_hours <= 0.0 {
            return Err(Error::invalid_input(format!(
                "recall half-life {} hours is invalid; use a positive number (default 48)",
                self.half_life_hours
            )));
        }
        if self.candidates == 0 || self.candidates > MAX_LEXICAL_K {
            return Err(Error::invalid_input(format!(
                "recall candidates {} is out of range; use 1..={MAX_LEXICAL_K} (default 50)",
                self.candidates
            )));
        }
        if self.lexical_budget < MIN_LEXICAL_BUDGET {
            return Err(Error::invalid_input(format!(
                "recall lexical budget {} is too small; use at least {MIN_LEXICAL_BUDGET} \
                 (default {DEFAULT_LEXICAL_BUDGET})",
                self.lexical_budget
            )));
        }
        Ok(())
    }

    /// The defaults with `CODEOID_RECALL_WEIGHTS`, `CODEOID_RECALL_HALF_LIFE_HOURS` and
    /// `CODEOID_RECALL_LEXICAL_BUDGET` applied.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming a variable whose value does not parse or is out
    /// of range.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<RetrievalConfig> {
        let mut config = RetrievalConfig::default();
        if let Some(value) = lookup(ENV_WEIGHTS).filter(|v| !v.trim().is_empty()) {
            let parts: Vec<Option<f64>> = value
                .split(',')
                .map(|p| p.trim().parse::<f64>().ok())
                .collect();
            match parts.as_slice() {
                [Some(vec), Some(bm25), Some(recency), Some(path)] => {
                    config.weights = Weights {
                        vec: *vec,
                        bm25: *bm25,
                        recency: *recency,
                        path: *path,
                    };
                }
                _ => {
                    return Err(Error::invalid_input(format!(
                        "{ENV_WEIGHTS}={value:?} is not four numbers; use vec,bm25,recency,path \
                         such as 0.55,0.25,0.12,0.08"
                    )));
                }
            }
        }
        if let Some(value) = lookup(ENV_HALF_LIFE_HOURS).filter(|v| !v.trim().is_empty()) {
            config.half_life_hours = value.trim().parse().map_err(|_| {
                Error::invalid_input(format!(
                    "{ENV_HALF_LIFE_HOURS}={value:?} is not a number; use hours, such as 48"
                ))
            })?;
        }
        if let Some(value) = lookup(ENV_LEXICAL_BUDGET).filter(|v| !v.trim().is_empty()) {
            config.lexical_budget = value.trim().parse().map_err(|_| {
                Error::invalid_input(format!(
                    "{ENV_LEXICAL_BUDGET}={value:?} is not a whole number; use a count of \
                     matches, such as {DEFAULT_LEXICAL_BUDGET}"
                ))
            })?;
        }
        config.validate().map_err(|err| {
            crate::env::from_variables(
                err,
                &lookup,
                &[ENV_WEIGHTS, ENV_HALF_LIFE_HOURS, ENV_LEXICAL_BUDGET],
            )
        })?;
        Ok(config)
    }
}

/// Which embedding model memory uses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ModelChoice {
    /// The [`ModelLocator`] chain from the environment: `CODEOID_MODEL_DIR`, the Hugging Face
    /// cache, then a download of bge-small-en-v1.5 (on the worker thread; never in `open`).
    #[default]
    Auto,
    /// A resolution chain given in full (tests, embedders with their own configuration).
    Locate(ModelLocator),
    /// A checkpoint directory; an incomplete one is a warning and lexical-only memory.
    Dir(PathBuf),
    /// No embeddings: recall ranks by BM25, recency and paths only.
    Disabled,
}

/// How episodes are embedded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingConfig {
    /// The model.
    pub model: ModelChoice,
    /// Episodes embedded per call of the embedder (default 8): small enough that a query never
    /// waits long behind a batch, large enough to share forward passes.
    pub batch_episodes: usize,
    /// How often the worker looks for episodes that another process or a direct store write
    /// added, in milliseconds (default 2,000). Episodes recorded through `Memory` wake it at once.
    pub poll_millis: u64,
    /// How long another model's vectors are kept after a worker last used that model on this
    /// store (default 7 days). Two processes with different models on one store (a harness and
    /// a CLI, say) thus keep each other's vectors instead of deleting them and re-embedding in
    /// turn; a model nobody has used for this long is dropped once the current one covers the
    /// workspace. `Duration::ZERO` drops other models' vectors as soon as it does.
    pub keep_other_models: Duration,
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        EmbeddingConfig {
            model: ModelChoice::Auto,
            batch_episodes: 8,
            poll_millis: 2_000,
            keep_other_models: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

impl EmbeddingConfig {
    /// Checks every field.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] for a zero batch or poll interval.
    pub fn validate(&self) -> Result<()> {
        if self.batch_episodes == 0 || self.poll_millis == 0 {
            return Err(Error::invalid_input(format!(
                "embedding batch_episodes {} and poll_millis {} must be positive; the defaults \
                 are 8 and 2000",
                self.batch_episodes, self.poll_millis
            )));
        }
        Ok(())
    }

    /// The defaults with `CODEOID_EMBEDDINGS` applied (`0` disables embeddings; anything else
    /// keeps the automatic model chain, which reads `CODEOID_MODEL_DIR` itself).
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when `CODEOID_EMBEDDINGS` is not a switch.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<EmbeddingConfig> {
        let mut config = EmbeddingConfig::default();
        // An empty value keeps the default, as an unset one does.
        if let Some(value) = lookup(ENV_EMBEDDINGS).filter(|v| !v.trim().is_empty()) {
            if !crate::env::switch(ENV_EMBEDDINGS, &value)? {
                config.model = ModelChoice::Disabled;
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::lookup;

    #[test]
    fn defaults_are_the_design_weights() {
        let config = RetrievalConfig::from_lookup(lookup(&[])).unwrap();
        assert_eq!(config, RetrievalConfig::default());
        assert_eq!(config.weights.vec + config.weights.bm25, 0.8);
        config.validate().unwrap();
    }

    #[test]
    fn environment_overrides_and_bad_values_name_the_variable() {
        let config = RetrievalConfig::from_lookup(lookup(&[
            (ENV_WEIGHTS, "1, 0, 0, 0"),
            (ENV_HALF_LIFE_HOURS, "24"),
            (ENV_LEXICAL_BUDGET, " 2000 "),
        ]))
        .unwrap();
        assert_eq!(config.weights.vec, 1.0);
        assert_eq!(config.half_life_hours, 24.0);
        assert_eq!(config.lexical_budget, 2000);
        for (name, value) in [
            (ENV_WEIGHTS, "1,2,3"),
            (ENV_WEIGHTS, "a,b,c,d"),
            (ENV_WEIGHTS, "-1,0,0,0"),
            (ENV_WEIGHTS, "0,0,0,0"),
            (ENV_HALF_LIFE_HOURS, "soon"),
            (ENV_HALF_LIFE_HOURS, "0"),
            (ENV_LEXICAL_BUDGET, "many"),
            (ENV_LEXICAL_BUDGET, "-5"),
            (ENV_LEXICAL_BUDGET, "99"),
        ] {
            let err = RetrievalConfig::from_lookup(lookup(&[(name, value)])).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidInput);
            let message = err.message();
            assert!(message.contains(&format!("{name}={value:?}")), "{message}");
        }
        let config = EmbeddingConfig::from_lookup(lookup(&[(ENV_EMBEDDINGS, "0")])).unwrap();
        assert_eq!(config.model, ModelChoice::Disabled);
        assert!(EmbeddingConfig::from_lookup(lookup(&[(ENV_EMBEDDINGS, "maybe")])).is_err());
        let bad = RetrievalConfig {
            candidates: 0,
            ..RetrievalConfig::default()
        };
        assert!(
            bad.validate()
                .unwrap_err()
                .message()
                .contains("candidates 0")
        );
    }
}
