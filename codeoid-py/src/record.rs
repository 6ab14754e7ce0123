//! Recording turns: one at a time (evaluating rotation) or in bulk (for replays), as canonical
//! turn dicts or as provider messages through the translators, and reading a session's canonical
//! turns back. Result classes: `Recorded`, `TurnOutcome`.

use codeoid_core::canonical::Turn;
use codeoid_core::memory::TurnOutcome as CoreOutcome;
use codeoid_core::store::Recorded as CoreRecorded;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::boundary::detached;
use crate::convert::{self, Count};
use crate::memory::PyMemory;
use crate::repr;
use crate::rotation::{Rotation, RotationDecision};
use crate::translate::{backend, turns_to_py};

/// A stored turn and the episodes it completed.
#[pyclass(frozen, get_all, eq, module = "codeoid")]
#[derive(Clone, PartialEq)]
pub struct Recorded {
    /// The turn's id (given, or assigned by the store).
    pub turn_id: String,
    /// Its sequence number in the session (0 for the first).
    pub seq: u64,
    /// `True` when the session already had a turn with this id (nothing was written).
    pub duplicate: bool,
    /// Ids of the episodes this turn completed.
    pub episode_ids: Vec<String>,
}

impl From<CoreRecorded> for Recorded {
    fn from(r: CoreRecorded) -> Recorded {
        Recorded {
            turn_id: r.turn_id,
            seq: r.seq,
            duplicate: r.duplicate,
            episode_ids: r.episode_ids,
        }
    }
}

#[pymethods]
impl Recorded {
    fn __repr__(&self) -> String {
        repr::fields(
            "Recorded",
            &[
                ("turn_id", &self.turn_id),
                ("seq", &self.seq),
                ("episode_ids", &self.episode_ids),
            ],
        )
    }
}

/// What `record_turn` did: the stored turn, the rotation policy's verdict on it (assistant turns)
/// and the rotation it triggered, if any.
#[pyclass(frozen, get_all, module = "codeoid")]
pub struct TurnOutcome {
    /// The turn's id (given, or assigned by the store).
    pub turn_id: String,
    /// Its sequence number in the session.
    pub seq: u64,
    /// `True` when the session already had a turn with this id (nothing was written).
    pub duplicate: bool,
    /// Ids of the episodes this turn completed.
    pub episode_ids: Vec<String>,
    /// The policy's verdict (assistant turns only).
    pub decision: Option<RotationDecision>,
    /// The rotation the policy triggered: replace the backing context and start the next message
    /// with `rotation.seed.text` (or `take_seed`).
    pub rotation: Option<Rotation>,
    /// Why a rotation the thresholds asked for could not happen.
    pub rotation_refused: Option<String>,
}

impl From<CoreOutcome> for TurnOutcome {
    fn from(o: CoreOutcome) -> TurnOutcome {
        TurnOutcome {
            turn_id: o.recorded.turn_id,
            seq: o.recorded.seq,
            duplicate: o.recorded.duplicate,
            episode_ids: o.recorded.episode_ids,
            decision: o.decision.map(RotationDecision::from),
            rotation: o.rotation.map(Rotation::from),
            rotation_refused: o.rotation_refused,
        }
    }
}

#[pymethods]
impl TurnOutcome {
    fn __repr__(&self) -> String {
        repr::fields(
            "TurnOutcome",
            &[
                ("turn_id", &self.turn_id),
                ("seq", &self.seq),
                ("episode_ids", &self.episode_ids),
                ("rotated", &self.rotation.is_some()),
            ],
        )
    }
}

