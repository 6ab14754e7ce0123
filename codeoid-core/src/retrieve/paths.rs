//! The path signal (DESIGN §2): which file paths a query names, and how much an episode's paths
//! overlap them.
//!
//! A query's paths are the path-like tokens of its text (`src/lib.rs`, `./store/mod.rs`,
//! `/home/me/repo/Cargo.toml`, `mod.rs`; not `e.g.`, `1.2.3` or a URL) plus any explicit path
//! filter, each normalized relative to the workspace root, so relative and absolute forms of one
//! file are the same key. Overlap: each query path scores 1 for an episode path with the same
//! normalized form (or the same form as given), 0.5 for one with the same file name, 0 otherwise;
//! the sum is divided by the larger of the two lists' lengths and capped at 1.
//!
//! Deliberately not here: reading episode paths (the store) or weighting the signal (fusion).

use std::collections::BTreeSet;

use crate::store::{StoredPath, relative_path};

/// Longest token considered as a path (longer ones are data, not a file name).
const MAX_PATH_CHARS: usize = 512;

/// Things that end in a letter-led extension but are not files.
const NOT_FILES: [&str; 6] = ["e.g", "i.e", "etc", "vs", "a.k.a", "n.b"];

/// Characters stripped from both ends of a token before deciding (quotes, brackets, trailing
/// sentence punctuation).
fn trim_token(token: &str) -> &str {
    token
        .trim_matches(|c: char| "`'\"()[]{}<>,;!?*".contains(c))
        .trim_end_matches(['.', ':'])
}

/// `true` when `ext` looks like a file extension: 1 to 10 ASCII letters and digits, led by a
/// letter.
fn is_extension(ext: &str) -> bool {
    (1..=10).contains(&ext.len())
        && ext.starts_with(|c: char| c.is_ascii_alphabetic())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `true` when `token` reads as a file path: it has a slash, or its last segment is `name.ext`
/// (dotfiles such as `.env` count), and it is not a URL or an abbreviation.
fn is_path_like(token: &str) -> bool {
    if token.is_empty() || token.len() > MAX_PATH_CHARS || token.contains("://") {
        return false;
    }
    if !token
        .chars()
        .all(|c| c.is_alphanumeric() || "/._-~+@".contains(c))
    {
        return false;
    }
    if NOT_FILES.contains(&token.to_ascii_lowercase().as_str()) {
        return false;
    }
    let last = token.rsplit('/').next().unwrap_or(token);
    let named_file = match last.rsplit_once('.') {
        Some((stem, ext)) => {
            is_extension(ext) && (stem.chars().any(char::is_alphanumeric) || stem.is_empty())
        }
        None => false,
    };
    let has_slash = token.contains('/') && token.chars().any(char::is_alphanumeric);
    named_file || (has_slash && token.len() > 1 && !token.chars().all(|c| c == '/' || c == '.'))
}

/// The path-like tokens of `text`, in order, without duplicates.
pub(crate) fn query_paths(text: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for raw in text.split(|c: char| c.is_whitespace() || c == ',' || c == '|') {
        let token = trim_token(raw);
        // `path:line` or `path:line:col` (compiler output) names the path.
        let token = token.split(':').next().unwrap_or(token);
        if is_path_like(token) && seen.insert(token.to_owned()) {
            out.push(token.to_owned());
        }
    }
    out
}

/// The last segment of a normalized path.
fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A query's paths, normalized relative to the workspace root and de-duplicated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct QueryPaths {
    relative: Vec<String>,
}

impl QueryPaths {
    /// The query's paths: those in `text` and the explicit `filters`, relative to `root`.
    pub(crate) fn new(root: &std::path::Path, text: &str, filters: &[String]) -> QueryPaths {
        let mut relative: Vec<String> = Vec::new();
        for path in query_paths(text).iter().chain(filters) {
            let rel = relative_path(root, path);
            if !relative.contains(&rel) {
                relative.push(rel);
            }
        }
        QueryPaths { relative }
    }

    /// `true` when the query names no path (the signal is 0 for every episode).
    pub(crate) fn is_empty(&self) -> bool {
        self.relative.is_empty()
    }

    /// The normalized paths.
    #[cfg(test)]
    pub(crate) fn relative(&self) -> &[String] {
        &self.relative
    }

    /// The overlap score of an episode with `paths` (DESIGN §2), in [0, 1].
    pub(crate) fn overlap(&self, paths: &[StoredPath]) -> f64 {
        if self.relative.is_empty() || paths.is_empty() {
            return 0.0;
        }
        // An episode that names one file twice (read, then edit) has one file.
        let mut episode: Vec<&StoredPath> = Vec::with_capacity(paths.len());
        for p in paths {
            if !episode.iter().any(|e| e.relative == p.relative) {
                episode.push(p);
            }
        }
        let mut sum = 0.0;
        for query in &self.relative {
            let mut best: f64 = 0.0;
            for path in &episode {
                if &path.relative == query || &path.given == query {
                    best = 1.0;
                    break;
                }
                if basename(&path.relative) == basename(query) {
                    best = best.max(0.5);
                }
            }
            sum += best;
        }
        (sum / self.relative.len().max(episode.len()) as f64).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::PathAccess;
    use std::path::Path;

    fn stored(given: &str, relative: &str) -> StoredPath {
        StoredPath {
            given: given.into(),
            relative: relative.into(),
            access: PathAccess::Read,
            content_hash: None,
        }
    }

    #[test]
    fn path_like_tokens_are_found_and_prose_is_not() {
        assert_eq!(
            query_paths(
                "why does `src/store/mod.rs` fail? see ./lib.rs:12:5, Cargo.toml and /abs/x.py."
            ),
            ["src/store/mod.rs", "./lib.rs", "Cargo.toml", "/abs/x.py"]
        );
        assert!(query_paths("e.g. version 1.2.3 at https://example.com/a.html, done.").is_empty());
        assert_eq!(
            query_paths(".env and .github/workflows"),
            [".env", ".github/workflows"]
        );
        assert!(
            query_paths("and/or").len() == 1,
            "slashed words are paths too"
        );
        assert!(query_paths("/ // ... 🎉").is_empty());
    }

    #[test]
    fn overlap_counts_exact_and_basename_matches_over_the_larger_list() {
        let root = Path::new("/repo");
        let q = QueryPaths::new(root, "look at /repo/src/lib.rs", &[]);
        assert_eq!(q.relative(), ["src/lib.rs"]);
        // The relative form of an absolute query path matches.
        assert_eq!(q.overlap(&[stored("src/lib.rs", "src/lib.rs")]), 1.0);
        // Same file name elsewhere: half.
        assert_eq!(q.overlap(&[stored("x/lib.rs", "x/lib.rs")]), 0.5);
        // Divided by the larger list.
        let two = [stored("src/lib.rs", "src/lib.rs"), stored("b.rs", "b.rs")];
        assert_eq!(q.overlap(&two), 0.5);
        // One file named twice counts once.
        let twice = [
            stored("src/lib.rs", "src/lib.rs"),
            stored("/repo/src/lib.rs", "src/lib.rs"),
        ];
        assert_eq!(q.overlap(&twice), 1.0);
        assert_eq!(q.overlap(&[]), 0.0);
        let none = QueryPaths::new(root, "no paths here", &[]);
        assert!(none.is_empty());
        assert_eq!(none.overlap(&two), 0.0);
        let filtered =
            QueryPaths::new(root, "x", &["src/lib.rs".into(), "/repo/src/lib.rs".into()]);
        assert_eq!(filtered.relative(), ["src/lib.rs"]);
    }
}
