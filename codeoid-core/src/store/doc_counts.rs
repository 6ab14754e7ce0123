//! Document frequencies of index terms, read from the FTS5 vocabulary (`episodes_vocab`) at most
//! once per term per recall.
//!
//! A term's count is not stored anywhere: FTS5 walks the term's whole doclist to answer, so a
//! common word costs up to a millisecond on a large store. The lexical plan asks for the counts
//! of the query's words and the relevance judgement asks again for the same words; a
//! [`DocCounts`] carried from one to the other answers the second time from memory.
//!
//! Invariants: a count is the number of episodes holding the term when it was first asked, in
//! every workspace (the vocabulary is not scoped); `rows` is the largest episode key, at least
//! the row count. Counts are a snapshot for one recall, never kept across recalls.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension};

/// The term counts asked so far, and the store's size.
#[derive(Debug, Clone, Default)]
pub(crate) struct DocCounts {
    by_term: HashMap<String, i64>,
    rows: Option<i64>,
}

impl DocCounts {
    /// How many episodes hold the index token `term` (0 for none), read once.
    ///
    /// # Errors
    /// A database error reading the vocabulary.
    pub(crate) fn docs(&mut self, conn: &Connection, term: &str) -> rusqlite::Result<i64> {
        if let Some(&docs) = self.by_term.get(term) {
            return Ok(docs);
        }
        let docs: i64 = conn
            .prepare_cached("SELECT doc FROM episodes_vocab WHERE term = ?1")?
            .query_row([term], |r| r.get(0))
            .optional()?
            .unwrap_or(0);
        self.by_term.insert(term.to_owned(), docs);
        Ok(docs)
    }

    /// The largest episode key: the row count until a tail replacement deletes episodes, so an
    /// estimate that errs high. One index seek instead of a count; read once.
    ///
    /// # Errors
    /// A database error reading the episodes table.
    pub(crate) fn rows(&mut self, conn: &Connection) -> rusqlite::Result<i64> {
        if let Some(rows) = self.rows {
            return Ok(rows);
        }
        let rows: i64 = conn
            .prepare_cached("SELECT coalesce(max(pk), 0) FROM episodes")?
            .query_row([], |r| r.get(0))?;
        self.rows = Some(rows);
        Ok(rows)
    }
}

#[cfg(test)]
impl DocCounts {
    /// The terms read so far, sorted.
    fn known(&self) -> Vec<&str> {
        let mut terms: Vec<&str> = self.by_term.keys().map(String::as_str).collect();
        terms.sort_unstable();
        terms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{DEFAULT_LEXICAL_BUDGET, LexicalFilters, Store};

    #[test]
    fn the_lexical_plans_counts_come_back_with_its_matches() {
        let store = Store::open_in_memory().unwrap();
        let matches = store
            .lexical_matches(
                "ws",
                "why did the schema migration fail",
                &LexicalFilters::default(),
                10,
                DEFAULT_LEXICAL_BUDGET,
            )
            .unwrap();
        assert!(matches.hits.is_empty());
        // Stop words are never asked; every search word is, once, for the judgement to reuse.
        assert_eq!(matches.counts.known(), ["fail", "migration", "schema"]);
    }

    #[test]
    fn counts_are_read_once_and_kept_for_the_recall() {
        // Plain tables of the shape the queries read stand in for the FTS5 vocabulary.
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE episodes_vocab(term TEXT, doc INTEGER);
             CREATE TABLE episodes(pk INTEGER PRIMARY KEY);
             INSERT INTO episodes_vocab VALUES ('schema', 7);
             INSERT INTO episodes VALUES (3), (9);",
        )
        .unwrap();
        let mut counts = DocCounts::default();
        assert_eq!(counts.docs(&conn, "schema").unwrap(), 7);
        assert_eq!(counts.docs(&conn, "absent").unwrap(), 0);
        assert_eq!(counts.rows(&conn).unwrap(), 9);
        conn.execute_batch(
            "UPDATE episodes_vocab SET doc = 8; INSERT INTO episodes VALUES (12);
             INSERT INTO episodes_vocab VALUES ('absent', 1);",
        )
        .unwrap();
        // What was read stays for the recall; a term not asked yet is read now.
        assert_eq!(counts.docs(&conn, "schema").unwrap(), 7);
        assert_eq!(counts.docs(&conn, "absent").unwrap(), 0);
        assert_eq!(counts.rows(&conn).unwrap(), 9);
        assert_eq!(DocCounts::default().docs(&conn, "schema").unwrap(), 8);
    }
}
