//! The four memory tools a model calls (DESIGN §3): `recall`, `recall_file`, `timeline`,
//! `get_episode`.
//!
//! - `schema` ([`ToolName`], [`tool_specs`]): names, descriptions, JSON Schemas, prefixes.
//! - `args`: checking a model's arguments against those schemas.
//! - `format`: the recall and recall_file text (timeline and get_episode text come from the
//!   store's renderers).
//! - `file` ([`FileRecall`], [`DiskState`]): the latest read of a file and whether it changed.
//!
//! [`call_tool`] is the dispatcher any harness can mount: a name (bare or prefixed), the
//! arguments as the model sent them, and a [`ToolBackend`] (`Memory` is one). It always returns
//! a [`ToolOutput`]: bad arguments, unknown tools, missing episodes and even internal failures
//! come back as an error result whose text tells the model what to do, never as a panic or an
//! `Err` that would end a harness's loop.

mod args;
mod file;
mod format;
mod schema;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

pub use file::{DiskState, FileRecall, PassedOver, ReadPart, disk_state, read_part};
pub use format::{MAX_CONTENT_CHARS, RECALL_BUDGET_CHARS};
pub use schema::{
    EPISODE_PAGE_CHARS, PREFIX_SEPARATOR, RECALL_DEFAULT_LIMIT, RECALL_MAX_LIMIT,
    TIMELINE_DEFAULT_LIMIT, TIMELINE_MAX_LIMIT, ToolName, tool_specs,
};

use crate::error::{ErrorKind, Result};
use crate::retrieve::{Hit, RecallFilters, RecallQuery};
use crate::store::TimelineQuery;
use args::ToolArgs;

/// What a tool call returns to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text the model reads.
    pub text: String,
    /// `true` when the call failed (send it as an error tool result).
    pub is_error: bool,
}

impl ToolOutput {
    fn ok(text: String) -> ToolOutput {
        ToolOutput {
            text,
            is_error: false,
        }
    }

    fn error(text: String) -> ToolOutput {
        ToolOutput {
            text,
            is_error: true,
        }
    }
}

/// What the tools need from memory. [`crate::Memory`] implements it for its workspace.
pub trait ToolBackend {
    /// Hybrid recall as seen from `current_session` (see `Memory::recall`).
    ///
    /// # Errors
    /// Invalid queries and database errors.
    fn recall(&self, current_session: Option<&str>, query: &RecallQuery) -> Result<Vec<Hit>>;

    /// The latest read of `path` (relative or absolute), if memory has one.
    ///
    /// # Errors
    /// Database errors.
    fn recall_file(&self, path: &str) -> Result<Option<FileRecall>>;

    /// `path` relative to the workspace root (for messages).
    fn relativize(&self, path: &str) -> String;

    /// One timeline page as text.
    ///
    /// # Errors
    /// An unknown `before` episode; database errors.
    fn timeline_text(&self, current_session: Option<&str>, query: &TimelineQuery)
    -> Result<String>;

    /// One page of an episode as text: at most `max_chars` characters of its content from
    /// character `offset` on, byte for byte (see `Store::episode_page_text`).
    ///
    /// # Errors
    /// An unknown episode; an offset past the end; database errors.
    fn episode_page(
        &self,
        current_session: Option<&str>,
        id: &str,
        offset: u64,
        max_chars: usize,
    ) -> Result<String>;

    /// `current session` or `prior session #N` for `session_id`, seen from `current_session`.
    ///
    /// # Errors
    /// An unknown session; database errors.
    fn session_label(&self, current_session: Option<&str>, session_id: &str) -> Result<String>;

    /// `false` when memory is switched off: every tool then says so.
    fn memory_enabled(&self) -> bool {
        true
    }
}

