//! Interval statistics (`Simulator::intervals`): the run cut into equal stretches of simulated
//! time from the start of the timed region. Per stretch: each processor's time account (exact:
//! every switch of category is split over the stretches it spans, so the stretches sum to the
//! run's breakdown), and, sampled at each boundary (the state after every event before it):
//! traffic by class, each link's busy time and the NI queue depths. Traffic and link time are
//! counted when a packet is injected or a link reserved, so a stretch holds what was started in
//! it; a link's share can exceed one when a reservation runs into the next stretch. The event
//! loop samples a boundary before the first event at or past it.

use commlab_api::{IntervalData, IntervalRow};

/// One processor's time account per stretch (picoseconds by category).
#[derive(Clone, Debug)]
pub(crate) struct IntervalAccount {
    origin: u64,
    len: u64,
    by_interval: Vec<[u64; 4]>,
}

impl IntervalAccount {
    pub fn new(len: u64) -> IntervalAccount {
        IntervalAccount { origin: 0, len: len.max(1), by_interval: Vec::new() }
    }

    /// Stretches count from `origin` (the timed region's start); what came before is dropped.
    pub fn restart(&mut self, origin: u64) {
        self.origin = origin;
        self.by_interval.clear();
    }

    /// Drop what was accounted (the processor's own start of timing).
    pub fn clear(&mut self) {
        self.by_interval.clear();
    }

    /// `cat` (an index into the categories) accrued from `from` to `to`.
    #[inline]
    pub fn add(&mut self, cat: usize, from: u64, to: u64) {
        let mut from = from.max(self.origin);
        while from < to {
            let k = ((from - self.origin) / self.len) as usize;
            let end = (self.origin + (k as u64 + 1) * self.len).min(to);
            if self.by_interval.len() <= k {
                self.by_interval.resize(k + 1, [0; 4]);
            }
            self.by_interval[k][cat] += end - from;
            from = end;
        }
    }
}

/// A boundary sample's deltas.
#[derive(Clone, Debug, Default)]
struct Sample {
    traffic: [u64; 5],
    link_busy: Vec<u64>,
    out_depth: (f64, u32),
    in_depth: (f64, u32),
}

/// The world-wide samples, taken at each boundary.
#[derive(Clone, Debug)]
pub(crate) struct Sampler {
    pub len: u64,
    origin: u64,
    /// The next boundary (u64::MAX when not sampling).
    pub next: u64,
    last_traffic: [u64; 5],
    last_link: Vec<u64>,
    samples: Vec<Sample>,
}

impl Sampler {
    pub fn new(len: u64) -> Sampler {
        let len = len.max(1);
        Sampler { len, origin: 0, next: len, last_traffic: [0; 5], last_link: Vec::new(), samples: Vec::new() }
    }

    /// Start over at `origin`, the counters having been reset to zero there.
    pub fn restart(&mut self, origin: u64) {
        self.origin = origin;
        self.next = origin + self.len;
        self.last_traffic = [0; 5];
        self.last_link.clear();
        self.samples.clear();
    }

    /// Close the stretch ending at `self.next` with the cumulative counters and the queue
    /// depths (out, in) per NI as they are now.
    pub fn close(&mut self, traffic: [u64; 5], link_busy: impl Iterator<Item = u64>, depths: &[(u32, u32)]) {
        let mut s = Sample::default();
        for (i, t) in traffic.iter().enumerate() {
            s.traffic[i] = t - self.last_traffic[i];
        }
        self.last_traffic = traffic;
        for (i, b) in link_busy.enumerate() {
            if self.last_link.len() <= i {
                self.last_link.push(0);
            }
            s.link_busy.push(b.saturating_sub(self.last_link[i]));
            self.last_link[i] = b;
        }
        let n = depths.len().max(1) as f64;
        s.out_depth =
            (depths.iter().map(|d| d.0 as f64).sum::<f64>() / n, depths.iter().map(|d| d.0).max().unwrap_or(0));
        s.in_depth =
            (depths.iter().map(|d| d.1 as f64).sum::<f64>() / n, depths.iter().map(|d| d.1).max().unwrap_or(0));
        self.samples.push(s);
        self.next = self.next.saturating_add(self.len);
    }
}

/// The stretches in cycles (`cycle_ps` picoseconds a cycle).
pub(crate) fn report(procs: &[Option<&IntervalAccount>], sampler: &Sampler, cycle_ps: f64) -> IntervalData {
    let cyc = |ps: u64| ps as f64 / cycle_ps;
    let n = procs.iter().flatten().map(|a| a.by_interval.len()).max().unwrap_or(0).max(sampler.samples.len());
    let len = sampler.len;
    let rows = (0..n)
        .map(|k| {
            let s = sampler.samples.get(k).cloned().unwrap_or_default();
            IntervalRow {
                start: cyc(k as u64 * len),
                breakdown: procs
                    .iter()
                    .map(|a| a.and_then(|a| a.by_interval.get(k)).copied().unwrap_or([0; 4]).map(cyc))
                    .collect(),
                traffic: s.traffic,
                link_utilization: s.link_busy.iter().map(|&b| b as f64 / len as f64).collect(),
                ni_output_mean: s.out_depth.0,
                ni_output_max: s.out_depth.1,
                ni_input_mean: s.in_depth.0,
                ni_input_max: s.in_depth.1,
            }
        })
        .collect();
    IntervalData { length: cyc(len), rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stretch_of_time_splits_over_the_intervals_it_spans() {
        let mut a = IntervalAccount::new(100);
        a.restart(1000);
        a.add(0, 900, 1050); // before the origin: dropped up to it
        a.add(1, 1050, 1320);
        assert_eq!(a.by_interval, vec![[50, 50, 0, 0], [0, 100, 0, 0], [0, 100, 0, 0], [0, 20, 0, 0]]);
        let total: u64 = a.by_interval.iter().flatten().sum();
        assert_eq!(total, 1320 - 1000);
    }

    #[test]
    fn samples_are_deltas_of_the_counters() {
        let mut s = Sampler::new(10);
        s.restart(5);
        assert_eq!(s.next, 15);
        s.close([1, 2, 0, 0, 0], [4u64, 0].into_iter(), &[(1, 0), (3, 2)]);
        s.close([1, 5, 0, 0, 7], [6u64, 9].into_iter(), &[]);
        assert_eq!(s.samples[1].traffic, [0, 3, 0, 0, 7]);
        assert_eq!(s.samples[1].link_busy, vec![2, 9]);
        assert_eq!(s.samples[0].out_depth, (2.0, 3));
        assert_eq!(s.next, 35);
    }
}
