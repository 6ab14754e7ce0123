//! The JSON shapes that cross the C ABI, in both directions.
//!
//! Out: the store's types (`Session`, `StoredEpisode`, `TimelinePage`...) deliberately carry no
//! serde derives in the core, so their wire form is defined here, once, and documented in
//! `docs/ffi.md`. Field names follow the Rust fields; times codeoid stamps are RFC 3339 UTC with
//! milliseconds; absent optional values are `null`. Types that already derive `Serialize` in the
//! core and hold no such time (`Turn`, `Decision`, `SeedBlock`, translation losses, the import
//! summary) are passed through; a canonical turn's `timestamp` is the turn's own, kept at the
//! precision it was recorded with. `TurnOutcome` is written here, for its rotation's time.
//!
//! In: small option objects with `deny_unknown_fields`, so a typo is an error rather than a
//! silently ignored setting.

use chrono::{DateTime, SecondsFormat, Utc};
use codeoid_core::compress::Compressed;
use codeoid_core::memory::{RotationOutcome, TurnOutcome};
use codeoid_core::retrieve::{EmbeddingPhase, EmbeddingStatus, Hit, RecallFilters, RecallQuery};
use codeoid_core::store::{
    EpisodeHeader, Lineage, NewSession, Recorded, Session, StoredEpisode, StoredPath, TimelinePage,
    TimelineQuery,
};
use codeoid_core::tools::{DiskState, FileRecall};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Failure, FfiResult};
use crate::strings::codeoid_string;

/// Serializes `value` into `out`.
pub(crate) fn write(out: &mut codeoid_string, value: &impl serde::Serialize) -> FfiResult<()> {
    let text = serde_json::to_string(value).map_err(|e| Failure {
        code: crate::error::CODEOID_ERROR_INTERNAL,
        message: format!("cannot serialize a result as JSON: {e}"),
    })?;
    *out = codeoid_string::from_string(text);
    Ok(())
}

/// RFC 3339 UTC with milliseconds.
pub(crate) fn time(at: DateTime<Utc>) -> Value {
    Value::String(at.to_rfc3339_opts(SecondsFormat::Millis, true))
}

fn optional_time(at: Option<DateTime<Utc>>) -> Value {
    at.map_or(Value::Null, time)
}

/// A session.
pub(crate) fn session(s: &Session) -> Value {
    json!({
        "id": s.id,
        "workspace_id": s.workspace_id,
        "name": s.name,
        "provider": s.provider,
        "model": s.model,
        "root": s.root.to_string_lossy(),
        "created_at": time(s.created_at),
        "lineage": s.lineage.as_ref().map(lineage),
        "rotation_count": s.rotation_count,
        "last_rotation_at": optional_time(s.last_rotation_at),
        "backing_context_id": s.backing_context_id,
        "finished_at": optional_time(s.finished_at),
        "first_intent": s.first_intent,
        "last_activity_at": time(s.last_activity_at),
        "turn_count": s.turn_count,
    })
}

fn lineage(l: &Lineage) -> Value {
    json!({
        "parent_session_id": l.parent_session_id,
        "parent_name": l.parent_name,
        "at_turn": l.at_turn,
        "kind": l.kind.as_str(),
    })
}

/// An episode's header (what timeline pages list).
pub(crate) fn header(h: &EpisodeHeader) -> Value {
    serde_json::to_value(HeaderOut::from(h)).unwrap_or(Value::Null)
}

/// A whole episode: the header's fields, then content, paths and blobs. Serialized straight from
/// borrowed fields (no intermediate `Value`), since episodes are the largest and most frequent
/// reads.
pub(crate) fn episode(e: &StoredEpisode) -> EpisodeOut<'_> {
    EpisodeOut {
        header: HeaderOut::from(&e.header),
        content: &e.content,
        paths: e.paths.iter().map(PathOut::from).collect(),
        blobs: e
            .blobs
            .iter()
            .map(|b| BlobOut {
                role: &b.role,
                blob_id: &b.blob_id,
                len: b.len,
            })
            .collect(),
    }
}

