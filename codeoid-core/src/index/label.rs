//! Topic labels and facts for clusters: a name a model can pass to `recall`, the member count,
//! the latest activity and the files the topic touches most.
//!
//! A label is built from two deterministic signals, with no model call and no network:
//! - the dominant directory: the deepest directory holding files of at least half the members
//!   (shown by its last two segments);
//! - distinctive terms: words of the members' summaries that are much more frequent in the
//!   cluster than in all clustered episodes, scored `p_c · ln(p_c / p)` (the cluster's share of
//!   the term's relative-entropy), at least two members each, stop words and words of the
//!   directory left out.
//!
//! Invariants: every ordering is total (counts, then times, then text), every map is a `BTreeMap`,
//! so the same input always gives the same labels in the same order; labels are unique within a
//! block and at most [`LABEL_MAX_CHARS`] characters.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::input::ClusterEpisode;

/// Longest label, in characters.
pub(crate) const LABEL_MAX_CHARS: usize = 60;
/// Files listed per topic.
const TOP_FILES: usize = 3;
/// Distinctive terms per label.
const TERMS: usize = 2;

/// Words that say nothing about a topic: English function words, words every coding session
/// uses, and the names of common agent tools (whose summaries start with them).
const STOP_WORDS: &[&str] = &[
    "about",
    "after",
    "again",
    "all",
    "also",
    "and",
    "any",
    "are",
    "bash",
    "been",
    "before",
    "but",
    "can",
    "could",
    "did",
    "does",
    "done",
    "each",
    "edit",
    "file",
    "files",
    "for",
    "from",
    "get",
    "glob",
    "grep",
    "had",
    "has",
    "have",
    "here",
    "home",
    "how",
    "into",
    "its",
    "just",
    "let",
    "like",
    "ls",
    "make",
    "more",
    "most",
    "multiedit",
    "need",
    "new",
    "not",
    "now",
    "one",
    "only",
    "other",
    "our",
    "out",
    "please",
    "read",
    "run",
    "see",
    "set",
    "should",
    "some",
    "still",
    "such",
    "task",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "tmp",
    "todowrite",
    "too",
    "use",
    "used",
    "user",
    "users",
    "using",
    "usr",
    "was",
    "webfetch",
    "websearch",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "will",
    "with",
    "would",
    "write",
    "yes",
    "you",
    "your",
];

/// A labelled cluster, ready to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Topic {
    /// Unique, deterministic label.
    pub label: String,
    /// Number of member episodes.
    pub members: usize,
    /// Newest member's time.
    pub latest: DateTime<Utc>,
    /// Most-touched files of the members, most touched first.
    pub top_files: Vec<String>,
}

