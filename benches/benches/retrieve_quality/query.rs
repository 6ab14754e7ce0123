//! A derived retrieval-quality query: its text, relevant episodes, the time it is asked as of,
//! and the half of the split it falls in.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

/// One derived query.
pub(crate) struct Query {
    pub(crate) family: &'static str,
    pub(crate) text: String,
    pub(crate) relevant: HashSet<String>,
    pub(crate) as_of: DateTime<Utc>,
    pub(crate) until: Option<DateTime<Utc>>,
}

impl Query {
    /// Half 0 or 1, from a hash of the text (FNV-1a), fixed before any result is seen.
    pub(crate) fn half(&self) -> usize {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.text.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        (h >> 7) as usize % 2
    }
}
