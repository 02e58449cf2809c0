//! The engine: the event loop, processor coroutines, handler dispatch and run results.
//!
//! Each simulated processor's main thread is a stackful coroutine running `Program::main`.
//! It runs only when the scheduler resumes it at a `Wake` event, takes zero simulated time
//! while running, and yields inside `Node` calls that take time (`Timed`) or block (`Blocked`).
//! Everything else (packets, handlers, cross-traffic) is an event handled here.
//!
//! Safety: the coroutines reach the [`World`] through a raw pointer that the scheduler passes
//! at every resume. The scheduler never holds a reference into the world across a resume, and
//! a coroutine never holds one across a yield, so the two never alias.

mod control;
mod effects;
mod node;
mod one_sided;
mod overflow;
mod poll;

pub use control::RunControl;

use crate::machine::MachineConfig;
use crate::mem::Memory;
use crate::msg::flow::Flow;
use crate::msg::{self, Ctx, EntryExit, MessageRecord, Target};
use crate::net::{NetEvent, Network, Packet};
use crate::queue::{EventQueue, Liveness, Priority};
use crate::stats::interval::{self as intervals, IntervalAccount, Sampler};
use crate::stats::latency::{self, Latencies};
use crate::stats::trace::{self as tracing, FlowLog, PacketLog, SpanLog, TraceOptions};
use crate::stats::{TimeAccount, Traffic};
use commlab_api::{
    AccessTag, BarrierKind, Category, Fault, FaultHandler, Handler, LinkStats, Message, NodeCounters, ProcId,
    ProcTimes, Program, ReceiveMode, RunOutput, RunStats, TrafficClass,
};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult};
use node::SimNode;
use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

/// How many events run between two looks at the run's [`RunControl`] (a power of two).
const CONTROL_EVERY_EVENTS: u64 = 1 << 12;

/// Bytes of each processor's coroutine stack (a multiple of the page size): address space,
/// of which only the pages a processor touches take memory. Far above what applications use
/// (below), for the margin unoptimised builds need.
pub const STACK_BYTES: usize = 256 * 1024;
/// The most of its stack an application may use, and what the memory estimate counts per
/// stack. Measured with [`RunControl::measure_stacks`]: the deepest of every application and
/// variant is about 9 KB in a release build; a test fails any that goes beyond this.
pub const STACK_USE_BYTES: usize = 32 * 1024;
/// Host bytes per processor besides its stack and cache tags (its `Proc`, memory-side and
/// network state, inbox), rounded up from measurements.
const PROC_BYTES: u64 = 8 * 1024;
/// Host bytes per cache line of every processor's cache: tag (8), state (1), LRU stamp (8),
/// prefetch flag (1). The most the caches can cost: they start as zeroed memory, and pages of
/// sets no processor touches are never mapped.
const CACHE_BYTES_PER_LINE: u64 = 18;

/// Estimated host memory of the machine's own state before any application data: per processor
/// a coroutine stack and a fixed share (first), and every cache's tag array (second). Saturates
/// instead of overflowing, so an absurd machine gives an absurd (refusable) figure.
pub(crate) fn machine_bytes(cfg: &MachineConfig) -> (u64, u64) {
    let n = cfg.nprocs() as u64;
    let ways = cfg.mem.associativity.max(1);
    let cache_lines = (cfg.mem.cache_lines / ways).max(1).saturating_mul(ways);
    let procs = (STACK_USE_BYTES as u64 + PROC_BYTES).saturating_mul(n);
    (procs, cache_lines.saturating_mul(CACHE_BYTES_PER_LINE).saturating_mul(n))
}

/// Why a run did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// Every unfinished processor is blocked and nothing can wake it. The report lists each
    /// processor and what it waits on.
    Deadlock(String),
    /// `limits.max_events` was reached.
    EventLimit { events: u64, cycles: f64 },
    /// `limits.max_sim_time_ms` was reached.
    TimeLimit { cycles: f64 },
    /// The program asked for something the machine cannot do (argument cap, bad processor id,
    /// a missing cost entry).
    Program(String),
    /// An internal consistency check failed (a simulator bug).
    Internal(String),
    /// The caller stopped the run through its [`RunControl`] (e.g. a wall-clock limit
    /// the CLI keeps); `cycles` and `events` say how far it got.
    Cancelled { cycles: f64, events: u64 },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Deadlock(r) => write!(f, "deadlock: {r}"),
            SimError::EventLimit { events, cycles } => write!(
                f,
                "run stopped after {events} events at cycle {cycles:.0} (limits.max_events); raise it with --set limits.max_events=N"
            ),
            SimError::TimeLimit { cycles } => write!(
                f,
                "run stopped at cycle {cycles:.0}: simulated time limit reached (limits.max_sim_time_ms); raise it with --set limits.max_sim_time_ms=MS"
            ),
            SimError::Program(m) => write!(f, "program error: {m}"),
            SimError::Internal(m) => write!(f, "internal error: {m}"),
            SimError::Cancelled { cycles, events } => {
                write!(f, "run cancelled at simulated cycle {cycles:.0} after {events} events")
            }
        }
    }
}

impl std::error::Error for SimError {}

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
}

pub(crate) struct World<S> {
    pub cfg: Arc<MachineConfig>,
    pub now: u64,
    pub q: EventQueue<Event>,
    pub net: Network,
    pub procs: Vec<Proc<S>>,
    pub handlers: Vec<Handler<S>>,
    /// The program's Tempest fault handler.
    pub fault_handler: Option<FaultHandler<S>>,
    msgs: Vec<Option<MessageRecord>>,
    free_msgs: Vec<u32>,
    pub traffic: Traffic,
    pub mem: Memory,
    pub barrier_kind: BarrierKind,
    /// Fan-in of the barrier's combining tree: the program's, or the machine's for the kind.
    pub barrier_arity: usize,
    /// Base address of the shared-memory barrier's lines (counter and flag per processor).
    pub barrier_region: u64,
    pub timing_start: Option<u64>,
    /// Latency distributions, when the run records them (`Simulator::record_latencies`).
    pub lat: Option<Box<Latencies>>,
    /// The trace's flows, when the run is traced (`Simulator::trace`; its spans are in each
    /// processor's time account), and the options it was asked with.
    pub flows: Option<Box<FlowLog>>,
    pub trace: Option<TraceOptions>,
    /// Interval statistics' boundary samples, when kept (`Simulator::intervals`).
    pub sampler: Option<Box<Sampler>>,
    /// What the program last said of its progress (`Node::progress`).
    pub work: (u64, u64),
    pub fatal: Option<SimError>,
    procs_done: usize,
    cross_pairs: Vec<(usize, usize)>,
    cross_interval_ps: u64,
    /// FIFO cross-traffic: I/O pairs whose sender waits for room in its NI output queue.
    cross_waiting: Vec<bool>,
    /// Cross-traffic bytes that left the I/O nodes' NIs from the start of timing to the last
    /// processor's finish (taken when it finishes).
    cross_bytes_timed: Option<u64>,
    /// The network overflow trap's counts since timing began.
    pub overflow: overflow::OverflowStats,
    /// One-sided access: each node's memory is busy serving requests until this time, and
    /// what it has served.
    pub remote_busy: Vec<u64>,
    pub one_sided: one_sided::OneSidedStats,
    /// Credit-based flow control of application messages (off unless the machine sets a window).
    pub flow: Flow,
    /// `messaging.poll_mechanism` on SMP nodes: each node's flag and the counts since timing.
    pub poll_nodes: Vec<poll::PollNode>,
    pub poll_stats: poll::PollStats,
}

