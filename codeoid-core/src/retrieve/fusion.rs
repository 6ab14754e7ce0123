//! Fusion: the four-signal score of DESIGN §2 over a candidate batch.
//!
//! `score = w.vec * vec + w.bm25 * bm25 + w.recency * recency + w.path * path`, where `vec` is
//! the cosine of the best window (from the int8 index, query in f32) clamped at 0, `bm25` the raw BM25 divided by the batch's
//! best (so the best lexical match scores 1 and an episode whose words do not match scores 0),
//! `recency` `0.5 ^ (age_hours / half_life)` (a future timestamp counts as now) and `path` the
//! overlap of `paths`.
//!
//! Invariants: every component is in [0, 1]; the order is total and deterministic (score, then
//! newer, then episode id), so equal inputs always rank the same way.
//!
//! Pure: no store, no model. The candidates come from the engine.

use chrono::{DateTime, Utc};

use super::config::RetrievalConfig;
use super::paths::QueryPaths;
use super::query::Components;
use crate::store::{EpisodeHeader, StoredPath};

/// One candidate episode with its raw signals.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// The episode.
    pub header: EpisodeHeader,
    /// Exact cosine of its best window, when it is embedded.
    pub cosine: Option<f64>,
    /// `-bm25()`, when its words match the query.
    pub bm25: Option<f64>,
    /// Its file paths.
    pub paths: Vec<StoredPath>,
}

/// A ranked candidate: its index in the batch, its score and its components.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ranked {
    /// Position in the candidate batch.
    pub index: usize,
    /// Weighted sum.
    pub score: f64,
    /// The four signals.
    pub components: Components,
}

/// `0.5 ^ (age_hours / half_life_hours)`, 1 for an episode from the future.
pub(crate) fn recency(created_at: DateTime<Utc>, now: DateTime<Utc>, half_life_hours: f64) -> f64 {
    let age_hours = (now - created_at).num_milliseconds().max(0) as f64 / 3_600_000.0;
    0.5f64.powf(age_hours / half_life_hours)
}

/// Scores and orders `candidates`, best first.
pub(crate) fn rank(
    candidates: &[Candidate],
    query_paths: &QueryPaths,
    config: &RetrievalConfig,
    now: DateTime<Utc>,
) -> Vec<Ranked> {
    let best_bm25 = candidates
        .iter()
        .filter_map(|c| c.bm25)
        .filter(|s| s.is_finite())
        .fold(0.0f64, f64::max);
    let w = config.weights;
    let mut ranked: Vec<Ranked> = candidates
        .iter()
        .enumerate()
        .map(|(index, c)| {
            let bm25 = match c.bm25 {
                Some(s) if best_bm25 > 0.0 && s.is_finite() => (s / best_bm25).clamp(0.0, 1.0),
                _ => 0.0,
            };
            let components = Components {
                vec: c
                    .cosine
                    .filter(|v| v.is_finite())
                    .map_or(0.0, |v| v.clamp(0.0, 1.0)),
                bm25,
                recency: recency(c.header.created_at, now, config.half_life_hours),
                path: query_paths.overlap(&c.paths),
            };
            let score = w.vec * components.vec
                + w.bm25 * components.bm25
                + w.recency * components.recency
                + w.path * components.path;
            Ranked {
                index,
                score,
                components,
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        let (ha, hb) = (&candidates[a.index].header, &candidates[b.index].header);
        b.score
            .total_cmp(&a.score)
            .then(hb.created_at.cmp(&ha.created_at))
            .then(ha.id.cmp(&hb.id))
    });
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::{EpisodeKind, EpisodeStatus, PathAccess};
    use chrono::{Duration, TimeZone};
    use std::path::Path;

    fn header(id: &str, at: DateTime<Utc>) -> EpisodeHeader {
        EpisodeHeader {
            id: id.into(),
            workspace_id: "ws".into(),
            session_id: "s".into(),
            turn_seq: 0,
            kind: EpisodeKind::ToolCall,
            tool_name: Some("Read".into()),
            call_id: None,
            status: EpisodeStatus::Ok,
            summary: id.into(),
            created_at: at,
            token_estimate: 1,
        }
    }

    #[test]
    fn the_design_formula_with_batch_normalized_bm25() {
        let now = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        let path = StoredPath {
            given: "src/lib.rs".into(),
            relative: "src/lib.rs".into(),
            access: PathAccess::Read,
            content_hash: None,
        };
        let candidates = vec![
            Candidate {
                header: header("ep_a", now - Duration::hours(48)),
                cosine: Some(0.8),
                bm25: Some(5.0),
                paths: vec![path.clone()],
            },
            Candidate {
                header: header("ep_b", now),
                cosine: Some(-0.3),
                bm25: Some(10.0),
                paths: vec![],
            },
            Candidate {
                header: header("ep_c", now + Duration::hours(1)),
                cosine: None,
                bm25: None,
                paths: vec![],
            },
        ];
        let paths = QueryPaths::new(Path::new("/repo"), "src/lib.rs", &[]);
        let ranked = rank(&candidates, &paths, &RetrievalConfig::default(), now);
        let a = ranked.iter().find(|r| r.index == 0).unwrap();
        assert_eq!(
            a.components,
            Components {
                vec: 0.8,
                bm25: 0.5,
                recency: 0.5,
                path: 1.0
            }
        );
        let expected = 0.55 * 0.8 + 0.25 * 0.5 + 0.12 * 0.5 + 0.08;
        assert!((a.score - expected).abs() < 1e-12);
        let b = ranked.iter().find(|r| r.index == 1).unwrap();
        assert_eq!((b.components.vec, b.components.bm25), (0.0, 1.0));
        let c = ranked.iter().find(|r| r.index == 2).unwrap();
        assert_eq!(c.components.recency, 1.0, "the future counts as now");
        assert_eq!(ranked[0].index, 0);
        // Equal score and time: the smaller id first, whatever the batch order.
        let tie = vec![
            Candidate {
                header: header("ep_z", now - Duration::hours(1)),
                cosine: None,
                bm25: None,
                paths: vec![],
            },
            Candidate {
                header: header("ep_a", now - Duration::hours(1)),
                cosine: None,
                bm25: None,
                paths: vec![],
            },
        ];
        let ranked = rank(&tie, &paths, &RetrievalConfig::default(), now);
        assert_eq!(ranked[0].index, 1, "same score and time: id order");
    }

    #[test]
    fn recency_halves_every_half_life() {
        let now = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        assert!((recency(now - Duration::hours(96), now, 48.0) - 0.25).abs() < 1e-12);
        assert_eq!(recency(now, now, 48.0), 1.0);
    }
}