/// The JSON shape of an episode header.
#[derive(Serialize)]
pub(crate) struct HeaderOut<'a> {
    id: &'a str,
    workspace_id: &'a str,
    session_id: &'a str,
    turn_seq: u64,
    kind: &'static str,
    tool_name: Option<&'a str>,
    call_id: Option<&'a str>,
    status: &'static str,
    summary: &'a str,
    created_at: String,
    token_estimate: u64,
}

impl<'a> From<&'a EpisodeHeader> for HeaderOut<'a> {
    fn from(h: &'a EpisodeHeader) -> HeaderOut<'a> {
        HeaderOut {
            id: &h.id,
            workspace_id: &h.workspace_id,
            session_id: &h.session_id,
            turn_seq: h.turn_seq,
            kind: h.kind.as_str(),
            tool_name: h.tool_name.as_deref(),
            call_id: h.call_id.as_deref(),
            status: h.status.as_str(),
            summary: &h.summary,
            created_at: h.created_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            token_estimate: h.token_estimate,
        }
    }
}

/// The JSON shape of a whole episode: the header's fields, then content, paths and blobs.
#[derive(Serialize)]
pub(crate) struct EpisodeOut<'a> {
    #[serde(flatten)]
    header: HeaderOut<'a>,
    content: &'a str,
    paths: Vec<PathOut<'a>>,
    blobs: Vec<BlobOut<'a>>,
}

/// The JSON shape of an episode's file path.
#[derive(Serialize)]
pub(crate) struct PathOut<'a> {
    given: &'a str,
    relative: &'a str,
    access: &'static str,
    content_hash: Option<&'a str>,
}

impl<'a> From<&'a StoredPath> for PathOut<'a> {
    fn from(p: &'a StoredPath) -> PathOut<'a> {
        PathOut {
            given: &p.given,
            relative: &p.relative,
            access: p.access.as_str(),
            content_hash: p.content_hash.as_deref(),
        }
    }
}

/// The JSON shape of a raw blob reference.
#[derive(Serialize)]
struct BlobOut<'a> {
    role: &'a str,
    blob_id: &'a str,
    len: u64,
}

/// The JSON shape of a recall hit: the episode header's fields, then `content`, `paths`, the
/// fused `score`, its four `components` and its `relevance`.
#[derive(Serialize)]
pub(crate) struct HitOut<'a> {
    #[serde(flatten)]
    header: HeaderOut<'a>,
    content: &'a str,
    paths: Vec<PathOut<'a>>,
    score: f64,
    components: ComponentsOut,
    relevance: RelevanceOut<'a>,
}

/// How relevant a hit is on its own (`codeoid_core::retrieve::Relevance`): the query terms its
/// text holds, their share of the query's term weight, its similarity lift and whether it is
/// weak.
#[derive(Serialize)]
struct RelevanceOut<'a> {
    terms: usize,
    held: &'a [String],
    share: f64,
    lift: Option<f64>,
    lift_needed: Option<f64>,
    weak: bool,
}

/// The four signals of a hit, each in [0, 1].
#[derive(Serialize)]
struct ComponentsOut {
    vec: f64,
    bm25: f64,
    recency: f64,
    path: f64,
}

/// A recall hit.
pub(crate) fn hit(h: &Hit) -> HitOut<'_> {
    HitOut {
        header: HeaderOut::from(&h.header),
        content: &h.content,
        paths: h.paths.iter().map(PathOut::from).collect(),
        score: h.score,
        components: ComponentsOut {
            vec: h.components.vec,
            bm25: h.components.bm25,
            recency: h.components.recency,
            path: h.components.path,
        },
        relevance: RelevanceOut {
            terms: h.relevance.terms,
            held: &h.relevance.held,
            share: h.relevance.share,
            lift: h.relevance.lift,
            lift_needed: h.relevance.lift_needed,
            weak: h.relevance.weak,
        },
    }
}