impl<S> World<S> {
    pub fn push(&mut self, at: u64, prio: Priority, ev: Event) {
        self.q.push(at, prio, ev);
    }

    /// Invalidate any pending wake of `p` and schedule a new one at `at`.
    pub fn wake_at(&mut self, p: usize, at: u64) {
        let proc = &mut self.procs[p];
        proc.gen = proc.gen.wrapping_add(1);
        let gen = proc.gen;
        self.push(at, Priority::Wake, Event::Wake { p: p as u32, gen });
    }

    pub fn fail(&mut self, e: SimError) {
        self.fatal.get_or_insert(e);
    }

    pub(crate) fn alloc_msg(&mut self, rec: MessageRecord) -> u32 {
        match self.free_msgs.pop() {
            Some(id) => {
                self.msgs[id as usize] = Some(rec);
                id
            }
            None => {
                self.msgs.push(Some(rec));
                (self.msgs.len() - 1) as u32
            }
        }
    }

    /// Remove a message record, freeing its slot.
    pub(crate) fn take_msg(&mut self, msg: u32) -> MessageRecord {
        self.free_msgs.push(msg);
        self.msgs[msg as usize].take().expect("live message")
    }

    /// Packetize a message and queue its packets at `src`'s NI. Packet `i` is ready once the
    /// sender's DMA engine has read the bulk bytes it carries (starting at `ready_ps`).
    pub fn launch(&mut self, src: usize, dst: usize, target: Target, args: Vec<u64>, payload: Vec<u64>, ready_ps: u64) {
        let background = target.is_background();
        let cfg = Arc::clone(&self.cfg);
        let payload_bytes = if background {
            cfg.cross_traffic_message_bytes - cfg.header_bytes
        } else {
            8 * (args.len() + payload.len()) as u64
        };
        let arg_bytes = 8 * args.len() as u64;
        let mut rec = MessageRecord::new(src as u32, target, args, payload);
        rec.sent_ps = self.now;
        rec.counted = !background;
        let msg = self.alloc_msg(rec);
        self.flow.attach_credits(msg, src, dst, target);
        let sizes: Vec<u64> = msg::packet_payloads(payload_bytes, cfg.max_packet_payload_bytes).collect();
        let n = sizes.len();
        let mut carried = 0u64;
        for (i, size) in sizes.into_iter().enumerate() {
            carried += size;
            let bulk_through = carried.saturating_sub(arg_bytes);
            let mut dma_ps =
                if bulk_through > 0 { cfg.cycles_to_ps(bulk_through as f64 / cfg.msg.dma_bytes_per_cycle) } else { 0 };
            if let Some(pc) = cfg.poll.filter(|_| !background) {
                // LANai polling: the sender's DMA across the I/O bridge shares it with the polls.
                dma_ps += pc.bus_wait_for(bulk_through);
            }
            let wire = cfg.header_bytes + size;
            if background {
                self.traffic.add(TrafficClass::CrossTraffic, wire);
            } else {
                self.traffic.add(TrafficClass::Headers, cfg.header_bytes);
                self.traffic.add(TrafficClass::Data, size);
                self.traffic.packets += 1;
            }
            let pkt = Packet {
                msg,
                dst: dst as u32,
                bytes: wire as u32,
                last: i + 1 == n,
                background,
                ready_ps: ready_ps + dma_ps,
                link: None,
                vc: 0,
                ni_latency_ps: None,
            };
            self.label_packet(msg, src, dst);
            self.net.send_packet(&mut self.q, self.now, src, pkt);
        }
        if background {
            self.traffic.cross_messages += 1;
        } else {
            self.traffic.messages += 1;
            if let Some(p) = self.procs.get_mut(src) {
                p.sent += 1;
            }
        }
    }

    /// Whether `p`'s main thread is held by a handler running on its processor (never on an SMP
    /// node, whose handlers run on the protocol processor): it is woken when the handler ends.
    #[inline]
    pub fn compute_in_handler(&self, p: usize) -> bool {
        self.procs[p].handler_active && !self.cfg.smp_nodes
    }

    /// Record a latency that started at `since` and ends now (`Simulator::record_latencies`;
    /// nothing when off).
    #[inline]
    pub fn record_latency(&mut self, key: latency::Key, since: u64) {
        self.record_latency_between(key, since, self.now);
    }

    /// A program or runtime message's handler starts now on `p`: record its one-way latency
    /// and its flow by kind (protocol messages, traps and faults show in the miss stalls).
    fn record_message(&mut self, p: usize, msg_id: u32) {
        let rec = self.msgs[msg_id as usize].as_ref().expect("live message");
        let Some(class) = rec.target.message_class(!rec.payload.is_empty()) else { return };
        let (src, sent) = (rec.src as usize, rec.sent_ps);
        self.record_latency(("message", class), sent);
        if let Some(f) = self.flows.as_mut() {
            f.push(class, src, sent, p, self.now);
        }
    }

    /// Name the packet about to be queued for message `msg` in the trace (when traced).
    #[inline]
    fn label_packet(&mut self, msg: u32, src: usize, dst: usize) {
        if let Some(log) = self.net.packet_log.as_mut() {
            let rec = self.msgs[msg as usize].as_ref().expect("live message");
            log.label_next(rec.target.packet_name(!rec.payload.is_empty()), src, dst);
        }
    }

    /// The next boundary of interval statistics (never, when not kept).
    #[inline]
    fn next_sample_ps(&self) -> u64 {
        self.sampler.as_ref().map_or(u64::MAX, |s| s.next)
    }

    /// Close every stretch of interval statistics that ends at or before `t` (the state now is
    /// the state after every event before `t`).
    fn sample_until(&mut self, t: u64) {
        let Some(s) = self.sampler.as_mut() else { return };
        if s.next > t {
            return;
        }
        let depths: Vec<(u32, u32)> = self.net.ni_depths().collect();
        while s.next <= t {
            s.close(self.traffic.bytes, self.net.link_busy_ps().map(|(_, b)| b), &depths);
        }
    }

