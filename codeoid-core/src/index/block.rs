//! The workspace index block of DESIGN §4: what memory holds, in under 1,800 characters, for the
//! top of a system prompt.
//!
//! Format (pinned by tests; harnesses and models read it):
//! ```text
//! # Memory Index — {workspace}
//! {E} episodes across {S} sessions · last activity {ago}
//! ## Topic clusters (call `recall("<label>")` to retrieve)
//! - **{label}** — {n} episodes, latest {ago} · {top files}
//! ## Hot files (call `recall_file(path)` before reading)
//! - {path} — {n} touches, last {ago}
//! ## Recent sessions
//! - [{current | ago}] {first user intent, <= 100 chars}
//! ## Memory tools
//! - `recall("<topic>")`, `recall_file("<path>")`, `timeline()`, `get_episode("<id>")`
//! ```
//!
//! Invariants:
//! - Deterministic: the same input and `now` give byte-identical text (prompt caching depends on
//!   it; the scheduler decides when `now` moves).
//! - The budget (in characters) is respected by dropping whole lines, least useful first: the
//!   last cluster and the last hot file, alternately, then the oldest sessions, then the
//!   fingerprint line. The title and the tool lines always survive (a valid budget always holds
//!   them; see `config::MIN_BUDGET`). A section whose lines are all dropped loses its header.
//! - An empty workspace gives an empty string.
//!
//! Counts get thousands separators and singular forms ("1 episode"); "ago" texts are coarse
//! (`just now`, `5m ago`, `3h ago`, `2d ago`, `4mo ago`, `2y ago`).

use chrono::{DateTime, Utc};

use super::cluster::{cluster, normalize};
use super::config::IndexConfig;
use super::input::{ClusterEpisode, IndexInput};
use super::label::{Topic, cap, topics};
use crate::error::Result;

/// The header of the tool section and its one line, which always survive the budget.
const TOOLS: [&str; 2] = [
    "## Memory tools",
    "- `recall(\"<topic>\")`, `recall_file(\"<path>\")`, `timeline()`, `get_episode(\"<id>\")`",
];
const CLUSTERS_HEADER: &str = "## Topic clusters (call `recall(\"<label>\")` to retrieve)";
const HOT_HEADER: &str = "## Hot files (call `recall_file(path)` before reading)";
const SESSIONS_HEADER: &str = "## Recent sessions";

/// Longest workspace name in the title, in characters.
const WORKSPACE_MAX_CHARS: usize = 80;
/// Longest first intent shown for a session, in characters.
const INTENT_MAX_CHARS: usize = 100;
/// Longest hot-file path shown, in characters (the end of a path is kept: it names the file).
const PATH_MAX_CHARS: usize = 120;
/// Longest top-file path shown on a cluster line, in characters.
const TOP_FILE_MAX_CHARS: usize = 60;

/// Builds the index block for `input` as seen at `now`.
///
/// Returns an empty string for an empty workspace (no episodes) or a disabled config.
///
/// # Errors
/// [`crate::ErrorKind::InvalidInput`] when `config` fails [`IndexConfig::validate`].
pub fn build_index(input: &IndexInput, config: &IndexConfig, now: DateTime<Utc>) -> Result<String> {
    config.validate()?;
    if !config.enabled || input.episode_count == 0 {
        return Ok(String::new());
    }
    let workspace = cap(&one_line(&input.workspace), WORKSPACE_MAX_CHARS);
    let title = format!(
        "# Memory Index — {}",
        if workspace.is_empty() {
            "workspace"
        } else {
            &workspace
        }
    );
    let fingerprint = format!(
        "{} across {} · last activity {}",
        counted(input.episode_count, "episode", "episodes"),
        counted(input.session_count, "session", "sessions"),
        input
            .last_activity
            .map_or_else(|| "unknown".to_string(), |t| ago(now, t)),
    );
    let clusters: Vec<String> = topic_clusters(input, config)
        .iter()
        .map(|t| cluster_line(t, now))
        .collect();
    let hot = hot_file_lines(input, config, now);
    let sessions = session_lines(input, config, now);
    Ok(assemble(
        title,
        fingerprint,
        clusters,
        hot,
        sessions,
        config.budget_chars,
    ))
}

