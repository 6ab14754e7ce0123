//! The rotation policy: from a turn's usage to an explained decision, and the rotation itself.
//!
//! The policy is pure. A session's rotation bookkeeping lives in [`RotationState`], a plain
//! value the store persists; [`RotationPolicy::observe`] and [`RotationPolicy::rotate`] are the
//! only two ways it changes.
//!
//! Invariants:
//! - Occupancy is the primary conversation's context only: the largest *primary* call of the
//!   turn (input + cache read + cache creation, [`Usage::primary_context_tokens`]) over the
//!   model's window. Subagent calls never count, neither summed nor as a maximum.
//! - [`RotationPolicy::observe`] advances the turn counter first, unconditionally, whatever the
//!   configuration, the memory setting or the usage: a counter that only moves on some code path
//!   silently disables rotation (the reference implementation's counter never moved with memory
//!   on). Call it once per completed turn.
//! - The hard threshold fires whether auto-rotation is on or off; the soft one only when it is
//!   on; neither before `min_turns` turns since the last rotation (or the session start).
//! - Missing, subagent-only or implausible usage gives a `no_signal` decision: never a rotation
//!   on numbers that cannot be trusted.
//! - [`RotationPolicy::rotate`] refuses (with [`crate::ErrorKind::RotationRefused`]) before the
//!   guard and when a memory seed has no anchor, and leaves the state untouched when it refuses.
//!
//! What a "turn" is is up to the harness: normally one model response of the primary
//! conversation (the unit the store records with its usage). This module does not persist
//! anything, record events, or pick a new backing context id; the store layer does that around
//! [`RotationPolicy::rotate`].

use serde::{Deserialize, Serialize};

use super::config::RotationConfig;
use super::seed::{Anchor, SeedBlock};
use super::window::{ContextWindow, MAX_WINDOW, resolve_window, validate_window};
use crate::canonical::Usage;
use crate::error::{Error, ErrorKind, Result};

/// A session's rotation bookkeeping. The store persists all three fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RotationState {
    /// Rotations so far (0 for a session never rotated).
    pub rotation_count: u32,
    /// Turns observed since the last rotation, or since the session started.
    pub turns_since_rotation: u32,
    /// The seed the next message must start with; taken exactly once with
    /// [`RotationState::take_pending_seed`].
    pub pending_seed: Option<SeedBlock>,
}

impl RotationState {
    /// Removes and returns the pending seed. The first call after a rotation returns it; every
    /// later call returns `None` until the next rotation, so the seed is sent exactly once.
    pub fn take_pending_seed(&mut self) -> Option<SeedBlock> {
        self.pending_seed.take()
    }
}

/// Why a [`Decision`] came out the way it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// No trustworthy primary usage for the turn: none reported, only subagent calls, or a
    /// count no model could have read.
    NoSignal,
    /// Occupancy is below every threshold that applies.
    BelowThreshold,
    /// Occupancy passed the soft threshold, but auto-rotation is off and the hard one is not
    /// reached.
    AutoRotateOff,
    /// A threshold was reached, but too few turns have passed since the last rotation.
    TooSoon,
    /// Auto-rotation is on and the soft threshold was reached: rotate.
    SoftThreshold,
    /// The hard safety net was reached: rotate.
    HardThreshold,
}

impl Reason {
    /// The snake_case name used in JSON and by bindings.
    pub const fn name(self) -> &'static str {
        match self {
            Reason::NoSignal => "no_signal",
            Reason::BelowThreshold => "below_threshold",
            Reason::AutoRotateOff => "auto_rotate_off",
            Reason::TooSoon => "too_soon",
            Reason::SoftThreshold => "soft_threshold",
            Reason::HardThreshold => "hard_threshold",
        }
    }
}

/// The policy's verdict on one turn, with everything needed to explain it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// `true` when the caller should rotate now.
    pub should_rotate: bool,
    /// Why, as an enum to branch on.
    pub reason: Reason,
    /// Why, as a sentence for a person.
    pub message: String,
    /// Primary context tokens over the window, when known (may exceed 1.0).
    pub occupancy: Option<f64>,
    /// Primary context tokens of the turn (largest primary call), when known.
    pub tokens: Option<u64>,
    /// The window the occupancy is measured against.
    pub window: ContextWindow,
    /// Turns since the last rotation, including this one.
    pub turns_since_rotation: u32,
    /// Turns required between rotations.
    pub min_turns: u32,
    /// Whether auto-rotation (the soft threshold) was on.
    pub auto_rotate: bool,
}