/// Runs tool `name` (bare, or `{prefix}__{name}`) with `arguments` (the JSON the model sent) for
/// `current_session`. Never panics and never fails: every problem is an error [`ToolOutput`]
/// that says what to do.
pub fn call_tool(
    backend: &dyn ToolBackend,
    current_session: Option<&str>,
    name: &str,
    arguments: &str,
) -> ToolOutput {
    let Some(tool) = ToolName::parse(name) else {
        return unknown_tool(name);
    };
    if !backend.memory_enabled() {
        return ToolOutput::error(format!(
            "{tool} is unavailable: session memory is switched off for this workspace \
             (CODEOID_MEMORY=0); continue without it"
        ));
    }
    let args = match args::parse(tool, arguments) {
        Ok(args) => args,
        Err(message) => return ToolOutput::error(message),
    };
    let run = catch_unwind(AssertUnwindSafe(|| {
        dispatch(backend, current_session, args)
    }));
    match run {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => ToolOutput::error(failure_text(tool, &e)),
        Err(_) => ToolOutput::error(format!(
            "{tool} failed: internal error in codeoid (a bug; please report it); continue \
             without memory for this step"
        )),
    }
}

/// What [`call_tool`] answers for a call of tool `name` whose arguments a binding could not turn
/// into JSON text because of `problem`: values a model's JSON carries but codeoid cannot hold
/// (an integer beyond 64 bits, NaN), found while converting arguments the harness had decoded.
/// The same error result as for arguments the core cannot read itself.
pub fn invalid_arguments(name: &str, problem: &str) -> ToolOutput {
    match ToolName::parse(name) {
        Some(tool) => ToolOutput::error(args::invalid(tool, problem)),
        None => unknown_tool(name),
    }
}

fn unknown_tool(name: &str) -> ToolOutput {
    let known: Vec<&str> = ToolName::ALL.iter().map(|t| t.as_str()).collect();
    ToolOutput::error(format!(
        "unknown memory tool {:?}; the memory tools are {} (optionally prefixed, as in \
         codeoid_memory__recall)",
        format::echo(name),
        known.join(", ")
    ))
}

fn failure_text(tool: ToolName, e: &crate::Error) -> String {
    let hint = match e.kind() {
        ErrorKind::NotFound | ErrorKind::InvalidInput => "",
        ErrorKind::Busy => "; the store is busy, try again in a moment",
        _ => "; memory is unavailable for this call, continue without it",
    };
    format!("{tool} failed: {}{hint}", e.message())
}

fn dispatch(
    backend: &dyn ToolBackend,
    current_session: Option<&str>,
    args: ToolArgs,
) -> Result<ToolOutput> {
    let mut labels: HashMap<String, String> = HashMap::new();
    let mut label = |session_id: &str| -> Result<String> {
        if let Some(label) = labels.get(session_id) {
            return Ok(label.clone());
        }
        let label = backend.session_label(current_session, session_id)?;
        labels.insert(session_id.to_owned(), label.clone());
        Ok(label)
    };
    Ok(match args {
        ToolArgs::Recall {
            query,
            limit,
            include_current_session,
            tool_name,
        } => {
            let mut recall = RecallQuery::new(query.clone()).limit(limit as usize);
            recall.include_current_session = include_current_session;
            recall.filters = RecallFilters {
                tool_name: tool_name.clone(),
                ..RecallFilters::default()
            };
            let hits = backend.recall(current_session, &recall)?;
            if hits.is_empty() {
                let excluded = current_session.is_some() && !include_current_session;
                ToolOutput::ok(format::no_hits(&query, excluded, tool_name.as_deref()))
            } else {
                ToolOutput::ok(format::recall_text(&query, &hits, &mut label)?)
            }
        }
        ToolArgs::RecallFile { path } => match backend.recall_file(&path)? {
            Some(found) => ToolOutput::ok(format::file_text(&found, &mut label)?),
            None => ToolOutput::ok(format::no_read(&path, &backend.relativize(&path))),
        },
        ToolArgs::Timeline {
            offset,
            limit,
            before,
        } => ToolOutput::ok(backend.timeline_text(
            current_session,
            &TimelineQuery {
                offset,
                limit,
                before,
            },
        )?),
        ToolArgs::GetEpisode { episode_id, offset } => ToolOutput::ok(backend.episode_page(
            current_session,
            &episode_id,
            offset,
            EPISODE_PAGE_CHARS,
        )?),
    })
}
