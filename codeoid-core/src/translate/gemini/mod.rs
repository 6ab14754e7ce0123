//! Canonical ⇄ Gemini `contents` (`{role: "user" | "model", parts: [...]}`).
//!
//! One planned turn is one content. Parts: `text`; `thought: true` text for thinking;
//! `inlineData` / `fileData` images (`image/*` only; other media is unknown content, and images
//! of types Gemini does not document are not sent); `functionCall {id, name, args}` (args an
//! object);
//! `functionResponse {id, name, response}` with `response` an object.
//!
//! Mapping decisions (see `docs/translate.md`):
//! - **Signatures.** Gemini puts `thoughtSignature` on any part, often the `functionCall`. In
//!   canonical form a signature on a non-thought part is a
//!   [`Thinking`](crate::canonical::Thinking) with empty text carrying `Signature {provider:
//!   "gemini"}`, placed right before the part it was attached to. Writing reverses that: an empty
//!   native thinking rides on the next part of the same turn unless that part is a thought of its
//!   own; thought parts carry their own signature. Model turns merged into the turn of their
//!   calls (Gemini takes calls only right after a user turn) are merged before signatures are
//!   placed, so the merged content reads back and is written again the same.
//! - **Results** (`responses`). Gemini has no error flag and needs `response` to be an object: the
//!   documented convention `{"output": text}` / `{"error": text}` is used (several texts become an
//!   array). Images cannot go inside, so they follow the last `functionResponse` of the content
//!   as sibling parts (the responses to parallel calls stay together) and each response says how
//!   many are its own with `"attached_images": n`; reading back reattaches exactly those. Media
//!   nested in a native response (`functionResponse.parts`) reads into the result. A response in
//!   any other shape (from a native Gemini client) reads back as its JSON text, reported as
//!   changed.
//! - **Pairing.** Calls and responses carry ids unless [`Options::gemini_call_ids`] is off; without
//!   ids, responses pair with the first unanswered call of the same name in the preceding model
//!   content, and calls get the generated id `gemini_call_{content}_{part}`. `normalize` already
//!   guarantees one response per call, in call order, in the next content.
//! - [`Options::gemini_missing_signature`] is put on the first call of a model content that has no
//!   native signature (by default [`GEMINI_SKIP_SIGNATURE`] for Gemini 3 and later models), and
//!   it and the documented placeholders are ignored when read back.
//! - Empty text parts are not sent (Gemini rejects an empty text parameter), nor files another
//!   provider stores (`file_ref`).

mod decode;
mod responses;

pub(crate) use decode::{GEMINI_GENERATED, decode};

use serde_json::{Map, Value, json};

use crate::canonical::{Image, ImageSource, Role, ToolCall, Turn};

use crate::translate::anthropic::note_provider_id;
use crate::translate::arguments;
use crate::translate::backend::{Backend, Format, GEMINI_SKIP_SIGNATURE, Options};
use crate::translate::file_ref;
use crate::translate::ids;
use crate::translate::loss::{LossKind, Losses};
use crate::translate::media;
use crate::translate::normalize::{PieceKind, Plan};
use crate::translate::thinking::{self, Verdict};

/// The `thoughtSignature` for a model content's first call that has none of its own:
/// [`Options::gemini_missing_signature`], or by default Google's documented placeholder for
/// Gemini 3 and later, which reject unsigned calls (earlier models take them as they are).
fn missing_signature(backend: &Backend, options: &Options) -> Option<String> {
    options.gemini_missing_signature.clone().or_else(|| {
        let model = backend.model.as_deref()?;
        let model = model.strip_prefix("models/").unwrap_or(model);
        let major: String = model
            .strip_prefix("gemini-")?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let major: u32 = major.parse().ok()?;
        (major >= 3).then(|| GEMINI_SKIP_SIGNATURE.to_owned())
    })
}

/// Key of a function response that counts the image parts following it.
pub const ATTACHED_IMAGES_KEY: &str = "attached_images";