/// Where a rotation's seed comes from.
#[derive(Debug, Clone, Copy)]
pub enum SeedSource<'a> {
    /// Memory is on: the full seed, anchored on the last user prompt.
    Memory {
        /// Workspace display name.
        workspace: &'a str,
        /// Session display name.
        session_name: &'a str,
        /// The last user prompt before the rotation ([`Anchor::from_turns`]); `None` when the
        /// session has none, which refuses the rotation.
        anchor: Option<&'a Anchor>,
    },
    /// Memory is disabled: the generic continuation notice.
    MemoryDisabled,
}

/// The result of a rotation: its number and the seed now pending in the state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rotation {
    /// The new rotation count (1 after the first rotation).
    pub number: u32,
    /// The seed the next message starts with (also stored as the state's pending seed).
    pub seed: SeedBlock,
}

/// The rotation policy: thresholds, turn guard and window resolution from a [`RotationConfig`].
#[derive(Debug, Clone, PartialEq)]
pub struct RotationPolicy {
    config: RotationConfig,
}

impl RotationPolicy {
    /// A policy with `config`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when `config` fails [`RotationConfig::validate`].
    pub fn new(config: RotationConfig) -> Result<RotationPolicy> {
        config.validate()?;
        Ok(RotationPolicy { config })
    }

    /// The configuration in force.
    pub fn config(&self) -> &RotationConfig {
        &self.config
    }

    /// The window for `model`, honouring a per-session override first, then the configured
    /// override, the model table and the configured default.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when `session_override` is zero or absurd.
    pub fn window(
        &self,
        model: Option<&str>,
        session_override: Option<u64>,
    ) -> Result<ContextWindow> {
        resolve_window(
            model,
            session_override.or(self.config.window_override),
            self.config.default_window,
        )
    }

    /// Records one completed turn of the session and decides whether to rotate.
    ///
    /// The turn counter advances first, whatever else happens. `usage` is the turn's usage
    /// (`None` when the harness reported none); `window` comes from [`RotationPolicy::window`].
    pub fn observe(
        &self,
        state: &mut RotationState,
        usage: Option<&Usage>,
        window: &ContextWindow,
    ) -> Decision {
        state.turns_since_rotation = state.turns_since_rotation.saturating_add(1);
        let turns = state.turns_since_rotation;
        let c = &self.config;
        let decision = |should_rotate, reason, message: String, tokens: Option<u64>| {
            let mut message = message;
            if window.is_assumed() {
                message.push_str(&format!(" (window: {})", window.describe()));
            }
            Decision {
                should_rotate,
                reason,
                message,
                occupancy: tokens.map(|t| t as f64 / window.tokens as f64),
                tokens,
                window: window.clone(),
                turns_since_rotation: turns,
                min_turns: c.min_turns,
                auto_rotate: c.auto_rotate,
            }
        };

        // `ContextWindow` has public fields: a hand-built zero window must not divide by zero
        // and read as "over the hard limit".
        if let Err(e) = validate_window(window.tokens, "context window") {
            return decision(
                false,
                Reason::NoSignal,
                format!("{}; not rotating", e.message()),
                None,
            );
        }
        let Some(usage) = usage else {
            return decision(
                false,
                Reason::NoSignal,
                "no usage reported for this turn; occupancy unknown, not rotating".to_string(),
                None,
            );
        };
        let Some(tokens) = usage.primary_context_tokens() else {
            let message = if usage.calls.is_empty() {
                "usage lists no model calls; occupancy unknown, not rotating".to_string()
            } else {
                format!(
                    "usage lists only {} subagent call(s), which never count towards the primary \
                     context; occupancy unknown, not rotating",
                    usage.calls.len()
                )
            };
            return decision(false, Reason::NoSignal, message, None);
        };
        if tokens > MAX_WINDOW {
            return decision(
                false,
                Reason::NoSignal,
                format!(
                    "reported primary context of {tokens} tokens is implausible (no model reads \
                     more than {MAX_WINDOW}); ignoring it, not rotating"
                ),
                None,
            );
        }

        let occupancy = tokens as f64 / window.tokens as f64;
        let at = format!(
            "primary context at {:.1}% of {} tokens ({tokens} tokens)",
            occupancy * 100.0,
            window.tokens
        );
        let hard = occupancy >= c.hard_threshold;
        let soft = occupancy >= c.soft_threshold;
        let pct = |x: f64| format!("{}%", (x * 1000.0).round() / 10.0);
        if (hard || (soft && c.auto_rotate)) && turns < c.min_turns {
            let which = if hard { "hard limit" } else { "soft threshold" };
            let threshold = if hard {
                c.hard_threshold
            } else {
                c.soft_threshold
            };
            return decision(
                false,
                Reason::TooSoon,
                format!(
                    "{at}; past the {} {which}, but only {turns} of the {} required turns since \
                     the last rotation",
                    pct(threshold),
                    c.min_turns
                ),
                Some(tokens),
            );
        }
        if hard {
            return decision(
                true,
                Reason::HardThreshold,
                format!("{at}; hard limit {} reached", pct(c.hard_threshold)),
                Some(tokens),
            );
        }
        if soft && c.auto_rotate {
            return decision(
                true,
                Reason::SoftThreshold,
                format!(
                    "{at}; auto-rotation threshold {} reached",
                    pct(c.soft_threshold)
                ),
                Some(tokens),
            );
        }
        if soft {
            return decision(
                false,
                Reason::AutoRotateOff,
                format!(
                    "{at}; past the {} soft threshold but auto-rotation is off (set \
                     CODEOID_AUTO_ROTATE=1); the hard limit is {}",
                    pct(c.soft_threshold),
                    pct(c.hard_threshold)
                ),
                Some(tokens),
            );
        }
        let limit = if c.auto_rotate {
            format!("the {} auto-rotation threshold", pct(c.soft_threshold))
        } else {
            format!(
                "the {} hard limit (auto-rotation off)",
                pct(c.hard_threshold)
            )
        };
        decision(
            false,
            Reason::BelowThreshold,
            format!("{at}; below {limit}"),
            Some(tokens),
        )
    }

