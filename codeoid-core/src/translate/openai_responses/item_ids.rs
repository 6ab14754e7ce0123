//! Which Responses item ids are sent: every id of a reasoning group, or none of them.
//!
//! OpenAI ties a reasoning item to the items that followed it in the output it came from. Sent
//! by id, a reasoning item must be followed by its following item, by id too (400 "Item 'rs_…'
//! of type 'reasoning' was provided without its required following item"), and an `fc_…` or
//! `msg_…` id needs its reasoning item (400 "… provided without its required 'reasoning'
//! item"). Items sent without ids are taken as they are, the reasoning resumed from its
//! `encrypted_content`: that is how OpenAI's own stateless client (Codex) replays history.
//!
//! So the assistant-side items of a run (consecutive assistant turns, whatever turns a harness
//! recorded them in: a flat list reads back as one turn anyway) are cut into groups, each a
//! reasoning item and the items up to the next one. A group is sent with its ids only when
//! every one of them is known: the reasoning item's (turn meta [`REASONING_IDS_META`]), each
//! assistant message's ([`MESSAGE_IDS_META`], sent back with `status: "completed"` in the output
//! message form) and each call's own `fc_…` [`provider_id`](crate::canonical::ToolCall). One
//! unknown id (text from another provider, a message recorded before message ids were kept, a
//! reasoning item without one) and the whole group goes without ids, which is always accepted.
//! Items before the first reasoning item of a run never carry ids. A dropped call id is reported;
//! reasoning and message ids live in meta, which translation does not report.
//!
//! [`Options::responses_item_ids`](crate::translate::Options::responses_item_ids) off sends no
//! item id at all (for requests with `store: false`, where OpenAI looks ids up and finds nothing).

use serde_json::{Map, Value, json};

use crate::canonical::{ToolCall, Turn};
use crate::translate::loss::{LossKind, Losses};

/// The [`Turn::meta`] key holding Responses reasoning item ids by part index.
pub const REASONING_IDS_META: &str = "openai_reasoning_ids";

/// The [`Turn::meta`] key holding Responses assistant message item ids by part index (every text
/// part read from one message has its id).
pub const MESSAGE_IDS_META: &str = "openai_message_ids";

/// The id recorded under `key` in `owner`'s meta for part `part`.
pub(super) fn meta_id<'t>(owner: &'t Turn, key: &str, part: usize) -> Option<&'t str> {
    owner
        .meta
        .get(key)
        .and_then(|ids| ids.get(part.to_string()))
        .and_then(Value::as_str)
}

/// An assistant-side item waiting for the decision on its id.
enum Slot {
    Reasoning {
        item: Map<String, Value>,
        id: Option<String>,
    },
    /// Text parts of one assistant message: several only when they share a known id.
    Message {
        texts: Vec<String>,
        id: Option<String>,
    },
    Call {
        item: Map<String, Value>,
        call_id: String,
        provider_id: Option<String>,
        at: (usize, usize),
    },
}

impl Slot {
    fn has_id(&self) -> bool {
        match self {
            Slot::Reasoning { id, .. } | Slot::Message { id, .. } => id.is_some(),
            Slot::Call { provider_id, .. } => provider_id.as_deref().is_some_and(is_own_call_id),
        }
    }

