//! Workspace-index settings and their environment overrides.
//!
//! [`IndexConfig`] is a plain value shared by the builder and the scheduler.
//! [`IndexConfig::from_env`] is a thin layer over [`IndexConfig::from_lookup`], so tests never
//! touch the process environment. `CODEOID_WORKSPACE_INDEX=0` turns the index off: the scheduler
//! then returns an empty string without ever calling its builder.
//!
//! Invariants, checked by [`IndexConfig::validate`]: the budget is at least [`MIN_BUDGET`]
//! characters, enough for the title and the tool lines that always survive, so a valid budget is
//! always respected; at most [`MAX_CLUSTERS`] clusters; the clustering sample is bounded so the
//! build stays fast.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Environment variable switching the workspace index on (`1`, the default) or off (`0`).
pub const ENV_ENABLED: &str = "CODEOID_WORKSPACE_INDEX";
/// Environment variable for the character budget of the block.
pub const ENV_BUDGET: &str = "CODEOID_INDEX_BUDGET";
/// Environment variable for the number of new episodes that triggers a rebuild.
pub const ENV_REBUILD_EPISODES: &str = "CODEOID_INDEX_REBUILD_EPISODES";
/// Environment variable for the seconds after which one new episode triggers a rebuild.
pub const ENV_REBUILD_SECS: &str = "CODEOID_INDEX_REBUILD_SECS";
/// Environment variable for the minimum seconds between two rebuilds.
pub const ENV_MIN_INTERVAL_SECS: &str = "CODEOID_INDEX_MIN_INTERVAL_SECS";

/// The smallest accepted budget: the title (workspace name capped at 80 characters) and the
/// tool section take under 200 characters, so any valid budget holds them.
pub const MIN_BUDGET: usize = 400;
/// The largest accepted budget; the block is a system-prompt header, not a document.
pub const MAX_BUDGET: usize = 100_000;
/// The most topic clusters a block shows (k-means with k <= 8).
pub const MAX_CLUSTERS: usize = 8;
/// The most episodes clustering may sample; beyond this the build would stop being cheap.
pub const MAX_CLUSTER_SAMPLE: usize = 10_000;

/// How the workspace index is built and how often it is rebuilt (DESIGN §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexConfig {
    /// Build the index at all. Default on.
    pub enabled: bool,
    /// Character budget of the whole block. Default 1,800.
    pub budget_chars: usize,
    /// Hot files listed at most. Default 10.
    pub max_hot_files: usize,
    /// Recent sessions listed at most. Default 5.
    pub max_sessions: usize,
    /// Topic clusters at most (0 or 1 turns clustering off). Default 8, never above 8.
    pub max_clusters: usize,
    /// Embedded episodes needed before clusters are shown. Default 30.
    pub min_cluster_episodes: usize,
    /// Most recent embedded episodes that clustering samples. Default 1,000.
    pub max_cluster_episodes: usize,
    /// New episodes that trigger a rebuild. Default 5.
    pub rebuild_after_episodes: u64,
    /// Seconds after which at least one new episode triggers a rebuild. Default 60.
    pub rebuild_after_secs: u64,
    /// Minimum seconds between two rebuilds. Default 15.
    pub min_interval_secs: u64,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            enabled: true,
            budget_chars: 1_800,
            max_hot_files: 10,
            max_sessions: 5,
            max_clusters: MAX_CLUSTERS,
            min_cluster_episodes: 30,
            max_cluster_episodes: 1_000,
            rebuild_after_episodes: 5,
            rebuild_after_secs: 60,
            min_interval_secs: 15,
        }
    }
}

impl IndexConfig {
    /// The defaults, overridden by the process environment (see the `ENV_*` constants).
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the variable and value when one cannot be parsed
    /// or the result fails [`IndexConfig::validate`].
    pub fn from_env() -> Result<IndexConfig> {
        IndexConfig::from_lookup(|name| std::env::var(name).ok())
    }