#[pymethods]
impl PyMemory {
    /// Records one turn of session `session_id` and, for an assistant turn, asks the rotation
    /// policy about it; when the policy says so the session is rotated at once
    /// (`TurnOutcome.rotation`).
    ///
    /// `turn` is a canonical turn dict (`{"role": "user", "parts": [{"type": "text", "text":
    /// "..."}]}`), or, with `format` (`"anthropic"`, `"openai_chat"`, `"openai_responses"`,
    /// `"gemini"`), one provider message as the provider's API takes it. `provider` and `model`
    /// name who answered (stamped on assistant turns). `usage` (the call's token counts, such as
    /// `{"input_tokens": 1200, "output_tokens": 80, "cache_read_tokens": 0}`, with
    /// `input_tokens` the uncached input; with `format`, the provider's own usage object as its
    /// response carries it) is what rotation measures occupancy from. An Anthropic response
    /// passed whole brings its own usage. Recording a turn id the session already has is a no-op.
    #[pyo3(signature = (session_id, turn, *, format = None, provider = None, model = None, usage = None))]
    #[allow(clippy::too_many_arguments)]
    fn record_turn(
        &self,
        py: Python<'_>,
        session_id: String,
        turn: Bound<'_, PyAny>,
        format: Option<String>,
        provider: Option<String>,
        model: Option<String>,
        usage: Option<Bound<'_, PyAny>>,
    ) -> PyResult<TurnOutcome> {
        let memory = self.get(py)?;
        let usage = usage
            .filter(|u| !u.is_none())
            .map(|u| convert::usage(&u, format.as_deref()))
            .transpose()?;
        let outcome = match format {
            None => {
                let mut turn = convert::turn(&turn, "turn")?;
                apply(&mut turn, provider, model, usage);
                detached(py, move || memory.record_turn(&session_id, &turn))?
            }
            Some(format) => {
                if !turn.is_instance_of::<pyo3::types::PyDict>() {
                    return Err(PyTypeError::new_err(format!(
                        "turn is {}; with format={format:?} pass one provider message as a dict",
                        convert::type_name(&turn)
                    )));
                }
                let message = convert::to_json(&turn, "turn")?;
                detached(py, move || {
                    let backend = backend(&format, provider, model)?;
                    memory.record_message(&session_id, message, &backend, usage)
                })?
            }
        };
        Ok(TurnOutcome::from(outcome))
    }

    /// Records several turns of session `session_id` in one transaction, without evaluating
    /// rotation (replaying history must not rotate); nothing is written when any is invalid.
    ///
    /// `turns` is a list of canonical turn dicts, or, with `format`, the provider's message
    /// list (translated as a whole, so tool results pair with their calls).
    #[pyo3(signature = (session_id, turns, *, format = None, provider = None, model = None))]
    fn record_turns(
        &self,
        py: Python<'_>,
        session_id: String,
        turns: Bound<'_, PyAny>,
        format: Option<String>,
        provider: Option<String>,
        model: Option<String>,
    ) -> PyResult<Vec<Recorded>> {
        let memory = self.get(py)?;
        if turns.is_instance_of::<pyo3::types::PyDict>()
            || turns.is_instance_of::<pyo3::types::PyString>()
        {
            return Err(PyTypeError::new_err(format!(
                "turns is {}; expected a list of turns (use record_turn for one)",
                convert::type_name(&turns)
            )));
        }
        let recorded = match format {
            None => {
                let list: Vec<Bound<'_, PyAny>> = turns.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "turns is {}; expected a list of canonical turn dicts",
                        convert::type_name(&turns)
                    ))
                })?;
                let mut parsed = Vec::with_capacity(list.len());
                for (i, item) in list.iter().enumerate() {
                    let mut turn = convert::turn(item, &format!("turns[{i}]"))?;
                    apply(&mut turn, provider.clone(), model.clone(), None);
                    parsed.push(turn);
                }
                detached(py, move || memory.record_turns(&session_id, &parsed))?
            }
            Some(format) => {
                let messages = convert::to_json(&turns, "turns")?;
                detached(py, move || {
                    let backend = backend(&format, provider, model)?;
                    memory.record_messages(&session_id, &messages, &backend)
                })?
            }
        };
        Ok(recorded.into_iter().map(Recorded::from).collect())
    }

    /// The canonical turns of session `session_id` with sequence numbers in `start..end`
    /// (`end=None`: to the last), as dicts, ready for `to_messages` or a replay.
    #[pyo3(signature = (session_id, start = Count(0), end = None))]
    fn turns<'py>(
        &self,
        py: Python<'py>,
        session_id: String,
        start: Count,
        end: Option<Count>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let memory = self.get(py)?;
        let turns = detached(py, move || {
            let stored = match end {
                Some(end) => memory.turns(&session_id, start.0..end.0)?,
                None => memory.turns(&session_id, start.0..)?,
            };
            Ok(stored.into_iter().map(|t| t.turn).collect::<Vec<Turn>>())
        })?;
        turns_to_py(py, &turns)
    }
}

/// Fills in what the caller passed beside the turn: provider and model on an assistant turn
/// that does not name them, and usage (which replaces any in the turn).
fn apply(
    turn: &mut Turn,
    provider: Option<String>,
    model: Option<String>,
    usage: Option<codeoid_core::canonical::Usage>,
) {
    if turn.role == codeoid_core::canonical::Role::Assistant {
        if turn.provider.is_none() {
            turn.provider = provider;
        }
        if turn.model.is_none() {
            turn.model = model;
        }
    }
    if usage.is_some() {
        turn.usage = usage;
    }
}