/// Picks the most recent embedded episodes (zero vectors skipped), normalizes them into one flat
/// buffer and clusters them when there are enough.
fn topic_clusters(input: &IndexInput, config: &IndexConfig) -> Vec<Topic> {
    let embedded = &input.embedded;
    if config.max_clusters < 2 || embedded.len() < config.min_cluster_episodes {
        return Vec::new();
    }
    let episodes = embedded.episodes();
    let mut order: Vec<usize> = (0..episodes.len()).collect();
    order.sort_unstable_by(|&a, &b| episodes[b].time.cmp(&episodes[a].time).then(a.cmp(&b)));
    let dim = embedded.dim();
    let mut units: Vec<f32> =
        Vec::with_capacity(config.max_cluster_episodes.min(order.len()) * dim);
    let mut chosen: Vec<&ClusterEpisode> = Vec::new();
    for i in order {
        if chosen.len() == config.max_cluster_episodes {
            break;
        }
        let Some(vector) = embedded.vector(i) else {
            continue;
        };
        let start = units.len();
        units.extend_from_slice(vector);
        if normalize(&mut units[start..]) {
            chosen.push(&episodes[i]);
        } else {
            units.truncate(start);
        }
    }
    if chosen.len() < config.min_cluster_episodes {
        return Vec::new();
    }
    match cluster(&units, dim, config.max_clusters) {
        Some(found) => topics(&chosen, &found.assignments, found.k),
        None => Vec::new(),
    }
}

fn cluster_line(topic: &Topic, now: DateTime<Utc>) -> String {
    let mut line = format!(
        "- **{}** — {}, latest {}",
        topic.label,
        counted(topic.members as u64, "episode", "episodes"),
        ago(now, topic.latest)
    );
    if !topic.top_files.is_empty() {
        let files: Vec<String> = topic
            .top_files
            .iter()
            .map(|f| cap_tail(f, TOP_FILE_MAX_CHARS))
            .collect();
        line.push_str(" · ");
        line.push_str(&files.join(", "));
    }
    line
}

fn hot_file_lines(input: &IndexInput, config: &IndexConfig, now: DateTime<Utc>) -> Vec<String> {
    let mut files: Vec<_> = input
        .hot_files
        .iter()
        .filter(|f| f.touches > 0 && !f.path.trim().is_empty())
        .collect();
    files.sort_by(|a, b| {
        b.touches
            .cmp(&a.touches)
            .then(b.last_touched.cmp(&a.last_touched))
            .then_with(|| a.path.cmp(&b.path))
    });
    files
        .into_iter()
        .take(config.max_hot_files)
        .map(|f| {
            format!(
                "- {} — {}, last {}",
                cap_tail(&one_line(&f.path), PATH_MAX_CHARS),
                counted(f.touches, "touch", "touches"),
                ago(now, f.last_touched)
            )
        })
        .collect()
}

fn session_lines(input: &IndexInput, config: &IndexConfig, now: DateTime<Utc>) -> Vec<String> {
    let current = input.current_session.as_deref();
    let mut sessions: Vec<_> = input.sessions.iter().collect();
    sessions.sort_by(|a, b| {
        let (a_cur, b_cur) = (
            Some(a.id.as_str()) == current,
            Some(b.id.as_str()) == current,
        );
        b_cur
            .cmp(&a_cur)
            .then(b.last_activity.cmp(&a.last_activity))
            .then_with(|| a.id.cmp(&b.id))
    });
    sessions.dedup_by(|a, b| a.id == b.id);
    sessions
        .into_iter()
        .take(config.max_sessions)
        .map(|s| {
            let when = if Some(s.id.as_str()) == current {
                "current".to_string()
            } else {
                ago(now, s.last_activity)
            };
            let intent = s
                .first_intent
                .as_deref()
                .map(one_line)
                .filter(|i| !i.is_empty())
                .map_or_else(
                    || "(no prompt recorded)".to_string(),
                    |i| cap(&i, INTENT_MAX_CHARS),
                );
            format!("- [{when}] {intent}")
        })
        .collect()
}