    /// The trace window in simulated picoseconds for a timed region starting at `start`.
    pub fn trace_window_ps(&self, t: TraceOptions, start: u64) -> (u64, u64) {
        match t.window_cycles {
            None => (start, u64::MAX),
            Some((a, b)) => (start + self.cfg.cycles_to_ps(a), start.saturating_add(self.cfg.cycles_to_ps(b))),
        }
    }

    /// Record a latency from `since` to `until`. Only what started inside the timed region is
    /// recorded (as the counters count a miss or message when it starts), so a distribution's
    /// count is the counter's.
    #[inline]
    pub fn record_latency_between(&mut self, key: latency::Key, since: u64, until: u64) {
        if let Some(l) = self.lat.as_mut() {
            if since >= self.timing_start.unwrap_or(0) {
                l.record(key, until - since);
            }
        }
    }

    /// Run the next waiting handler on `p` if the receive mode allows it now.
    pub fn try_dispatch(&mut self, p: usize) {
        let proc = &self.procs[p];
        if proc.handler_active || proc.inbox.is_empty() {
            return;
        }
        if self.cfg.smp_nodes {
            // The protocol processor's dispatch loop polls all the time: a handler starts as
            // soon as it is done with what it is doing (a default-protocol handler included).
            let free = self.poll_start(p, self.mem.pp_busy[p]);
            if free <= self.now {
                self.start_handler(p, false);
            } else if !self.procs[p].dispatch_queued {
                self.procs[p].dispatch_queued = true;
                self.push(free, Priority::HandlerDone, Event::Dispatch { p: p as u32 });
            }
            return;
        }
        let head = self.msgs[*proc.inbox.front().expect("non-empty") as usize].as_ref().map(|r| r.target);
        if self.cfg.msg.backedge_interval_cycles > 0 && !head.is_some_and(Target::is_local) {
            // Back-edge polling: a computing processor takes the message at its next loop
            // back-edge (one per back-edge); a waiting one at once; other work (a send, a
            // poll) runs to its end first, and the message waits for the next computation or wait.
            match proc.main {
                MainState::Running => {}
                MainState::Timed { .. } if proc.dispatch_queued => {}
                MainState::Blocked { .. } | MainState::Done => self.start_handler(p, false),
                MainState::Timed { cat: Category::Compute, end } => {
                    let at = self.next_backedge(p);
                    if at == self.now {
                        self.start_handler(p, false);
                    } else if at < end {
                        self.procs[p].dispatch_queued = true;
                        self.push(at, Priority::HandlerDone, Event::Dispatch { p: p as u32 });
                    }
                }
                MainState::Timed { .. } => {}
            }
            return;
        }
        // Software-DSM protocol handlers and directory traps are always taken at once (the
        // requester is stalled), and so is the network overflow trap (a system interrupt, in
        // either receive mode).
        let protocol = head.is_some_and(Target::taken_at_once);
        // A processor waiting in the message barrier has nothing else to do: it polls (unless
        // the machine's barrier waits with interrupts on, `messaging.barrier_wait_interrupts`).
        let in_barrier = matches!(proc.main, MainState::Blocked { wait: Wait::Barrier(_), .. })
            && !self.cfg.msg.barrier_wait_interrupts;
        let interrupt = protocol || (proc.mode == ReceiveMode::Interrupt && !in_barrier);
        let allowed = match proc.main {
            MainState::Running => false,
            MainState::Timed { .. } => interrupt,
            MainState::Blocked { .. } | MainState::Done => true,
        };
        if allowed {
            self.start_handler(p, interrupt);
        }
    }

    /// Back-edge polling: the computation between two loop back-edges.
    pub(crate) fn backedge_ps(&self) -> u64 {
        self.cfg.cycles_to_ps(self.cfg.msg.backedge_interval_cycles as f64)
    }

    /// Back-edge polling: the compute processor's next loop back-edge at or after now (its
    /// main thread computes).
    fn next_backedge(&self, p: usize) -> u64 {
        let (at, k) = (self.procs[p].edge_at, self.backedge_ps());
        if self.now <= at {
            at
        } else {
            at + (self.now - at).div_ceil(k) * k
        }
    }

    /// Back-edge polling: a handler of `duration_ps` starts now inside a computation. The
    /// back-edges it passed are failed polls; after it the computation goes on to its next
    /// back-edge: a full interval if the handler was dispatched at one, else what was left.
    fn backedge_handler(&mut self, p: usize, duration_ps: u64) {
        let k = self.backedge_ps();
        let next = self.next_backedge(p);
        let proc = &mut self.procs[p];
        if self.now > proc.edge_at {
            proc.polls_to_charge += (self.now - proc.edge_at).div_ceil(k);
        }
        proc.edge_at = if next == self.now {
            proc.edge_dispatches += 1;
            self.now + k
        } else {
            next
        } + duration_ps;
    }

