//! Sessions: creation (idempotent for a known id), lookup, per-workspace order, lineage and the
//! rotation fields (recording a rotation lives in `rotation`).
//!
//! Invariants:
//! - A session belongs to exactly one workspace, fixed at creation, and remembers the checkout
//!   root it ran in (episode paths are made relative to it).
//! - Sessions of a workspace are ordered by `(created_at, pk)`; `prior session #N` is a session's
//!   1-based position in that order, so labels are deterministic for the same contents.
//! - Creating a session with an id that exists in the same workspace returns the existing one
//!   (re-imports are idempotent); in another workspace it is [`ErrorKind::AlreadyExists`].
//!
//! It deliberately does not decide when to rotate or how to fork: it stores what those layers
//! decided.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use super::connection::db_error;
use super::workspace::Workspace;
use super::{Store, fresh_id, from_millis, to_millis};
use crate::canonical::check_timestamp;
use crate::error::{Error, ErrorKind, Result};

/// How a session descends from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineageKind {
    /// A copy of another session's conversation, continued independently.
    Fork,
    /// A subagent (sidechain) conversation started by another session.
    Subagent,
}

impl LineageKind {
    /// `"fork"` or `"subagent"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            LineageKind::Fork => "fork",
            LineageKind::Subagent => "subagent",
        }
    }

    fn parse(s: &str) -> Result<LineageKind> {
        match s {
            "fork" => Ok(LineageKind::Fork),
            "subagent" => Ok(LineageKind::Subagent),
            other => Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "unknown lineage kind {other:?} in the store; was it written by a newer codeoid?"
                ),
            )),
        }
    }
}

/// Where a session came from (DESIGN §7: `{parent_session_id, parent_name, at_turn}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lineage {
    /// The parent session's id.
    pub parent_session_id: String,
    /// The parent's name at the time, when it had one.
    pub parent_name: Option<String>,
    /// The parent's turn sequence number the copy was taken at (`None`: the tip).
    pub at_turn: Option<u64>,
    /// Fork or subagent.
    pub kind: LineageKind,
}

/// What to create. `Default` is an anonymous session created now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewSession {
    /// The id to use (an imported log's session id); `None` mints `ses_` + 16 hex digits.
    pub id: Option<String>,
    /// A human name.
    pub name: Option<String>,
    /// Provider of the primary conversation (`"anthropic"`...).
    pub provider: Option<String>,
    /// Model of the primary conversation.
    pub model: Option<String>,
    /// When the session started; `None` means now.
    pub created_at: Option<DateTime<Utc>>,
    /// Where the session came from.
    pub lineage: Option<Lineage>,
    /// The provider-side context (conversation) id currently backing the session.
    pub backing_context_id: Option<String>,
}

/// Descriptive fields of a session that may change after it was created (an imported log gains
/// a title, or moves to another model, as it grows). `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionUpdate {
    /// A human name.
    pub name: Option<String>,
    /// Provider of the primary conversation.
    pub provider: Option<String>,
    /// Model of the primary conversation.
    pub model: Option<String>,
    /// Where the session came from (an imported subagent's link to the call that started it
    /// may only appear once its parent's log has grown).
    pub lineage: Option<Lineage>,
}

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Session id.
    pub id: String,
    /// Workspace it belongs to.
    pub workspace_id: String,
    /// Human name.
    pub name: Option<String>,
    /// Provider of the primary conversation.
    pub provider: Option<String>,
    /// Model of the primary conversation.
    pub model: Option<String>,
    /// Checkout root the session ran in.
    pub root: PathBuf,
    /// When it started.
    pub created_at: DateTime<Utc>,
    /// Where it came from.
    pub lineage: Option<Lineage>,
    /// How many times its backing context was rotated.
    pub rotation_count: u64,
    /// When it was last rotated.
    pub last_rotation_at: Option<DateTime<Utc>>,
    /// The provider-side context id currently backing it.
    pub backing_context_id: Option<String>,
    /// When it was closed ([`Store::finish_session`], or an import's finish), while no turn has
    /// followed; `None` again once more turns are recorded (a resumed session).
    pub finished_at: Option<DateTime<Utc>>,
    /// The first prompt the person typed (compaction summaries and injected text excluded); for
    /// a subagent session, the brief it was given.
    pub first_intent: Option<String>,
    /// Time of the latest turn or episode.
    pub last_activity_at: DateTime<Utc>,
    /// Number of turns recorded (the next turn's sequence number).
    pub turn_count: u64,
}

