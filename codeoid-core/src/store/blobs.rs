//! Raw blobs: exact bytes kept beside episodes, for oversize episode content and for raw
//! command output (stdout/stderr) that the compression runner stores before compressing.
//!
//! Invariants:
//! - Blobs are content-addressed ([`crate::canonical::blob_id`]): the same bytes are stored once.
//! - A blob is linked to episodes by role (`content`, `stdout`, `stderr`); reading a blob is
//!   scoped like reading an episode: only a blob linked to an episode of the caller's workspace
//!   is found.
//! - Bytes are stored exactly, invalid UTF-8 included; only the episode text renders them
//!   lossily.
//!
//! It deliberately does not compress anything.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde_json::json;

use super::connection::db_error;
use super::{Store, episodes, fresh_id, sessions, to_millis};
use crate::canonical::tool_input::tool_summary;
use crate::canonical::{Episode, EpisodeKind, EpisodeStatus, blob_id};
use crate::error::{Error, Result};

/// The role of the blob that holds a capped episode's whole content.
pub(crate) const CONTENT_BLOB_ROLE: &str = "content";

/// A raw blob linked to an episode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRef {
    /// `content` (the whole of a capped episode), `stdout` or `stderr`.
    pub role: String,
    /// The blob id (`blob_` + 32 hex digits).
    pub blob_id: String,
    /// Size in bytes.
    pub len: u64,
}

/// The raw output of a command, as [`Store::record_raw_output`] stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawOutput<'a> {
    /// Tool that ran the command (default `"shell"`).
    pub tool_name: &'a str,
    /// The command line.
    pub command: &'a str,
    /// Exact stdout bytes (may be invalid UTF-8).
    pub stdout: &'a [u8],
    /// Exact stderr bytes (may be invalid UTF-8).
    pub stderr: &'a [u8],
    /// Exit code, when the command exited normally.
    pub exit_code: Option<i32>,
    /// When the command finished; `None` means now.
    pub at: Option<DateTime<Utc>>,
}

impl<'a> RawOutput<'a> {
    /// The output of `command` run by the `shell` tool, finishing now.
    pub fn new(
        command: &'a str,
        stdout: &'a [u8],
        stderr: &'a [u8],
        exit_code: Option<i32>,
    ) -> RawOutput<'a> {
        RawOutput {
            tool_name: "shell",
            command,
            stdout,
            stderr,
            exit_code,
            at: None,
        }
    }
}

/// Stores `bytes` under `id` unless a blob with that id exists.
pub(crate) fn put(tx: &Transaction<'_>, id: &str, bytes: &[u8]) -> Result<()> {
    tx.prepare_cached(
        "INSERT OR IGNORE INTO raw_blobs (id, len, bytes, created_at) VALUES (?1, ?2, ?3, ?4)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            id,
            bytes.len() as i64,
            bytes,
            to_millis(Utc::now())
        ])
    })
    .map_err(|e| db_error(&format!("cannot store raw blob {id}"), e))?;
    Ok(())
}

/// Links blob `blob_id` to the episode with primary key `episode_pk` under `role`.
pub(crate) fn link(tx: &Transaction<'_>, episode_pk: i64, role: &str, blob_id: &str) -> Result<()> {
    tx.prepare_cached(
        "INSERT OR IGNORE INTO episode_blobs (episode_pk, role, blob_id) VALUES (?1, ?2, ?3)",
    )
    .and_then(|mut stmt| stmt.execute(params![episode_pk, role, blob_id]))
    .map_err(|e| db_error(&format!("cannot link raw blob {blob_id}"), e))?;
    Ok(())
}

/// Deletes blob `blob_id` unless an episode still links it (a replaced episode's blob that
/// another episode shares stays).
pub(crate) fn delete_unlinked(tx: &Transaction<'_>, blob_id: &str) -> Result<()> {
    tx.prepare_cached(
        "DELETE FROM raw_blobs WHERE id = ?1
             AND NOT EXISTS (SELECT 1 FROM episode_blobs WHERE blob_id = ?1)",
    )
    .and_then(|mut stmt| stmt.execute([blob_id]))
    .map_err(|e| db_error(&format!("cannot remove raw blob {blob_id}"), e))?;
    Ok(())
}

/// The bytes of blob `blob_id`, unscoped: for callers that found it through an episode they
/// already read in the right workspace.
pub(crate) fn bytes(conn: &Connection, blob_id: &str) -> Result<Vec<u8>> {
    conn.prepare_cached("SELECT bytes FROM raw_blobs WHERE id = ?1")
        .and_then(|mut stmt| stmt.query_row([blob_id], |r| r.get::<_, Vec<u8>>(0)))
        .map_err(|e| db_error(&format!("cannot read raw blob {blob_id:?}"), e))
}