/// Labels the `k` clusters given by `assignments` over `episodes` and returns them largest first
/// (then most recent, then by label). Empty clusters are skipped.
pub(crate) fn topics(episodes: &[&ClusterEpisode], assignments: &[usize], k: usize) -> Vec<Topic> {
    let terms: Vec<BTreeSet<String>> = episodes.iter().map(|e| terms_of(&e.summary)).collect();
    let mut all_df: BTreeMap<&str, usize> = BTreeMap::new();
    for set in &terms {
        for t in set {
            *all_df.entry(t.as_str()).or_default() += 1;
        }
    }
    let n_all = episodes.len();
    let mut topics = Vec::new();
    for c in 0..k {
        let members: Vec<usize> = (0..episodes.len())
            .filter(|&i| assignments.get(i) == Some(&c))
            .collect();
        let Some(latest) = members.iter().map(|&i| episodes[i].time).max() else {
            continue;
        };
        let dir = dominant_directory(episodes, &members);
        let shown_dir = dir.as_deref().map(short_dir);
        let dir_words: BTreeSet<String> = dir
            .iter()
            .flat_map(|d| d.split('/'))
            .flat_map(terms_of)
            .collect();
        let mut df: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in &members {
            for t in &terms[i] {
                *df.entry(t.as_str()).or_default() += 1;
            }
        }
        let n_c = members.len() as f64;
        let mut scored: Vec<(f64, &str)> = df
            .iter()
            .filter(|&(t, &count)| count >= 2 && !dir_words.contains(*t))
            .filter_map(|(&t, &count)| {
                let p_c = count as f64 / n_c;
                let p = all_df.get(t).copied().unwrap_or(count) as f64 / n_all as f64;
                (p_c > p).then(|| (p_c * (p_c / p).ln(), t))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        let words: Vec<&str> = scored.iter().take(TERMS).map(|&(_, t)| t).collect();
        let newest_summary = members
            .iter()
            .max_by_key(|&&i| (episodes[i].time, std::cmp::Reverse(i)))
            .map(|&i| episodes[i].summary.as_str())
            .unwrap_or_default();
        let label = match (shown_dir, words.is_empty()) {
            (Some(d), false) => format!("{d}: {}", words.join(", ")),
            (Some(d), true) => d,
            (None, false) => words.join(", "),
            (None, true) => newest_summary
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        };
        topics.push(Topic {
            label: cap(&label, LABEL_MAX_CHARS),
            members: members.len(),
            latest,
            top_files: top_files(episodes, &members),
        });
    }
    topics.sort_by(|a, b| {
        b.members
            .cmp(&a.members)
            .then(b.latest.cmp(&a.latest))
            .then_with(|| a.label.cmp(&b.label))
    });
    let mut seen = BTreeSet::new();
    for (i, topic) in topics.iter_mut().enumerate() {
        if topic.label.is_empty() {
            topic.label = format!("topic {}", i + 1);
        }
        if !seen.insert(topic.label.clone()) {
            topic.label = format!("{} #{}", topic.label, i + 1);
            seen.insert(topic.label.clone());
        }
    }
    topics
}

/// Lowercased words of at least three characters, not mostly digits, not stop words. Splits on
/// anything that is not a letter or digit, so `snake_case`, `path/segments` and `file.ext`
/// break into their parts.
pub(crate) fn terms_of(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| {
            let digits = w.chars().filter(char::is_ascii_digit).count();
            digits * 2 <= w.chars().count() && STOP_WORDS.binary_search(&w.as_str()).is_err()
        })
        .collect()
}

/// `path` with `\` as `/`, without a leading `./` or trailing `/`.
fn normalize_path(path: &str) -> String {
    let p = path.trim().replace('\\', "/");
    let p = p.strip_prefix("./").unwrap_or(&p);
    p.trim_end_matches('/').to_string()
}

/// Every ancestor directory of `path` (not the root, not the file itself).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/')
        .map(move |(at, _)| &path[..at])
        .filter(|d| !d.is_empty())
}

/// The deepest directory holding files of at least half the members (more members, then the
/// lexicographically smaller name, on ties).
fn dominant_directory(episodes: &[&ClusterEpisode], members: &[usize]) -> Option<String> {
    let mut coverage: BTreeMap<String, usize> = BTreeMap::new();
    for &i in members {
        let dirs: BTreeSet<String> = episodes[i]
            .paths
            .iter()
            .map(|p| normalize_path(p))
            .flat_map(|p| ancestors(&p).map(str::to_string).collect::<Vec<_>>())
            .collect();
        for d in dirs {
            *coverage.entry(d).or_default() += 1;
        }
    }
    let half = members.len().div_ceil(2);
    coverage
        .into_iter()
        .filter(|&(_, count)| count >= half)
        .max_by(|(a, ca), (b, cb)| {
            let depth = |d: &str| d.matches('/').count();
            depth(a)
                .cmp(&depth(b))
                .then(ca.cmp(cb))
                .then_with(|| b.cmp(a))
        })
        .map(|(d, _)| d)
}

/// The last two segments of a directory: `codeoid-core/src/store` → `src/store`.
fn short_dir(dir: &str) -> String {
    let segments: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    segments[segments.len().saturating_sub(2)..].join("/")
}

