//! Codex `token_count` totals: cumulative counters that repeat, turned into per-call deltas.
//!
//! Invariant: the deltas handed out add up to the last total seen (as long as totals only
//! grow), and a total equal to the previous one hands out nothing, so no token is counted
//! twice. When totals go down (a rollout resumed from another), the event's
//! `last_token_usage` is used instead and the caller warns.

use serde_json::{Map, Value};

use crate::import::fields::count;

/// Token counts of one `token_count` event (cumulative) or of one call (a delta).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Totals {
    /// Input tokens, cached ones included (OpenAI's convention).
    pub input: u64,
    /// The cached part of `input`.
    pub cached: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
}

impl Totals {
    fn of(obj: &Map<String, Value>) -> Totals {
        Totals {
            input: count(obj, "input_tokens"),
            cached: count(obj, "cached_input_tokens"),
            output: count(obj, "output_tokens"),
        }
    }

    fn covers(&self, earlier: &Totals) -> bool {
        self.input >= earlier.input
            && self.cached >= earlier.cached
            && self.output >= earlier.output
    }

    fn minus(&self, earlier: &Totals) -> Totals {
        Totals {
            input: self.input - earlier.input,
            cached: self.cached - earlier.cached,
            output: self.output - earlier.output,
        }
    }
}

/// What one `token_count` event contributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Count {
    /// Usage since the previous event.
    Delta(Totals),
    /// Totals went down; this is the event's last-call usage.
    Reset(Totals),
    /// The same totals as the previous event: nothing new.
    Repeat,
    /// The event carries no usage (`info: null`, a rate-limit update).
    Empty,
}

/// The running totals of one rollout.
#[derive(Debug, Default)]
pub(super) struct Ledger {
    last: Option<Totals>,
}

impl Ledger {
    /// Reads one `token_count` event payload.
    pub fn record(&mut self, event: &Map<String, Value>) -> Count {
        let Some(info) = event.get("info").and_then(Value::as_object) else {
            return Count::Empty;
        };
        let total = info
            .get("total_token_usage")
            .and_then(Value::as_object)
            .map(Totals::of);
        let last = info
            .get("last_token_usage")
            .and_then(Value::as_object)
            .map(Totals::of);
        let Some(current) = total else {
            // Without a cumulative total the per-call figure is all there is.
            return last.map_or(Count::Empty, Count::Delta);
        };
        let count = match self.last {
            Some(previous) if previous == current => Count::Repeat,
            Some(previous) if current.covers(&previous) => Count::Delta(current.minus(&previous)),
            Some(_) => Count::Reset(last.unwrap_or(current)),
            None => Count::Delta(current),
        };
        self.last = Some(current);
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(total: (u64, u64, u64), last: (u64, u64, u64)) -> Map<String, Value> {
        let usage = |(i, c, o): (u64, u64, u64)| json!({"input_tokens": i, "cached_input_tokens": c, "output_tokens": o});
        json!({"type": "token_count", "info": {"total_token_usage": usage(total), "last_token_usage": usage(last)}})
            .as_object()
            .unwrap()
            .clone()
    }

    fn t(input: u64, cached: u64, output: u64) -> Totals {
        Totals {
            input,
            cached,
            output,
        }
    }

    #[test]
    fn deltas_add_up_to_the_last_total_and_repeats_add_nothing() {
        let mut ledger = Ledger::default();
        assert_eq!(
            ledger.record(&event((100, 40, 10), (100, 40, 10))),
            Count::Delta(t(100, 40, 10))
        );
        assert_eq!(
            ledger.record(&event((100, 40, 10), (100, 40, 10))),
            Count::Repeat
        );
        assert_eq!(
            ledger.record(&event((250, 140, 25), (150, 100, 15))),
            Count::Delta(t(150, 100, 15))
        );
        assert_eq!(
            ledger.record(&event((10, 0, 1), (10, 0, 1))),
            Count::Reset(t(10, 0, 1))
        );
        let empty = json!({"type": "token_count", "info": null});
        assert_eq!(ledger.record(empty.as_object().unwrap()), Count::Empty);
    }
}
