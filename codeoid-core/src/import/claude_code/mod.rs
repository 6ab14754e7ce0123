//! Claude Code transcripts (`~/.claude/projects/<dir>/<session>.jsonl`, `<session>/subagents/
//! agent-*.jsonl`, and the older flat `agent-*.jsonl`) → imported sessions.
//!
//! How a file becomes sessions:
//! - `user` and `assistant` lines are messages, and so are the `attachment` lines that carry
//!   text the model read (a prompt typed while the agent worked, a hook's added context; see
//!   `attachment`). Every other line type (`progress`, `system`, `file-history-snapshot`,
//!   `queue-operation`, other attachments...) is counted and ignored, except that
//!   `summary`/`custom-title` give the title and `progress` lines link agent ids to the Task
//!   call that started them.
//! - Lines of the main conversation form the main session. Sidechain lines written inline by
//!   older versions (`isSidechain: true` in the session file) are grouped by the root of their
//!   `parentUuid` chain, one subagent session per root, linked to the Task call whose prompt
//!   started it. A file named `agent-*.jsonl` (or whose lines carry an `agentId`) is one
//!   subagent session `<parent sessionId>:agent-<agentId>`. Subagent usage is never primary.
//! - Assistant lines of one API response (same `message.id`) are merged into one turn even
//!   when tool results were written between them; consecutive tool-result lines become one
//!   user turn; usage is counted once per `requestId` (see [`ConversationBuilder`]).
//! - A line whose uuid was already imported from this file is dropped as a duplicate.
//!
//! Turn ids: `message.id` for assistant turns (the line uuid if it is taken), the first line's
//! uuid for user turns, `line-<n>` for lines without one.
//!
//! This module never fails: a line it cannot read is skipped and reported.

mod attachment;
mod blocks;
mod record;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use self::record::Record;
use super::conversation::{ConversationBuilder, TurnHead};
use super::fields::{self, str_field};
use super::jsonl;
use super::report::{At, ImportReport};
use super::session::{ImportedSession, LogFormat, SessionKind};
use crate::canonical::{CallUsage, Part, Role, Turn};

const SOURCE: &str = "claude_code";
const PROVIDER: &str = "anthropic";

/// One conversation of the file being read and the facts its first line gave.
struct Group {
    builder: ConversationBuilder,
    root: Option<String>,
    session_id: Option<String>,
    agent_id: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    version: Option<String>,
    slug: Option<String>,
    first_prompt: Option<String>,
    uuids: HashSet<String>,
}

impl Group {
    fn new(primary: bool, root: Option<String>) -> Group {
        Group {
            builder: ConversationBuilder::new(SOURCE, Some(PROVIDER.to_owned()), primary),
            root,
            session_id: None,
            agent_id: None,
            cwd: None,
            git_branch: None,
            version: None,
            slug: None,
            first_prompt: None,
            uuids: HashSet::new(),
        }
    }

    fn note(&mut self, record: &Record) {
        fill(&mut self.session_id, &record.session_id);
        fill(&mut self.agent_id, &record.agent_id);
        fill(&mut self.cwd, &record.cwd);
        fill(&mut self.git_branch, &record.git_branch);
        fill(&mut self.version, &record.version);
        fill(&mut self.slug, &record.slug);
        if let Some(uuid) = &record.uuid {
            self.uuids.insert(uuid.clone());
        }
    }
}

fn fill(slot: &mut Option<String>, value: &Option<String>) {
    if slot.is_none() {
        slot.clone_from(value);
    }
}

/// State of one file being read.
struct FileReader<'a> {
    path: &'a Path,
    /// The whole file is one subagent's transcript.
    agent_file: bool,
    /// A message has been routed to a conversation already.
    routed: bool,
    main: Group,
    sidechains: Vec<Group>,
    /// Sidechain line uuid → index of its group.
    chain_of: HashMap<String, usize>,
    seen: HashSet<String>,
    summaries: Vec<(Option<String>, String)>,
    custom_title: Option<String>,
    /// agentId → the Task call that started it.
    agent_calls: Map<String, Value>,
}

