//! Rank metrics of one mode over a set of queries: hit@1, hit@5 and MRR@10.

#[derive(Default, Clone, Copy)]
pub(crate) struct Metrics {
    pub(crate) n: usize,
    hit1: f64,
    hit5: f64,
    mrr: f64,
}

impl Metrics {
    pub(crate) fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            self.hit1 += f64::from(u8::from(r == 1));
            self.hit5 += f64::from(u8::from(r <= 5));
            self.mrr += 1.0 / r as f64;
        }
    }

    pub(crate) fn row(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{:.3} | {:.3} | {:.3}",
            self.hit1 / n,
            self.hit5 / n,
            self.mrr / n
        )
    }

    pub(crate) fn mrr(&self) -> f64 {
        self.mrr / self.n.max(1) as f64
    }
}
