//! What an importer produces: [`ImportedSession`]s of canonical turns, tagged with the
//! [`LogFormat`] they came from.
//!
//! Invariants every importer upholds (and the integration tests check):
//! - every turn has a non-empty id, unique within its session and derived only from the source
//!   file (a line uuid, a provider message id, a line number), so importing the same file twice
//!   yields identical turns and the store's "known id is a no-op" rule makes re-imports idempotent;
//! - every turn passes [`Turn::validate`];
//! - subagent conversations are their own sessions ([`SessionKind::Subagent`]) linked to their
//!   parent, and all their usage is flagged `primary: false`; they are never mixed into the
//!   parent's turns.
//!
//! This module holds data only; it does not read files (see the per-format modules) or write
//! to the store.

use std::fmt;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::canonical::{Part, Role, Turn};

/// A session-log format codeoid can import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LogFormat {
    /// Claude Code transcripts: `~/.claude/projects/<dir>/<session>.jsonl` and
    /// `<session>/subagents/agent-*.jsonl`.
    ClaudeCode,
    /// OpenAI Codex CLI rollouts: `~/.codex/sessions/**/rollout-*.jsonl`.
    Codex,
    /// Gemini CLI chats: `~/.gemini/tmp/<project>/chats/session-*.json` and the newer `.jsonl`.
    GeminiCli,
    /// SWE-agent trajectories: `*.traj`.
    SweAgent,
}

impl LogFormat {
    /// Every supported format, in the order error messages list them.
    pub const ALL: [LogFormat; 4] = [
        LogFormat::ClaudeCode,
        LogFormat::Codex,
        LogFormat::GeminiCli,
        LogFormat::SweAgent,
    ];

    /// The snake_case name, also written to every imported turn's `meta.source`.
    pub const fn as_str(self) -> &'static str {
        match self {
            LogFormat::ClaudeCode => "claude_code",
            LogFormat::Codex => "codex",
            LogFormat::GeminiCli => "gemini_cli",
            LogFormat::SweAgent => "swe_agent",
        }
    }

    /// A human description with the usual location, for error messages and `--help`.
    pub const fn describe(self) -> &'static str {
        match self {
            LogFormat::ClaudeCode => "Claude Code transcripts (~/.claude/projects/**/*.jsonl)",
            LogFormat::Codex => "Codex CLI rollouts (~/.codex/sessions/**/rollout-*.jsonl)",
            LogFormat::GeminiCli => {
                "Gemini CLI chats (~/.gemini/tmp/*/chats/session-*.json or .jsonl)"
            }
            LogFormat::SweAgent => "SWE-agent trajectories (*.traj)",
        }
    }

    /// `true` for formats whose logs are only ever appended to (Claude Code, Codex CLI): a
    /// copy with fewer turns than another is the older one. Gemini CLI rewrites its files
    /// (a rewind removes messages) and a SWE-agent trajectory is written whole.
    pub fn only_appends(self) -> bool {
        matches!(self, LogFormat::ClaudeCode | LogFormat::Codex)
    }

    /// The list of supported formats as one line, for "unknown format" hints.
    pub fn supported_list() -> String {
        LogFormat::ALL
            .iter()
            .map(|f| f.describe())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a session is a person's conversation or one a harness ran on its behalf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionKind {
    /// The primary conversation.
    Main,
    /// A conversation a harness ran for the main one (Claude Code Task agents and sidechains,
    /// compaction helpers, Gemini CLI subagents, Codex review agents). Its usage is never
    /// primary.
    Subagent,
}

/// One conversation read from a log, as canonical turns in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportedSession {
    /// The format it was read from.
    pub format: LogFormat,
    /// The file it was read from, as given or found while walking.
    pub source_path: PathBuf,
    /// Stable id taken from the log (Claude Code `sessionId`, Codex `session_meta.id`, Gemini
    /// `sessionId`, the trajectory's file stem), suffixed for subagents (for example
    /// `<parent>:agent-<agentId>`), so re-imports land on the same session.
    pub session_id: String,
    /// A title when the log has one (Claude Code `custom-title` or `summary` lines, Gemini
    /// `summary`).
    pub title: Option<String>,
    /// The working directory the harness ran in, for workspace detection.
    pub cwd: Option<PathBuf>,
    /// Provider of the assistant turns (`"anthropic"`, `"openai"`, `"gemini"`), when known.
    pub provider: Option<String>,
    /// Model of the last assistant turn, when known.
    pub model: Option<String>,
    /// Main conversation or subagent.
    pub kind: SessionKind,
    /// For subagents: the session that started them.
    pub parent_session_id: Option<String>,
    /// For subagents: the parent's tool call that started them, when the log links them.
    pub parent_tool_call_id: Option<String>,
    /// For subagents: the harness's agent id (Claude Code `agentId`), when it has one.
    pub agent_id: Option<String>,
    /// When the session started (first timestamped record).
    pub started_at: Option<DateTime<Utc>>,
    /// Harness facts kept verbatim: version, git branch, Gemini project hash, SWE-agent model
    /// stats... See `docs/import.md` for the keys.
    pub meta: Map<String, Value>,
    /// The conversation, in order.
    pub turns: Vec<Turn>,
}

