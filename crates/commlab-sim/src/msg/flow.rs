//! Credit-based flow control of active and bulk messages (`messaging.flow_window_messages`;
//! 0, the default, switches it off and nothing here is touched).
//!
//! Each ordered pair of processors (s, d) has a window of `W` messages: s may have at most `W`
//! application messages to d whose credit has not come back. A credit is released when d
//! *starts* the handler of one of them (the arguments have been read out of the NI, so the
//! buffer is free) and returned to s either piggy-backed on the next message d sends to s
//! (free: a count in the header) or, once d owes s `ceil(W / 2)` credits and the handler that
//! made it so sends nothing to s, in an explicit acknowledgement: a header-only message whose
//! send overhead d's handler pays and whose handler (interrupt entry/exit or poll dispatch,
//! no body) s runs like any other message.
//!
//! A send that finds the window full (or earlier messages to the same destination still
//! buffered) either waits for credit (the main thread: it blocks, running handlers, so
//! acknowledgements get in) or goes into a software queue in the sender's memory, in order,
//! drained as credits come back (by the handler that brings them, which pays each drained
//! message's send overhead again: it is composed twice, once into memory and once into the
//! NI). It is buffered when the conservative local deadlock condition holds: the sender itself
//! holds at least `W` received-but-unacknowledged messages from some processor j (waiting in
//! its inbox, or started but their credit not yet returned), so waiting could close a cycle of
//! full windows. A handler cannot wait (handlers are atomic), so its sends on a full window are
//! always buffered; they count as detections only when the condition holds. A buffered send
//! costs its ordinary send overhead, plus `messaging.flow_buffer_cycles` for the copy into the
//! queue, plus the send overhead of its later injection.
//!
//! A detection is *spurious* when, at that moment, the destination has already released a
//! credit to the sender that is still on its way (in an acknowledgement or a piggy-backing
//! message in flight or waiting in the sender's inbox): the sender would have got room with no
//! action of its own beyond receiving.
//!
//! Flow control covers application messages between distinct processors. Barrier messages (at
//! most one per child and epoch), coherence protocol messages (each processor has one miss
//! outstanding; the directory's invalidations are one per sharer), one-sided requests (bounded
//! by `remote.max_outstanding_words`) and acknowledgements themselves are bounded by their
//! protocols and exempt.

use super::kind::Target;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// A message waiting in a sender's software queue.
pub(crate) struct Buffered {
    pub target: Target,
    pub args: Vec<u64>,
    pub payload: Vec<u64>,
    /// DMA regions (`None`: a plain active message), for its send cost when it is injected.
    pub regions: Option<usize>,
}

/// What a send does under flow control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Room in the window: send now (the credit is taken).
    Send,
    /// Window full, no deadlock risk: the main thread waits for credit.
    Wait,
    /// Into the software queue.
    Buffer,
}

/// Counters of one run (whole run, not only the timed region: flow control is a property of
/// the message layer, and buffered set-up traffic costs like any other).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FlowStats {
    pub buffered: u64,
    pub detections: u64,
    pub spurious: u64,
    /// Main-thread sends that waited for credit.
    pub credit_waits: u64,
    /// Explicit acknowledgement messages.
    pub acks: u64,
    /// Credits returned piggy-backed on application messages.
    pub piggybacked: u64,
}

/// Every processor pair's window state; empty vectors when flow control is off.
pub(crate) struct Flow {
    /// `W` (0: off).
    pub window: u32,
    /// Credits owed that trigger an explicit acknowledgement.
    pub ack_batch: u32,
    n: usize,
    /// `[s * n + d]`: messages s sent to d whose credit has not reached s.
    outstanding: Vec<u32>,
    /// `[r * n + s]`: credits r owes s (handlers started, credit not yet sent back).
    owed: Vec<u32>,
    /// `[r * n + s]`: messages from s waiting in r's inbox, handler not started.
    waiting: Vec<u32>,
    /// `[r * n + s]`: credits r has sent back to s that s has not taken in yet.
    in_flight: Vec<u32>,
    /// Credits carried by a message in flight, by message id.
    carried: HashMap<u32, u32>,
    /// Software queues by (sender, destination), oldest first.
    queues: BTreeMap<(u32, u32), VecDeque<Buffered>>,
    pub stats: FlowStats,
}

impl Flow {
    pub fn new(window: u64, n: usize) -> Flow {
        let window = u32::try_from(window).unwrap_or(u32::MAX);
        let cells = if window > 0 { n * n } else { 0 };
        Flow {
            window,
            ack_batch: window.div_ceil(2).max(1),
            n,
            outstanding: vec![0; cells],
            owed: vec![0; cells],
            waiting: vec![0; cells],
            in_flight: vec![0; cells],
            carried: HashMap::new(),
            queues: BTreeMap::new(),
            stats: FlowStats::default(),
        }
    }

    /// Whether a message from `src` to `dst` with `target` is flow-controlled.
    pub fn applies(&self, src: usize, dst: usize, target: Target) -> bool {
        self.window > 0 && src != dst && target.flow_controlled()
    }

    fn queue_empty(&self, s: usize, d: usize) -> bool {
        self.queues.get(&(s as u32, d as u32)).is_none_or(|q| q.is_empty())
    }

    /// The conservative local condition: `r` holds at least `W` received-but-unacknowledged
    /// messages from some processor.
    pub fn holding(&self, r: usize) -> bool {
        let row = r * self.n..(r + 1) * self.n;
        self.waiting[row.clone()].iter().zip(&self.owed[row]).any(|(w, o)| w + o >= self.window)
    }

