//! The run as a timeline (`Simulator::trace`): each processor's time account as spans (one per
//! stretch of one category, so a processor's spans tile its timed region without overlap) and
//! flows (a message from its send to its handler's entry; a miss from the stall to the access).
//!
//! Bounded twice: a window (simulated picoseconds, set when the timed region starts; spans are
//! clipped to it, flows kept when both ends are inside) and a cap on spans and flows together,
//! shared out over the processors; a log that reaches its cap stops and says when.
//!
//! Spans are logged at `TimeAccount::switch`, so they tile the timed region. `PacketLog`, owned
//! by the network, holds a span per packet per link it is serialized on, labelled as the engine
//! queues it. The engine shares the cap out (`engine/mod.rs`): half over the processors' spans,
//! a quarter each to flows and packets.

use commlab_api::{Category, TraceData, TraceFlow, TracePacket, TraceSpan};

/// What to record (cycles from the start of the timed region).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceOptions {
    /// `[start, end)` cycles of the timed region to record; `None`: all of it.
    pub window_cycles: Option<(f64, f64)>,
    /// The most spans and flows to keep in all.
    pub max_events: usize,
}

/// A log bounded by a window (`[start, end)` picoseconds) and a cap: at the cap it stops for
/// good and remembers when.
#[derive(Clone, Debug)]
struct Bounded<T> {
    window_ps: (u64, u64),
    cap: usize,
    items: Vec<T>,
    full_at: Option<u64>,
}

impl<T> Bounded<T> {
    fn new(cap: usize) -> Bounded<T> {
        Bounded { window_ps: (0, u64::MAX), cap, items: Vec::new(), full_at: None }
    }

    /// Whether one more item, starting at `at`, may be logged (at the cap the log stops at `at`).
    fn admit(&mut self, at: u64) -> bool {
        if self.full_at.is_some() {
            return false;
        }
        if self.items.len() >= self.cap {
            self.full_at = Some(at);
            return false;
        }
        true
    }

    fn clear(&mut self) {
        self.items.clear();
        self.full_at = None;
    }
}

/// One processor's spans: (category, start, end).
#[derive(Clone, Debug)]
pub(crate) struct SpanLog(Bounded<(Category, u64, u64)>);

impl SpanLog {
    pub fn new(cap: usize) -> SpanLog {
        SpanLog(Bounded::new(cap))
    }

    pub fn set_window(&mut self, start: u64, end: u64) {
        self.0.window_ps = (start, end);
    }