impl Session {
    /// How text a model reads names the session: its name, else the first prompt the person
    /// typed (which says what the session is about), else its id.
    pub fn display_name(&self) -> &str {
        self.name
            .as_deref()
            .or(self.first_intent.as_deref())
            .unwrap_or(&self.id)
    }
}

pub(crate) const COLUMNS: &str = "id, workspace_id, name, provider, model, root, created_at, \
     parent_session_id, parent_name, at_turn, lineage_kind, rotation_count, last_rotation_at, \
     backing_context_id, finished_at, first_intent, last_activity_at, turn_count";

pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<Result<Session>> {
    let parent: Option<String> = row.get(7)?;
    let lineage_kind: Option<String> = row.get(10)?;
    let lineage = match (parent, lineage_kind) {
        (Some(parent_session_id), Some(kind)) => match LineageKind::parse(&kind) {
            Ok(kind) => Some(Lineage {
                parent_session_id,
                parent_name: row.get(8)?,
                at_turn: row.get::<_, Option<i64>>(9)?.map(|n| n as u64),
                kind,
            }),
            Err(e) => return Ok(Err(e)),
        },
        _ => None,
    };
    Ok(Ok(Session {
        id: row.get(0)?,
        workspace_id: row.get(1)?,
        name: row.get(2)?,
        provider: row.get(3)?,
        model: row.get(4)?,
        root: PathBuf::from(row.get::<_, String>(5)?),
        created_at: from_millis(row.get(6)?),
        lineage,
        rotation_count: row.get::<_, i64>(11)? as u64,
        last_rotation_at: row.get::<_, Option<i64>>(12)?.map(from_millis),
        backing_context_id: row.get(13)?,
        finished_at: row.get::<_, Option<i64>>(14)?.map(from_millis),
        first_intent: row.get(15)?,
        last_activity_at: from_millis(row.get(16)?),
        turn_count: row.get::<_, i64>(17)? as u64,
    }))
}

/// The session `id`, or `None`.
pub(crate) fn find(conn: &Connection, id: &str) -> Result<Option<Session>> {
    let context = || format!("cannot read session {id:?}");
    let sql = format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1");
    let found = conn
        .prepare_cached(&sql)
        .and_then(|mut stmt| stmt.query_row([id], from_row).optional())
        .map_err(|e| db_error(&context(), e))?;
    found.transpose()
}

/// The session `id`, or a [`ErrorKind::NotFound`] error naming it.
pub(crate) fn require(conn: &Connection, id: &str) -> Result<Session> {
    if id.is_empty() {
        return Err(Error::invalid_input(
            "session id is empty; use the id of a started or listed session",
        ));
    }
    find(conn, id)?.ok_or_else(|| not_found(id))
}

pub(crate) fn not_found(id: &str) -> Error {
    Error::not_found(format!(
        "session {id:?} not found; start it first, or use the id of a listed session"
    ))
}

/// 1-based position of `session` among its workspace's sessions, by `(created_at, pk)`.
pub(crate) fn ordinal(conn: &Connection, session_id: &str) -> Result<u64> {
    let sql = "SELECT count(*) FROM sessions o, sessions s
               WHERE s.id = ?1 AND o.workspace_id = s.workspace_id
                 AND (o.created_at, o.pk) <= (s.created_at, s.pk)";
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.query_row([session_id], |r| r.get::<_, i64>(0)))
        .map(|n| n as u64)
        .map_err(|e| db_error(&format!("cannot order session {session_id:?}"), e))
}