/// Counts over the turns of one or more sessions; what the tests compare against independently
/// computed numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TurnStats {
    /// User turns (prompts and tool-result turns).
    pub user_turns: u64,
    /// Assistant turns.
    pub assistant_turns: u64,
    /// Tool call parts.
    pub tool_calls: u64,
    /// Tool result parts.
    pub tool_results: u64,
    /// Tool result parts flagged as errors.
    pub tool_errors: u64,
    /// Per-call usage entries after de-duplication.
    pub usage_calls: u64,
    /// Sum of uncached input tokens over those calls.
    pub input_tokens: u64,
    /// Sum of output tokens.
    pub output_tokens: u64,
    /// Sum of cache-read input tokens.
    pub cache_read_tokens: u64,
    /// Sum of cache-creation input tokens.
    pub cache_creation_tokens: u64,
}

impl TurnStats {
    /// Counts over `turns`.
    pub fn of(turns: &[Turn]) -> TurnStats {
        let mut stats = TurnStats::default();
        for turn in turns {
            stats.add_turn(turn);
        }
        stats
    }

    fn add_turn(&mut self, turn: &Turn) {
        match turn.role {
            Role::User => self.user_turns += 1,
            Role::Assistant => self.assistant_turns += 1,
        }
        for part in &turn.parts {
            match part {
                Part::ToolCall(_) => self.tool_calls += 1,
                Part::ToolResult(result) => {
                    self.tool_results += 1;
                    if result.is_error {
                        self.tool_errors += 1;
                    }
                }
                _ => {}
            }
        }
        for call in turn.usage.iter().flat_map(|u| u.calls.iter()) {
            self.usage_calls += 1;
            self.input_tokens = self.input_tokens.saturating_add(call.input_tokens);
            self.output_tokens = self.output_tokens.saturating_add(call.output_tokens);
            self.cache_read_tokens = self
                .cache_read_tokens
                .saturating_add(call.cache_read_tokens);
            self.cache_creation_tokens = self
                .cache_creation_tokens
                .saturating_add(call.cache_creation_tokens);
        }
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &TurnStats) {
        self.user_turns += other.user_turns;
        self.assistant_turns += other.assistant_turns;
        self.tool_calls += other.tool_calls;
        self.tool_results += other.tool_results;
        self.tool_errors += other.tool_errors;
        self.usage_calls += other.usage_calls;
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_creation_tokens = self
            .cache_creation_tokens
            .saturating_add(other.cache_creation_tokens);
    }
}

impl ImportedSession {
    /// A session with no turns yet.
    pub(crate) fn new(format: LogFormat, source_path: PathBuf, session_id: String) -> Self {
        ImportedSession {
            format,
            source_path,
            session_id,
            title: None,
            cwd: None,
            provider: None,
            model: None,
            kind: SessionKind::Main,
            parent_session_id: None,
            parent_tool_call_id: None,
            agent_id: None,
            started_at: None,
            meta: Map::new(),
            turns: Vec::new(),
        }
    }

    /// Counts over this session's turns.
    pub fn stats(&self) -> TurnStats {
        TurnStats::of(&self.turns)
    }

    /// Fills `model` and `started_at` from the turns when the reader did not set them.
    pub(crate) fn fill_from_turns(&mut self) {
        if self.model.is_none() {
            self.model = self
                .turns
                .iter()
                .rev()
                .filter(|t| t.role == Role::Assistant)
                .find_map(|t| t.model.clone());
        }
        if self.started_at.is_none() {
            self.started_at = self.turns.iter().find_map(|t| t.timestamp);
        }
    }
}
