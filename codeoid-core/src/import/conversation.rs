//! Assembling a stream of log records into canonical turns: the merge rules every line-oriented
//! importer shares.
//!
//! Logs write one model response as several records (Claude Code writes one line per content
//! block and interleaves tool results between them; Codex writes one item per block) and write
//! each tool result as its own record. Providers saw one assistant message and one user message
//! of results. The [`ConversationBuilder`] restores that:
//! - an assistant record with the same response key as the open assistant turn is appended to
//!   it, even when tool results were recorded in between;
//! - tool-result records after an assistant turn go into one user turn right after it;
//! - any other user record (a prompt) closes the exchange and starts a new turn.
//!
//! Usage is recorded once per request key: a repeated report is merged field by field with
//! `max` (logs repeat the usage on every line of a response, with output counts that only
//! grow) and counted as a duplicate, never summed.
//!
//! Turn ids are claimed in order and are unique within the builder; when a preferred id is
//! taken the fallback (then a numbered fallback) is used, all derived from the input alone.
//!
//! The builder does not parse any format and does not decide what a record means.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::canonical::{CallUsage, Part, Role, Turn, Usage};

/// How a new turn starts: its ids, time, model and extra metadata.
pub(crate) struct TurnHead {
    /// Preferred id.
    pub id: String,
    /// Id to use when the preferred one is already taken in this conversation.
    pub fallback_id: String,
    /// When the first record of the turn was written.
    pub timestamp: Option<DateTime<Utc>>,
    /// Model of an assistant turn.
    pub model: Option<String>,
    /// Metadata for the turn (added to `source` and `sidechain`).
    pub meta: Map<String, Value>,
}

impl TurnHead {
    /// A head whose id and fallback are the same.
    pub fn new(id: impl Into<String>, timestamp: Option<DateTime<Utc>>) -> TurnHead {
        let id = id.into();
        TurnHead {
            fallback_id: id.clone(),
            id,
            timestamp,
            model: None,
            meta: Map::new(),
        }
    }
}

struct Open {
    /// Index of the assistant turn of the current exchange.
    assistant: usize,
    /// Response key further records must match to be appended; `None` once sealed.
    key: Option<String>,
    /// Index of the user turn collecting this exchange's tool results.
    results: Option<usize>,
}

/// Builds one conversation; see the module docs for the rules.
pub(crate) struct ConversationBuilder {
    source: &'static str,
    provider: Option<String>,
    primary: bool,
    turns: Vec<Turn>,
    ids: HashSet<String>,
    open: Option<Open>,
    requests: HashMap<String, (usize, usize)>,
}

impl ConversationBuilder {
    /// A builder whose turns carry `meta.source = source` and, for non-primary (subagent)
    /// conversations, `meta.sidechain = true`, with all usage flagged accordingly.
    pub fn new(source: &'static str, provider: Option<String>, primary: bool) -> Self {
        ConversationBuilder {
            source,
            provider,
            primary,
            turns: Vec::new(),
            ids: HashSet::new(),
            open: None,
            requests: HashMap::new(),
        }
    }

    /// Appends assistant `parts`: to the open assistant turn when `key` matches its response
    /// key, otherwise to a new assistant turn. Returns the turn's index.
    pub fn assistant(&mut self, key: Option<&str>, head: TurnHead, parts: Vec<Part>) -> usize {
        if let Some(open) = &self.open {
            if key.is_some() && open.key.as_deref() == key {
                let index = open.assistant;
                self.extend(index, head.meta, parts);
                return index;
            }
        }
        let index = self.push(Role::Assistant, head, parts);
        self.open = Some(Open {
            assistant: index,
            key: key.map(str::to_owned),
            results: None,
        });
        index
    }

    /// Appends tool-result `parts` to the results turn of the open exchange (created right
    /// after its assistant turn on first use), or to a new user turn when no exchange is open.
    pub fn results(&mut self, head: TurnHead, parts: Vec<Part>) -> usize {
        let existing = self.open.as_ref().map(|open| open.results);
        match existing {
            Some(Some(index)) => {
                self.extend(index, head.meta, parts);
                index
            }
            Some(None) => {
                let index = self.push(Role::User, head, parts);
                if let Some(open) = &mut self.open {
                    open.results = Some(index);
                }
                index
            }
            None => self.push(Role::User, head, parts),
        }
    }