fn top_files(episodes: &[&ClusterEpisode], members: &[usize]) -> Vec<String> {
    let mut counts: BTreeMap<String, (usize, DateTime<Utc>)> = BTreeMap::new();
    for &i in members {
        let paths: BTreeSet<String> = episodes[i]
            .paths
            .iter()
            .map(|p| normalize_path(p))
            .collect();
        for p in paths.into_iter().filter(|p| !p.is_empty()) {
            let entry = counts.entry(p).or_insert((0, episodes[i].time));
            entry.0 += 1;
            entry.1 = entry.1.max(episodes[i].time);
        }
    }
    let mut ranked: Vec<(String, (usize, DateTime<Utc>))> = counts.into_iter().collect();
    ranked.sort_by(|(pa, (ca, ta)), (pb, (cb, tb))| {
        cb.cmp(ca).then(tb.cmp(ta)).then_with(|| pa.cmp(pb))
    });
    ranked.into_iter().take(TOP_FILES).map(|(p, _)| p).collect()
}

/// `text` cut to `max` characters, the last one an ellipsis when cut.
pub(crate) fn cap(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if text.chars().count() > max => format!("{}…", &text[..at]),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(summary: &str, paths: &[&str], minute: i64) -> ClusterEpisode {
        ClusterEpisode {
            summary: summary.into(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            time: DateTime::UNIX_EPOCH + chrono::Duration::minutes(minute),
        }
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn terms_split_identifiers_and_drop_noise() {
        let t = terms_of("Read(src/store/schema_migrations.rs) the 20250929 abc123def sha256");
        let t: Vec<&str> = t.iter().map(String::as_str).collect();
        assert_eq!(
            t,
            [
                "abc123def",
                "migrations",
                "schema",
                "sha256",
                "src",
                "store"
            ]
        );
    }

    #[test]
    fn labels_come_from_directory_and_distinctive_terms() {
        let episodes = [
            ep(
                "Edit migration schema version",
                &["core/src/store/schema.rs"],
                1,
            ),
            ep(
                "fix schema migration order",
                &["core/src/store/migrate.rs"],
                2,
            ),
            ep(
                "schema migration test",
                &["core/src/store/schema.rs", "README.md"],
                3,
            ),
            ep("tokenizer padding bug", &["core/src/embed/tok.rs"], 4),
            ep("tokenizer truncation", &["core/src/embed/tok.rs"], 9),
            ep("pooling tokenizer output", &["core/src/embed/pool.rs"], 5),
        ];
        let refs: Vec<&ClusterEpisode> = episodes.iter().collect();
        let topics = topics(&refs, &[0, 0, 0, 1, 1, 1], 2);
        assert_eq!(topics.len(), 2);
        // Equal sizes: the more recent topic first.
        assert_eq!(topics[0].label, "src/embed: tokenizer");
        assert_eq!(topics[0].latest, episodes[4].time);
        assert_eq!(
            topics[0].top_files,
            ["core/src/embed/tok.rs", "core/src/embed/pool.rs"]
        );
        assert_eq!(topics[1].label, "src/store: migration, schema");
        assert_eq!(topics[1].members, 3);
        assert_eq!(topics[1].top_files[0], "core/src/store/schema.rs");
    }

    #[test]
    fn duplicate_and_empty_labels_are_made_unique() {
        let episodes = [
            ep("", &[], 1),
            ep("", &[], 2),
            ep("same", &[], 3),
            ep("same", &[], 4),
        ];
        let refs: Vec<&ClusterEpisode> = episodes.iter().collect();
        let labels: Vec<String> = topics(&refs, &[0, 0, 1, 2], 3)
            .into_iter()
            .map(|t| t.label)
            .collect();
        assert_eq!(labels, ["topic 1", "same", "same #3"]);
    }

    #[test]
    fn cap_is_char_safe() {
        assert_eq!(cap("héllo wörld", 5), "héll…");
        assert_eq!(cap("short", 5), "short");
    }
}
