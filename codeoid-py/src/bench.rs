//! Timing the core from inside the extension, so a benchmark can subtract the Rust API's own
//! cost from a Python call's and report the bindings' per-call overhead (`benches/`).

use std::time::Instant;

use pyo3::prelude::*;

use crate::boundary::detached;
use crate::convert::Count;
use crate::memory::PyMemory;

/// Calls the core's `Memory::episode(episode_id)` `iterations` times with the GIL released and
/// returns the mean seconds per call: the Rust API's cost without any binding on top.
#[pyfunction]
pub(crate) fn _bench_episode(
    py: Python<'_>,
    memory: PyRef<'_, PyMemory>,
    episode_id: String,
    iterations: Count,
) -> PyResult<f64> {
    let memory = memory.get(py)?;
    let n = iterations.0.max(1);
    detached(py, move || {
        let start = Instant::now();
        for _ in 0..n {
            std::hint::black_box(memory.episode(std::hint::black_box(&episode_id))?);
        }
        Ok(start.elapsed().as_secs_f64() / n as f64)
    })
}