    /// A new user turn (a prompt); closes the open exchange.
    pub fn user(&mut self, head: TurnHead, parts: Vec<Part>) -> usize {
        self.open = None;
        self.push(Role::User, head, parts)
    }

    /// Ends the open response: later assistant records start a new turn, but tool results
    /// still join the open exchange (Codex records a response's token count before running
    /// its tool calls).
    pub fn seal_response(&mut self) {
        if let Some(open) = &mut self.open {
            open.key = None;
        }
    }

    /// Index of the most recent assistant turn.
    pub fn last_assistant(&self) -> Option<usize> {
        self.turns.iter().rposition(|t| t.role == Role::Assistant)
    }

    /// Index of the last turn, when it is an assistant turn.
    pub fn assistant_at_tail(&self) -> Option<usize> {
        match self.turns.last() {
            Some(t) if t.role == Role::Assistant => Some(self.turns.len() - 1),
            _ => None,
        }
    }

    /// The turn at `index`.
    pub fn turn_mut(&mut self, index: usize) -> Option<&mut Turn> {
        self.turns.get_mut(index)
    }

    /// Records `call` on turn `index`, once per `request_key`: a repeated key merges field by
    /// field with `max` into the first report and returns `true` (a duplicate).
    pub fn usage(
        &mut self,
        index: usize,
        request_key: Option<String>,
        mut call: CallUsage,
    ) -> bool {
        call.primary = self.primary;
        if let Some(key) = &request_key {
            if let Some(&(t, c)) = self.requests.get(key) {
                if let Some(first) = self
                    .turns
                    .get_mut(t)
                    .and_then(|turn| turn.usage.as_mut())
                    .and_then(|usage| usage.calls.get_mut(c))
                {
                    first.input_tokens = first.input_tokens.max(call.input_tokens);
                    first.output_tokens = first.output_tokens.max(call.output_tokens);
                    first.cache_read_tokens = first.cache_read_tokens.max(call.cache_read_tokens);
                    first.cache_creation_tokens =
                        first.cache_creation_tokens.max(call.cache_creation_tokens);
                }
                return true;
            }
        }
        let Some(turn) = self.turns.get_mut(index) else {
            return false;
        };
        let usage = turn.usage.get_or_insert_with(Usage::default);
        usage.calls.push(call);
        if let Some(key) = request_key {
            self.requests.insert(key, (index, usage.calls.len() - 1));
        }
        false
    }

    /// The turns, dropping any that ended up with no parts, no usage and no kept unsupported
    /// content.
    pub fn finish(self) -> Vec<Turn> {
        self.turns
            .into_iter()
            .filter(|t| {
                !t.parts.is_empty() || t.usage.is_some() || t.meta.contains_key("unsupported_parts")
            })
            .collect()
    }

    fn push(&mut self, role: Role, head: TurnHead, parts: Vec<Part>) -> usize {
        let id = self.claim(&head.id, &head.fallback_id);
        let mut meta = Map::new();
        meta.insert("source".to_owned(), Value::from(self.source));
        if !self.primary {
            meta.insert("sidechain".to_owned(), Value::Bool(true));
        }
        meta.extend(head.meta);
        let assistant = role == Role::Assistant;
        self.turns.push(Turn {
            id: Some(id),
            role,
            parts,
            provider: if assistant {
                self.provider.clone()
            } else {
                None
            },
            model: if assistant { head.model } else { None },
            usage: None,
            timestamp: head.timestamp,
            meta,
        });
        self.turns.len() - 1
    }

    fn extend(&mut self, index: usize, meta: Map<String, Value>, parts: Vec<Part>) {
        if let Some(turn) = self.turns.get_mut(index) {
            turn.parts.extend(parts);
            for (key, value) in meta {
                merge_meta(&mut turn.meta, key, value);
            }
        }
    }

