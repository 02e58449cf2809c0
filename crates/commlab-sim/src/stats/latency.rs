//! Latency distributions (`Simulator::record_latencies`): one histogram per metric and class
//! of what a run waited for. Off by default; when off the engine holds `None` and records
//! nothing (one branch at each recording site, no allocation, no event).
//!
//! Samples are kept in picoseconds in an HDR histogram of three significant digits, so a
//! percentile is within 0.1% of the exact sample; count, sum, minimum and maximum are exact.
//! The buckets reported are log-spaced (each twice the one before) in cycles. A sample counts
//! when it *starts* inside the timed region, as the counters count, so a distribution's count
//! is its counter's.

use commlab_api::{LatencyBucket, LatencyStats};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// What was measured: the metric and its class (see [`LatencyStats`]).
pub(crate) type Key = (&'static str, &'static str);

struct Series {
    hist: Histogram<u64>,
    count: u64,
    sum_ps: u128,
    min_ps: u64,
    max_ps: u64,
}

impl Series {
    fn new() -> Series {
        // Auto-resizing: a latency of any length fits.
        let hist = Histogram::new(3).expect("three significant digits are valid");
        Series { hist, count: 0, sum_ps: 0, min_ps: u64::MAX, max_ps: 0 }
    }
}

/// The histograms of one run, by (metric, class).
#[derive(Default)]
pub(crate) struct Latencies {
    series: BTreeMap<Key, Series>,
}

impl Latencies {
    /// Record one sample of `ps` picoseconds.
    pub fn record(&mut self, key: Key, ps: u64) {
        let s = self.series.entry(key).or_insert_with(Series::new);
        // `record` grows the histogram to fit (`saturating_record` would clamp instead).
        if s.hist.record(ps).is_err() {
            s.hist.saturating_record(ps);
        }
        s.count += 1;
        s.sum_ps += ps as u128;
        s.min_ps = s.min_ps.min(ps);
        s.max_ps = s.max_ps.max(ps);
    }

    /// Forget everything (the start of the timed region).
    pub fn clear(&mut self) {
        self.series.clear();
    }

    /// The distributions in cycles (`ps_per_cycle` picoseconds a cycle), ordered by key.
    pub fn report(&self, ps_per_cycle: f64) -> Vec<LatencyStats> {
        let cyc = |ps: u64| ps as f64 / ps_per_cycle;
        self.series
            .iter()
            .map(|(&(metric, class), s)| {
                let q = |f: f64| cyc(s.hist.value_at_quantile(f).min(s.max_ps));
                LatencyStats {
                    metric,
                    class: class.to_string(),
                    count: s.count,
                    sum: s.sum_ps as f64 / ps_per_cycle,
                    min: cyc(s.min_ps),
                    max: cyc(s.max_ps),
                    p50: q(0.50),
                    p90: q(0.90),
                    p99: q(0.99),
                    buckets: buckets(s, ps_per_cycle),
                }
            })
            .collect()
    }
}

/// Log-spaced buckets in cycles: (0, 1], (1, 2], (2, 4], ... up to the maximum, empty ones left
/// out. A sample's bucket is read off the histogram, so a sample within 0.1% of a bucket's edge
/// may be counted in its neighbour.
fn buckets(s: &Series, ps_per_cycle: f64) -> Vec<LatencyBucket> {
    let mut out = Vec::new();
    let mut lo = 0.0f64;
    let mut hi = 1.0f64;
    let mut below = 0u64; // samples counted so far
    loop {
        let edge_ps = (hi * ps_per_cycle).floor() as u64;
        let upto = if edge_ps >= s.max_ps { s.count } else { s.hist.count_between(0, edge_ps) };
        if upto > below {
            out.push(LatencyBucket { lo, hi, count: upto - below });
            below = upto;
        }
        if below >= s.count {
            break;
        }
        lo = hi;
        hi *= 2.0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_sums_match_a_sorted_reference() {
        let mut l = Latencies::default();
        // A skewed sample set: many short waits, a long tail.
        let mut samples: Vec<u64> = (0..10_000u64).map(|i| 1_000 + (i * i * 7919) % 5_000_000).collect();
        for &x in &samples {
            l.record(("miss", "remote"), x);
        }
        samples.sort_unstable();
        let r = &l.report(1.0)[0];
        assert_eq!(r.count, 10_000);
        assert_eq!(r.sum, samples.iter().sum::<u64>() as f64);
        assert_eq!((r.min, r.max), (samples[0] as f64, samples[9_999] as f64));
        for (p, got) in [(0.50, r.p50), (0.90, r.p90), (0.99, r.p99)] {
            // The nearest-rank percentile.
            let want = samples[((p * 10_000.0) as usize).saturating_sub(1)] as f64;
            assert!((got - want).abs() <= want * 1e-3, "p{p}: {got} vs {want}");
        }
        assert_eq!(r.buckets.iter().map(|b| b.count).sum::<u64>(), 10_000);
        for w in r.buckets.windows(2) {
            assert!(w[0].hi <= w[1].lo, "buckets in order and disjoint");
        }
        for b in &r.buckets {
            assert!(b.hi == 1.0 || b.hi == 2.0 * b.lo, "log-spaced: {b:?}");
        }
    }

    #[test]
    fn clear_forgets_and_keys_stay_apart() {
        let mut l = Latencies::default();
        l.record(("message", "active"), 5);
        l.clear();
        l.record(("message", "active"), 7);
        l.record(("lock_wait", "lock"), 9);
        let r = l.report(1.0);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].metric, r[0].count, r[0].sum), ("lock_wait", 1, 9.0));
        assert_eq!((r[1].metric, r[1].count, r[1].sum), ("message", 1, 7.0));
    }
}