/// Inserts the row of a new session `id` in workspace `workspace_id` (already registered).
pub(crate) fn insert(
    tx: &Transaction<'_>,
    id: &str,
    workspace_id: &str,
    root: &str,
    new: &NewSession,
    created: DateTime<Utc>,
) -> Result<()> {
    let lineage = new.lineage.as_ref();
    tx.prepare_cached(
        "INSERT INTO sessions (id, workspace_id, name, provider, model, root, created_at,
             parent_session_id, parent_name, at_turn, lineage_kind, backing_context_id,
             last_activity_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?7)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            id,
            workspace_id,
            new.name,
            new.provider,
            new.model,
            root,
            to_millis(created),
            lineage.map(|l| &l.parent_session_id),
            lineage.and_then(|l| l.parent_name.as_ref()),
            lineage.and_then(|l| l.at_turn).map(|n| n as i64),
            lineage.map(|l| l.kind.as_str()),
            new.backing_context_id,
        ])
    })
    .map_err(|e| db_error(&format!("cannot create session {id:?}"), e))?;
    Ok(())
}

impl Store {
    /// Creates a session in `workspace` (registering the workspace on first use). With an id that
    /// already exists in the same workspace, returns the existing session unchanged.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidInput`] for an empty id; [`ErrorKind::AlreadyExists`] when the id
    /// belongs to another workspace's session.
    pub fn create_session(&self, workspace: &Workspace, new: NewSession) -> Result<Session> {
        self.create_or_find_session(workspace, new)
            .map(|(session, _)| session)
    }

