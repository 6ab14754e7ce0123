//! When the index block is rebuilt, so the system prompt stays byte-stable for prompt caching.
//!
//! [`IndexScheduler`] keeps the last built text and rebuilds it only when one of the rules of
//! DESIGN §4 says so: after `rebuild_after_episodes` (5) new episodes, or after
//! `rebuild_after_secs` (60) with at least one new episode, and never sooner than
//! `min_interval_secs` (15) after the previous build. The first call always builds. Between
//! rebuilds [`IndexScheduler::refresh`] returns the very same bytes, whatever the clock says.
//!
//! Time comes from a [`Clock`], so tests drive it with a [`ManualClock`]. With the index disabled
//! (`CODEOID_WORKSPACE_INDEX=0`) the scheduler returns an empty string and never calls its
//! builder. A clock that jumps backwards restarts the interval from the new time instead of
//! freezing the index until the old time comes round again.
//!
//! The scheduler does not read the store: its caller passes the current episode count and a
//! builder closure (typically reading an `IndexInput` and calling `build_index`).

use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::config::IndexConfig;
use crate::error::Result;

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to, for tests and replays.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: DateTime<Utc>) -> ManualClock {
        ManualClock {
            now: Mutex::new(start),
        }
    }

    /// Moves the clock to `time` (backwards too).
    pub fn set(&self, time: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = time;
    }

    /// Moves the clock forward by `seconds` (backwards when negative).
    pub fn advance(&self, seconds: i64) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now += Duration::seconds(seconds);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> DateTime<Utc> {
        (**self).now()
    }
}

/// Why a rebuild is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RebuildReason {
    /// Nothing was built yet.
    First,
    /// [`IndexScheduler::invalidate`] was called.
    Invalidated,
    /// Enough new episodes arrived.
    NewEpisodes,
    /// Enough time passed with at least one new episode.
    Interval,
}

#[derive(Debug, Clone)]
struct Built {
    at: DateTime<Utc>,
    episodes: u64,
    text: String,
}

/// Keeps the index text of one session and rebuilds it by the rules in the module documentation.
#[derive(Debug)]
pub struct IndexScheduler<C: Clock = SystemClock> {
    config: IndexConfig,
    clock: C,
    built: Option<Built>,
    invalidated: bool,
}

impl<C: Clock> IndexScheduler<C> {
    /// A scheduler with `config`, reading time from `clock`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] when `config` fails [`IndexConfig::validate`].
    pub fn new(config: IndexConfig, clock: C) -> Result<IndexScheduler<C>> {
        config.validate()?;
        Ok(IndexScheduler {
            config,
            clock,
            built: None,
            invalidated: false,
        })
    }

    /// Why a rebuild is due now for a workspace holding `episode_count` episodes, or `None`.
    /// Always `None` when the index is disabled.
    pub fn due(&self, episode_count: u64) -> Option<RebuildReason> {
        if !self.config.enabled {
            return None;
        }
        let Some(built) = &self.built else {
            return Some(RebuildReason::First);
        };
        let elapsed = (self.clock.now() - built.at).num_seconds().max(0);
        let elapsed = u64::try_from(elapsed).unwrap_or(0);
        if elapsed < self.config.min_interval_secs {
            return None;
        }
        let new = episode_count.abs_diff(built.episodes);
        if self.invalidated {
            Some(RebuildReason::Invalidated)
        } else if new >= self.config.rebuild_after_episodes {
            Some(RebuildReason::NewEpisodes)
        } else if new >= 1 && elapsed >= self.config.rebuild_after_secs {
            Some(RebuildReason::Interval)
        } else {
            None
        }
    }

    /// The index text for a workspace now holding `episode_count` episodes: the last built text,
    /// or a new one from `build` (given the clock's `now`) when a rebuild is due.
    ///
    /// # Errors
    /// Whatever `build` returns; the previous text and schedule are kept then, so the next call
    /// tries again.
    pub fn refresh<F>(&mut self, episode_count: u64, build: F) -> Result<&str>
    where
        F: FnOnce(DateTime<Utc>) -> Result<String>,
    {
        if !self.config.enabled {
            self.built = None;
            return Ok("");
        }
        let now = self.clock.now();
        if let Some(built) = &mut self.built {
            if now < built.at {
                built.at = now; // The clock went backwards: restart the interval from here.
            }
        }
        if self.due(episode_count).is_some() {
            let text = build(now)?;
            self.built = Some(Built {
                at: now,
                episodes: episode_count,
                text,
            });
            self.invalidated = false;
        }
        Ok(self.text())
    }

    /// The last built text (empty before the first build or when disabled).
    pub fn text(&self) -> &str {
        self.built.as_ref().map_or("", |b| b.text.as_str())
    }

    /// When the text was last built.
    pub fn last_built(&self) -> Option<DateTime<Utc>> {
        self.built.as_ref().map(|b| b.at)
    }

    /// Asks for a rebuild at the next [`IndexScheduler::refresh`] (still no sooner than the
    /// minimum interval), for changes the episode count does not show (a session renamed, a
    /// different calling session).
    pub fn invalidate(&mut self) {
        self.invalidated = true;
    }