    /// Checks whether a rotation (manual or automatic) is allowed now.
    ///
    /// # Errors
    /// [`crate::ErrorKind::RotationRefused`] when fewer than `min_turns` turns have passed since
    /// the last rotation (or the session start); the message says how many remain.
    pub fn check_guard(&self, state: &RotationState) -> Result<()> {
        let (done, needed) = (state.turns_since_rotation, self.config.min_turns);
        if done < needed {
            return Err(Error::new(
                ErrorKind::RotationRefused,
                format!(
                    "rotation refused: only {done} of the {needed} required turns since the last \
                     rotation; try again after {} more turn(s)",
                    needed - done
                ),
            ));
        }
        Ok(())
    }

    /// Rotates: increments the count, resets the turn counter and leaves the seed pending in
    /// `state` for the next message. Used for manual rotations and when a [`Decision`] says so.
    ///
    /// # Errors
    /// [`crate::ErrorKind::RotationRefused`] before the turn guard (see
    /// [`RotationPolicy::check_guard`]) or when `seed` asks for a memory seed without an anchor;
    /// `state` is unchanged then.
    pub fn rotate(&self, state: &mut RotationState, seed: SeedSource<'_>) -> Result<Rotation> {
        self.check_guard(state)?;
        let number = state.rotation_count.checked_add(1).ok_or_else(|| {
            Error::new(
                ErrorKind::RotationRefused,
                format!(
                    "rotation refused: the session already rotated {} times; fork it into a new \
                     session",
                    state.rotation_count
                ),
            )
        })?;
        let seed = match seed {
            SeedSource::Memory {
                workspace,
                session_name,
                anchor: Some(anchor),
            } => SeedBlock::memory(workspace, number, session_name, anchor),
            SeedSource::Memory { anchor: None, .. } => {
                return Err(Error::new(
                    ErrorKind::RotationRefused,
                    "rotation refused: no user prompt found before the rotation point, so the \
                     seed would have no anchor; pass the session's turns up to now (tool results \
                     and compaction summaries do not count)",
                ));
            }
            SeedSource::MemoryDisabled => SeedBlock::generic(number),
        };
        state.rotation_count = number;
        state.turns_since_rotation = 0;
        state.pending_seed = Some(seed.clone());
        Ok(Rotation { number, seed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::CallUsage;

    fn call(tokens: u64, primary: bool) -> CallUsage {
        CallUsage {
            input_tokens: 3,
            cache_read_tokens: tokens.saturating_sub(3) / 2,
            cache_creation_tokens: tokens.saturating_sub(3) - tokens.saturating_sub(3) / 2,
            primary,
            ..CallUsage::default()
        }
    }

    fn usage(calls: Vec<CallUsage>) -> Usage {
        Usage { calls }
    }

    fn policy(auto_rotate: bool) -> RotationPolicy {
        RotationPolicy::new(RotationConfig {
            auto_rotate,
            ..RotationConfig::default()
        })
        .unwrap()
    }

    fn window_200k() -> ContextWindow {
        ContextWindow::overridden(200_000).unwrap()
    }

    /// A state past the turn guard.
    fn warmed(p: &RotationPolicy) -> RotationState {
        let mut state = RotationState::default();
        for _ in 0..p.config().min_turns {
            p.observe(
                &mut state,
                Some(&usage(vec![call(10_000, true)])),
                &window_200k(),
            );
        }
        state
    }

    #[test]
    fn subagent_calls_never_count() {
        // 800k of subagent calls in one turn, 150k in the largest primary call: 75% of 200k.
        let p = policy(true);
        let mut state = warmed(&p);
        let mut calls = vec![call(150_000, true), call(40_000, true)];
        calls.extend((0..4).map(|_| call(200_000, false)));
        let d = p.observe(&mut state, Some(&usage(calls)), &window_200k());
        assert!(!d.should_rotate, "{d:?}");
        assert_eq!(d.reason, Reason::BelowThreshold);
        assert_eq!(d.tokens, Some(150_000));
        assert_eq!(d.occupancy, Some(0.75));
    }

    #[test]
    fn hard_net_fires_with_auto_rotation_off() {
        let p = policy(false);
        let mut state = warmed(&p);
        let d = p.observe(
            &mut state,
            Some(&usage(vec![call(195_000, true)])),
            &window_200k(),
        );
        assert!(d.should_rotate, "{d:?}");
        assert_eq!(d.reason, Reason::HardThreshold);
        assert!(d.message.contains("97.5%"), "{}", d.message);
    }

    #[test]
    fn soft_threshold_only_with_auto_rotation() {
        let at_92 = usage(vec![call(184_000, true)]);
        let off = policy(false);
        let mut state = warmed(&off);
        let d = off.observe(&mut state, Some(&at_92), &window_200k());
        assert_eq!((d.should_rotate, d.reason), (false, Reason::AutoRotateOff));
        assert!(d.message.contains("CODEOID_AUTO_ROTATE=1"), "{}", d.message);
        let on = policy(true);
        let mut state = warmed(&on);
        let d = on.observe(&mut state, Some(&at_92), &window_200k());
        assert_eq!((d.should_rotate, d.reason), (true, Reason::SoftThreshold));
    }

    #[test]
    fn thresholds_are_inclusive() {
        let p = policy(true);
        let mut state = warmed(&p);
        let d = p.observe(
            &mut state,
            Some(&usage(vec![call(180_000, true)])),
            &window_200k(),
        );
        assert_eq!(d.reason, Reason::SoftThreshold);
        let d = p.observe(
            &mut state,
            Some(&usage(vec![call(179_999, true)])),
            &window_200k(),
        );
        assert_eq!(d.reason, Reason::BelowThreshold);
        let d = p.observe(
            &mut state,
            Some(&usage(vec![call(194_000, true)])),
            &window_200k(),
        );
        assert_eq!(d.reason, Reason::HardThreshold);
    }

    #[test]
    fn missing_or_untrustworthy_usage_is_no_signal_and_still_counts_as_a_turn() {
        let p = policy(true);
        let mut state = warmed(&p);
        let before = state.turns_since_rotation;
        let cases = [
            None,
            Some(usage(vec![])),
            Some(usage(vec![call(900_000, false)])),
            Some(usage(vec![CallUsage {
                input_tokens: u64::MAX,
                cache_read_tokens: u64::MAX,
                ..CallUsage::default()
            }])),
        ];
        for (i, u) in cases.iter().enumerate() {
            let d = p.observe(&mut state, u.as_ref(), &window_200k());
            assert_eq!(
                (d.should_rotate, d.reason),
                (false, Reason::NoSignal),
                "{d:?}"
            );
            assert_eq!(d.occupancy, None);
            assert_eq!(state.turns_since_rotation, before + i as u32 + 1);
        }
    }

    #[test]
    fn a_hand_built_invalid_window_never_rotates() {
        let p = policy(true);
        let mut state = warmed(&p);
        for tokens in [0, 10, MAX_WINDOW + 1] {
            let window = ContextWindow {
                tokens,
                source: crate::rotate::WindowSource::Override,
            };
            let d = p.observe(&mut state, Some(&usage(vec![call(195_000, true)])), &window);
            assert_eq!(
                (d.should_rotate, d.reason),
                (false, Reason::NoSignal),
                "{d:?}"
            );
            assert!(d.message.contains(&tokens.to_string()), "{}", d.message);
            assert_eq!(d.occupancy, None);
        }
    }

    #[test]
    fn unknown_model_window_is_explained() {
        let p = policy(true);
        let window = p.window(Some("mystery-llm"), None).unwrap();
        let mut state = RotationState::default();
        let d = p.observe(&mut state, Some(&usage(vec![call(1_000, true)])), &window);
        assert!(d.message.contains("mystery-llm"), "{}", d.message);
        assert!(d.window.is_assumed());
        let o = p.window(Some("mystery-llm"), Some(50_000)).unwrap();
        assert_eq!(o.tokens, 50_000);
    }

    #[test]
    fn guard_blocks_rotation_and_names_the_remaining_turns() {
        let p = policy(false);
        let mut state = RotationState::default();
        let full = usage(vec![call(199_000, true)]);
        for turn in 1..=4 {
            let d = p.observe(&mut state, Some(&full), &window_200k());
            assert_eq!(
                (d.should_rotate, d.reason),
                (false, Reason::TooSoon),
                "turn {turn}"
            );
            assert_eq!(d.turns_since_rotation, turn);
        }
        let err = p
            .rotate(&mut state, SeedSource::MemoryDisabled)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RotationRefused);
        assert!(err.message().contains("4 of the 5"), "{}", err.message());
        assert_eq!(
            state.rotation_count, 0,
            "a refused rotation changes nothing"
        );
        let d = p.observe(&mut state, Some(&full), &window_200k());
        assert_eq!((d.should_rotate, d.reason), (true, Reason::HardThreshold));
    }

    #[test]
    fn rotation_without_an_anchor_is_refused_and_changes_nothing() {
        let p = policy(false);
        let mut state = warmed(&p);
        let snapshot = state.clone();
        let err = p
            .rotate(
                &mut state,
                SeedSource::Memory {
                    workspace: "ws",
                    session_name: "s",
                    anchor: None,
                },
            )
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RotationRefused);
        assert!(
            err.message().contains("no user prompt"),
            "{}",
            err.message()
        );
        assert_eq!(state, snapshot);
    }

    #[test]
    fn the_seed_is_taken_exactly_once() {
        let p = policy(false);
        let mut state = warmed(&p);
        let anchor = Anchor::from_text("keep going").unwrap();
        let rotation = p
            .rotate(
                &mut state,
                SeedSource::Memory {
                    workspace: "ws",
                    session_name: "s",
                    anchor: Some(&anchor),
                },
            )
            .unwrap();
        assert_eq!(rotation.number, 1);
        assert_eq!(state.turns_since_rotation, 0);
        assert_eq!(state.take_pending_seed(), Some(rotation.seed));
        assert_eq!(state.take_pending_seed(), None);
    }

    #[test]
    fn decisions_serialize_with_snake_case_reasons() {
        let p = policy(false);
        let mut state = RotationState::default();
        let d = p.observe(&mut state, None, &window_200k());
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["reason"], "no_signal");
        assert_eq!(json["should_rotate"], false);
        assert_eq!(json["window"]["source"]["kind"], "override");
        let back: Decision = serde_json::from_value(json).unwrap();
        assert_eq!(back, d);
        assert_eq!(Reason::TooSoon.name(), "too_soon");
    }
}