/// Reads one Claude Code transcript.
pub(crate) fn read(path: &Path, bytes: &[u8], report: &mut ImportReport) -> Vec<ImportedSession> {
    let agent_file = path
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.starts_with("agent-"));
    let mut reader = FileReader {
        path,
        agent_file,
        routed: false,
        main: Group::new(!agent_file, None),
        sidechains: Vec::new(),
        chain_of: HashMap::new(),
        seen: HashSet::new(),
        summaries: Vec::new(),
        custom_title: None,
        agent_calls: Map::new(),
    };
    for line in jsonl::lines(bytes) {
        report.lines += 1;
        let at = At::Line(line.number);
        let obj = match line.text.and_then(jsonl::object) {
            Ok(obj) => obj,
            Err(reason) => {
                report.malformed(path, at, reason);
                continue;
            }
        };
        reader.line(obj, line.number, report);
    }
    reader.finish()
}

impl FileReader<'_> {
    fn line(&mut self, obj: Map<String, Value>, number: u64, report: &mut ImportReport) {
        let at = At::Line(number);
        let Some(kind) = str_field(&obj, "type").map(str::to_owned) else {
            report.malformed(self.path, at, "line has no string \"type\"");
            return;
        };
        let (role, obj) = match kind.as_str() {
            "user" => (Role::User, obj),
            "assistant" => (Role::Assistant, obj),
            "attachment" => match attachment::as_user_line(obj) {
                Ok(line) => (Role::User, line),
                Err(_) => {
                    report.ignored(&kind);
                    return;
                }
            },
            other => {
                self.non_message(other, &obj);
                report.ignored(other);
                return;
            }
        };
        let record = match Record::parse(obj, number, role) {
            Ok(record) => record,
            Err(reason) => {
                report.malformed(self.path, at, reason);
                return;
            }
        };
        if let Some(uuid) = &record.uuid {
            if self.seen.contains(uuid) {
                report.duplicate_lines_dropped += 1;
                return;
            }
        }
        if let Err(reason) = self.message(record, report) {
            report.malformed(self.path, at, reason);
        }
    }

    /// Facts carried by non-message lines: titles and agent links.
    fn non_message(&mut self, kind: &str, obj: &Map<String, Value>) {
        match kind {
            "summary" => {
                if let Some(text) = fields::string_field(obj, "summary") {
                    self.summaries
                        .push((fields::string_field(obj, "leafUuid"), text));
                }
            }
            "custom-title" => {
                if let Some(title) = fields::string_field(obj, "customTitle") {
                    self.custom_title = Some(title);
                }
            }
            "progress" => {
                let data = obj.get("data").and_then(Value::as_object);
                if let Some(data) = data.filter(|d| str_field(d, "type") == Some("agent_progress"))
                {
                    if let (Some(agent), Some(call)) = (
                        str_field(data, "agentId"),
                        str_field(obj, "parentToolUseID"),
                    ) {
                        self.agent_calls
                            .entry(agent.to_owned())
                            .or_insert_with(|| Value::from(call));
                    }
                }
            }
            _ => {}
        }
    }

    /// The conversation `record` belongs to: `None` for the main one, else the index of its
    /// sidechain group (created when the record starts a new chain).
    fn group_for(&mut self, record: &Record) -> Option<usize> {
        if !self.routed && record.sidechain && record.agent_id.is_some() {
            // A subagent transcript under another name: its first message says so.
            self.agent_file = true;
            self.main = Group::new(false, None);
        }
        self.routed = true;
        if self.agent_file || !record.sidechain {
            return None;
        }
        let parent = record
            .parent_uuid
            .as_ref()
            .and_then(|p| self.chain_of.get(p).copied());
        let index = parent.unwrap_or_else(|| {
            self.sidechains.push(Group::new(
                false,
                Some(record.uuid.clone().unwrap_or_else(|| record.line_id())),
            ));
            self.sidechains.len() - 1
        });
        if let Some(uuid) = &record.uuid {
            self.chain_of.insert(uuid.clone(), index);
        }
        Some(index)
    }

    fn message(&mut self, mut record: Record, report: &mut ImportReport) -> Result<(), String> {
        let model = (!record.is_synthetic())
            .then(|| record.model.clone())
            .flatten();
        let only_results = record.only_tool_results();
        let first_result_id = record.first_tool_use_id();
        let content = std::mem::take(&mut record.blocks);
        let converted = match record.role {
            Role::Assistant => blocks::assistant(content, model.as_deref(), record.is_api_error)?,
            Role::User => blocks::user(content)?,
        };
        if let Some(uuid) = &record.uuid {
            self.seen.insert(uuid.clone());
        }
        if let Some(why) = &record.timestamp_warning {
            report.warn(self.path, At::Line(record.line), why.clone());
        }
        let group = match self.group_for(&record) {
            Some(index) => &mut self.sidechains[index],
            None => &mut self.main,
        };
        group.note(&record);

        let uuid_or_line = record.uuid.clone().unwrap_or_else(|| record.line_id());
        let mut meta = Map::new();
        if !converted.unsupported.is_empty() {
            report.unsupported_parts += converted.unsupported.len() as u64;
            meta.insert(
                "unsupported_parts".to_owned(),
                Value::Array(converted.unsupported),
            );
        }
        if converted.parts.is_empty() && meta.is_empty() && record.usage.is_none() {
            report.ignored(&format!("empty {} message", record.role.as_str()));
            return Ok(());
        }
        match record.role {
            Role::Assistant => {
                if let Some(reason) = &record.stop_reason {
                    meta.insert("stop_reason".to_owned(), Value::from(reason.as_str()));
                }
                if record.is_api_error {
                    meta.insert("api_error".to_owned(), Value::Bool(true));
                }
                if record.is_synthetic() {
                    meta.insert("synthetic".to_owned(), Value::Bool(true));
                }
                let head = TurnHead {
                    id: record
                        .message_id
                        .clone()
                        .unwrap_or_else(|| uuid_or_line.clone()),
                    fallback_id: uuid_or_line,
                    timestamp: record.timestamp,
                    model: model.clone(),
                    meta,
                };
                // API-error and synthetic lines are standalone even if an id repeats.
                let key = if record.is_api_error || record.is_synthetic() {
                    None
                } else {
                    record
                        .message_id
                        .as_deref()
                        .or(record.request_id.as_deref())
                };
                let turn = group.builder.assistant(key, head, converted.parts);
                if let (Some(usage), Some(_)) = (&record.usage, &model) {
                    let call = CallUsage {
                        input_tokens: fields::count(usage, "input_tokens"),
                        output_tokens: fields::count(usage, "output_tokens"),
                        cache_read_tokens: fields::count(usage, "cache_read_input_tokens"),
                        cache_creation_tokens: fields::count(usage, "cache_creation_input_tokens"),
                        primary: true,
                        model: None,
                        request_id: record.request_id.clone(),
                    };
                    let request_key = record.request_id.clone().or(record.message_id.clone());
                    if group.builder.usage(turn, request_key, call) {
                        report.repeated_usage_merged += 1;
                    }
                }
            }
            Role::User if only_results => {
                if let Some(side) = record.tool_use_result.take() {
                    let id = first_result_id.unwrap_or_default();
                    if let Some(agent) = side.get("agentId").and_then(Value::as_str) {
                        self.agent_calls
                            .entry(agent.to_owned())
                            .or_insert_with(|| Value::from(id.as_str()));
                    }
                    let mut results = Map::new();
                    results.insert(id, blocks::side_data(side));
                    meta.insert("tool_use_results".to_owned(), Value::Object(results));
                }
                let head = TurnHead {
                    meta,
                    ..TurnHead::new(uuid_or_line, record.timestamp)
                };
                group.builder.results(head, converted.parts);
            }
            Role::User => {
                if record.is_compact_summary {
                    meta.insert("compaction_summary".to_owned(), Value::Bool(true));
                }
                // Written by the harness, not typed by the person: context, never a prompt.
                let injected = record.is_meta || attachment::is_harness_notice(&converted.parts);
                if injected {
                    meta.insert("is_meta".to_owned(), Value::Bool(true));
                }
                if let Some(kind) = &record.attachment {
                    meta.insert("attachment".to_owned(), Value::from(kind.as_str()));
                }
                if group.first_prompt.is_none() && !injected {
                    group.first_prompt = converted.parts.iter().find_map(|p| match p {
                        Part::Text { text } => Some(text.clone()),
                        _ => None,
                    });
                }
                let head = TurnHead {
                    meta,
                    ..TurnHead::new(uuid_or_line, record.timestamp)
                };
                group.builder.user(head, converted.parts);
            }
        }
        Ok(())
    }

    fn finish(self) -> Vec<ImportedSession> {
        let FileReader {
            path,
            agent_file,
            main,
            sidechains,
            summaries,
            custom_title,
            agent_calls,
            ..
        } = self;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A summary whose leaf is not in this file describes another session (1.x wrote the
        // titles of other sessions at the top of a new file): no title beats a wrong one.
        let title = custom_title.or_else(|| {
            summaries
                .iter()
                .rev()
                .find(|(leaf, _)| leaf.as_ref().is_some_and(|l| main.uuids.contains(l)))
                .map(|(_, text)| text.clone())
        });
        let parent_id = main
            .session_id
            .clone()
            .or_else(|| sidechains.iter().find_map(|g| g.session_id.clone()))
            .unwrap_or_else(|| stem.clone());

        let mut main = main;
        let mut session = session_from(&mut main, path);
        if agent_file {
            let agent_id = main
                .agent_id
                .clone()
                .or_else(|| stem.strip_prefix("agent-").map(str::to_owned));
            session.session_id = match &agent_id {
                Some(agent) => format!("{parent_id}:agent-{agent}"),
                None => stem.clone(),
            };
            session.kind = SessionKind::Subagent;
            session.parent_session_id = main.session_id.clone();
            session.agent_id = agent_id;
        } else {
            session.session_id = parent_id.clone();
            session.title = title;
            if !agent_calls.is_empty() {
                session
                    .meta
                    .insert("agent_tool_calls".to_owned(), Value::Object(agent_calls));
            }
        }

        let mut claimed = HashSet::new();
        let mut subagents = Vec::new();
        for mut group in sidechains {
            let mut sub = session_from(&mut group, path);
            let root = group.root.clone().unwrap_or_default();
            sub.session_id = format!("{parent_id}:sidechain-{root}");
            sub.kind = SessionKind::Subagent;
            sub.parent_session_id = Some(parent_id.clone());
            sub.parent_tool_call_id =
                task_call_for(&session.turns, group.first_prompt.as_deref(), &mut claimed);
            if !sub.turns.is_empty() {
                subagents.push(sub);
            }
        }
        let mut sessions = Vec::with_capacity(subagents.len() + 1);
        if !session.turns.is_empty() {
            sessions.push(session);
        }
        sessions.extend(subagents);
        sessions
    }
}

