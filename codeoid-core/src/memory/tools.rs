//! The four memory tools over this workspace: declarations for a harness to mount and the
//! dispatcher that answers a model's call. `Memory` is the tools' [`ToolBackend`].

use super::Memory;
use crate::error::Result;
use crate::retrieve::{Hit, RecallQuery};
use crate::store::TimelineQuery;
use crate::tools::{self, FileRecall, ToolBackend, ToolOutput};
use crate::translate::ToolSpec;

impl Memory {
    /// Answers a model's call of memory tool `name` (`recall`, `recall_file`, `timeline`,
    /// `get_episode`, bare or prefixed as in `codeoid_memory__recall`) made in session
    /// `current_session`, with `arguments` as the model sent them (JSON). Never fails: bad
    /// arguments, unknown names and missing episodes are error results ([`ToolOutput::is_error`])
    /// whose text tells the model what to do.
    pub fn call_tool(
        &self,
        current_session: Option<&str>,
        name: &str,
        arguments: &str,
    ) -> ToolOutput {
        tools::call_tool(self, current_session, name, arguments)
    }

    /// The four tools' declarations (name, description, JSON Schema), named `{prefix}__{name}`
    /// when `prefix` is given. Declare them on any backend with [`crate::translate`].
    ///
    /// # Errors
    /// [`crate::ErrorKind::InvalidInput`] for a prefix that is empty, too long or not made of
    /// ASCII letters, digits, `_` and `-`.
    pub fn tool_schemas(&self, prefix: Option<&str>) -> Result<Vec<ToolSpec>> {
        tools::tool_specs(prefix)
    }
}

impl ToolBackend for Memory {
    fn recall(&self, current_session: Option<&str>, query: &RecallQuery) -> Result<Vec<Hit>> {
        Memory::recall(self, current_session, query)
    }

    fn recall_file(&self, path: &str) -> Result<Option<FileRecall>> {
        Memory::recall_file(self, path)
    }

    fn relativize(&self, path: &str) -> String {
        self.workspace.relativize(path)
    }

    fn timeline_text(
        &self,
        current_session: Option<&str>,
        query: &TimelineQuery,
    ) -> Result<String> {
        Memory::timeline_text(self, current_session, query)
    }

    fn episode_page(
        &self,
        current_session: Option<&str>,
        id: &str,
        offset: u64,
        max_chars: usize,
    ) -> Result<String> {
        Memory::episode_page(self, current_session, id, offset, max_chars)
    }

    fn session_label(&self, current_session: Option<&str>, session_id: &str) -> Result<String> {
        if current_session == Some(session_id) {
            return Ok("current session".to_owned());
        }
        Ok(format!(
            "prior session #{}",
            self.store.session_ordinal(session_id)?
        ))
    }

    fn memory_enabled(&self) -> bool {
        self.config.memory_enabled
    }
}
