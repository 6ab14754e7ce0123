//! Rotation: the policy's decision, a manual rotation, the seed the next message starts with,
//! and a session's context window. Result classes: `RotationDecision`, `Rotation`, `Seed`.
//!
//! A harness that records assistant turns with usage gets rotations from `record_turn` itself
//! (`TurnOutcome.rotation`); these methods are for asking, forcing and collecting the seed.

use chrono::{DateTime, Utc};
use codeoid_core::memory::RotationOutcome;
use codeoid_core::rotate::{Decision, SeedBlock, SeedKind, WindowSource};
use pyo3::prelude::*;

use crate::boundary::detached;
use crate::convert::Count;
use crate::memory::PyMemory;
use crate::repr;

/// The rotation policy's verdict on a session's latest assistant turn.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct RotationDecision {
    /// `True` when the harness should rotate now.
    pub should_rotate: bool,
    /// Why: `"no_signal"`, `"below_threshold"`, `"auto_rotate_off"`, `"too_soon"`,
    /// `"soft_threshold"` or `"hard_threshold"`.
    pub reason: &'static str,
    /// Why, as a sentence for a person.
    pub message: String,
    /// Primary context tokens over the window, when known (may exceed 1.0).
    pub occupancy: Option<f64>,
    /// Primary context tokens of the turn, when known.
    pub tokens: Option<u64>,
    /// The context window in tokens.
    pub window: u64,
    /// Where the window size came from: `"override"`, `"table"`, `"one_million_suffix"` or
    /// `"default"`.
    pub window_source: &'static str,
    /// Turns since the last rotation, including this one.
    pub turns_since_rotation: u32,
    /// Turns required between rotations.
    pub min_turns: u32,
    /// Whether auto-rotation (the soft threshold) was on.
    pub auto_rotate: bool,
}

impl From<Decision> for RotationDecision {
    fn from(d: Decision) -> RotationDecision {
        RotationDecision {
            should_rotate: d.should_rotate,
            reason: d.reason.name(),
            message: d.message,
            occupancy: d.occupancy,
            tokens: d.tokens,
            window: d.window.tokens,
            window_source: match d.window.source {
                WindowSource::Override => "override",
                WindowSource::Table { .. } => "table",
                WindowSource::OneMillionSuffix => "one_million_suffix",
                WindowSource::Default { .. } => "default",
            },
            turns_since_rotation: d.turns_since_rotation,
            min_turns: d.min_turns,
            auto_rotate: d.auto_rotate,
        }
    }
}

#[pymethods]
impl RotationDecision {
    fn __repr__(&self) -> String {
        repr::fields(
            "RotationDecision",
            &[
                ("should_rotate", &self.should_rotate),
                ("reason", &self.reason),
                ("occupancy", &self.occupancy),
            ],
        )
    }
}

/// The text the first message after a rotation starts with.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Seed {
    /// The rotation it follows (1 for the first rotation of a session).
    pub rotation: u32,
    /// `"memory"` (the full seed) or `"generic"` (memory disabled).
    pub kind: &'static str,
    /// The exact text to prepend to the next user message.
    pub text: String,
}

impl From<SeedBlock> for Seed {
    fn from(s: SeedBlock) -> Seed {
        Seed {
            rotation: s.rotation,
            kind: match s.kind {
                SeedKind::Memory => "memory",
                SeedKind::Generic => "generic",
            },
            text: s.text,
        }
    }
}

#[pymethods]
impl Seed {
    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        repr::fields(
            "Seed",
            &[("rotation", &self.rotation), ("kind", &self.kind)],
        )
    }
}

/// A rotation that happened: the session keeps its id and memory; its backing context is new.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Rotation {
    /// The session's rotation count after it (1 for the first).
    pub count: u64,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// The `rotation` event in the timeline.
    pub episode_id: String,
    /// The new backing context id.
    pub backing_context_id: String,
    /// The seed the next message starts with (also pending for `take_seed`).
    pub seed: Seed,
}

impl From<RotationOutcome> for Rotation {
    fn from(r: RotationOutcome) -> Rotation {
        Rotation {
            count: r.count,
            at: r.at,
            episode_id: r.episode_id,
            backing_context_id: r.backing_context_id,
            seed: Seed::from(r.seed),
        }
    }
}

#[pymethods]
impl Rotation {
    fn __repr__(&self) -> String {
        repr::fields(
            "Rotation",
            &[
                ("count", &self.count),
                ("backing_context_id", &self.backing_context_id),
            ],
        )
    }
}

#[pymethods]
impl PyMemory {
    /// The policy's verdict on session `session_id`'s latest assistant turn, changing nothing.
    /// A session with no assistant turn yet gets reason `"no_signal"`.
    fn rotation_decision(&self, py: Python<'_>, session_id: String) -> PyResult<RotationDecision> {
        let memory = self.get(py)?;
        detached(py, move || memory.rotation_decision(&session_id)).map(RotationDecision::from)
    }

    /// Rotates session `session_id` now: same id, turns and memory; a new backing context
    /// (`backing_context_id`, or a fresh one); the seed pending for the next message.
    ///
    /// Raises `RotationRefusedError` before the turn guard allows it (the message says how many
    /// turns remain) or when the session has no user prompt to anchor the seed on.
    #[pyo3(signature = (session_id, *, backing_context_id = None))]
    fn rotate(
        &self,
        py: Python<'_>,
        session_id: String,
        backing_context_id: Option<String>,
    ) -> PyResult<Rotation> {
        let memory = self.get(py)?;
        detached(py, move || {
            memory.rotate(&session_id, backing_context_id.as_deref())
        })
        .map(Rotation::from)
    }

    /// The seed the next message of session `session_id` must start with: a `Seed` exactly
    /// once after each rotation, `None` otherwise.
    fn take_seed(&self, py: Python<'_>, session_id: String) -> PyResult<Option<Seed>> {
        let memory = self.get(py)?;
        let seed = detached(py, move || memory.take_seed(&session_id))?;
        Ok(seed.map(Seed::from))
    }

    /// Sets (or, with `None`, clears) session `session_id`'s context window in tokens,
    /// overriding the model table; for a model run in a smaller window than it offers.
    fn set_context_window(
        &self,
        py: Python<'_>,
        session_id: String,
        tokens: Option<Count>,
    ) -> PyResult<()> {
        let memory = self.get(py)?;
        let tokens = tokens.map(|t| t.0);
        detached(py, move || memory.set_context_window(&session_id, tokens))
    }
}