    fn start_handler(&mut self, p: usize, interrupt: bool) {
        let now = self.now;
        let msg_id = *self.procs[p].inbox.front().expect("inbox not empty");
        let cfg = Arc::clone(&self.cfg);
        let nprocs = self.procs.len();
        if self.lat.is_some() || self.flows.is_some() {
            self.record_message(p, msg_id);
        }
        let rec = self.msgs[msg_id as usize].as_ref().expect("live message");
        if rec.target.is_overflow_trap() {
            self.start_overflow_trap(p);
            return;
        }
        // Getting into the handler, then reading the message's arguments (protocol messages
        // and traps are handled by the memory system, not read by a handler).
        let read = if rec.target.is_software_message() { cfg.msg.receive_cost_cycles(rec.args.len()) } else { 0 };
        let entry = match (rec.target.entry_exit(), self.mem.sw) {
            // A block-access fault enters its handler as the default protocol's miss does: the
            // trap, and for a store to a read-only block the upgrade fault's extra on top.
            (EntryExit::Fault { write, line }, Some(_)) => self.fault_entry_cycles(p, line, write),
            // Copied into memory by the overflow trap: dispatched from there.
            _ if rec.in_memory => overflow::dispatch_cycles(&cfg) + read,
            // A polling mechanism: the poll that sees the message, then the receive path.
            _ if cfg.poll.is_some() => rec.poll_seen_cycles + cfg.poll.map_or(0, |pc| pc.receive_cycles) + read,
            _ => (if interrupt { cfg.msg.interrupt_entry_cycles } else { cfg.msg.poll_dispatch_cycles }) + read,
        };
        let sw_costs = self.mem.sw;
        let mut ctx = Ctx {
            id: p,
            nprocs,
            handlers: self.handlers.len(),
            cfg: &cfg,
            start_ps: now,
            offset_cycles: entry,
            sends: Vec::new(),
            error: None,
            flow: &mut self.flow,
            mem: &mut self.mem,
        };
        // Flow control: the message's credit is now owed to its sender, and credits it carries
        // come back (letting buffered messages to their giver go).
        let src = rec.src as usize;
        if ctx.flow.started(p, src, msg_id, rec.target) > 0 {
            ctx.drain_to(src);
        }
        let smp = cfg.smp_nodes;
        let proc = &mut self.procs[p];
        proc.handler_active = true;
        if rec.counted {
            proc.received += 1;
        }
        if !smp {
            proc.acct.switch(Category::MessageOverhead, now);
        }
        match rec.target {
            Target::App(h) => {
                let message = Message { src: rec.src as ProcId, args: &rec.args, payload: &rec.payload };
                (self.handlers[h.0 as usize])(&mut proc.state, &mut ctx, &message);
            }
            Target::BarrierArrive => {
                proc.barrier.arrivals += 1;
                ctx.offset_cycles += cfg.msg.barrier_handler_cycles;
            }
            Target::BarrierRelease => {
                proc.barrier.released = proc.barrier.released.max(rec.args[0]);
                ctx.offset_cycles += cfg.msg.barrier_handler_cycles;
            }
            Target::Protocol { .. } | Target::Trap { .. } | Target::FlowAck => {}
            Target::Fault { line, write } => {
                call_fault_handler(self.fault_handler, &mut proc.state, &mut ctx, line, write)
            }
            Target::Sink | Target::OneSidedRequest { .. } | Target::OneSidedReply { .. } => {
                unreachable!("cross-traffic and one-sided messages never reach a processor's inbox")
            }
            Target::OverflowTrap => unreachable!("the overflow trap is started by start_overflow_trap"),
        }
        let exit = match (rec.target.entry_exit(), sw_costs) {
            (EntryExit::Fault { .. }, Some(sw)) => cfg.ps_to_cycles(sw.resume_ps).ceil() as u64,
            _ if rec.in_memory => 0,
            _ if interrupt => cfg.msg.interrupt_exit_cycles,
            _ => 0,
        };
        if let Target::Protocol { kind, line, requester } = rec.target {
            // A software protocol handler: its length is what its actions cost.
            let (from, sw) = (rec.src as usize, sw_costs.expect("software DSM"));
            drop(ctx);
            // On an SMP node's protocol processor it costs what it costs on a dedicated one.
            // With a polling mechanism, it is seen by a poll and received as any message.
            let (entry_ps, exit_ps) = match cfg.poll {
                Some(pc) if smp => (cfg.cycles_to_ps((rec.poll_seen_cycles + pc.receive_cycles) as f64), 0),
                _ if smp => (0, 0),
                _ => (sw.entry_ps, sw.exit_ps),
            };
            let body_end = now + entry_ps + sw.handler_ps;
            self.mem_call(|mem| {
                mem.run_software_handler(p, from, kind, line, requester as usize, body_end);
                mem.check_line(line);
            });
            let duration_ps = self.mem.handler_end - now + exit_ps;
            self.finish_handler_start(p, now, duration_ps, Vec::new());
            return;
        }
        // Before the handler's length is fixed: an explicit acknowledgement's send is the
        // handler's work too.
        ctx.acknowledge(src);
        let mut duration_ps = cfg.cycles_to_ps((ctx.offset_cycles + exit) as f64);
        duration_ps += rec.target.trap_body_ps();
        if rec.target.is_program() && !smp {
            self.procs[p].app_handler_ps += duration_ps;
        }
        let (sends, error) = (std::mem::take(&mut ctx.sends), ctx.error.take());
        drop(ctx);
        if let Some(e) = error {
            self.fail(SimError::Program(format!("in a handler on processor {p}: {e}")));
        }
        self.finish_handler_start(p, now, duration_ps, sends);
    }

    /// Entering a block-access fault's handler, as the default protocol's miss enters its
    /// handler: the trap, and for a store to a read-only block the upgrade fault's extra.
    fn fault_entry_cycles(&self, p: usize, line: u64, write: bool) -> u64 {
        let sw = self.mem.sw.expect("user regions exist only under software DSM");
        let upgrade = write && self.mem.tempest.tag(p, line, self.mem.home_of(line)) == AccessTag::ReadOnly;
        self.cfg.ps_to_cycles(sw.miss_trap_ps + if upgrade { sw.upgrade_fault_ps } else { 0 }).ceil() as u64
    }

    /// SMP node: the compute processor runs the fault handler of its own access at once (its
    /// protocol processor runs the handlers of messages). Returns the handler's length, which
    /// the caller spends.
    pub(crate) fn run_fault_on_compute(&mut self, p: usize, line: u64, write: bool) -> u64 {
        let cfg = Arc::clone(&self.cfg);
        let entry = self.fault_entry_cycles(p, line, write);
        let sw = self.mem.sw.expect("user regions exist only under software DSM");
        let mut ctx = Ctx {
            id: p,
            nprocs: self.procs.len(),
            handlers: self.handlers.len(),
            cfg: &cfg,
            start_ps: self.now,
            offset_cycles: entry,
            sends: Vec::new(),
            error: None,
            flow: &mut self.flow,
            mem: &mut self.mem,
        };
        call_fault_handler(self.fault_handler, &mut self.procs[p].state, &mut ctx, line, write);
        let exit = cfg.ps_to_cycles(sw.resume_ps).ceil() as u64;
        let duration_ps = cfg.cycles_to_ps((ctx.offset_cycles + exit) as f64);
        let (sends, error) = (std::mem::take(&mut ctx.sends), ctx.error.take());
        if let Some(e) = error {
            self.fail(SimError::Program(format!("in the fault handler on processor {p}: {e}")));
        }
        for s in sends {
            let at = self.now + cfg.cycles_to_ps(s.at_cycles as f64);
            self.launch(p, s.dest, s.target, s.args, s.payload, at);
        }
        self.mem.stats.handler_ps_compute += duration_ps;
        duration_ps
    }

    /// Launch a started handler's sends and account for its length on the processor.
    fn finish_handler_start(&mut self, p: usize, now: u64, duration_ps: u64, sends: Vec<msg::HandlerSend>) {
        for s in sends {
            let at = now + self.cfg.cycles_to_ps(s.at_cycles as f64);
            self.launch(p, s.dest, s.target, s.args, s.payload, at);
        }
        self.occupy(p, now, duration_ps);
        self.push(now + duration_ps, Priority::HandlerDone, Event::HandlerDone { p: p as u32 });
    }

