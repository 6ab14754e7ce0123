//! A canonical dump of a store file's rows, for tests that compare whole store contents: a
//! re-import that must add nothing, a grown log that must end up exactly as if read once, a
//! fork that must leave its parent byte for byte untouched.
//!
//! Rows are read with plain SQL on a connection of the test's own, every column except
//! surrogate keys (episode `pk`s become episode ids, so two stores that inserted the same
//! episodes in another order compare equal) and wall-clock columns that say when a row was
//! written rather than what it holds (`raw_blobs.created_at`). The contentless FTS index is read
//! token by token through an `fts5vocab` instance table.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::Connection;
use rusqlite::types::Value;

/// Which rows to dump: everything, or only the rows that belong to some sessions.
pub enum Scope<'a> {
    /// Every row of every table but `replaced_episodes`: the episodes a tail replacement
    /// removed, which a store that saw a log grow remembers and one that read it once never
    /// had (the one difference between the two, by design).
    All,
    /// The rows of these sessions: the session rows, their turns, usage, episodes with
    /// everything hanging off them (content, paths, FTS tokens, blob links, blobs, vectors),
    /// and their workspaces.
    Sessions(&'a [&'a str]),
}

fn render(row: &rusqlite::Row<'_>, columns: usize) -> String {
    (0..columns)
        .map(|i| match row.get::<_, Value>(i) {
            Ok(Value::Blob(bytes)) => format!("blob[{}]{:?}", bytes.len(), sha(&bytes)),
            Ok(value) => format!("{value:?}"),
            Err(e) => format!("<{e}>"),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

fn sha(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every row of the store at `path` within `scope`, one line per row, each line prefixed by its
/// table, sorted.
pub fn dump(path: &Path, scope: &Scope<'_>) -> Vec<String> {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_tokens
             USING fts5vocab(main, episodes_fts, instance);",
    )
    .unwrap();
    let sessions: Vec<String> = match scope {
        Scope::All => {
            let mut stmt = conn.prepare("SELECT id FROM sessions").unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        }
        Scope::Sessions(ids) => ids.iter().map(|s| (*s).to_owned()).collect(),
    };
    let list = sessions
        .iter()
        .map(|s| format!("'{}'", s.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(",");
    let episodes = format!("SELECT pk FROM episodes WHERE session_id IN ({list})");
    let queries = [
        (
            "workspaces",
            format!(
                "SELECT id, tenant, key, root, created_at FROM workspaces
                 WHERE id IN (SELECT workspace_id FROM sessions WHERE id IN ({list}))"
            ),
        ),
        (
            "sessions",
            format!(
                "SELECT id, workspace_id, name, provider, model, root, created_at,
                     parent_session_id, parent_name, at_turn, lineage_kind, rotation_count,
                     last_rotation_at, backing_context_id, finished_at, last_activity_at,
                     turn_count, first_intent, chunker_state
                 FROM sessions WHERE id IN ({list})"
            ),
        ),
        (
            "turns",
            format!(
                "SELECT session_id, seq, turn_id, role, created_at, json, chunker_before
                 FROM turns WHERE session_id IN ({list})"
            ),
        ),
        (
            "usage_calls",
            format!("SELECT * FROM usage_calls WHERE session_id IN ({list})"),
        ),
        (
            "episodes",
            format!(
                "SELECT id, workspace_id, session_id, turn_seq, kind, tool_name, call_id, status,
                     summary, created_at, token_estimate, origin_seq
                 FROM episodes WHERE session_id IN ({list})"
            ),
        ),
        (
            "episode_contents",
            format!(
                "SELECT e.id, c.content FROM episode_contents c JOIN episodes e ON e.pk = c.episode_pk
                 WHERE c.episode_pk IN ({episodes})"
            ),
        ),
        (
            "episode_paths",
            format!(
                "SELECT e.id, p.ord, p.workspace_id, p.given, p.relative, p.access, p.content_hash,
                     p.created_at
                 FROM episode_paths p JOIN episodes e ON e.pk = p.episode_pk
                 WHERE p.episode_pk IN ({episodes})"
            ),
        ),
        (
            "episode_blobs",
            format!(
                "SELECT e.id, b.role, b.blob_id FROM episode_blobs b JOIN episodes e ON e.pk = b.episode_pk
                 WHERE b.episode_pk IN ({episodes})"
            ),
        ),
        (
            "raw_blobs",
            match scope {
                Scope::All => "SELECT id, len, bytes FROM raw_blobs".to_owned(),
                Scope::Sessions(_) => format!(
                    "SELECT id, len, bytes FROM raw_blobs WHERE id IN
                         (SELECT blob_id FROM episode_blobs WHERE episode_pk IN ({episodes}))"
                ),
            },
        ),
        (
            "vectors",
            format!(
                "SELECT v.model, e.id, v.window_index, v.dim, v.data FROM vectors v
                 JOIN episodes e ON e.pk = v.episode_pk WHERE v.episode_pk IN ({episodes})"
            ),
        ),
        (
            "episodes_fts",
            format!(
                "SELECT t.term, e.id, t.col, t.offset FROM temp.fts_tokens t
                 JOIN episodes e ON e.pk = t.doc WHERE t.doc IN ({episodes})"
            ),
        ),
    ];
    let mut out = Vec::new();
    for (table, sql) in &queries {
        let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{table}: {e}"));
        let columns = stmt.column_count();
        let rows = stmt
            .query_map([], |row| Ok(format!("{table}: {}", render(row, columns))))
            .unwrap();
        for row in rows {
            out.push(row.unwrap());
        }
    }
    out.sort();
    out
}

/// Row counts of the main tables, for readable assertions.
pub fn counts(path: &Path) -> Vec<(String, i64)> {
    let conn = Connection::open(path).unwrap();
    [
        "sessions",
        "turns",
        "usage_calls",
        "episodes",
        "episode_contents",
        "episode_paths",
        "raw_blobs",
    ]
    .iter()
    .map(|table| {
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap();
        ((*table).to_owned(), n)
    })
    .collect()
}

/// Asserts two dumps are equal, showing the first differing lines rather than both dumps.
pub fn assert_same(left: &[String], right: &[String], what: &str) {
    if left == right {
        return;
    }
    let (lefts, rights): (HashSet<&String>, HashSet<&String>) =
        (left.iter().collect(), right.iter().collect());
    let only_left: Vec<&String> = left
        .iter()
        .filter(|l| !rights.contains(l))
        .take(5)
        .collect();
    let only_right: Vec<&String> = right
        .iter()
        .filter(|r| !lefts.contains(r))
        .take(5)
        .collect();
    let cut = |s: &&String| s.chars().take(400).collect::<String>();
    panic!(
        "{what}: {} vs {} rows differ\nonly in the first:\n{}\nonly in the second:\n{}",
        left.len(),
        right.len(),
        only_left.iter().map(cut).collect::<Vec<_>>().join("\n"),
        only_right.iter().map(cut).collect::<Vec<_>>().join("\n"),
    );
}