/// Writes the planned turns as Gemini contents.
pub(crate) fn encode(
    plan: &Plan<'_>,
    turns: &[Turn],
    backend: &Backend,
    options: &Options,
    losses: &mut Losses,
) -> Vec<Value> {
    let mut contents: Vec<Content> = Vec::with_capacity(plan.turns.len());
    for turn in &plan.turns {
        let mut parts = Parts::default();
        // `normalize` puts a user turn's results first: their parts lead the content.
        responses::write(&turn.pieces, &mut parts, backend, options, losses);
        let mut first_call = true;
        for piece in &turn.pieces {
            let at = piece.at;
            match &piece.kind {
                PieceKind::Text(text) if text.is_empty() => losses.part(
                    at,
                    LossKind::Dropped,
                    "empty text part; gemini rejects an empty text parameter",
                ),
                PieceKind::Text(text) => parts.push(json!({"text": text})),
                PieceKind::Image(image) => {
                    parts.extend(image_part(image, backend, at, losses));
                }
                PieceKind::Thinking(t) => {
                    let owner = turns[at.0].provider.as_deref();
                    if thinking::classify(t, owner, backend, options) == Verdict::Foreign {
                        if let Some(text) = thinking::foreign(t, backend, options, at, losses) {
                            parts.push(json!({"text": text}));
                        }
                        continue;
                    }
                    let Some(signature) = &t.signature else {
                        parts.push_thought(json!({"text": t.text, "thought": true}));
                        continue;
                    };
                    thinking::note_restamp(signature, backend, at, losses);
                    if t.text.is_empty() {
                        // Rides on the next part, unless that is a thought of its own.
                        parts.flush();
                        parts.pending = Some(signature.value.clone());
                    } else {
                        parts.push_thought(json!({
                            "text": t.text,
                            "thought": true,
                            "thoughtSignature": signature.value,
                        }));
                    }
                }
                PieceKind::Call(call) => {
                    if first_call && parts.pending.is_none() {
                        parts.pending = missing_signature(backend, options);
                        parts.pending_is_placeholder = parts.pending.is_some();
                    }
                    first_call = false;
                    parts.push(function_call(call, options, at, losses));
                }
                // Written above.
                PieceKind::Result { .. } => {}
            }
        }
        if parts.list.is_empty() && parts.pending.is_none() {
            continue;
        }
        let role = match turn.role {
            Role::User => "user",
            Role::Assistant => "model",
        };
        // Gemini refuses a function call that follows a model turn (400: it must come right
        // after a user turn or function responses); a log can hold a model's text and its calls
        // as turns in a row. The run of model turns before the calls becomes one turn with
        // them, which reads back as that one turn (so sending it again sends the same: a
        // signature waiting at the end of an earlier turn rides on the calls' turn's first part,
        // as it would in one turn).
        let calls = turn
            .pieces
            .iter()
            .any(|p| matches!(p.kind, PieceKind::Call(_)));
        let mut index = turn.index;
        if role == "model" && calls {
            while contents.last().is_some_and(|c| c.role == "model") {
                let Some(previous) = contents.pop() else {
                    break;
                };
                parts = previous.parts.followed_by(parts);
                losses.turn(
                    index,
                    LossKind::Merged,
                    format!(
                        "merged into model turn {}: gemini takes a function call only right \
                         after a user turn or function responses",
                        previous.index
                    ),
                );
                index = previous.index;
            }
        }
        contents.push(Content { role, parts, index });
    }
    contents
        .into_iter()
        .map(|mut c| {
            c.parts.flush();
            json!({"role": c.role, "parts": c.parts.list})
        })
        .collect()
}

/// One content being written: its role, its parts (a signature may still wait for a next
/// part) and the turn it was written for.
struct Content {
    role: &'static str,
    parts: Parts,
    index: usize,
}

/// Parts of one content, with a signature waiting for the next part.
#[derive(Default)]
pub(super) struct Parts {
    pub(super) list: Vec<Value>,
    pending: Option<String>,
    /// The waiting signature is the configured placeholder, not a native one.
    pending_is_placeholder: bool,
    /// The first part's `thoughtSignature` is the placeholder.
    placeholder_first: bool,
}

