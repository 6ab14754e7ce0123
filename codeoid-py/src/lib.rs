//! Python bindings of codeoid: the private native module `codeoid._codeoid` inside the typed
//! `codeoid` package (`python/codeoid`), which re-exports everything public.
//!
//! One file per area, each adding its own `#[pymethods]` block to `Memory`:
//! - `memory`: the `Memory` class, opening, `close()`, the context manager, properties;
//! - `sessions`, `record`, `reads`, `recall`, `tools`, `rotation`, `index`, `compress`, `lineage`:
//!   the methods and their frozen result classes;
//! - `translate`: provider messages ⇄ canonical turns;
//! - `errors`: core error kinds → the `codeoid.CodeoidError` hierarchy;
//! - `convert`: Python values ⇄ JSON, with errors that name the offending place;
//! - `boundary`: the GIL release and panic boundary every core call goes through;
//! - `bench`: the core's own timing, for the overhead benchmark.
//!
//! The core does the work; nothing here decides behaviour beyond argument conversion.

mod bench;
mod boundary;
mod compress;
mod convert;
mod errors;
mod index;
mod lineage;
mod memory;
mod reads;
mod recall;
mod record;
mod repr;
mod rotation;
mod sessions;
mod tools;
mod translate;

use pyo3::prelude::*;

/// The store file `Memory()` opens when no path is given: `$CODEOID_DB`, else `codeoid.db` in
/// the platform data directory (as the `codeoid` CLI).
#[pyfunction]
fn default_store_path(py: Python<'_>) -> PyResult<String> {
    boundary::attached(py, codeoid_core::store::default_path)
        .map(|p| p.to_string_lossy().into_owned())
}

#[pymodule]
fn _codeoid(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<memory::PyMemory>()?;
    m.add_class::<sessions::Session>()?;
    m.add_class::<sessions::Lineage>()?;
    m.add_class::<record::Recorded>()?;
    m.add_class::<record::TurnOutcome>()?;
    m.add_class::<reads::Episode>()?;
    m.add_class::<reads::EpisodeHeader>()?;
    m.add_class::<reads::EpisodePath>()?;
    m.add_class::<reads::BlobRef>()?;
    m.add_class::<reads::TimelinePage>()?;
    m.add_class::<recall::Hit>()?;
    m.add_class::<recall::Components>()?;
    m.add_class::<recall::Relevance>()?;
    m.add_class::<recall::PassedOver>()?;
    m.add_class::<recall::FileRecall>()?;
    m.add_class::<recall::EmbeddingStatus>()?;
    m.add_class::<tools::ToolResult>()?;
    m.add_class::<rotation::RotationDecision>()?;
    m.add_class::<rotation::Rotation>()?;
    m.add_class::<rotation::Seed>()?;
    m.add_class::<compress::Compressed>()?;
    m.add_class::<compress::RunOutput>()?;
    m.add_class::<lineage::ImportSummary>()?;
    m.add_class::<lineage::Forked>()?;
    m.add_class::<lineage::Handoff>()?;
    m.add_function(wrap_pyfunction!(default_store_path, m)?)?;
    m.add_function(wrap_pyfunction!(errors::error_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_raise_error, m)?)?;
    m.add_function(wrap_pyfunction!(boundary::_panic, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_bench_episode, m)?)?;
    m.add_function(wrap_pyfunction!(translate::to_messages, m)?)?;
    m.add_function(wrap_pyfunction!(translate::from_messages, m)?)?;
    m.add_function(wrap_pyfunction!(translate::declare_tools, m)?)?;
    Ok(())
}