    /// The configuration in force.
    pub fn config(&self) -> &IndexConfig {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn start() -> DateTime<Utc> {
        DateTime::UNIX_EPOCH + Duration::days(20_000)
    }

    /// A scheduler over a shared manual clock, and a builder that stamps each build.
    fn scheduler(config: IndexConfig) -> (IndexScheduler<Arc<ManualClock>>, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::new(start()));
        (IndexScheduler::new(config, clock.clone()).unwrap(), clock)
    }

    fn refresh(
        s: &mut IndexScheduler<Arc<ManualClock>>,
        episodes: u64,
        builds: &Cell<u32>,
    ) -> String {
        s.refresh(episodes, |now| {
            builds.set(builds.get() + 1);
            Ok(format!("built #{} at {now} with {episodes}", builds.get()))
        })
        .unwrap()
        .to_string()
    }

    #[test]
    fn rebuilds_follow_the_three_rules() {
        let (mut s, clock) = scheduler(IndexConfig::default());
        let builds = Cell::new(0);
        let first = refresh(&mut s, 10, &builds);
        assert_eq!(builds.get(), 1, "the first call builds");

        // Four new episodes within a minute: not enough.
        clock.advance(20);
        assert_eq!(refresh(&mut s, 14, &builds), first);
        // The fifth arrives: rebuild (20 s > 15 s minimum).
        assert_eq!(s.due(15), Some(RebuildReason::NewEpisodes));
        let second = refresh(&mut s, 15, &builds);
        assert_ne!(second, first);

        // Ten more episodes at once, but only 5 s later: the minimum interval holds.
        clock.advance(5);
        assert_eq!(refresh(&mut s, 25, &builds), second);
        clock.advance(10);
        assert_eq!(s.due(25), Some(RebuildReason::NewEpisodes));
        let third = refresh(&mut s, 25, &builds);
        assert_eq!(builds.get(), 3);

        // One new episode: nothing until 60 s have passed.
        clock.advance(59);
        assert_eq!(refresh(&mut s, 26, &builds), third);
        clock.advance(1);
        assert_eq!(s.due(26), Some(RebuildReason::Interval));
        refresh(&mut s, 26, &builds);
        assert_eq!(builds.get(), 4);

        // No new episode: never, however long.
        clock.advance(86_400);
        assert_eq!(s.due(26), None);
    }

    #[test]
    fn between_rebuilds_the_text_is_byte_identical() {
        let (mut s, clock) = scheduler(IndexConfig::default());
        let builds = Cell::new(0);
        let first = refresh(&mut s, 100, &builds);
        for step in 0..50 {
            clock.advance(1);
            let episodes = 100 + step / 20; // at most 2 new episodes
            if step < 59 {
                assert_eq!(refresh(&mut s, episodes, &builds), first, "step {step}");
            }
        }
        assert_eq!(builds.get(), 1);
    }

    #[test]
    fn disabled_never_builds() {
        let config = IndexConfig {
            enabled: false,
            ..IndexConfig::default()
        };
        let (mut s, clock) = scheduler(config);
        for _ in 0..10 {
            let text = s
                .refresh(1_000, |_| panic!("the builder must not run"))
                .unwrap();
            assert_eq!(text, "");
            clock.advance(3_600);
        }
        assert_eq!(s.due(5_000), None);
    }

    #[test]
    fn a_failed_build_keeps_the_old_text_and_retries() {
        let (mut s, clock) = scheduler(IndexConfig::default());
        let builds = Cell::new(0);
        let first = refresh(&mut s, 1, &builds);
        clock.advance(30);
        let err = s
            .refresh(10, |_| Err(crate::Error::internal("store busy")))
            .unwrap_err();
        assert_eq!(err.message(), "store busy");
        assert_eq!(s.text(), first);
        assert_eq!(s.due(10), Some(RebuildReason::NewEpisodes));
    }

    #[test]
    fn invalidate_forces_a_rebuild_after_the_minimum_interval() {
        let (mut s, clock) = scheduler(IndexConfig::default());
        let builds = Cell::new(0);
        refresh(&mut s, 1, &builds);
        s.invalidate();
        clock.advance(10);
        assert_eq!(s.due(1), None);
        clock.advance(5);
        assert_eq!(s.due(1), Some(RebuildReason::Invalidated));
        refresh(&mut s, 1, &builds);
        assert_eq!(s.due(1), None);
    }

    #[test]
    fn a_clock_jumping_back_restarts_the_interval() {
        let (mut s, clock) = scheduler(IndexConfig::default());
        let builds = Cell::new(0);
        refresh(&mut s, 1, &builds);
        clock.advance(-7_200);
        refresh(&mut s, 2, &builds);
        assert_eq!(s.last_built(), Some(start() - Duration::hours(2)));
        clock.advance(60);
        refresh(&mut s, 2, &builds);
        assert_eq!(
            builds.get(),
            2,
            "one new episode and 60 s since the restart"
        );
    }
}
