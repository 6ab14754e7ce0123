//! Rotation settings and their environment overrides.
//!
//! [`RotationConfig`] is a plain value: code builds it, tests build it, and
//! [`RotationConfig::from_env`] is only a thin layer that reads `CODEOID_*` variables through
//! [`RotationConfig::from_lookup`], so nothing else in the crate reads the process environment
//! and tests never depend on it.
//!
//! Invariants, checked by [`RotationConfig::validate`]: `0 < soft <= hard <= 1`, the default
//! window and any override lie in the accepted window range, and the turn guard is at most
//! [`MAX_MIN_TURNS`].

use serde::{Deserialize, Serialize};

use super::window::{DEFAULT_WINDOW, validate_window};
use crate::error::{Error, Result};

/// Environment variable turning auto-rotation at the soft threshold on (`1`) or off (`0`).
pub const ENV_AUTO_ROTATE: &str = "CODEOID_AUTO_ROTATE";
/// Environment variable for the soft threshold, a fraction such as `0.9`.
pub const ENV_SOFT_THRESHOLD: &str = "CODEOID_ROTATE_SOFT";
/// Environment variable for the hard threshold, a fraction such as `0.97`.
pub const ENV_HARD_THRESHOLD: &str = "CODEOID_ROTATE_HARD";
/// Environment variable for the minimum number of turns between rotations.
pub const ENV_MIN_TURNS: &str = "CODEOID_ROTATE_MIN_TURNS";
/// Environment variable for a context window (tokens) that overrides the model table.
pub const ENV_CONTEXT_WINDOW: &str = "CODEOID_CONTEXT_WINDOW";

/// The largest accepted turn guard: beyond this the hard safety net would effectively never fire.
pub const MAX_MIN_TURNS: u32 = 1_000;

/// When rotation fires. See DESIGN §5.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotationConfig {
    /// Rotate at the soft threshold. Off by default: rotation is opt-in except for the hard net.
    pub auto_rotate: bool,
    /// Occupancy (0..=1) at which auto-rotation fires. Default 0.90.
    pub soft_threshold: f64,
    /// Occupancy (0..=1) at which rotation fires even with auto-rotation off. Default 0.97.
    pub hard_threshold: f64,
    /// Turns that must pass after a rotation (or the session start) before another. Default 5.
    pub min_turns: u32,
    /// Window assumed for models the table does not know. Default 128,000 tokens.
    pub default_window: u64,
    /// A window that overrides the model table for every session, unless the session gives its
    /// own override. Default none.
    pub window_override: Option<u64>,
}

impl Default for RotationConfig {
    fn default() -> Self {
        RotationConfig {
            auto_rotate: false,
            soft_threshold: 0.90,
            hard_threshold: 0.97,
            min_turns: 5,
            default_window: DEFAULT_WINDOW,
            window_override: None,
        }
    }
}

