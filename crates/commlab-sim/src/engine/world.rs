//! [`World`]: the simulated machine's state as the engine holds it (processors, memory,
//! network, the event queue, the message records and what the run records), with the methods
//! every part of the engine shares: scheduling, the message record store, launching a message
//! as packets, cross-traffic, and recording latencies, flows and intervals.
//!
//! The message store, the count of finished processors, the cross-traffic generator and the
//! run's first error are private to this file; the other fields are the engine's shared state
//! (`pub(super)`: visible to `engine/` only).

use super::error::SimError;
use super::state::{
    BarrierState, Event, MainState, OneSidedStats, OverflowStats, PollNode, PollStats, Proc, Recording,
};
use crate::machine::MachineConfig;
use crate::mem::Memory;
use crate::msg::flow::Flow;
use crate::msg::{self, MessageRecord, Target};
use crate::net::{Network, Packet};
use crate::queue::{identity, EventQueue, Priority};
use crate::stats::interval::{IntervalAccount, Sampler};
use crate::stats::latency::{self, Latencies};
use crate::stats::trace::{FlowLog, PacketLog, SpanLog, TraceOptions};
use crate::stats::{TimeAccount, Traffic};
use commlab_api::{BarrierKind, FaultHandler, Handler, Program, TrafficClass};
use std::collections::VecDeque;
use std::sync::Arc;

pub(crate) struct World<S> {
    pub(super) cfg: Arc<MachineConfig>,
    pub(super) now: u64,
    pub(super) q: EventQueue<Event>,
    pub(super) net: Network,
    pub(super) procs: Vec<Proc<S>>,
    pub(super) handlers: Vec<Handler<S>>,
    /// The program's Tempest fault handler.
    pub(super) fault_handler: Option<FaultHandler<S>>,
    msgs: Vec<Option<MessageRecord>>,
    free_msgs: Vec<u32>,
    /// Message records each source has made (numbers their serials).
    msgs_made: Vec<u64>,
    pub(super) traffic: Traffic,
    pub(super) mem: Memory,
    pub(super) barrier_kind: BarrierKind,
    /// Fan-in of the barrier's combining tree: the program's, or the machine's for the kind.
    pub(super) barrier_arity: usize,
    /// Base address of the shared-memory barrier's lines (counter and flag per processor).
    pub(super) barrier_region: u64,
    pub(super) timing_start: Option<u64>,
    /// Latency distributions, when the run records them (`Simulator::record_latencies`).
    pub(super) lat: Option<Box<Latencies>>,
    /// The trace's flows, when the run is traced (`Simulator::trace`; its spans are in each
    /// processor's time account), and the options it was asked with.
    pub(super) flows: Option<Box<FlowLog>>,
    pub(super) trace: Option<TraceOptions>,
    /// Interval statistics' boundary samples, when kept (`Simulator::intervals`).
    pub(super) sampler: Option<Box<Sampler>>,
    /// What the program last said of its progress (`Node::progress`).
    pub(super) work: (u64, u64),
    fatal: Option<SimError>,
    procs_done: usize,
    cross_pairs: Vec<(usize, usize)>,
    cross_interval_ps: u64,
    /// FIFO cross-traffic: I/O pairs whose sender waits for room in its NI output queue.
    cross_waiting: Vec<bool>,
    /// Cross-traffic bytes that left the I/O nodes' NIs from the start of timing to the last
    /// processor's finish (taken when it finishes).
    cross_bytes_timed: Option<u64>,
    /// The network overflow trap's counts since timing began.
    pub(super) overflow: OverflowStats,
    /// One-sided access: each node's memory is busy serving requests until this time, and
    /// what it has served.
    pub(super) remote_busy: Vec<u64>,
    pub(super) one_sided: OneSidedStats,
    /// Credit-based flow control of application messages (off unless the machine sets a window).
    pub(super) flow: Flow,
    /// `messaging.poll_mechanism` on SMP nodes: each node's flag and the counts since timing.
    pub(super) poll_nodes: Vec<PollNode>,
    pub(super) poll_stats: PollStats,
}

impl<S> World<S> {
    pub(super) fn push(&mut self, at: u64, prio: Priority, ev: Event) {
        let tie = if self.q.keyed() {
            let (msgs, net) = (&self.msgs, &self.net);
            ev.tie_key(|m| msgs[m as usize].as_ref().expect("live message").serial, |p| net.packet(p).serial)
        } else {
            0
        };
        self.q.push(at, prio, tie, ev);
    }

    /// Invalidate any pending wake of `p` and schedule a new one at `at`.
    pub(super) fn wake_at(&mut self, p: usize, at: u64) {
        let proc = &mut self.procs[p];
        proc.gen = proc.gen.wrapping_add(1);
        let gen = proc.gen;
        self.push(at, Priority::Wake, Event::Wake { p: p as u32, gen });
    }