    /// Decide a flow-controlled send from `s` to `d`; `Send` takes the credit.
    pub fn decide(&mut self, s: usize, d: usize, can_wait: bool) -> Decision {
        if self.outstanding[s * self.n + d] < self.window && self.queue_empty(s, d) {
            self.outstanding[s * self.n + d] += 1;
            return Decision::Send;
        }
        let holding = self.holding(s);
        if holding {
            self.stats.detections += 1;
            if self.in_flight[d * self.n + s] > 0 {
                self.stats.spurious += 1;
            }
        }
        if holding || !can_wait {
            self.stats.buffered += 1;
            Decision::Buffer
        } else {
            Decision::Wait
        }
    }

    /// Put a message `s` could not send to `d` into its queue.
    pub fn buffer(&mut self, s: usize, d: usize, b: Buffered) {
        self.queues.entry((s as u32, d as u32)).or_default().push_back(b);
    }

    /// The next buffered message from `s` to `d` if the window has room for it (taking its
    /// credit).
    pub fn drain_one(&mut self, s: usize, d: usize) -> Option<Buffered> {
        if self.outstanding[s * self.n + d] >= self.window {
            return None;
        }
        let q = self.queues.get_mut(&(s as u32, d as u32))?;
        let b = q.pop_front()?;
        if q.is_empty() {
            self.queues.remove(&(s as u32, d as u32));
        }
        self.outstanding[s * self.n + d] += 1;
        Some(b)
    }

    /// Messages still buffered anywhere.
    pub fn buffered_now(&self) -> usize {
        self.queues.values().map(|q| q.len()).sum()
    }

    /// Message `msg` from `src` to `dst` is being launched: it carries every credit `src` owes
    /// `dst` (an application message or an acknowledgement).
    pub fn attach_credits(&mut self, msg: u32, src: usize, dst: usize, target: Target) {
        if self.window == 0 || src == dst || !target.carries_credits() {
            return;
        }
        let owed = std::mem::take(&mut self.owed[src * self.n + dst]);
        if owed > 0 {
            if target.flow_controlled() {
                self.stats.piggybacked += u64::from(owed);
            }
            self.in_flight[src * self.n + dst] += owed;
            self.carried.insert(msg, owed);
        }
    }

    /// An application message from `src` arrived in `dst`'s inbox.
    pub fn arrived(&mut self, src: usize, dst: usize, target: Target) {
        if self.applies(src, dst, target) {
            self.waiting[dst * self.n + src] += 1;
        }
    }

    /// `p` starts the handler of message `msg` from `src`: the message's own credit becomes
    /// owed, and the credits it carries come back. Returns how many came back.
    pub fn started(&mut self, p: usize, src: usize, msg: u32, target: Target) -> u32 {
        if self.window == 0 {
            return 0;
        }
        if self.applies(src, p, target) {
            self.waiting[p * self.n + src] -= 1;
            self.owed[p * self.n + src] += 1;
        }
        let back = self.carried.remove(&msg).unwrap_or(0);
        if back > 0 {
            self.in_flight[src * self.n + p] -= back;
            self.outstanding[p * self.n + src] -= back;
        }
        back
    }

    /// Whether `p` now owes `src` enough credits for an explicit acknowledgement.
    pub fn ack_due(&self, p: usize, src: usize) -> bool {
        self.window > 0 && p != src && self.owed[p * self.n + src] >= self.ack_batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use commlab_api::HandlerId;

    const APP: Target = Target::App(HandlerId(0));

    #[test]
    fn a_full_window_waits_then_buffers_when_holding() {
        let mut f = Flow::new(2, 3);
        assert_eq!(f.decide(0, 1, true), Decision::Send);
        assert_eq!(f.decide(0, 1, true), Decision::Send);
        // Full, nothing held: the main thread waits, a handler buffers.
        assert_eq!(f.decide(0, 1, true), Decision::Wait);
        assert_eq!(f.decide(0, 1, false), Decision::Buffer);
        assert_eq!((f.stats.detections, f.stats.buffered), (0, 1));
        // Processor 0 now holds two messages from 2: a detection.
        f.arrived(2, 0, APP);
        f.arrived(2, 0, APP);
        assert!(f.holding(0));
        assert_eq!(f.decide(0, 1, true), Decision::Buffer);
        assert_eq!((f.stats.detections, f.stats.spurious, f.stats.buffered), (1, 0, 2));
    }

    #[test]
    fn credits_come_back_piggy_backed_and_drain_in_order() {
        let mut f = Flow::new(1, 2);
        assert_eq!(f.decide(0, 1, false), Decision::Send);
        f.attach_credits(10, 0, 1, APP);
        f.arrived(0, 1, APP);
        for k in 0..2 {
            assert_eq!(f.decide(0, 1, false), Decision::Buffer);
            f.buffer(0, 1, Buffered { target: APP, args: vec![k], payload: vec![], regions: None });
        }
        assert_eq!(f.started(1, 0, 10, APP), 0);
        assert!(f.ack_due(1, 0), "a window of 1 acknowledges every message");
        // Processor 1 replies: the credit rides along.
        assert_eq!(f.decide(1, 0, false), Decision::Send);
        f.attach_credits(11, 1, 0, APP);
        assert!(!f.ack_due(1, 0));
        f.arrived(1, 0, APP);
        assert_eq!(f.started(0, 1, 11, APP), 1);
        assert_eq!(f.drain_one(0, 1).map(|b| b.args), Some(vec![0]));
        assert!(f.drain_one(0, 1).is_none(), "one credit, one message");
        assert_eq!(f.buffered_now(), 1);
        assert_eq!(f.stats.piggybacked, 1);
    }
}