    fn claim(&mut self, preferred: &str, fallback: &str) -> String {
        for candidate in [preferred, fallback] {
            if !candidate.trim().is_empty() && !self.ids.contains(candidate) {
                self.ids.insert(candidate.to_owned());
                return candidate.to_owned();
            }
        }
        let base = if fallback.trim().is_empty() {
            "turn"
        } else {
            fallback
        };
        let mut n = 2u64;
        loop {
            let candidate = format!("{base}#{n}");
            if self.ids.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }
}

/// Merges one metadata entry into a turn that already exists: objects merge key by key,
/// arrays concatenate, and anything else keeps the first value unless the new one is set
/// (a later line's `stop_reason` wins over an earlier `null`).
fn merge_meta(meta: &mut Map<String, Value>, key: String, value: Value) {
    match (meta.get_mut(&key), value) {
        (Some(Value::Object(existing)), Value::Object(new)) => {
            for (k, v) in new {
                existing.insert(k, v);
            }
        }
        (Some(Value::Array(existing)), Value::Array(new)) => existing.extend(new),
        (Some(_), Value::Null) => {}
        (_, value) => {
            meta.insert(key, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Part {
        Part::Text { text: t.to_owned() }
    }

    #[test]
    fn interleaved_blocks_of_one_response_merge_and_results_follow_it() {
        let mut b = ConversationBuilder::new("test", Some("anthropic".into()), true);
        b.user(TurnHead::new("u1", None), vec![text("hi")]);
        let a = b.assistant(Some("msg1"), TurnHead::new("msg1", None), vec![text("a")]);
        b.results(TurnHead::new("r1", None), vec![text("result 1")]);
        let a2 = b.assistant(Some("msg1"), TurnHead::new("msg1", None), vec![text("b")]);
        b.results(TurnHead::new("r2", None), vec![text("result 2")]);
        assert_eq!(a, a2);
        let turns = b.finish();
        assert_eq!(turns.len(), 3);
        assert_eq!(turns[1].parts, vec![text("a"), text("b")]);
        assert_eq!(turns[2].id.as_deref(), Some("r1"));
        assert_eq!(turns[2].parts.len(), 2);
        assert_eq!(turns[1].provider.as_deref(), Some("anthropic"));
        assert_eq!(turns[0].provider, None);
    }

    #[test]
    fn repeated_usage_is_merged_with_max_not_summed() {
        let mut b = ConversationBuilder::new("test", None, false);
        let a = b.assistant(Some("m"), TurnHead::new("m", None), vec![text("x")]);
        let first = CallUsage {
            input_tokens: 3,
            output_tokens: 8,
            ..CallUsage::default()
        };
        let again = CallUsage {
            input_tokens: 3,
            output_tokens: 285,
            ..CallUsage::default()
        };
        assert!(!b.usage(a, Some("req".into()), first));
        assert!(b.usage(a, Some("req".into()), again));
        let turns = b.finish();
        let calls = &turns[0].usage.as_ref().unwrap().calls;
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].output_tokens, 285);
        assert!(!calls[0].primary, "subagent usage is never primary");
        assert_eq!(turns[0].meta["sidechain"], true);
    }

    #[test]
    fn taken_ids_fall_back_deterministically() {
        let mut b = ConversationBuilder::new("test", None, true);
        b.user(TurnHead::new("x", None), vec![text("1")]);
        let mut head = TurnHead::new("x", None);
        head.fallback_id = "y".into();
        b.user(head, vec![text("2")]);
        b.user(TurnHead::new("x", None), vec![text("3")]);
        let ids: Vec<_> = b.finish().into_iter().filter_map(|t| t.id).collect();
        assert_eq!(ids, vec!["x", "y", "x#2"]);
    }

    #[test]
    fn a_prompt_closes_the_exchange() {
        let mut b = ConversationBuilder::new("test", None, true);
        b.assistant(Some("m"), TurnHead::new("m", None), vec![text("a")]);
        b.user(TurnHead::new("u", None), vec![text("prompt")]);
        b.assistant(Some("m"), TurnHead::new("m", None), vec![text("b")]);
        let turns = b.finish();
        assert_eq!(turns.len(), 3);
        assert_eq!(turns[2].id.as_deref(), Some("m#2"));
    }

    #[test]
    fn sealed_response_starts_a_new_turn_but_keeps_results_together() {
        let mut b = ConversationBuilder::new("test", None, true);
        b.assistant(Some("r1"), TurnHead::new("a1", None), vec![text("call")]);
        b.seal_response();
        b.results(TurnHead::new("o1", None), vec![text("out")]);
        b.results(TurnHead::new("o2", None), vec![text("out2")]);
        b.assistant(Some("r1"), TurnHead::new("a2", None), vec![text("next")]);
        let turns = b.finish();
        assert_eq!(turns.len(), 3);
        assert_eq!(turns[1].parts.len(), 2);
    }
}
