//! The workspace index block for a system prompt (DESIGN §4).

use pyo3::prelude::*;

use crate::boundary::detached;
use crate::memory::PyMemory;

#[pymethods]
impl PyMemory {
    /// The workspace index block for a system prompt, as seen from session `session_id` (listed
    /// as `current`): topic clusters, hot files, recent sessions and the memory tool lines, within
    /// 1,800 characters. Byte-identical between scheduled rebuilds so prompt caching holds; empty
    /// for an empty workspace or with memory or the index switched off.
    #[pyo3(signature = (session_id = None))]
    fn workspace_index(&self, py: Python<'_>, session_id: Option<String>) -> PyResult<String> {
        let memory = self.get(py)?;
        detached(py, move || memory.workspace_index(session_id.as_deref()))
    }
}
