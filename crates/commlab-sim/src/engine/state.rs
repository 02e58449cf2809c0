//! The engine's plain data, with no behaviour of its own: the events the scheduler handles,
//! what each processor's main thread is doing and waits on, the per-processor record, what a
//! run records, and the counters and per-node state of the optional mechanisms (overflow trap,
//! one-sided access, polling mechanisms) that `World` holds and their own files drive.

use crate::net::NetEvent;
use crate::queue::{pair, tie, Liveness};
use crate::stats::trace::TraceOptions;
use crate::stats::TimeAccount;
use commlab_api::{Category, ReceiveMode};
use std::collections::VecDeque;

/// Everything the scheduler handles except processor wake-ups of coroutines.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// Resume processor `p`'s main thread if `gen` is still its current generation.
    Wake {
        p: u32,
        gen: u32,
    },
    /// A network event (packets and links).
    Net(NetEvent),
    HandlerDone {
        p: u32,
    },
    /// Run `p`'s next waiting handler now: its SMP node's protocol processor is free, or (with
    /// back-edge polling) its computation is at a loop back-edge.
    Dispatch {
        p: u32,
    },
    /// I/O pair `pair` sends its next cross-traffic message.
    CrossGen {
        pair: u32,
    },
    /// A LimitLESS trap interrupts processor `p` (see `Target::Trap`).
    Trap {
        p: u32,
        body_ps: u64,
    },
    /// Processor `p`'s network overflow trap has finished its last step (entry, or copying a
    /// message): the next one (see `overflow.rs`).
    OverflowDrain {
        p: u32,
    },
    /// A protocol message between a node and itself (no network) arrives.
    Proto {
        msg: u32,
        dst: u32,
    },
    /// A one-sided request or reply between a node and itself (no network) arrives.
    OneSided {
        msg: u32,
        node: u32,
    },
    /// The memory of `node` has served one-sided request `msg` (see `one_sided.rs`).
    OneSidedServe {
        msg: u32,
        node: u32,
    },
}

impl From<NetEvent> for Event {
    fn from(ev: NetEvent) -> Event {
        Event::Net(ev)
    }
}

impl Event {
    /// The event's tie key under `simulation.tie_order = "key"` (see `queue/mod.rs`): its kind's
    /// rank, then the stable identity of what it concerns, computed once when it is pushed;
    /// `msg` gives a message record's serial (`MessageRecord::serial`), `pkt` a packet's. It
    /// depends on nothing but the event and those serials, which number each endpoint's
    /// messages and packets in its own order, never on when the event was pushed.
    ///
    /// Ranks 0-4 are the network's ([`NetEvent::tie_key`]); ties are only ever broken between
    /// events of one priority, so a rank orders kinds pushed at the same priority: at
    /// `Network`, network events, then local protocol deliveries, one-sided arrivals and
    /// services, LimitLESS traps, cross-traffic generation; at `HandlerDone`, a handler's end,
    /// then a dispatch, then an overflow-trap step; at `Wake`, wake-ups only.
    ///
    /// Equal keys mean identical events, or events whose order cannot matter: a message has at
    /// most one arrival or service pending (its record is taken, or a new one made, when it is
    /// handled); HandlerDone, Dispatch, OverflowDrain and CrossGen carry every field in the key;
    /// Wake carries its processor and generation (at most one generation is current, the others
    /// do nothing); Trap carries its processor and the low 37 bits of its body's length in
    /// picoseconds (a machine's one handler cost, 137 ms before it could alias).
    #[inline]
    pub(crate) fn tie_key(&self, msg: impl Fn(u32) -> u64, pkt: impl Fn(u32) -> u64) -> u64 {
        match *self {
            Event::Net(ev) => ev.tie_key(pkt),
            Event::Proto { msg: m, .. } => tie(5, msg(m)),
            Event::OneSided { msg: m, .. } => tie(6, msg(m)),
            Event::OneSidedServe { msg: m, .. } => tie(7, msg(m)),
            Event::Trap { p, body_ps } => tie(8, pair(p, body_ps)),
            Event::CrossGen { pair } => tie(9, pair as u64),
            Event::HandlerDone { p } => tie(10, p as u64),
            Event::Dispatch { p } => tie(11, p as u64),
            Event::OverflowDrain { p } => tie(12, p as u64),
            Event::Wake { p, gen } => tie(13, (p as u64) << 32 | gen as u64),
        }
    }
}

/// What kind of event a queued event was, for [`EventCounts`]. A processor's wake-up is one of
/// the last three: the end of a stretch of its own time (computation, hits, overheads: `Timed`),
/// the end of a wait for something outside it (a fill, a barrier, a message: `Blocked`), or one
/// that found its processor's generation moved on (it does nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    Hop,
    Grant,
    Deliver,
    Inject,
    OverflowCheck,
    Proto,
    OneSided,
    OneSidedServe,
    Trap,
    CrossGen,
    HandlerDone,
    Dispatch,
    OverflowDrain,
    WakeTimed,
    WakeBlocked,
    WakeSuperseded,
}

