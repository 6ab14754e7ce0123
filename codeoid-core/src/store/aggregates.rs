//! Cheap aggregate reads over a workspace: counts, hot files, recent sessions, the latest episode
//! that touched a path, and paths of many episodes at once. These feed the workspace index,
//! `recall_file` and path overlap in ranking.
//!
//! Invariants: every query is scoped to one workspace and answered from an index
//! (`episode_paths_by_path`, `sessions_by_workspace`, `episodes_timeline`), never by scanning
//! content. Paths are compared in their workspace-relative form. The model's own memory-tool
//! calls (`recall_file(path)` recorded as a tool call) are not file touches: hot files leave
//! them out, whatever version of codeoid recorded their paths.
//!
//! It deliberately does not format anything for models (the index builder does).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, params, params_from_iter};

use super::connection::db_error;
use super::episodes::{
    self, EpisodeHeader, HEADER_COLUMN_COUNT, HEADER_COLUMNS, StoredEpisode, StoredPath,
    header_from_row, path_at, path_from_row,
};
use super::sessions::{self, Session};
use super::workspace::{Workspace, WorkspaceSource};
use super::{Store, from_millis};
use crate::canonical::PathAccess;
use crate::canonical::tool_input::{MEMORY_TOOL_NAMES, TOOL_PREFIX_SEPARATOR};
use crate::error::{ErrorKind, Result};

/// Counts for a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceStats {
    /// Episodes stored.
    pub episodes: u64,
    /// Sessions created.
    pub sessions: u64,
    /// Time of the newest episode, if any.
    pub last_activity: Option<DateTime<Utc>>,
}

/// A file and how often episodes touched it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HotFile {
    /// Workspace-relative path.
    pub path: String,
    /// Episodes that read, wrote or otherwise named it (searches excluded).
    pub touches: u64,
    /// When it was last touched.
    pub last_at: DateTime<Utc>,
}

/// A session with its episode count, for "recent sessions".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentSession {
    /// The session (its `first_intent` and `last_activity_at` are what the index shows).
    pub session: Session,
    /// Episodes it produced.
    pub episodes: u64,
}

/// A workspace as registered in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceRecord {
    /// `ws_` + 16 hex digits.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Git common dir or directory.
    pub key: String,
    /// The first checkout root seen.
    pub root: String,
    /// When it was registered.
    pub created_at: DateTime<Utc>,
}

impl WorkspaceRecord {
    /// This stored workspace as a [`Workspace`] checked out at `root`: the same id, tenant
    /// and identity key, without resolving any directory again (the checkout it was
    /// registered from may be gone, or be another worktree of the same repository).
    pub fn at_root(&self, root: impl Into<std::path::PathBuf>) -> Workspace {
        Workspace::from_parts(&self.tenant, &self.key, root, WorkspaceSource::Directory)
    }
}