/// The session of `group`, with its turns and the facts of its first line.
fn session_from(group: &mut Group, path: &Path) -> ImportedSession {
    let builder = std::mem::replace(
        &mut group.builder,
        ConversationBuilder::new(SOURCE, None, true),
    );
    let mut session = ImportedSession::new(
        LogFormat::ClaudeCode,
        path.to_path_buf(),
        group.session_id.clone().unwrap_or_default(),
    );
    session.turns = builder.finish();
    session.cwd = group.cwd.as_ref().map(PathBuf::from);
    session.provider = Some(PROVIDER.to_owned());
    for (key, value) in [
        ("version", &group.version),
        ("git_branch", &group.git_branch),
        ("slug", &group.slug),
    ] {
        if let Some(value) = value {
            session
                .meta
                .insert(key.to_owned(), Value::from(value.as_str()));
        }
    }
    session.fill_from_turns();
    session
}

/// The first not yet claimed Task/Agent call of the main conversation whose `prompt` is the
/// sidechain's first prompt: how older versions link an inline sidechain to its caller.
fn task_call_for(
    main: &[Turn],
    prompt: Option<&str>,
    claimed: &mut HashSet<String>,
) -> Option<String> {
    let prompt = prompt?;
    let id = main
        .iter()
        .flat_map(|t| t.parts.iter())
        .find_map(|part| match part {
            Part::ToolCall(call)
                if !claimed.contains(&call.id)
                    && call.input.get("prompt").and_then(Value::as_str) == Some(prompt) =>
            {
                Some(call.id.clone())
            }
            _ => None,
        })?;
    claimed.insert(id.clone());
    Some(id)
}