impl Parts {
    pub(super) fn push(&mut self, mut part: Value) {
        if let (Some(signature), Value::Object(map)) = (self.pending.take(), &mut part) {
            map.insert("thoughtSignature".into(), json!(signature));
            self.placeholder_first |= self.list.is_empty() && self.pending_is_placeholder;
        }
        self.pending_is_placeholder = false;
        self.list.push(part);
    }

    /// Writes a waiting signature as an empty thought of its own.
    fn flush(&mut self) {
        if let Some(signature) = self.pending.take() {
            self.list
                .push(json!({"text": "", "thought": true, "thoughtSignature": signature}));
        }
        self.pending_is_placeholder = false;
    }

    /// A thought part never carries another part's signature.
    fn push_thought(&mut self, part: Value) {
        self.flush();
        self.list.push(part);
    }

    pub(super) fn extend(&mut self, parts: impl IntoIterator<Item = Value>) {
        for part in parts {
            self.push(part);
        }
    }

    /// These parts, then `later`'s, as one content: a signature waiting at the end of these rides
    /// on `later`'s first part, as it would have had both been written as one turn (over the
    /// placeholder, which a native signature makes unneeded), unless that part is a thought or
    /// has a signature of its own.
    fn followed_by(mut self, mut later: Parts) -> Parts {
        let mut rode = false;
        if let Some(signature) = self.pending.take() {
            match later.list.first_mut() {
                Some(Value::Object(first))
                    if first.get("thought") != Some(&Value::Bool(true))
                        && (!first.contains_key("thoughtSignature") || later.placeholder_first) =>
                {
                    first.insert("thoughtSignature".into(), json!(signature));
                    rode = true;
                }
                _ => self
                    .list
                    .push(json!({"text": "", "thought": true, "thoughtSignature": signature})),
            }
        }
        let placeholder_first = self.list.is_empty() && !rode && later.placeholder_first;
        self.list.append(&mut later.list);
        Parts {
            list: self.list,
            pending: later.pending,
            pending_is_placeholder: later.pending_is_placeholder,
            placeholder_first,
        }
    }
}

fn function_call(
    call: &ToolCall,
    options: &Options,
    at: (usize, usize),
    losses: &mut Losses,
) -> Value {
    let (args, repair) = arguments::as_object(&call.input);
    if let Some(repair) = repair {
        losses.part(at, LossKind::Changed, repair);
    }
    note_provider_id(call, "gemini", at, losses);
    let mut body = Map::new();
    if options.gemini_call_ids {
        body.insert(
            "id".into(),
            json!(ids::send(Format::Gemini, &call.id, at, losses)),
        );
    } else {
        losses.part(
            at,
            LossKind::Changed,
            format!(
                "tool call id {:?} not sent (gemini_call_ids is off); reads back generated",
                call.id
            ),
        );
    }
    body.insert("name".into(), json!(call.name));
    body.insert("args".into(), args.into_owned());
    json!({"functionCall": body})
}

/// Whether a `fileData.fileUri` reads back as a URL (rather than a provider file).
fn is_url(uri: &str) -> bool {
    (uri.starts_with("https://") || uri.starts_with("http://"))
        && !uri.contains("generativelanguage.googleapis.com/")
}

fn image_part(
    image: &Image,
    backend: &Backend,
    at: (usize, usize),
    losses: &mut Losses,
) -> Option<Value> {
    if !file_ref::sendable(image, Format::Gemini, backend, at, losses) {
        return None;
    }
    let (uri, is_url_source) = match &image.source {
        ImageSource::Base64 { data } => {
            let declared = image.media_type.as_deref();
            let mime = media::inline_media_type(declared, data, Format::Gemini, at, losses)?;
            return Some(json!({"inlineData": {"mimeType": mime, "data": data}}));
        }
        ImageSource::Url { url } => (url, true),
        ImageSource::File { file_id } => (file_id, false),
    };
    if is_url(uri) != is_url_source {
        losses.part(
            at,
            LossKind::Changed,
            format!(
                "image {uri:?} reads back as a {}",
                if is_url_source { "file" } else { "url" }
            ),
        );
    }
    let mut file = Map::new();
    if let Some(mime) = &image.media_type {
        file.insert("mimeType".into(), json!(mime));
    }
    file.insert("fileUri".into(), json!(uri));
    Some(json!({"fileData": file}))
}