/// A `WorkspaceRecord` from the columns `id, tenant, key, root, created_at`.
fn record_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<WorkspaceRecord> {
    Ok(WorkspaceRecord {
        id: r.get(0)?,
        tenant: r.get(1)?,
        key: r.get(2)?,
        root: r.get(3)?,
        created_at: from_millis(r.get(4)?),
    })
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An SQL condition true when the tool name in `column` (a column or expression of the query) is
/// one of codeoid's memory tools, bare or behind a harness's prefix: the rule of
/// `canonical::tool_input::memory_tool` (`GLOB` is case-sensitive, as that rule is). The names
/// are constants of letters and `_`, so they are written into the SQL as they are.
pub(super) fn memory_tool_sql(column: &str) -> String {
    let names = MEMORY_TOOL_NAMES;
    let bare: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    let mut sql = format!("({column} IN ({})", bare.join(", "));
    for name in names {
        sql.push_str(&format!(
            " OR {column} GLOB '*{TOOL_PREFIX_SEPARATOR}{name}'"
        ));
    }
    sql.push(')');
    sql
}

impl Store {
    /// Every workspace in the store, oldest first.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn workspaces(&self) -> Result<Vec<WorkspaceRecord>> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT id, tenant, key, root, created_at FROM workspaces ORDER BY created_at, id",
            )
            .and_then(|mut stmt| {
                stmt.query_map([], record_from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| db_error("cannot list workspaces", e))
        })
    }

    /// The workspace registered as `id`, if any.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn workspace_record(&self, id: &str) -> Result<Option<WorkspaceRecord>> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT id, tenant, key, root, created_at FROM workspaces WHERE id = ?1",
            )
            .and_then(|mut stmt| stmt.query_row([id], record_from_row).optional())
            .map_err(|e| db_error(&format!("cannot read workspace {id}"), e))
        })
    }

    /// The workspace session `session_id` is stored in, checked out at the session's root,
    /// when that session exists and its workspace belongs to `tenant`; `None` otherwise.
    ///
    /// # Errors
    /// A database error if a read fails.
    pub fn session_workspace(&self, session_id: &str, tenant: &str) -> Result<Option<Workspace>> {
        let session = match self.session(session_id) {
            Ok(session) => session,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(self
            .workspace_record(&session.workspace_id)?
            .filter(|record| record.tenant == tenant)
            .map(|record| record.at_root(session.root)))
    }

    /// Episode and session counts and the latest activity of `workspace_id`.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn workspace_stats(&self, workspace_id: &str) -> Result<WorkspaceStats> {
        self.read(|conn| {
            let context = format!("cannot count workspace {workspace_id}");
            let (episodes, last): (i64, Option<i64>) = conn
                .prepare_cached(
                    "SELECT count(*), max(created_at) FROM episodes WHERE workspace_id = ?1",
                )
                .and_then(|mut stmt| stmt.query_row([workspace_id], |r| Ok((r.get(0)?, r.get(1)?))))
                .map_err(|e| db_error(&context, e))?;
            let sessions: i64 = conn
                .prepare_cached("SELECT count(*) FROM sessions WHERE workspace_id = ?1")
                .and_then(|mut stmt| stmt.query_row([workspace_id], |r| r.get(0)))
                .map_err(|e| db_error(&context, e))?;
            Ok(WorkspaceStats {
                episodes: episodes as u64,
                sessions: sessions as u64,
                last_activity: last.map(from_millis),
            })
        })
    }

    /// The `n` most touched files of `workspace_id`, most touches first (ties: most recent).
    /// Searches and the model's memory-tool calls do not count.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn hot_files(&self, workspace_id: &str, n: usize) -> Result<Vec<HotFile>> {
        // Only `other` rows can be a memory tool's (`recall_file` has no read or write name),
        // and stores recorded since the chunker stopped taking their paths have none: the
        // episode row is looked up for those rows alone.
        let sql = format!(
            "SELECT relative, count(DISTINCT episode_pk) AS touches, max(created_at) AS last
             FROM episode_paths p
             WHERE workspace_id = ?1 AND access <> 'search'
               AND NOT (access = 'other' AND EXISTS (
                   SELECT 1 FROM episodes e WHERE e.pk = p.episode_pk AND {}))
             GROUP BY relative ORDER BY touches DESC, last DESC, relative LIMIT ?2",
            memory_tool_sql("e.tool_name")
        );
        self.read(|conn| {
            conn.prepare_cached(&sql)
                .and_then(|mut stmt| {
                    stmt.query_map(params![workspace_id, limit(n)], |r| {
                        Ok(HotFile {
                            path: r.get(0)?,
                            touches: r.get::<_, i64>(1)? as u64,
                            last_at: from_millis(r.get(2)?),
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| db_error(&format!("cannot rank files of {workspace_id}"), e))
        })
    }

    /// The `n` sessions of `workspace_id` with the latest activity, latest first. Subagents'
    /// sessions are not listed: each is part of its parent's work, and a few busy subagents
    /// would push the sessions a person ran off the list.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn recent_sessions(&self, workspace_id: &str, n: usize) -> Result<Vec<RecentSession>> {
        self.read(|conn| {
            let sql = format!(
                "SELECT {}, (SELECT count(*) FROM episodes e WHERE e.session_id = s.id)
                 FROM sessions s
                 WHERE s.workspace_id = ?1 AND s.lineage_kind IS NOT 'subagent'
                 ORDER BY s.last_activity_at DESC, s.pk DESC LIMIT ?2",
                sessions::COLUMNS
                    .split(", ")
                    .map(|c| format!("s.{}", c.trim()))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let rows = conn
                .prepare_cached(&sql)
                .and_then(|mut stmt| {
                    stmt.query_map(params![workspace_id, limit(n)], |r| {
                        Ok((sessions::from_row(r)?, r.get::<_, i64>(18)?))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| db_error(&format!("cannot list sessions of {workspace_id}"), e))?;
            rows.into_iter()
                .map(|(session, episodes)| {
                    Ok(RecentSession {
                        session: session?,
                        episodes: episodes as u64,
                    })
                })
                .collect()
        })
    }

    /// The most recent episode of `workspace_id` that touched `relative` (a workspace-relative
    /// path, see [`super::relative_path`]) with `access` (any access when `None`), and the
    /// matching path row (its `content_hash` tells `recall_file` what the file was then).
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn latest_episode_for_path(
        &self,
        workspace_id: &str,
        relative: &str,
        access: Option<PathAccess>,
    ) -> Result<Option<(StoredEpisode, StoredPath)>> {
        self.read(|conn| {
            let context = format!("cannot find episodes of {relative:?}");
            let found: Option<(String, StoredPath)> = conn
                .prepare_cached(
                    "SELECT p.given, p.relative, p.access, p.content_hash, e.id
                     FROM episode_paths p JOIN episodes e ON e.pk = p.episode_pk
                     WHERE p.workspace_id = ?1 AND p.relative = ?2
                       AND (?3 IS NULL OR p.access = ?3)
                     ORDER BY p.created_at DESC, p.episode_pk DESC LIMIT 1",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(
                        params![workspace_id, relative, access.map(PathAccess::as_str)],
                        |r| Ok((r.get(4)?, path_from_row(r)?)),
                    )
                    .optional()
                })
                .map_err(|e| db_error(&context, e))?;
            match found {
                Some((id, path)) => Ok(Some((episodes::fetch(conn, workspace_id, &id)?, path))),
                None => Ok(None),
            }
        })
    }

    /// The `n` most recent reads of `relative` (a workspace-relative path) in `workspace_id`,
    /// newest first as [`Store::latest_episode_for_path`] orders them, each episode's header with
    /// its first matching path row (an episode reading the file twice, as `a.rs` and `./a.rs`,
    /// is one read, and the limit counts episodes): what `recall_file` walks back through for a
    /// whole read. Contents are not read; [`Store::episode`] reads the one chosen.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn reads_of_path(
        &self,
        workspace_id: &str,
        relative: &str,
        n: usize,
    ) -> Result<Vec<(EpisodeHeader, StoredPath)>> {
        self.read(|conn| {
            let context = format!("cannot find reads of {relative:?}");
            let found: Vec<(EpisodeHeader, StoredPath)> = conn
                .prepare_cached(&format!(
                    "SELECT {HEADER_COLUMNS}, p.given, p.relative, p.access, p.content_hash
                     FROM episode_paths p JOIN episodes e ON e.pk = p.episode_pk
                     WHERE p.workspace_id = ?1 AND p.relative = ?2 AND p.access = 'read'
                       AND p.ord = (SELECT min(q.ord) FROM episode_paths q
                                    WHERE q.episode_pk = p.episode_pk AND q.relative = p.relative
                                      AND q.access = 'read')
                     ORDER BY p.created_at DESC, p.episode_pk DESC LIMIT ?3"
                ))
                .and_then(|mut stmt| {
                    stmt.query_map(params![workspace_id, relative, limit(n)], |r| {
                        Ok((header_from_row(r)?, path_at(r, HEADER_COLUMN_COUNT)?))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| db_error(&context, e))?;
            Ok(found)
        })
    }

    /// Whether episode `later` of `workspace_id` was recorded after episode `earlier` (by store
    /// key, the order of recording). `false` when either is missing.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub(crate) fn recorded_after(
        &self,
        workspace_id: &str,
        later: &str,
        earlier: &str,
    ) -> Result<bool> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT (SELECT pk FROM episodes WHERE id = ?2 AND workspace_id = ?1)
                      > (SELECT pk FROM episodes WHERE id = ?3 AND workspace_id = ?1)",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![workspace_id, later, earlier], |r| {
                    r.get::<_, Option<bool>>(0)
                })
            })
            .map(|after| after.unwrap_or(false))
            .map_err(|e| db_error("cannot compare episodes", e))
        })
    }

    /// The paths of each of `ids` that belongs to `workspace_id` (ids of other workspaces are
    /// left out), for path overlap in ranking.
    ///
    /// # Errors
    /// A database error if the read fails.
    pub fn episode_paths(
        &self,
        workspace_id: &str,
        ids: &[&str],
    ) -> Result<HashMap<String, Vec<StoredPath>>> {
        let mut out: HashMap<String, Vec<StoredPath>> = HashMap::new();
        if ids.is_empty() {
            return Ok(out);
        }
        self.read(|conn| {
            // SQLite allows 32766 parameters; batches keep far below it.
            for chunk in ids.chunks(500) {
                let marks = vec!["?"; chunk.len()].join(", ");
                // `+e.workspace_id` keeps SQLite off the workspace index: without statistics it takes
                // `workspace_id = ?` for a handful of rows and would scan (and sort) the whole workspace
                // instead of looking the listed episodes up.
                let sql = format!(
                    "SELECT p.given, p.relative, p.access, p.content_hash, e.id
                     FROM episodes e CROSS JOIN episode_paths p ON p.episode_pk = e.pk
                     WHERE +e.workspace_id = ? AND e.id IN ({marks})
                     ORDER BY e.pk, p.ord"
                );
                let values = std::iter::once(workspace_id).chain(chunk.iter().copied());
                let rows = conn
                    .prepare(&sql)
                    .and_then(|mut stmt| {
                        stmt.query_map(params_from_iter(values), |r| {
                            Ok((r.get::<_, String>(4)?, path_from_row(r)?))
                        })?
                        .collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .map_err(|e| db_error("cannot read episode paths", e))?;
                for (id, path) in rows {
                    out.entry(id).or_default().push(path);
                }
            }
            Ok(())
        })?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::tool_input::memory_tool;
    use crate::canonical::{Episode, EpisodeKind, EpisodeStatus, ToolPath};
    use crate::store::{NewSession, Workspace, WorkspaceSource};

    #[test]
    fn the_sql_rule_for_memory_tools_is_the_dispatchers() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let sql = format!(
            "SELECT coalesce({}, 0) FROM (SELECT ?1 AS t)",
            memory_tool_sql("t")
        );
        for name in [
            "recall",
            "recall_file",
            "timeline",
            "get_episode",
            "codeoid_memory__recall",
            "mcp__codeoid__recall_file",
            "a___timeline",
            "Recall",
            "recall_files",
            "recall__x",
            "my_recall",
            "Read",
            "",
        ] {
            let got: bool = conn.query_row(&sql, [name], |r| r.get(0)).unwrap();
            assert_eq!(got, memory_tool(name).is_some(), "{name}");
        }
        let null: bool = conn
            .query_row(&sql, [Option::<&str>::None], |r| r.get(0))
            .unwrap();
        assert!(!null, "a NULL tool name is no memory tool");
    }

    /// Stores a tool call of `tool` that names `path` with `access`, as an earlier version of
    /// the chunker stored `recall_file`'s path.
    fn stored_call(store: &Store, session_id: &str, n: u64, tool: &str, access: PathAccess) {
        stored_call_of(store, session_id, n, tool, access, &["src/a.py"]);
    }

    /// [`stored_call`] naming `paths`.
    fn stored_call_of(
        store: &Store,
        session_id: &str,
        n: u64,
        tool: &str,
        access: PathAccess,
        paths: &[&str],
    ) {
        let episode = Episode {
            id: format!("ep_{n:020}"),
            kind: EpisodeKind::ToolCall,
            tool_name: Some(tool.to_owned()),
            call_id: Some(format!("c{n}")),
            status: EpisodeStatus::Ok,
            summary: format!("{tool}(src/a.py)"),
            content: format!("# Tool: {tool}"),
            paths: paths
                .iter()
                .map(|path| ToolPath {
                    path: (*path).to_owned(),
                    access,
                })
                .collect(),
            created_at: Utc::now(),
            turn_seq: n,
            repeats_intent: false,
        };
        store
            .write("test", |tx| {
                let session = sessions::require(tx, session_id)?;
                episodes::insert(tx, &session, &episode, None, store.options(), &[]).map(|_| ())
            })
            .unwrap();
    }

    #[test]
    fn paths_an_earlier_version_stored_for_memory_tools_are_not_touches() {
        let store = Store::open_in_memory().unwrap();
        let ws = Workspace::from_parts("", "/repo", "/repo", WorkspaceSource::Directory);
        let session = store.create_session(&ws, NewSession::default()).unwrap();
        stored_call(&store, &session.id, 1, "Read", PathAccess::Read);
        stored_call(&store, &session.id, 2, "Bash", PathAccess::Other);
        stored_call(&store, &session.id, 3, "recall_file", PathAccess::Other);
        stored_call(
            &store,
            &session.id,
            4,
            "mcp__codeoid__recall_file",
            PathAccess::Other,
        );
        let hot = store.hot_files(ws.id(), 10).unwrap();
        assert_eq!(hot.len(), 1);
        assert_eq!((hot[0].path.as_str(), hot[0].touches), ("src/a.py", 2));
    }

    #[test]
    fn reads_of_a_path_count_episodes_not_path_rows() {
        let store = Store::open_in_memory().unwrap();
        let ws = Workspace::from_parts("", "/repo", "/repo", WorkspaceSource::Directory);
        let session = store.create_session(&ws, NewSession::default()).unwrap();
        stored_call_of(
            &store,
            &session.id,
            1,
            "Read",
            PathAccess::Read,
            &["src/a.py"],
        );
        // The newest read names the file twice; it is one read, and the older one still counts.
        stored_call_of(
            &store,
            &session.id,
            2,
            "Bash",
            PathAccess::Read,
            &["src/a.py", "./src/a.py"],
        );
        let reads = store.reads_of_path(ws.id(), "src/a.py", 2).unwrap();
        let ids: Vec<&str> = reads.iter().map(|(h, _)| h.id.as_str()).collect();
        assert_eq!(ids, [format!("ep_{:020}", 2), format!("ep_{:020}", 1)]);
        assert_eq!(
            reads[0].1.given, "src/a.py",
            "the first path row of the episode"
        );
    }
}