/// The blobs linked to the episode with primary key `episode_pk`, by role.
pub(crate) fn refs_of(conn: &Connection, episode_pk: i64) -> Result<Vec<BlobRef>> {
    conn.prepare_cached(
        "SELECT eb.role, eb.blob_id, b.len FROM episode_blobs eb
         JOIN raw_blobs b ON b.id = eb.blob_id
         WHERE eb.episode_pk = ?1 ORDER BY eb.role",
    )
    .and_then(|mut stmt| {
        stmt.query_map([episode_pk], |r| {
            Ok(BlobRef {
                role: r.get(0)?,
                blob_id: r.get(1)?,
                len: r.get::<_, i64>(2)? as u64,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()
    })
    .map_err(|e| db_error("cannot read the raw blobs of an episode", e))
}

fn output_content(output: &RawOutput<'_>) -> String {
    // Pretty-printing a JSON object of one string cannot fail.
    let input = serde_json::to_string_pretty(&json!({ "command": output.command }))
        .unwrap_or_else(|_| output.command.to_owned());
    let exit = output.exit_code.map_or_else(
        || "none (killed or still running)".to_owned(),
        |c| c.to_string(),
    );
    format!(
        "# Tool: {}\n\n## Input\n{input}\n\n## Result\nexit code: {exit}\n\n### stdout\n{}\n\n\
         ### stderr\n{}",
        output.tool_name,
        String::from_utf8_lossy(output.stdout),
        String::from_utf8_lossy(output.stderr),
    )
}

impl Store {
    /// Stores the raw output of a command as a `tool_call` episode of session `session_id`,
    /// with the exact stdout and stderr bytes in raw blobs (roles `stdout`, `stderr`), and
    /// returns the episode id. The compression runner calls this before compressing, so the
    /// compressed text can point at the raw output with `get_episode`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when there is no such session;
    /// [`crate::ErrorKind::InvalidInput`] for an empty tool name.
    pub fn record_raw_output(&self, session_id: &str, output: &RawOutput<'_>) -> Result<String> {
        if output.tool_name.trim().is_empty() {
            return Err(Error::invalid_input(
                "raw output tool_name is empty; use \"shell\" when in doubt",
            ));
        }
        let context = format!("cannot record raw output of {:?}", output.command);
        let at = output.at.unwrap_or_else(Utc::now);
        self.write(&context, |tx| {
            let session = sessions::require(tx, session_id)?;
            let stdout_id = blob_id(output.stdout);
            let stderr_id = blob_id(output.stderr);
            put(tx, &stdout_id, output.stdout)?;
            put(tx, &stderr_id, output.stderr)?;
            let episode = Episode {
                id: fresh_id("ep_", session_id),
                kind: EpisodeKind::ToolCall,
                tool_name: Some(output.tool_name.to_owned()),
                call_id: None,
                status: match output.exit_code {
                    Some(0) => EpisodeStatus::Ok,
                    _ => EpisodeStatus::Failed,
                },
                summary: tool_summary(output.tool_name, &json!({ "command": output.command })),
                content: output_content(output),
                paths: Vec::new(),
                created_at: at,
                turn_seq: session.turn_count,
                repeats_intent: false,
            };
            let blobs = [
                ("stdout", stdout_id.as_str()),
                ("stderr", stderr_id.as_str()),
            ];
            let id = episodes::insert(tx, &session, &episode, None, self.options(), &blobs)?
                .unwrap_or(episode.id);
            tx.execute(
                "UPDATE sessions SET last_activity_at = max(last_activity_at, ?2) WHERE id = ?1",
                params![session_id, to_millis(at)],
            )
            .map_err(|e| db_error(&context, e))?;
            Ok(id)
        })
    }

    /// The exact bytes of blob `blob_id`, if it is linked to an episode of `workspace_id`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::NotFound`] when it does not exist or only belongs to other
    /// workspaces.
    pub fn blob(&self, workspace_id: &str, blob_id: &str) -> Result<Vec<u8>> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT b.bytes FROM raw_blobs b
                 WHERE b.id = ?1 AND EXISTS (
                     SELECT 1 FROM episode_blobs eb JOIN episodes e ON e.pk = eb.episode_pk
                     WHERE eb.blob_id = ?1 AND e.workspace_id = ?2)",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![blob_id, workspace_id], |r| r.get::<_, Vec<u8>>(0))
                    .optional()
            })
            .map_err(|e| db_error(&format!("cannot read raw blob {blob_id:?}"), e))?
            .ok_or_else(|| {
                Error::not_found(format!(
                    "raw blob {blob_id:?} not found in workspace {workspace_id}; blob ids come \
                     from an episode's blobs"
                ))
            })
        })
    }
}