impl EventKind {
    /// Every kind, in the order `RunStats::events_by_kind` lists them.
    pub const ALL: [EventKind; 16] = [
        EventKind::Hop,
        EventKind::Grant,
        EventKind::Deliver,
        EventKind::Inject,
        EventKind::OverflowCheck,
        EventKind::Proto,
        EventKind::OneSided,
        EventKind::OneSidedServe,
        EventKind::Trap,
        EventKind::CrossGen,
        EventKind::HandlerDone,
        EventKind::Dispatch,
        EventKind::OverflowDrain,
        EventKind::WakeTimed,
        EventKind::WakeBlocked,
        EventKind::WakeSuperseded,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EventKind::Hop => "hop",
            EventKind::Grant => "grant",
            EventKind::Deliver => "deliver",
            EventKind::Inject => "inject",
            EventKind::OverflowCheck => "overflow_check",
            EventKind::Proto => "proto",
            EventKind::OneSided => "one_sided",
            EventKind::OneSidedServe => "one_sided_serve",
            EventKind::Trap => "trap",
            EventKind::CrossGen => "cross_gen",
            EventKind::HandlerDone => "handler_done",
            EventKind::Dispatch => "dispatch",
            EventKind::OverflowDrain => "overflow_drain",
            EventKind::WakeTimed => "wake_timed",
            EventKind::WakeBlocked => "wake_blocked",
            EventKind::WakeSuperseded => "wake_superseded",
        }
    }
}

impl Event {
    /// The event's kind; a wake-up counts as `WakeTimed` until the event loop, which sees what
    /// it did, says otherwise ([`EventCounts::reclassify`]).
    #[inline]
    pub(crate) fn kind(&self) -> EventKind {
        match *self {
            Event::Net(NetEvent::Hop { .. }) => EventKind::Hop,
            Event::Net(NetEvent::Grant { .. }) => EventKind::Grant,
            Event::Net(NetEvent::Deliver { .. }) => EventKind::Deliver,
            Event::Net(NetEvent::Inject { .. }) => EventKind::Inject,
            Event::Net(NetEvent::OverflowCheck { .. }) => EventKind::OverflowCheck,
            Event::Proto { .. } => EventKind::Proto,
            Event::OneSided { .. } => EventKind::OneSided,
            Event::OneSidedServe { .. } => EventKind::OneSidedServe,
            Event::Trap { .. } => EventKind::Trap,
            Event::CrossGen { .. } => EventKind::CrossGen,
            Event::HandlerDone { .. } => EventKind::HandlerDone,
            Event::Dispatch { .. } => EventKind::Dispatch,
            Event::OverflowDrain { .. } => EventKind::OverflowDrain,
            Event::Wake { .. } => EventKind::WakeTimed,
        }
    }
}

/// The events a run handled, by kind (hops the network ran ahead are not events: `net/mod.rs`).
#[derive(Clone, Debug, Default)]
pub(crate) struct EventCounts {
    by_kind: [u64; EventKind::ALL.len()],
}

impl EventCounts {
    #[inline]
    pub fn count(&mut self, kind: EventKind) {
        self.by_kind[kind as usize] += 1;
    }

    /// An event counted as `from` turned out, once handled, to be `to`.
    #[inline]
    pub fn reclassify(&mut self, from: EventKind, to: EventKind) {
        self.by_kind[from as usize] -= 1;
        self.by_kind[to as usize] += 1;
    }

    pub fn total(&self) -> u64 {
        self.by_kind.iter().sum()
    }

    /// Each kind's name and count, in the order of [`EventKind::ALL`].
    pub fn named(&self) -> Vec<(&'static str, u64)> {
        EventKind::ALL.iter().map(|&k| (k.name(), self.by_kind[k as usize])).collect()
    }
}

impl Liveness for Event {
    /// Background events (cross-traffic) do not keep a run alive.
    fn background(&self) -> bool {
        match *self {
            Event::Net(ev) => ev.background(),
            Event::CrossGen { .. } => true,
            Event::Wake { .. }
            | Event::HandlerDone { .. }
            | Event::Dispatch { .. }
            | Event::Proto { .. }
            | Event::Trap { .. }
            | Event::OverflowDrain { .. }
            | Event::OneSided { .. }
            | Event::OneSidedServe { .. } => false,
        }
    }
}

