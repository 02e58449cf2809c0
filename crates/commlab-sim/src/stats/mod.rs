//! Statistics: the per-processor time account (`TimeAccount`: exactly one category accrues at a
//! time), network traffic by class (`Traffic`), and what a run records only when asked
//! (`engine::Recording`, set through `Simulator::record_latencies`, `trace` and `intervals`):
//! latency distributions (`latency`), a timeline (`trace`) and interval rows (`interval`).
//! Off, each is a `None` the hot paths test once, with no event and no allocation, so the run
//! is the same event for event.
//!
//! Invariants, tested in `commlab-cli/tests/detail_stats.rs` and `trace.rs`: a latency
//! distribution's count is its counter's; stalls plus NI waits equal the memory/NI-wait
//! breakdown where no handler interrupts a stall (dash); a processor's spans sum to its busy
//! time; the stretches sum to the breakdown and the traffic.

pub mod counters;
pub(crate) mod interval;
pub(crate) mod latency;
pub(crate) mod trace;

use commlab_api::{Category, TrafficClass};

/// Splits one processor's time into categories. Exactly one category accrues at any moment
/// between `begin` and `finish`, so the totals sum to the busy time by construction; the
/// engine still checks that sum at the end of every run.
#[derive(Clone, Debug)]
pub(crate) struct TimeAccount {
    current: Category,
    since_ps: u64,
    totals_ps: [u64; 4],
    start_ps: u64,
    finish_ps: Option<u64>,
    /// The spans themselves, when the run is traced (`trace`).
    pub spans: Option<Box<trace::SpanLog>>,
    /// The account per stretch of time, when the run keeps interval statistics (`interval`).
    pub intervals: Option<Box<interval::IntervalAccount>>,
}

impl TimeAccount {
    pub fn new() -> Self {
        TimeAccount {
            current: Category::Compute,
            since_ps: 0,
            totals_ps: [0; 4],
            start_ps: 0,
            finish_ps: None,
            spans: None,
            intervals: None,
        }
    }

    /// Switch the accruing category at `now`.
    #[inline]
    pub fn switch(&mut self, cat: Category, now: u64) {
        if self.finish_ps.is_some() {
            return;
        }
        self.totals_ps[self.current as usize] += now - self.since_ps;
        if let Some(log) = self.spans.as_mut() {
            log.push(self.current, self.since_ps, now);
        }
        if let Some(a) = self.intervals.as_mut() {
            a.add(self.current as usize, self.since_ps, now);
        }
        self.current = cat;
        self.since_ps = now;
    }

    /// Discard everything before `now` (the start of the timed region).
    pub fn begin(&mut self, now: u64) {
        self.totals_ps = [0; 4];
        self.since_ps = now;
        self.start_ps = now;
        if let Some(log) = self.spans.as_mut() {
            log.clear();
        }
        if let Some(a) = self.intervals.as_mut() {
            a.clear();
        }
    }

    /// Stop accruing at `now` (the main thread returned).
    pub fn finish(&mut self, now: u64) {
        self.switch(self.current, now);
        self.finish_ps = Some(now);
    }

    pub fn start_ps(&self) -> u64 {
        self.start_ps
    }
    pub fn finish_ps(&self) -> Option<u64> {
        self.finish_ps
    }
    pub fn totals_ps(&self) -> [u64; 4] {
        self.totals_ps
    }
    pub fn busy_ps(&self) -> u64 {
        self.finish_ps.unwrap_or(self.since_ps) - self.start_ps
    }
}

/// Bytes injected into the network, by class, plus message and packet counts.
#[derive(Clone, Debug, Default)]
pub(crate) struct Traffic {
    pub bytes: [u64; 5],
    pub messages: u64,
    pub packets: u64,
    pub cross_messages: u64,
    pub protocol_messages: u64,
}

impl Traffic {
    #[inline]
    pub fn add(&mut self, class: TrafficClass, bytes: u64) {
        self.bytes[class as usize] += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_sums_to_busy_time() {
        let mut a = TimeAccount::new();
        a.switch(Category::Compute, 0);
        a.switch(Category::MessageOverhead, 100);
        a.begin(150); // set-up before 150 is discarded
        a.switch(Category::Synchronization, 400);
        a.switch(Category::Compute, 1000);
        a.finish(1234);
        a.switch(Category::MemoryNiWait, 2000); // ignored after finish
        let t = a.totals_ps();
        assert_eq!(t[Category::MessageOverhead as usize], 250);
        assert_eq!(t[Category::Synchronization as usize], 600);
        assert_eq!(t[Category::Compute as usize], 234);
        assert_eq!(t.iter().sum::<u64>(), a.busy_ps());
        assert_eq!(a.busy_ps(), 1234 - 150);
    }
}