    /// A handler (or a step of the overflow trap) occupies `p`'s processor from `now` for
    /// `duration_ps`: on an SMP node its protocol processor; otherwise its compute processor,
    /// whose interrupted work is extended by as much (consecutive steps add up exactly as one
    /// handler of their total length would).
    fn occupy(&mut self, p: usize, now: u64, duration_ps: u64) {
        if self.cfg.smp_nodes {
            // On the protocol processor, which default-protocol handlers share.
            self.mem.stats.handler_ps_protocol += duration_ps;
            self.mem.pp_busy[p] = now + duration_ps;
            return;
        }
        self.mem.stats.handler_ps_compute += duration_ps;
        // The interrupted main thread loses the handler's time; a blocked one is re-woken
        // when the handler is done.
        let main = self.procs[p].main;
        self.procs[p].gen = self.procs[p].gen.wrapping_add(1);
        if self.cfg.msg.backedge_interval_cycles > 0 && matches!(main, MainState::Timed { cat: Category::Compute, .. })
        {
            self.backedge_handler(p, duration_ps);
        }
        if let MainState::Timed { end, cat } = main {
            let end = end + duration_ps;
            self.procs[p].main = MainState::Timed { end, cat };
            self.wake_at(p, end);
        }
    }

    fn on_handler_done(&mut self, p: usize) {
        let now = self.now;
        let msg_id = self.procs[p].inbox.pop_front().expect("a handler was running");
        let rec = self.take_msg(msg_id);
        if rec.target.is_overflow_trap() {
            self.net.overflow_rearm(&mut self.q, now, p);
        } else if rec.target.holds_ni_slot() && !rec.in_memory {
            // (Local records hold no NI slot; a message the overflow trap copied freed its slot
            // when it was copied.)
            self.net.consume(&mut self.q, now, p);
        }
        let proc = &mut self.procs[p];
        proc.handler_active = false;
        match proc.main {
            _ if self.cfg.smp_nodes => {}
            MainState::Timed { cat, .. } | MainState::Blocked { cat, .. } => proc.acct.switch(cat, now),
            MainState::Done | MainState::Running => {}
        }
        if self.cfg.poll.is_some() {
            self.poll_queue_empty(p);
        }
        self.try_dispatch(p);
        if !self.compute_in_handler(p) {
            if let MainState::Blocked { wait, .. } = self.procs[p].main {
                let at = self.notify_at(p, wait);
                self.wake_at(p, at);
            }
        }
    }

    /// Handle one non-processor event.
    fn handle(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::Net(ev) => self.net.handle(&mut self.q, now, ev),
            Event::HandlerDone { p } => self.on_handler_done(p as usize),
            // An SMP node's protocol processor is free, or a compute processor at a back-edge.
            Event::Dispatch { p } => {
                self.procs[p as usize].dispatch_queued = false;
                self.try_dispatch(p as usize);
            }
            Event::CrossGen { pair } => {
                if self.procs_done < self.procs.len() {
                    let src = self.cross_pairs[pair as usize].0;
                    if self.net.output_has_room(src, 1) {
                        self.cross_send(pair as usize);
                    } else {
                        // FIFO: the I/O node's send waits for room (`cross_space`).
                        self.cross_waiting[pair as usize] = true;
                    }
                }
            }
            Event::OverflowDrain { p } => self.overflow_step(p as usize),
            Event::Proto { msg, dst } => self.mem_receive(dst as usize, msg),
            Event::OneSided { msg, node } => self.one_sided_arrive(node as usize, msg),
            Event::OneSidedServe { msg, node } => self.one_sided_serve(node as usize, msg),
            Event::Trap { p, body_ps } => {
                let msg = self.alloc_msg(MessageRecord::new(p, Target::Trap { body_ps }, Vec::new(), Vec::new()));
                self.procs[p as usize].inbox.push_back(msg);
                self.try_dispatch(p as usize);
            }
            Event::Wake { .. } => unreachable!("wake-ups are handled by the scheduler"),
        }
        self.drain_notices();
    }

    /// I/O pair `pair` sends a cross-traffic message now, and its next one an interval later.
    fn cross_send(&mut self, pair: usize) {
        let (now, (src, dst)) = (self.now, self.cross_pairs[pair]);
        self.launch(src, dst, Target::Sink, Vec::new(), Vec::new(), now);
        self.push(now + self.cross_interval_ps, Priority::Network, Event::CrossGen { pair: pair as u32 });
    }

    /// I/O endpoint `ep`'s NI output queue has room: its waiting cross-traffic send goes now.
    pub(crate) fn cross_space(&mut self, ep: usize) {
        if let Some(pair) = (0..self.cross_pairs.len()).find(|&i| self.cross_waiting[i] && self.cross_pairs[i].0 == ep)
        {
            self.cross_waiting[pair] = false;
            if self.procs_done < self.procs.len() {
                self.cross_send(pair);
            }
        }
    }

    fn deadlock_report(&self) -> String {
        let cfg = &self.cfg;
        let mut lines = vec![format!(
            "at cycle {:.1} every unfinished processor is blocked and nothing in flight can wake it",
            cfg.ps_to_cycles(self.now)
        )];
        for (i, p) in self.procs.iter().enumerate() {
            let mode = match p.mode {
                ReceiveMode::Interrupt => "interrupt",
                ReceiveMode::Polling => "polling",
            };
            let what = match p.main {
                MainState::Done => continue,
                MainState::Blocked { wait, since, .. } => {
                    let w = match wait {
                        Wait::Cond(what) => format!("waits in wait_until(\"{what}\")"),
                        Wait::Barrier(e) => format!(
                            "waits at barrier #{e} ({} child arrivals pending, released through #{})",
                            p.barrier.arrivals, p.barrier.released
                        ),
                        Wait::NiOutput => "waits for NI output queue space".to_string(),
                        Wait::Drain => "waits for its handlers to drain".to_string(),
                        Wait::Miss(line) => format!("waits for a miss on line {line}"),
                        Wait::PrefetchBuffer => "waits for a prefetch-buffer entry".to_string(),
                        Wait::OneSided => "waits for its one-sided (get/put) requests".to_string(),
                        Wait::Credit(d) => format!("waits for flow-control credit to send to P{d}"),
                        Wait::Tag(line) => format!("waits for Tempest user block {line}'s tag to allow its access"),
                        Wait::Spin(what, line) => {
                            let addr = line * self.cfg.mem.line_bytes;
                            let holder = self
                                .mem
                                .lock_holders
                                .range(addr..addr + self.cfg.mem.line_bytes)
                                .next()
                                .map(|(_, h)| format!(", held by P{h}"))
                                .unwrap_or_default();
                            format!("spins in {what} on line {line} (address {addr:#x}{holder})")
                        }
                    };
                    format!("{w} since cycle {:.1}", cfg.ps_to_cycles(since))
                }
                other => format!("{other:?}"),
            };
            lines.push(format!("  P{i}: {what}; {} messages waiting; receives by {mode}", p.inbox.len()));
        }
        let done = self.procs.iter().filter(|p| p.main == MainState::Done).count();
        if done > 0 {
            lines.push(format!("  ({done} processors finished)"));
        }
        lines.push(format!("  network: {}", self.net.stuck_summary()));
        lines.join("\n")
    }
}

