//! CPU and run-queue measurement for the store benches: process and thread CPU from
//! `/proc/self/task/*/schedstat` and `CLOCK_THREAD_CPUTIME_ID`, and the per-benchmark [`Tally`].

use std::path::Path;
use std::time::{Duration, Instant};

/// CPU time and run-queue wait of this process so far, summed over its threads (Linux
/// `/proc/self/task/*/schedstat`; zero elsewhere). On a shared machine, wall time minus the wait
/// is what the code itself needs.
fn cpu_and_wait() -> (Duration, Duration, Duration) {
    let read = |path: &Path| -> (u64, u64) {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut fields = text
            .split_whitespace()
            .map(|f| f.parse::<u64>().unwrap_or(0));
        (fields.next().unwrap_or(0), fields.next().unwrap_or(0))
    };
    let (mut cpu, mut wait) = (0, 0);
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let (c, w) = read(&task.path().join("schedstat"));
        cpu += c;
        wait += w;
    }
    (
        Duration::from_nanos(cpu),
        Duration::from_nanos(wait),
        thread_cpu(),
    )
}

/// CPU time of the calling thread so far, to the nanosecond (`CLOCK_THREAD_CPUTIME_ID`).
pub(crate) fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and the clock id is a constant libc defines;
    // clock_gettime writes only into `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Totals across every measured iteration of a benchmark.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) items: u64,
    wall: Duration,
    cpu: Duration,
    wait: Duration,
    /// CPU of the calling thread alone (the checkpoint thread excluded).
    caller_cpu: Duration,
}

impl Tally {
    /// Runs `work`, which handles `items` items, and adds what it took; returns its wall time
    /// and its result.
    pub(crate) fn time<T>(&mut self, items: usize, work: impl FnOnce() -> T) -> (Duration, T) {
        let (cpu0, wait0, own0) = cpu_and_wait();
        let started = Instant::now();
        let out = work();
        let took = started.elapsed();
        let (cpu1, wait1, own1) = cpu_and_wait();
        self.items += items as u64;
        self.wall += took;
        self.cpu += cpu1.saturating_sub(cpu0);
        self.wait += wait1.saturating_sub(wait0);
        self.caller_cpu += own1.saturating_sub(own0);
        (took, out)
    }

    pub(crate) fn report(&self, name: &str, unit: &str) {
        if self.items == 0 {
            return; // filtered out
        }
        let per = |d: Duration| self.items as f64 / d.as_secs_f64().max(1e-9);
        println!(
            "{name}: {} {unit} in {:.2?} wall ({:.0} {unit}/s); process CPU {:.2?} ({:.0} {unit} per \
             CPU-second), calling thread CPU {:.2?} ({:.0} {unit} per CPU-second), run-queue wait \
             {:.2?}",
            self.items,
            self.wall,
            per(self.wall),
            self.cpu,
            per(self.cpu),
            self.caller_cpu,
            per(self.caller_cpu),
            self.wait
        );
    }
}