/// What a processor's main thread is doing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum MainState {
    /// Executing (only while its coroutine runs).
    Running,
    /// Busy until `end` (work that a handler's interruption extends).
    Timed {
        end: u64,
        cat: Category,
    },
    /// Waiting for something outside the processor.
    Blocked {
        wait: Wait,
        cat: Category,
        since: u64,
    },
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Wait {
    Cond(&'static str),
    Barrier(u64),
    NiOutput,
    Drain,
    /// An outstanding miss on a line.
    Miss(crate::mem::cache::Line),
    /// A free prefetch-buffer entry.
    PrefetchBuffer,
    /// Spinning on a cached line until it is invalidated (`what`, line).
    Spin(&'static str, crate::mem::cache::Line),
    /// Room for a one-sided request (`remote.max_outstanding_words`), or (`quiet`) all done.
    OneSided,
    /// Flow-control credit for a send to this processor (`messaging.flow_window_messages`).
    Credit(u32),
    /// A Tempest user block's tag to allow the access (its fault handler has run).
    Tag(crate::mem::cache::Line),
}

#[derive(Default)]
pub(crate) struct BarrierState {
    /// Barriers this processor has entered.
    pub epoch: u64,
    /// Children arrivals not yet consumed.
    pub arrivals: u64,
    /// Highest epoch released.
    pub released: u64,
}

pub(crate) struct Proc<S> {
    pub state: S,
    pub mode: ReceiveMode,
    pub main: MainState,
    pub gen: u32,
    /// A handler is running: on the compute processor, or on an SMP node's protocol processor.
    pub handler_active: bool,
    /// An [`Event::Dispatch`] is queued: for when an SMP node's protocol processor is free,
    /// or for the compute processor's next loop back-edge.
    pub dispatch_queued: bool,
    /// Back-edge polling (`messaging.backedge_interval_cycles`): while the main thread computes,
    /// its first back-edge at or after the period's start (later ones every interval); between
    /// computations, how much computation is left before the next one.
    pub edge_at: u64,
    pub edge_left_ps: u64,
    /// Back-edges passed without a message, not yet charged; and since `begin_timing`, those
    /// charged and the messages dispatched at a back-edge.
    pub polls_to_charge: u64,
    pub failed_polls: u64,
    pub edge_dispatches: u64,
    /// Software DSM: loads and stores that ran an inserted access check (`dsm.instrumentation`,
    /// since `begin_timing`).
    pub checked: [u64; 2],
    /// Arrived messages whose handlers have not run (the head is running if `handler_active`).
    pub inbox: VecDeque<u32>,
    pub acct: TimeAccount,
    pub barrier: BarrierState,
    /// Messages sent and handlers run since the timed region began.
    pub sent: u64,
    pub received: u64,
    /// Since the run began: the length of every handler of a program message (`Target::App`)
    /// started on this compute processor (not an SMP node's protocol processor), counted in
    /// full at its start. `Node::handler_cycles` reads it; it creates no event.
    pub app_handler_ps: u64,
    /// Words of one-sided (get/put) requests issued and not yet answered.
    pub one_sided_outstanding: u32,
    /// In the network overflow trap: the message being copied (its NI slot is freed when the
    /// copy ends).
    pub overflow_copy: Option<u32>,
    /// During an overflow trap, the inbox position its search for the next message to copy
    /// starts from: those before it are copied or not the trap's (only arrivals change the
    /// inbox during a trap, at its back), so each trap looks at each message once.
    pub overflow_scan: usize,
}

/// What a run records beyond its totals (all off by default).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Recording {
    /// Latency distributions (`stats/latency.rs`).
    pub latencies: bool,
    /// A timeline (`stats/trace.rs`).
    pub trace: Option<TraceOptions>,
    /// Interval statistics every so many cycles (`stats/interval.rs`).
    pub interval_cycles: Option<f64>,
}

/// What the overflow traps did since timing began.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OverflowStats {
    pub traps: u64,
    /// Messages copied out of an NI input queue into memory.
    pub drained: u64,
    /// Processor time in traps (entry, copies, exit), picoseconds.
    pub trap_ps: u64,
}

/// What one-sided access did over the run.
#[derive(Default, Clone, Debug)]
pub(crate) struct OneSidedStats {
    pub requests: u64,
    pub words: u64,
    /// Cached copies dropped by one-sided writes.
    pub invalidations: u64,
}

/// One node's polling flag (the DMA and interrupt techniques' burst rule).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PollNode {
    /// The NI's copy of the flag is set: the host's flag is set at `flag_at` (its update is in
    /// flight until then), and later messages of the burst pay no update.
    pub flag_set: bool,
    pub flag_at: u64,
    /// A pending wake of the compute thread for a notification (at this time).
    pub notify_at: u64,
}

/// Counts since timing began.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PollStats {
    /// Messages the protocol processors' polls took.
    pub messages: u64,
    /// Flag updates (one per burst with the DMA and interrupt techniques).
    pub flag_updates: u64,
    /// Bulk data's waits for the LANai polls sharing the I/O bridge, at both ends.
    pub bus_wait_ps: u64,
    /// Notifications of a waiting compute thread.
    pub notifies: u64,
}