    /// A stretch of `cat` from `from` to `to`, clipped to the window.
    #[inline]
    pub fn push(&mut self, cat: Category, from: u64, to: u64) {
        let (a, b) = (from.max(self.0.window_ps.0), to.min(self.0.window_ps.1));
        if a >= b || !self.0.admit(from) {
            return;
        }
        // One category's stretches that touch are one span.
        if let Some(last) = self.0.items.last_mut() {
            if last.0 == cat && last.2 == a {
                last.2 = b;
                return;
            }
        }
        self.0.items.push((cat, a, b));
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// The flows of a run: (name, from processor, start, to processor, end).
#[derive(Clone, Debug)]
pub(crate) struct FlowLog(Bounded<(&'static str, u32, u64, u32, u64)>);

impl FlowLog {
    pub fn new(cap: usize) -> FlowLog {
        FlowLog(Bounded::new(cap))
    }

    pub fn set_window(&mut self, start: u64, end: u64) {
        self.0.window_ps = (start, end);
    }

    /// A flow named `name` from processor `from` at `t0` to processor `to` at `t1`, kept when
    /// both ends are inside the window (and the timed region: `t0` at or after its start).
    pub fn push(&mut self, name: &'static str, from: usize, t0: u64, to: usize, t1: u64) {
        let (a, b) = self.0.window_ps;
        if t0 < a || t1 >= b || !self.0.admit(t0) {
            return;
        }
        self.0.items.push((name, from as u32, t0, to as u32, t1));
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// Packets on links (the network's view of the trace): a label per live packet, set as it is
/// queued, and a span per link a packet crosses, clipped to the window like a processor's spans.
#[derive(Clone, Debug)]
pub(crate) struct PacketLog {
    /// (name, source, destination) by packet slab index: valid from `sent` to delivery.
    labels: Vec<Label>,
    /// The label of the packet about to be queued (`label_next`, then `sent`).
    next: Label,
    /// (link, label, start, end).
    log: Bounded<(u32, Label, u64, u64)>,
}

/// What a packet carries, from which endpoint to which.
type Label = (&'static str, u32, u32);

impl PacketLog {
    pub fn new(cap: usize) -> PacketLog {
        PacketLog { labels: Vec::new(), next: ("", 0, 0), log: Bounded::new(cap) }
    }

    pub fn set_window(&mut self, start: u64, end: u64) {
        self.log.window_ps = (start, end);
    }

    /// The next packet queued carries `name` from `src` to `dst`.
    pub fn label_next(&mut self, name: &'static str, src: usize, dst: usize) {
        self.next = (name, src as u32, dst as u32);
    }

    /// The packet labelled last was given slab index `id`.
    pub fn sent(&mut self, id: u32) {
        let i = id as usize;
        if self.labels.len() <= i {
            self.labels.resize(i + 1, ("", 0, 0));
        }
        self.labels[i] = self.next;
    }

    /// Packet `id` holds `link` busy from `from` to `to`.
    pub fn on_link(&mut self, link: u32, id: u32, from: u64, to: u64) {
        let (a, b) = (from.max(self.log.window_ps.0), to.min(self.log.window_ps.1));
        if a >= b || !self.log.admit(from) {
            return;
        }
        let label = self.labels.get(id as usize).copied().unwrap_or(("", 0, 0));
        self.log.items.push((link, label, a, b));
    }

    pub fn clear(&mut self) {
        self.log.clear();
    }
}

/// The trace in cycles from `start_ps` (the timed region's start), spans by processor then time.
pub(crate) fn report(
    spans: &[Option<&SpanLog>],
    flows: &FlowLog,
    packets: Option<&PacketLog>,
    start_ps: u64,
    cycle_ps: f64,
) -> TraceData {
    let cyc = |ps: u64| ps.saturating_sub(start_ps) as f64 / cycle_ps;
    let mut out = TraceData::default();
    let mut full: Option<u64> = flows.0.full_at;
    let mut stopped = |at: Option<u64>| {
        if let Some(t) = at {
            full = Some(full.map_or(t, |f| f.min(t)));
        }
    };
    if let Some(log) = packets {
        out.packets = log
            .log
            .items
            .iter()
            .map(|&(link, (name, src, dst), a, b)| TracePacket { link, name, src, dst, start: cyc(a), end: cyc(b) })
            .collect();
        stopped(log.log.full_at);
    }
    for (p, log) in spans.iter().enumerate() {
        let Some(log) = log else { continue };
        out.spans.extend(log.0.items.iter().map(|&(cat, a, b)| TraceSpan {
            proc: p as u32,
            category: cat,
            start: cyc(a),
            end: cyc(b),
        }));
        stopped(log.0.full_at);
    }
    out.flows = flows
        .0
        .items
        .iter()
        .map(|&(name, from, t0, to, t1)| TraceFlow { name, from, from_cycle: cyc(t0), to, to_cycle: cyc(t1) })
        .collect();
    out.truncated_at = full.map(cyc);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_merge_clip_and_stop_at_the_cap() {
        let mut log = SpanLog::new(2);
        log.set_window(100, 1000);
        log.push(Category::Compute, 0, 150); // clipped to 100..150
        log.push(Category::Compute, 150, 200); // merged
        log.push(Category::MemoryNiWait, 200, 300);
        log.push(Category::Compute, 300, 400); // over the cap
        log.push(Category::Compute, 400, 500);
        assert_eq!(log.0.items, vec![(Category::Compute, 100, 200), (Category::MemoryNiWait, 200, 300)]);
        assert_eq!(log.0.full_at, Some(300));
        let mut flows = FlowLog::new(10);
        flows.set_window(100, 1000);
        flows.push("active", 0, 50, 1, 150); // starts before the window
        flows.push("active", 0, 150, 1, 1000); // ends after it
        flows.push("active", 0, 150, 1, 250);
        let t = report(&[Some(&log)], &flows, None, 100, 10.0);
        assert_eq!(t.spans.len(), 2);
        assert_eq!((t.spans[0].start, t.spans[0].end), (0.0, 10.0));
        assert_eq!(t.flows.len(), 1);
        assert_eq!((t.flows[0].from_cycle, t.flows[0].to_cycle), (5.0, 15.0));
        assert_eq!(t.truncated_at, Some(20.0));
    }
}