    /// The item(s), with the id when `with_id`; a message without one is one item per text.
    fn write(self, with_id: bool, items: &mut Vec<Value>, losses: &mut Losses) {
        match self {
            Slot::Reasoning { item, id } => match (with_id, id) {
                (true, Some(id)) => {
                    // `id` right after `type`, as OpenAI lists a reasoning item.
                    let mut with = Map::new();
                    for (key, value) in item {
                        let first = key == "type";
                        with.insert(key, value);
                        if first {
                            with.insert("id".into(), json!(id));
                        }
                    }
                    items.push(Value::Object(with));
                }
                _ => items.push(Value::Object(item)),
            },
            Slot::Message { texts, id } => match (with_id, id) {
                (true, Some(id)) => {
                    let content: Vec<Value> = texts
                        .iter()
                        .map(|t| json!({"type": "output_text", "text": t, "annotations": []}))
                        .collect();
                    items.push(json!({
                        "type": "message",
                        "role": "assistant",
                        "id": id,
                        "status": "completed",
                        "content": content,
                    }));
                }
                _ => items.extend(texts.iter().map(|t| assistant_text(t))),
            },
            Slot::Call {
                mut item,
                call_id,
                provider_id,
                at,
            } => {
                match provider_id {
                    Some(id) if with_id => {
                        item.insert("id".into(), json!(id));
                    }
                    // Equal to the call id, it says nothing the call_id does not (importers
                    // write it so): nothing is lost.
                    Some(id) if id != call_id => losses.part(
                        at,
                        LossKind::Dropped,
                        if is_own_call_id(&id) {
                            format!(
                                "item id {id:?} of tool call {call_id:?}: openai responses takes \
                                 it only with the ids of its reasoning item and of every item \
                                 between them, and one of those is not known"
                            )
                        } else {
                            format!(
                                "item id {id:?} of tool call {call_id:?}: openai responses \
                                 accepts only its own (fc_...) ids, and only after their \
                                 reasoning item"
                            )
                        },
                    ),
                    _ => {}
                }
                items.push(Value::Object(item));
            }
        }
    }
}

/// OpenAI's own function call item ids start with `fc`; it refuses any other (another
/// harness's `toolu_…` or `call_…`: 400 "expected an ID that begins with 'fc'").
fn is_own_call_id(id: &str) -> bool {
    id.starts_with("fc")
}

/// An assistant message item without an id: the easy input form.
fn assistant_text(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "content": text})
}

/// The assistant-side items of one run, written when the run ends.
#[derive(Default)]
pub(super) struct Run {
    slots: Vec<Slot>,
    /// Parts taken so far, over all runs: tells a caller whether a turn wrote anything.
    taken: usize,
}

impl Run {
    /// How many parts were taken so far (texts that join a message count too).
    pub(super) fn taken(&self) -> usize {
        self.taken
    }

    /// A `reasoning` item (without `id`) and its recorded id.
    pub(super) fn reasoning(&mut self, item: Map<String, Value>, id: Option<&str>) {
        self.taken += 1;
        self.slots.push(Slot::Reasoning {
            item,
            id: id.map(str::to_owned),
        });
    }

    /// An assistant text and the id of the message it was read from; texts of one message
    /// (consecutive, with the same id) become one message item again.
    pub(super) fn text(&mut self, text: &str, id: Option<&str>) {
        self.taken += 1;
        if let (
            Some(id),
            Some(Slot::Message {
                texts,
                id: Some(last),
            }),
        ) = (id, self.slots.last_mut())
        {
            if last == id {
                texts.push(text.to_owned());
                return;
            }
        }
        self.slots.push(Slot::Message {
            texts: vec![text.to_owned()],
            id: id.map(str::to_owned),
        });
    }

    /// A `function_call` item (without `id`) for `call`, whose `provider_id` is its item id.
    pub(super) fn call(&mut self, item: Map<String, Value>, call: &ToolCall, at: (usize, usize)) {
        self.taken += 1;
        self.slots.push(Slot::Call {
            item,
            call_id: call.id.clone(),
            provider_id: call.provider_id.clone(),
            at,
        });
    }

    /// Writes the waiting items to `items`, each group with all its ids or none (see the module
    /// documentation); `send_ids` off sends none.
    pub(super) fn finish(&mut self, items: &mut Vec<Value>, send_ids: bool, losses: &mut Losses) {
        let slots = std::mem::take(&mut self.slots);
        let mut groups: Vec<Vec<Slot>> = Vec::new();
        for slot in slots {
            match groups.last_mut() {
                Some(group) if !matches!(slot, Slot::Reasoning { .. }) => group.push(slot),
                _ => groups.push(vec![slot]),
            }
        }
        for group in groups {
            let with_id = send_ids
                && matches!(group.first(), Some(Slot::Reasoning { id: Some(_), .. }))
                && group.len() > 1
                && group.iter().all(Slot::has_id);
            for slot in group {
                slot.write(with_id, items, losses);
            }
        }
    }
}