    /// The defaults, overridden by whatever `lookup` returns for each `ENV_*` name. Unset or
    /// empty variables keep the default.
    ///
    /// # Errors
    /// As [`IndexConfig::from_env`].
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<IndexConfig> {
        let mut config = IndexConfig::default();
        let get = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        if let Some(value) = get(ENV_ENABLED) {
            config.enabled = crate::env::switch(ENV_ENABLED, &value)?;
        }
        if let Some(value) = get(ENV_BUDGET) {
            config.budget_chars = parse_number(ENV_BUDGET, &value, "1800")?;
        }
        if let Some(value) = get(ENV_REBUILD_EPISODES) {
            config.rebuild_after_episodes = parse_number(ENV_REBUILD_EPISODES, &value, "5")?;
        }
        if let Some(value) = get(ENV_REBUILD_SECS) {
            config.rebuild_after_secs = parse_number(ENV_REBUILD_SECS, &value, "60")?;
        }
        if let Some(value) = get(ENV_MIN_INTERVAL_SECS) {
            config.min_interval_secs = parse_number(ENV_MIN_INTERVAL_SECS, &value, "15")?;
        }
        config.validate().map_err(|err| {
            crate::env::from_variables(
                err,
                &lookup,
                &[
                    ENV_BUDGET,
                    ENV_REBUILD_EPISODES,
                    ENV_REBUILD_SECS,
                    ENV_MIN_INTERVAL_SECS,
                ],
            )
        })?;
        Ok(config)
    }

    /// Checks the invariants listed in the module documentation.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the offending field and value.
    pub fn validate(&self) -> Result<()> {
        if !(MIN_BUDGET..=MAX_BUDGET).contains(&self.budget_chars) {
            return Err(Error::invalid_input(format!(
                "index budget of {} characters is outside {MIN_BUDGET}..={MAX_BUDGET}; the title \
                 and tool lines alone need about 200",
                self.budget_chars
            )));
        }
        if self.max_clusters > MAX_CLUSTERS {
            return Err(Error::invalid_input(format!(
                "{} topic clusters requested; at most {MAX_CLUSTERS} are supported",
                self.max_clusters
            )));
        }
        if self.min_cluster_episodes < 2 || self.max_cluster_episodes > MAX_CLUSTER_SAMPLE {
            return Err(Error::invalid_input(format!(
                "clustering sample of {}..={} episodes is not valid; the minimum must be at least \
                 2 and the maximum at most {MAX_CLUSTER_SAMPLE}",
                self.min_cluster_episodes, self.max_cluster_episodes
            )));
        }
        if self.rebuild_after_episodes == 0 {
            return Err(Error::invalid_input(
                "rebuild after 0 new episodes would rebuild on every call and break prompt \
                 caching; use at least 1",
            ));
        }
        Ok(())
    }
}

fn parse_number<T: std::str::FromStr>(name: &str, value: &str, example: &str) -> Result<T> {
    value.replace('_', "").parse().map_err(|_| {
        Error::invalid_input(format!(
            "{name}={value:?} is not a non-negative whole number; use e.g. {example}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn from(vars: &[(&str, &str)]) -> Result<IndexConfig> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        IndexConfig::from_lookup(|name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn defaults_match_the_design() {
        let c = from(&[]).unwrap();
        assert_eq!(c, IndexConfig::default());
        assert!(c.enabled);
        assert_eq!(
            (c.budget_chars, c.max_hot_files, c.max_sessions),
            (1_800, 10, 5)
        );
        assert_eq!(
            (
                c.rebuild_after_episodes,
                c.rebuild_after_secs,
                c.min_interval_secs
            ),
            (5, 60, 15)
        );
    }

    #[test]
    fn environment_overrides_and_the_off_switch() {
        assert!(!from(&[(ENV_ENABLED, "0")]).unwrap().enabled);
        assert!(from(&[(ENV_ENABLED, "1")]).unwrap().enabled);
        let c = from(&[
            (ENV_BUDGET, "2_500"),
            (ENV_REBUILD_EPISODES, "10"),
            (ENV_REBUILD_SECS, "120"),
            (ENV_MIN_INTERVAL_SECS, "0"),
        ])
        .unwrap();
        assert_eq!(c.budget_chars, 2_500);
        assert_eq!(
            (
                c.rebuild_after_episodes,
                c.rebuild_after_secs,
                c.min_interval_secs
            ),
            (10, 120, 0)
        );
    }

    #[test]
    fn bad_values_are_named() {
        for (name, value) in [
            (ENV_ENABLED, "sometimes"),
            (ENV_BUDGET, "-5"),
            (ENV_BUDGET, "100"),
            (ENV_REBUILD_EPISODES, "0"),
            (ENV_REBUILD_SECS, "1m"),
        ] {
            let err = from(&[(name, value)]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            assert!(
                err.message().contains(&format!("{name}={value:?}")),
                "{name}={value}: {}",
                err.message()
            );
        }
        let too_many = IndexConfig {
            max_clusters: 9,
            ..IndexConfig::default()
        };
        assert!(too_many.validate().is_err());
    }
}