/// The latest read of a file: `{"episode", "path", "disk": {"state", "reason"}, "later_write",
/// "part", "passed_over"}` (`passed_over`: `{"episode": header, "part"}`, the later read of
/// part of the file that an earlier whole read of the same content was chosen over).
pub(crate) fn file_recall(f: &FileRecall) -> Value {
    let (state, reason) = match &f.disk {
        DiskState::Unchanged => ("unchanged", None),
        DiskState::Changed => ("changed", None),
        DiskState::Deleted => ("deleted", None),
        DiskState::Unknown(why) => ("unknown", Some(why.as_str())),
    };
    json!({
        "episode": episode(&f.episode),
        "path": PathOut::from(&f.path),
        "disk": {"state": state, "reason": reason},
        "later_write": f.later_write.as_ref().map(header),
        "part": f.part.as_ref().map(ToString::to_string),
        "passed_over": f.passed_over.as_ref().map(|p| json!({
            "episode": header(&p.header),
            "part": p.part.to_string(),
        })),
    })
}

/// The embedding worker's progress.
pub(crate) fn embedding_status(s: &EmbeddingStatus) -> Value {
    let phase = match s.phase {
        EmbeddingPhase::Downloading => "downloading",
        EmbeddingPhase::Loading => "loading",
        EmbeddingPhase::Ready => "ready",
        EmbeddingPhase::Unavailable => "unavailable",
        EmbeddingPhase::Disabled => "disabled",
    };
    json!({
        "phase": phase,
        "model_id": s.model_id,
        "indexed_episodes": s.indexed_episodes,
        "indexed_windows": s.indexed_windows,
        "index_bytes": s.index_bytes,
        "failed_episodes": s.failed_episodes,
    })
}

/// The options of `codeoid_memory_recall`, every field optional (the query text is an argument
/// of its own, so C callers need not escape it into JSON).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecallOptions {
    limit: Option<usize>,
    #[serde(default)]
    filters: FilterOptions,
    #[serde(default)]
    include_current_session: bool,
    as_of: Option<DateTime<Utc>>,
}

/// The filters of a recall, every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilterOptions {
    session_id: Option<String>,
    exclude_session_id: Option<String>,
    tool_name: Option<String>,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    #[serde(default)]
    paths: Vec<String>,
}

impl RecallOptions {
    /// The query for `text` with these options; the core validates the limit and time range.
    pub(crate) fn into_query(self, text: &str) -> RecallQuery {
        let defaults = RecallQuery::new(text);
        let f = self.filters;
        RecallQuery {
            limit: self.limit.unwrap_or(defaults.limit),
            filters: RecallFilters {
                session_id: f.session_id,
                exclude_session_id: f.exclude_session_id,
                tool_name: f.tool_name,
                since: f.since,
                until: f.until,
                paths: f.paths,
                ..RecallFilters::default()
            },
            include_current_session: self.include_current_session,
            as_of: self.as_of,
            ..defaults
        }
    }
}

/// A timeline page: `{"episodes": [header...], "next": query or null}`.
pub(crate) fn timeline_page(page: &TimelinePage) -> Value {
    json!({
        "episodes": page.episodes.iter().map(header).collect::<Vec<_>>(),
        "next": page.next.as_ref().map(|q| json!({
            "offset": q.offset,
            "limit": q.limit,
            "before": q.before,
        })),
    })
}

/// A rotation that happened: `{"count", "at", "episode_id", "backing_context_id", "seed"}`.
pub(crate) fn rotation(r: &RotationOutcome) -> Value {
    json!({
        "count": r.count,
        "at": time(r.at),
        "episode_id": r.episode_id,
        "backing_context_id": r.backing_context_id,
        "seed": r.seed,
    })
}