    /// [`Store::create_session`], also saying whether this call created the session (`false`:
    /// it existed, perhaps created by another process since the caller last looked).
    ///
    /// # Errors
    /// As [`Store::create_session`].
    pub(crate) fn create_or_find_session(
        &self,
        workspace: &Workspace,
        new: NewSession,
    ) -> Result<(Session, bool)> {
        if let Some(id) = &new.id {
            if id.trim().is_empty() {
                return Err(Error::invalid_input(
                    "session id is empty; omit it to let the store mint one",
                ));
            }
        }
        if let Some(id) = new.id.as_deref().filter(|id| id.contains('\0')) {
            return Err(Error::invalid_input(format!(
                "session id {id:?} holds a NUL character; ids are printable text"
            )));
        }
        if let Some(at) = new.created_at {
            check_timestamp(at, "session created_at")?;
        }
        if let Some(lineage) = &new.lineage {
            if lineage.parent_session_id.trim().is_empty() {
                return Err(Error::invalid_input(
                    "lineage parent_session_id is empty; name the parent session",
                ));
            }
        }
        let id = new
            .id
            .clone()
            .unwrap_or_else(|| fresh_id("ses_", workspace.id()));
        let created = new.created_at.unwrap_or_else(Utc::now);
        let root = workspace.root().to_string_lossy().into_owned();
        self.write(&format!("cannot create session {id:?}"), |tx| {
            let context = format!("cannot create session {id:?}");
            tx.prepare_cached(
                "INSERT OR IGNORE INTO workspaces (id, tenant, key, root, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    workspace.id(),
                    workspace.tenant(),
                    workspace.key(),
                    root,
                    to_millis(created)
                ])
            })
            .map_err(|e| db_error(&context, e))?;
            if let Some(existing) = find(tx, &id)? {
                if existing.workspace_id == workspace.id() {
                    return Ok((existing, false));
                }
                return Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!(
                        "session {id:?} already exists in workspace {}; session ids are global, \
                         pick another id for workspace {}",
                        existing.workspace_id,
                        workspace.id()
                    ),
                ));
            }
            insert(tx, &id, workspace.id(), &root, &new, created)?;
            Ok((require(tx, &id)?, true))
        })
    }

    /// The session `id`.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when there is no such session.
    pub fn session(&self, id: &str) -> Result<Session> {
        self.read(|conn| require(conn, id))
    }

    /// The sessions of `workspace_id`, oldest first (the order behind `prior session #N`).
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn sessions(&self, workspace_id: &str) -> Result<Vec<Session>> {
        self.read(|conn| {
            let sql = format!(
                "SELECT {COLUMNS} FROM sessions WHERE workspace_id = ?1 ORDER BY created_at, pk"
            );
            let rows = conn
                .prepare_cached(&sql)
                .and_then(|mut stmt| {
                    stmt.query_map([workspace_id], from_row)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| db_error(&format!("cannot list sessions of {workspace_id}"), e))?;
            rows.into_iter().collect()
        })
    }

    /// The 1-based position of session `id` in its workspace (`prior session #N`).
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when there is no such session.
    pub fn session_ordinal(&self, id: &str) -> Result<u64> {
        self.read(|conn| {
            require(conn, id)?;
            ordinal(conn, id)
        })
    }

    /// Sets the fields of `update` that are `Some` on session `id` (the lineage as a whole) and
    /// returns the session. Writes nothing when they already hold those values (re-imports stay
    /// read-only).
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when there is no such session; [`ErrorKind::InvalidInput`] for a
    /// name that is empty.
    pub fn update_session(&self, id: &str, update: &SessionUpdate) -> Result<Session> {
        if update.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(Error::invalid_input(format!(
                "the new name of session {id:?} is empty; leave it out to keep the current name"
            )));
        }
        if let Some(lineage) = &update.lineage {
            if lineage.parent_session_id.trim().is_empty() {
                return Err(Error::invalid_input(
                    "lineage parent_session_id is empty; name the parent session",
                ));
            }
        }
        let current = self.session(id)?;
        let kept = |new: &Option<String>, old: &Option<String>| new.is_none() || new == old;
        if kept(&update.name, &current.name)
            && kept(&update.provider, &current.provider)
            && kept(&update.model, &current.model)
            && (update.lineage.is_none() || update.lineage == current.lineage)
        {
            return Ok(current);
        }
        let context = format!("cannot update session {id:?}");
        self.write(&context, |tx| {
            let changed = tx
                .execute(
                    "UPDATE sessions SET name = coalesce(?2, name),
                         provider = coalesce(?3, provider), model = coalesce(?4, model)
                     WHERE id = ?1",
                    params![id, update.name, update.provider, update.model],
                )
                .map_err(|e| db_error(&context, e))?;
            if let Some(lineage) = &update.lineage {
                tx.execute(
                    "UPDATE sessions SET parent_session_id = ?2, parent_name = ?3, at_turn = ?4,
                         lineage_kind = ?5
                     WHERE id = ?1",
                    params![
                        id,
                        lineage.parent_session_id,
                        lineage.parent_name,
                        lineage.at_turn.map(|n| n as i64),
                        lineage.kind.as_str()
                    ],
                )
                .map_err(|e| db_error(&context, e))?;
            }
            if changed == 0 {
                return Err(not_found(id));
            }
            require(tx, id)
        })
    }

    /// Sets (or clears) the provider-side context id backing session `id`.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when there is no such session.
    pub fn set_backing_context(&self, id: &str, backing_context_id: Option<&str>) -> Result<()> {
        self.write(&format!("cannot update session {id:?}"), |tx| {
            let changed = tx
                .execute(
                    "UPDATE sessions SET backing_context_id = ?2 WHERE id = ?1",
                    params![id, backing_context_id],
                )
                .map_err(|e| db_error(&format!("cannot update session {id:?}"), e))?;
            if changed == 0 {
                return Err(not_found(id));
            }
            Ok(())
        })
    }
}