/// Call the program's Tempest fault handler for a fault on the block at `line`.
fn call_fault_handler<S>(f: Option<FaultHandler<S>>, state: &mut S, ctx: &mut Ctx<'_>, line: u64, write: bool) {
    let block = commlab_api::Addr(line * ctx.cfg.mem.line_bytes);
    match f {
        Some(f) => f(state, ctx, &Fault { block, write }),
        None => {
            ctx.error.get_or_insert(format!(
                "a {} fault on Tempest user block {:#x}, but the program has no fault_handler",
                if write { "store" } else { "load" },
                block.0
            ));
        }
    }
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

/// Run `program` on the machine `cfg`; `checked` switches the coherence invariant checker on.
/// With a `control`, every [`CONTROL_EVERY_EVENTS`] events the loop publishes its progress
/// there and stops with [`SimError::Cancelled`] if it was asked to; it never reads anything else
/// from it, so a run that is not stopped simulates exactly what it would without one.
pub fn run<P: Program>(
    cfg: Arc<MachineConfig>,
    program: Arc<P>,
    checked: bool,
    recording: Recording,
    control: Option<&RunControl>,
) -> Result<RunOutput<P::State>, SimError> {
    let started = std::time::Instant::now();
    let n = cfg.nprocs();
    let net = Network::new(&cfg);
    let cross_pairs = cfg.topology.io_pairs();
    let cross_interval_ps = if cfg.cross_traffic_bytes_per_cycle > 0.0 {
        let per_pair = cfg.cross_traffic_bytes_per_cycle / cross_pairs.len() as f64;
        cfg.cycles_to_ps(cfg.cross_traffic_message_bytes as f64 / per_pair).max(1)
    } else {
        0
    };
    let mode = program.receive_mode();
    let barrier_arity = match program.barrier_arity() {
        None => cfg.barrier_arity(program.barrier_kind()),
        Some(k) if k >= 2 => k,
        Some(k) => return Err(SimError::Program(format!("the barrier's fan-in must be at least 2, got {k}"))),
    };
    let mut mem = Memory::new(&cfg, checked);
    let barrier_homes: Vec<usize> = (0..n).flat_map(|p| [p, p]).collect();
    let barrier_region = mem.alloc_system(&barrier_homes);
    mem.alloc_private(&(0..n).map(|p| program.private_arrays(p)).collect::<Vec<_>>());
    let procs = (0..n)
        .map(|i| Proc {
            state: program.init_state(i, n),
            mode,
            main: MainState::Running,
            gen: 0,
            handler_active: false,
            dispatch_queued: false,
            edge_at: 0,
            edge_left_ps: cfg.cycles_to_ps(cfg.msg.backedge_interval_cycles as f64),
            polls_to_charge: 0,
            failed_polls: 0,
            edge_dispatches: 0,
            checked: [0; 2],
            inbox: VecDeque::new(),
            acct: TimeAccount::new(),
            barrier: BarrierState::default(),
            sent: 0,
            received: 0,
            app_handler_ps: 0,
            one_sided_outstanding: 0,
            overflow_copy: None,
        })
        .collect();
    let mut world: Box<World<P::State>> = Box::new(World {
        now: 0,
        q: EventQueue::new(cfg.fold_events),
        net,
        procs,
        handlers: program.handlers(),
        fault_handler: program.fault_handler(),
        msgs: Vec::new(),
        free_msgs: Vec::new(),
        traffic: Traffic::default(),
        mem,
        barrier_kind: program.barrier_kind(),
        barrier_arity,
        barrier_region,
        timing_start: None,
        lat: recording.latencies.then(Box::default),
        flows: recording.trace.map(|t| Box::new(FlowLog::new(t.max_events / 4))),
        trace: recording.trace,
        sampler: recording.interval_cycles.map(|c| Box::new(Sampler::new(cfg.cycles_to_ps(c)))),
        work: (0, 0),
        fatal: None,
        procs_done: 0,
        cross_waiting: vec![false; cross_pairs.len()],
        cross_pairs,
        cross_interval_ps,
        cross_bytes_timed: None,
        overflow: overflow::OverflowStats::default(),
        remote_busy: vec![0; n],
        one_sided: one_sided::OneSidedStats::default(),
        flow: Flow::new(cfg.msg.flow_window_messages, n),
        poll_nodes: vec![poll::PollNode::default(); if cfg.poll.is_some() { n } else { 0 }],
        poll_stats: poll::PollStats::default(),
        cfg: Arc::clone(&cfg),
    });
    if let Some(len) = world.sampler.as_ref().map(|s| s.len) {
        for p in &mut world.procs {
            p.acct.intervals = Some(Box::new(IntervalAccount::new(len)));
        }
    }
    if let Some(t) = recording.trace {
        // Spans, flows and packets share the cap: half over the processors' spans, a quarter
        // each to the flows and the packets on links.
        let per_proc = (t.max_events / 2 / n).max(16);
        let (a, b) = world.trace_window_ps(t, 0);
        let mut packets = PacketLog::new(t.max_events / 4);
        packets.set_window(a, b);
        world.net.packet_log = Some(Box::new(packets));
        for p in &mut world.procs {
            let mut log = SpanLog::new(per_proc);
            log.set_window(a, b);
            p.acct.spans = Some(Box::new(log));
        }
        if let Some(f) = world.flows.as_mut() {
            f.set_window(a, b);
        }
    }
    let wp: *mut World<P::State> = &mut *world;

    type Coro<S> = Coroutine<*mut World<S>, (), ()>;
    let mut coros: Vec<Coro<P::State>> = Vec::with_capacity(n);
    for id in 0..n {
        let prog = Arc::clone(&program);
        let stack = DefaultStack::new(STACK_BYTES).map_err(|e| SimError::Internal(format!("coroutine stack: {e}")))?;
        coros.push(Coroutine::with_stack(stack, move |yielder, wp| {
            let mut node = SimNode::new(id, wp, yielder);
            prog.main(&mut node);
            node.flush();
        }));
    }

    // SAFETY (all `unsafe { &mut *wp }` below): no reference into the world outlives the
    // statement that makes it, and none is held while a coroutine runs.
    {
        let w = unsafe { &mut *wp };
        for p in 0..n {
            w.wake_at(p, 0);
        }
        if w.cross_interval_ps > 0 {
            let npairs = w.cross_pairs.len() as u64;
            for pair in 0..npairs {
                // Stagger the sources so they do not fire in lock step.
                let at = w.cross_interval_ps * pair / npairs;
                w.push(at, Priority::Network, Event::CrossGen { pair: pair as u32 });
            }
        }
    }
    let mut events: u64 = 0;
    loop {
        let w = unsafe { &mut *wp };
        // A folded event (`network.model = "fold"`) is handled exactly where the reference
        // pops it, but was never queued; `events` counts queued events only.
        let Some((t, ev, folded)) = w.q.pop() else { break };
        events += u64::from(!folded);
        if t >= w.next_sample_ps() {
            w.sample_until(t);
        }
        w.now = t;
        if events > cfg.max_events {
            return Err(SimError::EventLimit { events: events - 1, cycles: cfg.ps_to_cycles(t) });
        }
        if t > cfg.max_time_ps {
            return Err(SimError::TimeLimit { cycles: cfg.ps_to_cycles(t) });
        }
        if !folded && events.is_multiple_of(CONTROL_EVERY_EVENTS) {
            if let Some(c) = control {
                c.publish(events, t, w.work);
                if c.stop_requested() {
                    return Err(SimError::Cancelled { cycles: cfg.ps_to_cycles(t), events });
                }
            }
        }
        match ev {
            Event::Wake { p, gen } => {
                let pi = p as usize;
                if w.procs[pi].gen != gen {
                    continue; // superseded
                }
                w.procs[pi].main = MainState::Running;
                match coros[pi].resume(wp) {
                    CoroutineResult::Yield(()) => {}
                    CoroutineResult::Return(()) => {
                        let w = unsafe { &mut *wp };
                        let proc = &mut w.procs[pi];
                        proc.main = MainState::Done;
                        proc.acct.finish(w.now);
                        w.procs_done += 1;
                        if w.procs_done == n {
                            w.cross_bytes_timed = Some(w.net.cross_bytes);
                        }
                        w.try_dispatch(pi);
                    }
                }
                let w = unsafe { &mut *wp };
                w.drain_notices();
            }
            other => w.handle(other),
        }
        let w = unsafe { &mut *wp };
        if let Some(e) = w.fatal.take() {
            return Err(e);
        }
        if w.q.live() == 0 {
            if w.procs_done == n {
                break; // only cross-traffic remains
            }
            if w.net.app_packets_in_flight == 0 || w.q.len() == 0 {
                return Err(SimError::Deadlock(w.deadlock_report()));
            }
        }
    }
    let w = unsafe { &mut *wp };
    if let Some(c) = control {
        c.publish(events, w.now, w.work);
    }
    if w.procs_done < n {
        return Err(SimError::Deadlock(w.deadlock_report()));
    }
    if w.flow.buffered_now() > 0 {
        return Err(SimError::Internal(format!(
            "flow control: {} messages still buffered when the run ended",
            w.flow.buffered_now()
        )));
    }
    if let Some(c) = control.filter(|c| c.measuring_stacks()) {
        let deepest = coros.into_iter().map(|co| stack_bytes_used(&co.into_stack())).max().unwrap_or(0);
        c.record_stack_bytes(deepest as u64);
    } else {
        drop(coros);
    }
    // The last, partial stretch of interval statistics: close every stretch that starts before
    // the end.
    if let Some(len) = world.sampler.as_ref().map(|s| s.len) {
        let end = world.now;
        world.sample_until(end.saturating_add(len - 1));
    }
    let stats = collect_stats(&world, events, started.elapsed().as_secs_f64())?;
    let memory = std::mem::take(&mut world.mem.data);
    let states = world.procs.into_iter().map(|p| p.state).collect();
    Ok(RunOutput { states, memory, stats })
}

/// How deep a finished coroutine's stack went: its usable part (the top `STACK_BYTES`, above
/// the guard page) starts as fresh zeroed memory, so the lowest word written non-zero bounds
/// the deepest frame (a deepest frame that stored only zeros would go unseen: tests keep a wide
/// margin).
fn stack_bytes_used(stack: &DefaultStack) -> usize {
    use corosensei::stack::Stack;
    let top = stack.base().get();
    let lowest = top - STACK_BYTES;
    let words = STACK_BYTES / 8;
    // SAFETY: [lowest, top) is the stack's readable and writable part (the guard page lies
    // below `lowest`), and its coroutine has finished, so nothing writes it any more.
    let memory = unsafe { std::slice::from_raw_parts(lowest as *const u64, words) };
    let first_used = memory.iter().position(|&w| w != 0).unwrap_or(words);
    (words - first_used) * 8
}

fn collect_stats<S>(w: &World<S>, events: u64, wall: f64) -> Result<RunStats, SimError> {
    let cfg = &w.cfg;
    let mut procs = Vec::with_capacity(w.procs.len());
    let mut first_start = u64::MAX;
    let mut last_finish = 0;
    for (i, p) in w.procs.iter().enumerate() {
        let totals = p.acct.totals_ps();
        let busy = p.acct.busy_ps();
        if totals.iter().sum::<u64>() != busy {
            return Err(SimError::Internal(format!(
                "processor {i}: time categories sum to {} ps but busy time is {busy} ps",
                totals.iter().sum::<u64>()
            )));
        }
        first_start = first_start.min(p.acct.start_ps());
        last_finish = last_finish.max(p.acct.finish_ps().unwrap_or(0));
        procs.push(ProcTimes {
            by_category: totals.map(|ps| cfg.ps_to_cycles(ps)),
            busy: cfg.ps_to_cycles(busy),
            start: cfg.ps_to_cycles(p.acct.start_ps()),
        });
    }
    let timed_ps = last_finish.saturating_sub(first_start);
    let mut counters = std::collections::BTreeMap::new();
    counters.insert("messages".to_string(), w.traffic.messages as f64);
    counters.insert("packets".to_string(), w.traffic.packets as f64);
    counters.insert("cross_traffic_messages".to_string(), w.traffic.cross_messages as f64);
    if cfg.cross_traffic_bytes_per_cycle > 0.0 {
        // What the I/O nodes achieved over the timed region (FIFO: at most the configured rate).
        let bytes = w.cross_bytes_timed.unwrap_or(w.net.cross_bytes) as f64;
        let rate = if timed_ps > 0 { bytes / cfg.ps_to_cycles(timed_ps) } else { 0.0 };
        counters.insert("cross_traffic_bytes_per_cycle".to_string(), rate);
    }
    if cfg.msg.overflow.is_some() {
        let o = &w.overflow;
        counters.insert("overflow_traps".to_string(), o.traps as f64);
        counters.insert("overflow_messages_drained".to_string(), o.drained as f64);
        counters.insert("overflow_trap_cycles".to_string(), cfg.ps_to_cycles(o.trap_ps));
    }
    let ms = &w.mem.stats;
    if ms.hits + ms.misses > 0 {
        counters.insert("cache_hits".to_string(), ms.hits as f64);
        counters.insert("cache_misses".to_string(), ms.misses as f64);
        counters.insert("local_misses".to_string(), ms.local_misses as f64);
        counters.insert("forwards".to_string(), ms.forwards as f64);
        counters.insert("invalidations".to_string(), ms.invalidations as f64);
        counters.insert("software_traps".to_string(), ms.software_traps as f64);
        let most = ms.traps_by_node.iter().copied().max().unwrap_or(0);
        counters.insert("software_traps_max_per_node".to_string(), most as f64);
        counters.insert("prefetches".to_string(), ms.prefetches as f64);
        counters.insert("prefetches_useful".to_string(), ms.prefetches_useful as f64);
        counters.insert("private_misses".to_string(), ms.private_misses as f64);
        counters.insert("protocol_messages".to_string(), w.traffic.protocol_messages as f64);
    }
    if w.one_sided.requests > 0 {
        counters.insert("one_sided_requests".to_string(), w.one_sided.requests as f64);
        counters.insert("one_sided_words".to_string(), w.one_sided.words as f64);
        counters.insert("one_sided_invalidations".to_string(), w.one_sided.invalidations as f64);
    }
    if let Some(sw) = w.mem.sw.filter(|sw| sw.load_check_ps + sw.store_check_ps > 0) {
        let sum = |k: usize| w.procs.iter().map(|p| p.checked[k]).sum::<u64>();
        counters.insert("access_checked_loads".to_string(), sum(0) as f64);
        counters.insert("access_checked_stores".to_string(), sum(1) as f64);
        let ps = sum(0) * sw.load_check_ps + sum(1) * sw.store_check_ps;
        counters.insert("access_check_cycles".to_string(), w.cfg.ps_to_cycles(ps));
    }
    if w.mem.sw.is_some() || w.cfg.smp_nodes {
        let ms = &w.mem.stats;
        counters.insert("handler_cycles_compute".to_string(), w.cfg.ps_to_cycles(ms.handler_ps_compute));
        counters.insert("handler_cycles_protocol".to_string(), w.cfg.ps_to_cycles(ms.handler_ps_protocol));
    }
    if w.cfg.poll.is_some() {
        let s = &w.poll_stats;
        counters.insert("poll_messages".to_string(), s.messages as f64);
        counters.insert("poll_flag_updates".to_string(), s.flag_updates as f64);
        counters.insert("poll_bus_wait_cycles".to_string(), w.cfg.ps_to_cycles(s.bus_wait_ps));
        counters.insert("poll_notifies".to_string(), s.notifies as f64);
    }
    if w.cfg.msg.backedge_interval_cycles > 0 {
        let polls: u64 = w.procs.iter().map(|p| p.failed_polls).sum();
        let dispatched: u64 = w.procs.iter().map(|p| p.edge_dispatches).sum();
        counters.insert("backedge_failed_polls".to_string(), polls as f64);
        counters.insert("backedge_dispatches".to_string(), dispatched as f64);
    }
    if let Some(pg) = &w.mem.pages {
        counters.insert("page_protection_changes".to_string(), pg.protection_changes as f64);
        counters.insert("page_protection_changes_with_ecc".to_string(), pg.combined_changes as f64);
        counters.insert("ecc_invalidations".to_string(), pg.ecc_invalidations as f64);
        counters.insert("emulated_writes".to_string(), pg.emulated_writes as f64);
    }
    let t = &w.mem.tempest;
    if t.in_use() {
        counters.insert("tempest_faults".to_string(), t.faults as f64);
        counters.insert("tempest_tag_changes".to_string(), t.tag_changes as f64);
        counters.insert("tempest_block_copies".to_string(), t.block_copies as f64);
    }
    if w.flow.window > 0 {
        let f = &w.flow.stats;
        counters.insert("flow_buffered".to_string(), f.buffered as f64);
        counters.insert("flow_deadlock_detections".to_string(), f.detections as f64);
        counters.insert("flow_spurious_detections".to_string(), f.spurious as f64);
        counters.insert("flow_credit_waits".to_string(), f.credit_waits as f64);
        counters.insert("flow_acks".to_string(), f.acks as f64);
        counters.insert("flow_piggybacked_credits".to_string(), f.piggybacked as f64);
    }
    // Utilisation of router-to-router links over the timed region.
    let topo = &w.net.topo;
    let router_links: Vec<(u32, u64)> =
        w.net.link_busy_ps().filter(|(l, _)| topo.link(*l).kind == crate::topology::LinkKind::Router).collect();
    if timed_ps > 0 && !router_links.is_empty() {
        let util = |b: u64| b as f64 / timed_ps as f64;
        let mean = router_links.iter().map(|&(_, b)| util(b)).sum::<f64>() / router_links.len() as f64;
        let max = router_links.iter().map(|&(_, b)| util(b)).fold(0.0, f64::max);
        counters.insert("link_utilization_mean".to_string(), mean);
        counters.insert("link_utilization_max".to_string(), max);
        let bis = topo.bisection_links();
        if !bis.is_empty() {
            let busy: Vec<u64> = w.net.link_busy_ps().map(|(_, b)| b).collect();
            let u = bis.iter().map(|&l| util(busy[l as usize])).sum::<f64>() / bis.len() as f64;
            counters.insert("bisection_utilization".to_string(), u);
        }
    }
    let nodes = w
        .procs
        .iter()
        .enumerate()
        .map(|(i, p)| NodeCounters {
            messages_sent: p.sent,
            messages_received: p.received,
            cache_misses: ms.misses_by_node.get(i).copied().unwrap_or(0),
            software_traps: ms.traps_by_node.get(i).copied().unwrap_or(0),
        })
        .collect();
    let end = |r: Option<u32>, l: u32| match (r, topo.link_endpoint(l)) {
        (Some(r), _) => format!("router {r}"),
        (None, Some(e)) => format!("endpoint {e}"),
        (None, None) => "?".to_string(),
    };
    let links = w
        .net
        .link_busy_ps()
        .zip(w.net.link_bytes())
        .map(|((l, busy), bytes)| {
            let info = topo.link(l);
            LinkStats {
                link: l,
                kind: match info.kind {
                    crate::topology::LinkKind::Injection => "injection",
                    crate::topology::LinkKind::Ejection => "ejection",
                    crate::topology::LinkKind::Router => "router",
                },
                from: end(info.from_router, l),
                to: end(info.to_router, l),
                utilization: if timed_ps > 0 { busy as f64 / timed_ps as f64 } else { 0.0 },
                bytes,
            }
        })
        .collect();
    Ok(RunStats {
        cycles: cfg.ps_to_cycles(timed_ps),
        procs,
        volume_bytes: w.traffic.bytes,
        counters,
        nodes,
        links,
        events,
        wall_seconds: wall,
        latencies: w.lat.as_ref().map_or_else(Vec::new, |l| l.report(cfg.cycle_ps)),
        intervals: w.sampler.as_ref().map(|s| {
            let accounts: Vec<Option<&IntervalAccount>> = w.procs.iter().map(|p| p.acct.intervals.as_deref()).collect();
            intervals::report(&accounts, s, cfg.cycle_ps)
        }),
        trace: w.flows.as_ref().map(|f| {
            let spans: Vec<Option<&SpanLog>> = w.procs.iter().map(|p| p.acct.spans.as_deref()).collect();
            tracing::report(&spans, f, w.net.packet_log.as_deref(), w.timing_start.unwrap_or(0), cfg.cycle_ps)
        }),
    })
}