/// Joins the sections and drops lines until the block fits `budget` characters.
fn assemble(
    title: String,
    fingerprint: String,
    mut clusters: Vec<String>,
    mut hot: Vec<String>,
    mut sessions: Vec<String>,
    budget: usize,
) -> String {
    let mut fingerprint = Some(fingerprint);
    let size = |lines: &[String], header: &str| {
        if lines.is_empty() {
            0
        } else {
            lines.iter().map(|l| l.chars().count() + 1).sum::<usize>() + header.chars().count() + 1
        }
    };
    let fixed =
        title.chars().count() + 1 + TOOLS.iter().map(|l| l.chars().count() + 1).sum::<usize>();
    let mut clusters_next = true;
    loop {
        let total = fixed
            + fingerprint.as_ref().map_or(0, |f| f.chars().count() + 1)
            + size(&clusters, CLUSTERS_HEADER)
            + size(&hot, HOT_HEADER)
            + size(&sessions, SESSIONS_HEADER);
        if total <= budget {
            break;
        }
        // Clusters and hot files go first, alternately; then sessions; then the fingerprint.
        let dropped = match (clusters.is_empty(), hot.is_empty()) {
            (false, false) if clusters_next => clusters.pop(),
            (false, false) => hot.pop(),
            (false, true) => clusters.pop(),
            (true, false) => hot.pop(),
            (true, true) => sessions.pop().or_else(|| fingerprint.take()),
        };
        clusters_next = !clusters_next;
        if dropped.is_none() {
            break; // Only the title and tool lines are left: they always stay.
        }
    }
    let mut out = String::with_capacity(budget);
    let mut push = |line: &str| {
        out.push_str(line);
        out.push('\n');
    };
    push(&title);
    if let Some(f) = &fingerprint {
        push(f);
    }
    for (header, lines) in [
        (CLUSTERS_HEADER, &clusters),
        (HOT_HEADER, &hot),
        (SESSIONS_HEADER, &sessions),
    ] {
        if !lines.is_empty() {
            push(header);
            lines.iter().for_each(|l| push(l));
        }
    }
    TOOLS.iter().for_each(|l| push(l));
    out
}

/// A coarse, stable "how long ago": `just now`, `5m ago`, `3h ago`, `2d ago`, `4mo ago`,
/// `2y ago`. Times in the future (clock skew) read as `just now`.
pub(crate) fn ago(now: DateTime<Utc>, then: DateTime<Utc>) -> String {
    let secs = (now - then).num_seconds();
    const DAY: i64 = 86_400;
    match secs {
        s if s < 60 => "just now".to_string(),
        s if s < 3_600 => format!("{}m ago", s / 60),
        s if s < DAY => format!("{}h ago", s / 3_600),
        s if s < 60 * DAY => format!("{}d ago", s / DAY),
        s if s < 730 * DAY => format!("{}mo ago", s / (30 * DAY)),
        s => format!("{}y ago", s / (365 * DAY)),
    }
}

/// `n` with thousands separators and the right noun: `1 episode`, `12,345 episodes`.
fn counted(n: u64, one: &str, many: &str) -> String {
    let digits = n.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{grouped} {}", if n == 1 { one } else { many })
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to its last `max` characters behind an ellipsis (a path's end names the file).
fn cap_tail(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let skip = total - (max - 1);
    let at = text
        .char_indices()
        .nth(skip)
        .map_or(text.len(), |(at, _)| at);
    format!("…{}", &text[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ago_is_coarse_and_stable() {
        let now = DateTime::UNIX_EPOCH + chrono::Duration::days(1_000);
        let cases = [
            (0, "just now"),
            (59, "just now"),
            (60, "1m ago"),
            (3_599, "59m ago"),
            (3_600, "1h ago"),
            (86_399, "23h ago"),
            (86_400, "1d ago"),
            (59 * 86_400, "59d ago"),
            (60 * 86_400, "2mo ago"),
            (800 * 86_400, "2y ago"),
            (-30, "just now"),
        ];
        for (secs, text) in cases {
            assert_eq!(
                ago(now, now - chrono::Duration::seconds(secs)),
                text,
                "{secs}"
            );
        }
    }

    #[test]
    fn counts_are_grouped_and_singular() {
        assert_eq!(counted(1, "episode", "episodes"), "1 episode");
        assert_eq!(counted(0, "episode", "episodes"), "0 episodes");
        assert_eq!(counted(999, "x", "xs"), "999 xs");
        assert_eq!(counted(1_000, "x", "xs"), "1,000 xs");
        assert_eq!(counted(100_000, "x", "xs"), "100,000 xs");
        assert_eq!(counted(1_234_567, "x", "xs"), "1,234,567 xs");
    }

    #[test]
    fn cap_tail_keeps_the_end() {
        assert_eq!(cap_tail("a/b/c/file.rs", 8), "…file.rs");
        assert_eq!(cap_tail("file.rs", 8), "file.rs");
        assert_eq!(cap_tail("ä/ö/ü/é.rs", 5), "…é.rs");
    }
}