/// What recording one turn did: `{"recorded", "decision", "rotation", "rotation_refused"}`.
pub(crate) fn turn_outcome(o: &TurnOutcome) -> Value {
    json!({
        "recorded": recorded(&o.recorded),
        "decision": o.decision,
        "rotation": o.rotation.as_ref().map(rotation),
        "rotation_refused": o.rotation_refused,
    })
}

/// What recording a turn did.
pub(crate) fn recorded(r: &Recorded) -> Value {
    json!({
        "turn_id": r.turn_id,
        "seq": r.seq,
        "duplicate": r.duplicate,
        "episode_ids": r.episode_ids,
    })
}

/// A compression result, with the hint line for `episode_id` when one is known.
pub(crate) fn compressed(c: &Compressed, episode_id: Option<&str>) -> Value {
    json!({
        "text": c.text,
        "rule": c.rule,
        "bytes_in": c.bytes_in,
        "bytes_out": c.bytes_out,
        "kept_ratio": c.kept_ratio,
        "hint": episode_id.map(|id| c.hint(id)),
    })
}

/// The options of `codeoid_memory_start_session`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionOptions {
    id: Option<String>,
    name: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    created_at: Option<DateTime<Utc>>,
    backing_context_id: Option<String>,
}

impl From<SessionOptions> for NewSession {
    fn from(o: SessionOptions) -> NewSession {
        NewSession {
            id: o.id,
            name: o.name,
            provider: o.provider,
            model: o.model,
            created_at: o.created_at,
            lineage: None,
            backing_context_id: o.backing_context_id,
        }
    }
}

/// The query of `codeoid_memory_timeline`: every field optional, defaults of `TimelineQuery`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TimelineOptions {
    offset: Option<u64>,
    limit: Option<u64>,
    before: Option<String>,
}

impl From<TimelineOptions> for TimelineQuery {
    fn from(o: TimelineOptions) -> TimelineQuery {
        let defaults = TimelineQuery::default();
        TimelineQuery {
            offset: o.offset.unwrap_or(defaults.offset),
            limit: o.limit.unwrap_or(defaults.limit),
            before: o.before,
        }
    }
}

/// Lays the keys of the JSON object `overrides` over `base` (serialized) and reads the result
/// back, so a caller can change one setting of a config whose type requires every field. Nested
/// objects merge key by key; a key the config does not have is an error naming it, so a typo is
/// never silently ignored.
pub(crate) fn overlay<T>(base: &T, overrides: Option<&Value>, name: &str) -> FfiResult<T>
where
    T: serde::Serialize + serde::de::DeserializeOwned + Clone,
{
    let Some(overrides) = overrides else {
        return Ok(base.clone());
    };
    let mut merged =
        serde_json::to_value(base).map_err(|e| Failure::invalid_input(format!("`{name}`: {e}")))?;
    merge(&mut merged, overrides, name)?;
    serde_json::from_value(merged).map_err(|e| {
        Failure::invalid_input(format!(
            "`{name}` has an invalid setting: {e}; see docs/ffi.md"
        ))
    })
}

/// Merges `changes` into `base` at `path`, rejecting keys `base` does not have.
fn merge(base: &mut Value, changes: &Value, path: &str) -> FfiResult<()> {
    let (Value::Object(map), Value::Object(changes)) = (&mut *base, changes) else {
        return Err(Failure::invalid_input(format!(
            "`{path}` must be a JSON object of settings to change; got {changes}"
        )));
    };
    for (key, value) in changes {
        let Some(slot) = map.get_mut(key) else {
            let known: Vec<&str> = map.keys().map(String::as_str).collect();
            return Err(Failure::invalid_input(format!(
                "`{path}` has no setting {key:?}; known settings: {}",
                known.join(", ")
            )));
        };
        if slot.is_object() && value.is_object() {
            merge(slot, value, &format!("{path}.{key}"))?;
        } else {
            *slot = value.clone();
        }
    }
    Ok(())
}