    pub(super) fn fail(&mut self, e: SimError) {
        self.fatal.get_or_insert(e);
    }

    pub(super) fn alloc_msg(&mut self, mut rec: MessageRecord) -> u32 {
        let src = rec.src as usize;
        if src >= self.msgs_made.len() {
            self.msgs_made.resize(src + 1, 0);
        }
        rec.serial = identity(src, self.msgs_made[src]);
        self.msgs_made[src] += 1;
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
    pub(super) fn take_msg(&mut self, msg: u32) -> MessageRecord {
        self.free_msgs.push(msg);
        self.msgs[msg as usize].take().expect("live message")
    }

    /// Packetize a message and queue its packets at `src`'s NI. Packet `i` is ready once the
    /// sender's DMA engine has read the bulk bytes it carries (starting at `ready_ps`).
    pub(super) fn launch(
        &mut self,
        src: usize,
        dst: usize,
        target: Target,
        args: Vec<u64>,
        payload: Vec<u64>,
        ready_ps: u64,
    ) {
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
            let mut dma_ps = cfg.msg.dma_ps(bulk_through);
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
                serial: 0,
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
    pub(super) fn compute_in_handler(&self, p: usize) -> bool {
        self.procs[p].handler_active && !self.cfg.smp_nodes
    }

    /// Record a latency that started at `since` and ends now (`Simulator::record_latencies`;
    /// nothing when off).
    #[inline]
    pub(super) fn record_latency(&mut self, key: latency::Key, since: u64) {
        self.record_latency_between(key, since, self.now);
    }

    /// A program or runtime message's handler starts now on `p`: record its one-way latency
    /// and its flow by kind (protocol messages, traps and faults show in the miss stalls).
    pub(super) fn record_message(&mut self, p: usize, msg_id: u32) {
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
    pub(super) fn label_packet(&mut self, msg: u32, src: usize, dst: usize) {
        if let Some(log) = self.net.packet_log.as_mut() {
            let rec = self.msgs[msg as usize].as_ref().expect("live message");
            log.label_next(rec.target.packet_name(!rec.payload.is_empty()), src, dst);
        }
    }

    /// The next boundary of interval statistics (never, when not kept).
    #[inline]
    pub(super) fn next_sample_ps(&self) -> u64 {
        self.sampler.as_ref().map_or(u64::MAX, |s| s.next)
    }

    /// Close every stretch of interval statistics that ends at or before `t` (the state now is
    /// the state after every event before `t`).
    pub(super) fn sample_until(&mut self, t: u64) {
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
    pub(super) fn trace_window_ps(&self, t: TraceOptions, start: u64) -> (u64, u64) {
        match t.window_cycles {
            None => (start, u64::MAX),
            Some((a, b)) => (start + self.cfg.cycles_to_ps(a), start.saturating_add(self.cfg.cycles_to_ps(b))),
        }
    }

    /// Record a latency from `since` to `until`. Only what started inside the timed region is
    /// recorded (as the counters count a miss or message when it starts), so a distribution's
    /// count is the counter's.
    #[inline]
    pub(super) fn record_latency_between(&mut self, key: latency::Key, since: u64, until: u64) {
        if let Some(l) = self.lat.as_mut() {
            if since >= self.timing_start.unwrap_or(0) {
                l.record(key, until - since);
            }
        }
    }

    /// The world of a run of `program` on `cfg` before its first event: the memory with the
    /// barrier's lines and the program's private arrays allocated, every processor's state, and
    /// what the run records.
    pub(super) fn new<P: Program<State = S>>(
        cfg: &Arc<MachineConfig>,
        program: &P,
        checked: bool,
        recording: Recording,
    ) -> Result<Box<World<S>>, SimError> {
        let n = cfg.nprocs();
        let net = Network::new(cfg);
        let cross_pairs = cfg.topology.io_pairs();
        let cross_interval_ps = cfg.cross_traffic_interval_ps();
        let mode = program.receive_mode();
        let barrier_arity = match program.barrier_arity() {
            None => cfg.barrier_arity(program.barrier_kind()),
            Some(k) if k >= 2 => k,
            Some(k) => return Err(SimError::Program(format!("the barrier's fan-in must be at least 2, got {k}"))),
        };
        let mut mem = Memory::new(cfg, checked);
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
                edge_left_ps: cfg.msg.backedge_interval_ps,
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
                overflow_scan: 0,
            })
            .collect();
        let mut world: Box<World<S>> = Box::new(World {
            now: 0,
            q: EventQueue::new(cfg.tie_order),
            net,
            procs,
            handlers: program.handlers(),
            fault_handler: program.fault_handler(),
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            msgs_made: Vec::new(),
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
            overflow: OverflowStats::default(),
            remote_busy: vec![0; n],
            one_sided: OneSidedStats::default(),
            flow: Flow::new(cfg.msg.flow_window_messages, n),
            poll_nodes: vec![PollNode::default(); if cfg.poll.is_some() { n } else { 0 }],
            poll_stats: PollStats::default(),
            cfg: Arc::clone(cfg),
        });
        if world.sampler.is_some() || recording.trace.is_some() {
            world.net.keep_every_hop_in_time();
        }
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
        Ok(world)
    }

    /// Wake every processor at time 0 and start the I/O nodes' cross-traffic.
    pub(super) fn start(&mut self) {
        for p in 0..self.procs.len() {
            self.wake_at(p, 0);
        }
        if self.cross_interval_ps > 0 {
            let npairs = self.cross_pairs.len() as u64;
            for pair in 0..npairs {
                // Stagger the sources so they do not fire in lock step.
                let at = self.cross_interval_ps * pair / npairs;
                self.push(at, Priority::Network, Event::CrossGen { pair: pair as u32 });
            }
        }
    }

    /// The first error of the run (taking it).
    pub(super) fn take_fatal(&mut self) -> Option<SimError> {
        self.fatal.take()
    }

    /// Processor `p`'s main thread returned now.
    pub(super) fn proc_finished(&mut self, p: usize) {
        let proc = &mut self.procs[p];
        proc.main = MainState::Done;
        proc.acct.finish(self.now);
        self.procs_done += 1;
        if self.procs_done == self.procs.len() {
            self.cross_bytes_timed = Some(self.net.cross_bytes);
        }
    }

    /// Whether every processor's main thread has returned.
    pub(super) fn all_done(&self) -> bool {
        self.procs_done == self.procs.len()
    }

    /// Cross-traffic bytes over the timed region, once the last processor finished.
    pub(super) fn cross_bytes_timed(&self) -> Option<u64> {
        self.cross_bytes_timed
    }

    /// A live message record.
    #[inline]
    pub(super) fn msg(&self, msg: u32) -> &MessageRecord {
        self.msgs[msg as usize].as_ref().expect("live message")
    }

    #[inline]
    pub(super) fn msg_mut(&mut self, msg: u32) -> &mut MessageRecord {
        self.msgs[msg as usize].as_mut().expect("live message")
    }

    /// Run `f` with message `msg`'s record lent out of the store (so `f` may change the rest of
    /// the world while it reads the record); the record is back in place afterwards.
    #[inline]
    pub(super) fn with_msg<R>(&mut self, msg: u32, f: impl FnOnce(&mut Self, &MessageRecord) -> R) -> R {
        let rec = self.msgs[msg as usize].take().expect("live message");
        let r = f(self, &rec);
        self.msgs[msg as usize] = Some(rec);
        r
    }

    /// Drop a message record whose content nobody reads (a cross-traffic message at its sink).
    pub(super) fn free_msg(&mut self, msg: u32) {
        self.msgs[msg as usize] = None;
        self.free_msgs.push(msg);
    }

    /// Timing begins: no message launched before it counts as received.
    pub(super) fn uncount_messages(&mut self) {
        for rec in self.msgs.iter_mut().flatten() {
            rec.counted = false;
        }
    }

    /// `Event::CrossGen`: I/O pair `pair`'s next cross-traffic message is due (until every
    /// processor has finished).
    pub(super) fn cross_gen(&mut self, pair: usize) {
        if self.procs_done < self.procs.len() {
            let src = self.cross_pairs[pair].0;
            if self.net.output_has_room(src, 1) {
                self.cross_send(pair);
            } else {
                // FIFO: the I/O node's send waits for room (`cross_space`).
                self.cross_waiting[pair] = true;
            }
        }
    }

    fn cross_send(&mut self, pair: usize) {
        let (now, (src, dst)) = (self.now, self.cross_pairs[pair]);
        self.launch(src, dst, Target::Sink, Vec::new(), Vec::new(), now);
        self.push(now + self.cross_interval_ps, Priority::Network, Event::CrossGen { pair: pair as u32 });
    }

    /// I/O endpoint `ep`'s NI output queue has room: its waiting cross-traffic send goes now.
    pub(super) fn cross_space(&mut self, ep: usize) {
        if let Some(pair) = (0..self.cross_pairs.len()).find(|&i| self.cross_waiting[i] && self.cross_pairs[i].0 == ep)
        {
            self.cross_waiting[pair] = false;
            if self.procs_done < self.procs.len() {
                self.cross_send(pair);
            }
        }
    }
}