impl RotationConfig {
    /// The defaults, overridden by the process environment (see the `ENV_*` constants).
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] naming the variable and its value when one cannot be
    /// parsed or the result fails [`RotationConfig::validate`].
    pub fn from_env() -> Result<RotationConfig> {
        RotationConfig::from_lookup(|name| std::env::var(name).ok())
    }

    /// The defaults, overridden by whatever `lookup` returns for each `ENV_*` name. Unset (or
    /// empty) variables keep the default.
    ///
    /// # Errors
    /// As [`RotationConfig::from_env`].
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<RotationConfig> {
        let mut config = RotationConfig::default();
        let get = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        if let Some(value) = get(ENV_AUTO_ROTATE) {
            config.auto_rotate = crate::env::switch(ENV_AUTO_ROTATE, &value)?;
        }
        if let Some(value) = get(ENV_SOFT_THRESHOLD) {
            config.soft_threshold = parse_fraction(ENV_SOFT_THRESHOLD, &value)?;
        }
        if let Some(value) = get(ENV_HARD_THRESHOLD) {
            config.hard_threshold = parse_fraction(ENV_HARD_THRESHOLD, &value)?;
        }
        if let Some(value) = get(ENV_MIN_TURNS) {
            config.min_turns = value.parse().map_err(|_| {
                Error::invalid_input(format!(
                    "{ENV_MIN_TURNS}={value:?} is not a whole number of turns; use e.g. 5"
                ))
            })?;
        }
        if let Some(value) = get(ENV_CONTEXT_WINDOW) {
            let tokens = value.replace('_', "").parse().map_err(|_| {
                Error::invalid_input(format!(
                    "{ENV_CONTEXT_WINDOW}={value:?} is not a token count; use e.g. 200000"
                ))
            })?;
            config.window_override = Some(tokens);
        }
        config.validate().map_err(|err| {
            crate::env::from_variables(
                err,
                &lookup,
                &[
                    ENV_SOFT_THRESHOLD,
                    ENV_HARD_THRESHOLD,
                    ENV_MIN_TURNS,
                    ENV_CONTEXT_WINDOW,
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
        for (name, value) in [
            ("soft threshold", self.soft_threshold),
            ("hard threshold", self.hard_threshold),
        ] {
            if !(value > 0.0 && value <= 1.0) {
                return Err(Error::invalid_input(format!(
                    "{name} {value} is outside (0, 1]; thresholds are fractions of the context \
                     window such as 0.9"
                )));
            }
        }
        if self.soft_threshold > self.hard_threshold {
            return Err(Error::invalid_input(format!(
                "soft threshold {} is above hard threshold {}; the soft (auto) threshold must \
                 come first",
                self.soft_threshold, self.hard_threshold
            )));
        }
        if self.min_turns > MAX_MIN_TURNS {
            return Err(Error::invalid_input(format!(
                "minimum of {} turns between rotations is above {MAX_MIN_TURNS}; the hard safety \
                 net would never fire",
                self.min_turns
            )));
        }
        validate_window(self.default_window, "default context window")?;
        if let Some(tokens) = self.window_override {
            validate_window(tokens, "context window override")?;
        }
        Ok(())
    }
}

fn parse_fraction(name: &str, value: &str) -> Result<f64> {
    value.parse::<f64>().map_err(|_| {
        Error::invalid_input(format!(
            "{name}={value:?} is not a number; use a fraction such as 0.9"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn from(vars: &[(&str, &str)]) -> Result<RotationConfig> {
        RotationConfig::from_lookup(crate::env::lookup(vars))
    }

    #[test]
    fn defaults_match_the_design() {
        let c = from(&[]).unwrap();
        assert_eq!(c, RotationConfig::default());
        assert!(!c.auto_rotate);
        assert_eq!(
            (c.soft_threshold, c.hard_threshold, c.min_turns),
            (0.90, 0.97, 5)
        );
    }

    #[test]
    fn environment_overrides_every_field() {
        let c = from(&[
            (ENV_AUTO_ROTATE, "1"),
            (ENV_SOFT_THRESHOLD, "0.8"),
            (ENV_HARD_THRESHOLD, " 0.95 "),
            (ENV_MIN_TURNS, "3"),
            (ENV_CONTEXT_WINDOW, "200_000"),
        ])
        .unwrap();
        assert!(c.auto_rotate);
        assert_eq!(
            (c.soft_threshold, c.hard_threshold, c.min_turns),
            (0.8, 0.95, 3)
        );
        assert_eq!(c.window_override, Some(200_000));
        assert!(!from(&[(ENV_AUTO_ROTATE, "off")]).unwrap().auto_rotate);
        assert!(!from(&[(ENV_AUTO_ROTATE, "")]).unwrap().auto_rotate);
    }

    #[test]
    fn bad_values_name_the_variable_and_value() {
        let cases = [
            (ENV_AUTO_ROTATE, "maybe"),
            (ENV_SOFT_THRESHOLD, "ninety"),
            (ENV_HARD_THRESHOLD, "1.5"),
            (ENV_SOFT_THRESHOLD, "0"),
            (ENV_MIN_TURNS, "-1"),
            (ENV_MIN_TURNS, "5000"),
            (ENV_CONTEXT_WINDOW, "0"),
            (ENV_CONTEXT_WINDOW, "lots"),
            (ENV_HARD_THRESHOLD, "NaN"),
        ];
        for (name, value) in cases {
            let err = from(&[(name, value)]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{name}={value}");
            let msg = err.message();
            assert!(
                msg.contains(&format!("{name}={value:?}")),
                "{name}={value}: {msg}"
            );
        }
    }

    #[test]
    fn soft_above_hard_is_rejected() {
        let err = from(&[(ENV_SOFT_THRESHOLD, "0.99")]).unwrap_err();
        assert!(
            err.message().contains("CODEOID_ROTATE_SOFT=\"0.99\""),
            "{}",
            err.message()
        );
    }
}
