//! The network: links, packets, NI queues and contention.
//!
//! ## Model (virtual cut-through with one packet buffer per link)
//! A packet moves link by link. To *acquire* a link at time `t` the link must be
//! - done serializing its previous packet (`busy_until <= t`),
//! - empty downstream (`occupied == false`: the previous packet has moved on), and,
//!   for an ejection link, the destination NI input queue must have a free slot.
//!
//! On acquisition the link serializes the packet for `bytes * ps_per_byte` and the header
//! reaches the next router after the link's latency (cut-through: serialization is paid once
//! on an uncontended path, not per hop). The packet releases the link it came from when it
//! acquires the next one, so a packet that cannot move on keeps its link occupied: when a
//! receiver stops draining its NI input queue, packets back up link by link toward their
//! senders, delaying every flow that shares those links, and finally the senders' NI output
//! queues fill and the senders stall. Waiting packets queue FIFO per link; with
//! `cross_traffic.arbitration = "priority"` cross-traffic goes ahead of application packets
//! (see `request`).
//!
//! Work per packet is one event per link (O(hops)), never an event per flit.
//!
//! Torus and ring links have two virtual channels (dateline routing). The network schedules
//! its own `NetEvent`s (Hop, Grant, Deliver, Inject, OverflowCheck) on any queue whose event
//! type wraps them, and reports to the engine through `NetNotice`s (output space, delivered
//! packets, overflow); it never calls the engine. It counts the cross-traffic bytes leaving the
//! I/O nodes' NIs (`cross_bytes`, reset with the link counters at `begin_timing`), from which
//! the engine reports `counters.cross_traffic_bytes_per_cycle`, the rate achieved in the timed
//! region (only with cross-traffic on).
//!
//! ## Cross-traffic arbitration
//! Cross-traffic waits for links in arrival order with the application's packets
//! (`cross_traffic.arbitration = "fifo"`, every preset's: the study's I/O nodes were real nodes
//! sending real packets, 000 §5.2), so it achieves at most its configured rate: an application
//! that saturates the bisection wins most arbitrations on the eight routers a cross-traffic
//! packet crosses (the parking-lot effect: beside `bisection-bw` on alewife it achieved 1.2 to
//! 1.6 bytes/cycle of 4 to 13.5 configured), and an I/O node's NI output queue (the machine's
//! size) fills and its sender waits. `priority` (the earlier behaviour, kept as an option) puts
//! cross-traffic ahead of every waiting application packet, with unbounded I/O output queues,
//! so it takes exactly its configured rate (`commlab-apps/tests/micro.rs`).
//!
//! ## Events per packet, and hops run ahead
//! Per packet: one event per router, plus Inject when its data is not ready yet, Deliver, and
//! Grants under contention: about 13.9 queued events per remote miss on `mem-misses-32` under
//! `hop` (per miss: 5.9 Hop, 2.0 Inject, 2.0 Deliver, 0.4 Grant, 0.8 local protocol
//! deliveries, 2.8 processor wake-ups). `network.model` chooses how they are driven: `hop`
//! (the reference) queues every one; `fold` (default) gives identical results
//! (`commlab-apps/tests/net_models.rs`, every app and variant on four shapes) with fewer: under
//! the key tie order, a packet that takes a router link runs its next hop at once, as it would
//! at its time, when nothing due in between can touch the two links or the NI that hop touches
//! (`Network::hop_ahead` gives the argument), and so on hop after hop.
//!
//! What that saves is host work, not only events: `bench --only em3d-sm` executes 27.65 G
//! instructions under `fold` against 28.34 G under `hop` (cachegrind), with 15% fewer events.
//! Count speed in instructions (`bench --instructions`) or wall time, not in `RunStats::events`:
//! the queue once also folded events (`queue/mod.rs`, "No held events"), which took 5% off the
//! events and added 4% to the instructions.
//!
//! Reserving a packet's whole path in one event would need a lookahead that bounds when any
//! other packet can reach each link of the path (per-router earliest activity plus distance);
//! the run-ahead's test is the one-router-wide case of it: no Hop queued at either end of the
//! link and nothing at all due before the hop's predecessor (so its chains stop where the
//! network is busy). `simulation.tie_order = "key"` breaks ties by a key that does not depend
//! on when an event was created ([`NetEvent::tie_key`]: kind, then the packet's serial,
//! [`Packet::serial`], or the link or endpoint), which is what lets an event queued early keep
//! the reference's place; it is the default (`creation`, the insertion sequence, was before).
//!
//! `overflow.rs` watches the processors' NI input queues for the network overflow trap.

mod overflow;

use crate::machine::{CrossArbitration, MachineConfig};
use crate::queue::{identity, tie, EventQueue, Liveness, Priority, TieOrder, AHEAD_LINES};
use crate::stats::trace::PacketLog;
use crate::topology::{LinkId, LinkKind, Topology};
use overflow::Watch;
use std::collections::VecDeque;

/// Virtual channels per link. Only torus and ring links use the second (dateline routing);
/// both share the link's bandwidth but have their own one-packet buffer.
const VCS: usize = 2;
const NO_DIM: u8 = u8::MAX;

/// Index of a packet in the packet slab.
pub(crate) type PacketId = u32;

/// The network's own events; the engine's event type wraps them (`From<NetEvent>`) and hands
/// them back to [`Network::handle`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum NetEvent {
    /// A packet's header reached router `router`.
    Hop { pkt: PacketId, router: u32, background: bool },
    /// `link` may be given to its first eligible waiter.
    Grant { link: LinkId, background: bool },
    /// A packet's tail reached its destination NI.
    Deliver { pkt: PacketId, background: bool },
    /// The head packet of endpoint `ep`'s output queue has its data ready.
    Inject { ep: u32, background: bool },
    /// Processor `ep`'s NI may have been blocked for the overflow timeout (see `overflow.rs`).
    OverflowCheck { ep: u32 },
}

impl Liveness for NetEvent {
    /// Cross-traffic packets do not keep a run alive.
    fn background(&self) -> bool {
        match *self {
            NetEvent::Hop { background, .. }
            | NetEvent::Grant { background, .. }
            | NetEvent::Deliver { background, .. }
            | NetEvent::Inject { background, .. } => background,
            NetEvent::OverflowCheck { .. } => false,
        }
    }
}

/// An event queue the network can schedule its events on. `tie` is the event's tie key
/// ([`NetEvent::tie_key`]), used only when the queue is [`NetQueue::keyed`].
pub(crate) trait NetQueue {
    fn keyed(&self) -> bool;
    fn push_net(&mut self, at: u64, tie: u64, ev: NetEvent);
    /// On fixed-latency delay line `line` (see [`EventQueue::push_line`]).
    fn push_net_line(&mut self, line: usize, at: u64, tie: u64, ev: NetEvent);
    /// The time of the earliest pending event of any kind (`u64::MAX` when none is).
    fn next_time(&self) -> u64;
}

impl<E: From<NetEvent> + Liveness> NetQueue for EventQueue<E> {
    #[inline]
    fn keyed(&self) -> bool {
        EventQueue::keyed(self)
    }
    #[inline]
    fn push_net(&mut self, at: u64, tie: u64, ev: NetEvent) {
        self.push(at, Priority::Network, tie, E::from(ev));
    }
    #[inline]
    fn push_net_line(&mut self, line: usize, at: u64, tie: u64, ev: NetEvent) {
        self.push_line(line, at, Priority::Network, tie, E::from(ev));
    }
    #[inline]
    fn next_time(&self) -> u64 {
        EventQueue::next_time(self)
    }
}

impl NetEvent {
    /// The event's tie key under `simulation.tie_order = "key"` (see `queue/mod.rs`): its kind's
    /// rank, then the identity of what it concerns, with `serial` giving a packet's
    /// [`Packet::serial`]. Ranks (ties are within one priority; every network event has
    /// `Priority::Network`): a delivery (frees an NI slot and the ejection link) before a grant
    /// (a packet already waiting gets its link) before a hop (a packet arriving now requests
    /// one) before an injection before an overflow check. Equal keys mean identical events: a
    /// packet has at most one Hop or Deliver pending (the next is scheduled when it acquires a
    /// link), and Grant, Inject and OverflowCheck carry every field in the key.
    #[inline]
    pub(crate) fn tie_key(&self, serial: impl Fn(PacketId) -> u64) -> u64 {
        match *self {
            NetEvent::Deliver { pkt, .. } => tie(0, serial(pkt)),
            NetEvent::Grant { link, background } => tie(1, (link as u64) << 1 | background as u64),
            NetEvent::Hop { pkt, .. } => tie(2, serial(pkt)),
            NetEvent::Inject { ep, background } => tie(3, (ep as u64) << 1 | background as u64),
            NetEvent::OverflowCheck { ep } => tie(4, ep as u64),
        }
    }
}

pub(crate) struct Packet {
    /// The message this packet belongs to (index in the engine's message slab).
    pub msg: u32,
    pub dst: u32,
    /// Bytes on the wire, header included.
    pub bytes: u32,
    /// Whether this is the message's last packet (it keeps its NI slot until the handler ends).
    pub last: bool,
    /// Cross-traffic: never delays the end of a run and never counts toward deadlock detection.
    pub background: bool,
    /// Earliest time the sender's DMA engine has the packet's data ready.
    pub ready_ps: u64,
    /// The link the packet currently occupies, and the virtual channel it holds there.
    pub link: Option<LinkId>,
    pub vc: u8,
    /// Latency of the injection and ejection links for this packet instead of the NI's
    /// (one-sided requests go through their own interface, e.g. the T3E's E-registers).
    pub ni_latency_ps: Option<u64>,
    /// The packet's stable identity (its source endpoint and how many packets that endpoint
    /// sent before it, `queue::identity`), set by [`Network::send_packet`]: its events' tie key.
    pub serial: u64,
}

struct LinkState {
    kind: LinkKind,
    /// Router the link leaves (router and ejection links).
    from_router: u32,
    /// Router the link leads to (injection and router links).
    to_router: u32,
    /// Endpoint of an injection or ejection link.
    endpoint: u32,
    /// Torus/ring/hypercube dimension of a router link (`NO_DIM` otherwise) and whether it is
    /// the dimension's wraparound link.
    dim: u8,
    wrap: bool,
    busy_until: u64,
    /// Per virtual channel: a packet sits in the link's downstream buffer.
    occupied: [bool; VCS],
    grant_pending: bool,
    latency_ps: u64,
    /// Event-queue delay line for this link's fixed latency (router hop or NI link).
    line: u8,
    /// Packets waiting for the link, with the virtual channel each needs, in arrival order.
    waiters: VecDeque<(PacketId, u8)>,
    /// Serialization time and bytes accumulated since statistics were last reset.
    busy_ps: u64,
    bytes: u64,
}

/// Per-endpoint network interface.
struct Ni {
    /// Packets waiting to be injected, in order; the head is the one requesting the link.
    out: VecDeque<PacketId>,
    out_capacity: u32,
    /// Input slots in use (packets delivered, not yet consumed).
    in_used: u32,
    in_capacity: u32,
    /// Whether an `Inject` event is already scheduled for the head packet.
    inject_pending: bool,
    /// Packets this endpoint has sent (numbers their serials).
    sent_packets: u64,
    /// The overflow trap's view of this NI (only watched when the trap is on).
    watch: Watch,
}

/// What the network tells the engine after an event.
pub(crate) enum NetNotice {
    /// Endpoint's NI output queue has room again.
    OutputSpace(u32),
    /// A packet was delivered into its destination NI.
    Delivered { packet: PacketId, msg: u32, last: bool, background: bool },
    /// Processor `ep`'s NI has been blocked for the overflow timeout: its processor traps.
    Overflow(u32),
}

/// Packet sizes whose serialization time `Network` keeps in a table (larger ones are computed).
const SERIALIZATION_TABLE_BYTES: u64 = 1024;

pub(crate) struct Network {
    pub topo: Topology,
    ps_per_byte: f64,
    /// `serialization_ps` of every size below [`SERIALIZATION_TABLE_BYTES`], computed once:
    /// a packet takes several links, and the rounding is most of the arithmetic of a hop.
    serialization_by_size: Vec<u64>,
    links: Vec<LinkState>,
    nis: Vec<Ni>,
    packets: Vec<Packet>,
    free_packets: Vec<PacketId>,
    pub notices: Vec<NetNotice>,
    /// Application (non-background) packets created and not yet delivered.
    pub app_packets_in_flight: u64,
    /// Cross-traffic goes ahead of application packets waiting for a link.
    cross_priority: bool,
    /// Bytes of cross-traffic that left the I/O nodes' NIs since the last statistics reset.
    pub cross_bytes: u64,
    /// `messaging.overflow_timeout_cycles` in picoseconds (0: no overflow trap, nothing watched).
    overflow_ps: u64,
    /// Packets on links, when the run is traced (`stats/trace.rs`).
    pub packet_log: Option<Box<PacketLog>>,
    /// Whether a hop may run ahead of its time (see `hop_ahead`), up to the run's time limit.
    ahead: bool,
    max_time_ps: u64,
    /// Hop events queued per router (counted only when `ahead`).
    hops_queued: Vec<u32>,
    /// Acquisitions made by hops run ahead, (time, link, bytes), kept until their time has
    /// passed: a statistics reset before that time must keep them (`reset_link_stats`).
    ahead_log: VecDeque<(u64, LinkId, u32)>,
}

impl Network {
    /// `ev`'s tie key if the queue orders ties by key (0 otherwise: not computed).
    #[inline]
    fn tie(&self, q: &impl NetQueue, ev: &NetEvent) -> u64 {
        if q.keyed() {
            ev.tie_key(|p| self.packets[p as usize].serial)
        } else {
            0
        }
    }

    /// Schedule one of the network's events (off the delay lines).
    #[inline]
    fn push(&self, q: &mut impl NetQueue, at: u64, ev: NetEvent) {
        q.push_net(at, self.tie(q, &ev), ev);
    }

    /// Whether processor `ep`'s NI is blocked: input queue full and a packet waiting to enter
    /// (the overflow trap's condition, `overflow.rs`).
    fn blocked(&self, ep: usize) -> bool {
        let ni = &self.nis[ep];
        ni.in_used >= ni.in_capacity && !self.links[self.topo.ejection_link(ep) as usize].waiters.is_empty()
    }

    /// Look at `ep`'s NI again after its input queue or its ejection link's waiters changed
    /// (only called when the trap is on).
    fn watch(&mut self, q: &mut impl NetQueue, now: u64, ep: usize) {
        if ep >= self.topo.nprocs() {
            return; // I/O nodes never fill
        }
        let (next, check_at) = self.nis[ep].watch.look(self.blocked(ep), now, self.overflow_ps);
        if let Some(at) = check_at {
            self.push(q, at, NetEvent::OverflowCheck { ep: ep as u32 });
        }
        self.nis[ep].watch = next;
    }

    /// `NetEvent::OverflowCheck`: report the trap if `ep` has been blocked for the timeout.
    fn on_overflow_check(&mut self, now: u64, ep: usize) {
        if let Some(trapped) = self.nis[ep].watch.check(now, self.overflow_ps) {
            self.nis[ep].watch = trapped;
            self.notices.push(NetNotice::Overflow(ep as u32));
        }
    }

    /// The overflow trap of processor `ep` has ended: watch its NI again from now.
    pub fn overflow_rearm(&mut self, q: &mut impl NetQueue, now: u64, ep: usize) {
        self.nis[ep].watch = Watch::Clear;
        self.watch(q, now, ep);
    }
    pub fn new(cfg: &MachineConfig) -> Self {
        let topo = cfg.topology.clone();
        let (ps_per_byte, router_ps, ni_ps) = (cfg.link_ps_per_byte, cfg.router_latency_ps, cfg.ni_latency_ps);
        let (in_cap, out_cap) = (cfg.ni_input_queue_packets, cfg.ni_output_queue_packets);
        let cross_priority = cfg.cross_traffic_arbitration == CrossArbitration::Priority;
        let overflow_ps = cfg.msg.overflow.map_or(0, |o| o.timeout_ps);
        let mut endpoint_of = vec![u32::MAX; topo.nlinks()];
        for ep in 0..topo.nendpoints() {
            endpoint_of[topo.injection_link(ep) as usize] = ep as u32;
            endpoint_of[topo.ejection_link(ep) as usize] = ep as u32;
        }
        let links = (0..topo.nlinks())
            .map(|l| {
                let info = topo.link(l as LinkId);
                let kind = info.kind;
                let (dim, wrap) = topo.grid_link_dim(l as LinkId).map_or((NO_DIM, false), |(d, w)| (d as u8, w));
                LinkState {
                    kind,
                    from_router: info.from_router.unwrap_or(u32::MAX),
                    dim,
                    wrap,
                    to_router: info.to_router.unwrap_or(u32::MAX),
                    endpoint: endpoint_of[l],
                    busy_until: 0,
                    occupied: [false; VCS],
                    grant_pending: false,
                    latency_ps: if kind == LinkKind::Router { router_ps } else { ni_ps },
                    line: if kind == LinkKind::Router { 0 } else { 1 },
                    waiters: VecDeque::new(),
                    busy_ps: 0,
                    bytes: 0,
                }
            })
            .collect();
        let nis = (0..topo.nendpoints())
            .map(|ep| {
                let io = ep >= topo.nprocs();
                Ni {
                    out: VecDeque::new(),
                    // I/O nodes are traffic sinks that never fill; as sources, with FIFO
                    // arbitration they have the machine's output queue (their sender waits while
                    // it is full), with priority they never stall.
                    out_capacity: if io && cross_priority { u32::MAX } else { out_cap },
                    in_used: 0,
                    in_capacity: if io { u32::MAX } else { in_cap },
                    inject_pending: false,
                    sent_packets: 0,
                    watch: Watch::Clear,
                }
            })
            .collect();
        // A hop runs ahead only where it is exact (see `hop_ahead`): under the key tie order
        // (under `creation` the events it queues early would take earlier sequence numbers), and
        // where no packet can enter the network and reach a router sooner than a router hop.
        let shortest_injection = cfg.remote.and_then(|r| r.ni_latency_ps).map_or(ni_ps, |own| own.min(ni_ps));
        let ahead = cfg.fold_events && cfg.tie_order == TieOrder::Key && shortest_injection >= router_ps;
        let hops_queued = vec![0; if ahead { topo.nrouters() } else { 0 }];
        Network {
            topo,
            ps_per_byte,
            serialization_by_size: (0..SERIALIZATION_TABLE_BYTES)
                .map(|bytes| crate::machine::round_to_u64(bytes as f64 * ps_per_byte))
                .collect(),
            links,
            nis,
            packets: Vec::new(),
            free_packets: Vec::new(),
            notices: Vec::new(),
            app_packets_in_flight: 0,
            cross_priority,
            cross_bytes: 0,
            overflow_ps,
            packet_log: None,
            ahead,
            max_time_ps: cfg.max_time_ps,
            hops_queued,
            ahead_log: VecDeque::new(),
        }
    }

    /// The run records links as packets cross them (interval samples, traces): every hop runs
    /// at its own time.
    pub fn keep_every_hop_in_time(&mut self) {
        self.ahead = false;
    }

    #[inline]
    pub fn serialization_ps(&self, bytes: u64) -> u64 {
        match self.serialization_by_size.get(bytes as usize) {
            Some(&ps) => ps,
            None => crate::machine::round_to_u64(bytes as f64 * self.ps_per_byte),
        }
    }

    /// Whether `npackets` more fit in the output queue (a message always fits an empty queue).
    pub fn output_has_room(&self, ep: usize, npackets: u32) -> bool {
        let ni = &self.nis[ep];
        ni.out.is_empty() || ni.out.len() as u32 + npackets <= ni.out_capacity
    }

    pub fn packet(&self, p: PacketId) -> &Packet {
        &self.packets[p as usize]
    }

    /// Queue a packet for injection at endpoint `src` at time `now`.
    pub fn send_packet(&mut self, q: &mut impl NetQueue, now: u64, src: usize, mut pkt: Packet) -> PacketId {
        let ni = &mut self.nis[src];
        pkt.serial = identity(src, ni.sent_packets);
        ni.sent_packets += 1;
        if !pkt.background {
            self.app_packets_in_flight += 1;
        }
        let id = match self.free_packets.pop() {
            Some(id) => {
                self.packets[id as usize] = pkt;
                id
            }
            None => {
                self.packets.push(pkt);
                (self.packets.len() - 1) as PacketId
            }
        };
        if let Some(log) = self.packet_log.as_mut() {
            log.sent(id);
        }
        let ni = &mut self.nis[src];
        ni.out.push_back(id);
        if ni.out.len() == 1 {
            self.request_injection(q, now, src);
        }
        id
    }

    /// The head of `src`'s output queue asks for the injection link (once its data is ready).
    fn request_injection(&mut self, q: &mut impl NetQueue, now: u64, src: usize) {
        let Some(&head) = self.nis[src].out.front() else { return };
        let ready = self.packets[head as usize].ready_ps;
        if ready > now {
            if !self.nis[src].inject_pending {
                self.nis[src].inject_pending = true;
                let background = self.packets[head as usize].background;
                self.push(q, ready, NetEvent::Inject { ep: src as u32, background });
            }
            return;
        }
        let link = self.topo.injection_link(src);
        self.request(q, now, link, head);
    }

    /// Perform one of the network's events.
    pub fn handle(&mut self, q: &mut impl NetQueue, now: u64, ev: NetEvent) {
        match ev {
            NetEvent::Hop { pkt, router, .. } => self.on_hop(q, now, pkt, router),
            NetEvent::Grant { link, .. } => self.on_grant(q, now, link),
            NetEvent::Deliver { pkt, .. } => self.on_deliver(q, now, pkt),
            NetEvent::Inject { ep, .. } => self.on_inject(q, now, ep as usize),
            NetEvent::OverflowCheck { ep } => self.on_overflow_check(now, ep as usize),
        }
    }

    /// `NetEvent::Inject`: the head packet's data is ready.
    fn on_inject(&mut self, q: &mut impl NetQueue, now: u64, ep: usize) {
        self.nis[ep].inject_pending = false;
        self.request_injection(q, now, ep);
    }

    /// `NetEvent::Hop`: a packet's header reached router `router`.
    fn on_hop(&mut self, q: &mut impl NetQueue, now: u64, pkt: PacketId, router: u32) {
        if self.ahead {
            self.hops_queued[router as usize] -= 1;
        }
        let dst = self.packets[pkt as usize].dst as usize;
        let link = self.topo.next_link(router, dst);
        self.request(q, now, link, pkt);
    }

    /// Whether the link's bandwidth is free at `now` and, for an ejection link, its NI has room.
    #[inline]
    fn link_free(&self, link: LinkId, now: u64) -> bool {
        let l = &self.links[link as usize];
        if l.busy_until > now {
            return false;
        }
        match l.kind {
            LinkKind::Ejection => {
                let ni = &self.nis[l.endpoint as usize];
                ni.in_used < ni.in_capacity
            }
            _ => true,
        }
    }

    /// The virtual channel `pkt` needs on `link`: the second one from a dimension's
    /// wraparound link until the packet leaves that dimension (dateline routing).
    #[inline]
    fn vc_for(&self, pkt: PacketId, link: LinkId) -> u8 {
        let l = &self.links[link as usize];
        if l.dim == NO_DIM {
            return 0;
        }
        if l.wrap {
            return 1;
        }
        let p = &self.packets[pkt as usize];
        match p.link {
            Some(prev) if self.links[prev as usize].dim == l.dim => p.vc,
            _ => 0,
        }
    }

    fn request(&mut self, q: &mut impl NetQueue, now: u64, link: LinkId, pkt: PacketId) {
        let vc = self.vc_for(pkt, link);
        let l = &self.links[link as usize];
        if l.waiters.is_empty() && !l.occupied[vc as usize] && self.link_free(link, now) {
            self.acquire(q, now, link, pkt, vc, 0);
            return;
        }
        if self.cross_priority && self.packets[pkt as usize].background {
            // `priority`: cross-traffic goes ahead of application packets (behind earlier
            // cross-traffic), so it takes exactly its configured rate wherever it goes: the
            // bandwidth left to the application is the link bandwidth minus that rate. (With
            // FIFO, the study's, far I/O nodes lose arbitrations to every sender on the way, the
            // parking-lot effect, and get less: counted by `cross_bytes`.)
            let packets = &self.packets;
            let waiters = &mut self.links[link as usize].waiters;
            let at = waiters.iter().position(|&(w, _)| !packets[w as usize].background).unwrap_or(waiters.len());
            waiters.insert(at, (pkt, vc));
        } else {
            self.links[link as usize].waiters.push_back((pkt, vc));
        }
        self.schedule_grant(q, now, link);
        if self.overflow_ps > 0 && self.links[link as usize].kind == LinkKind::Ejection {
            let ep = self.links[link as usize].endpoint as usize;
            self.watch(q, now, ep);
        }
    }

    /// The first waiter whose virtual channel is free on `link`.
    fn first_eligible(&self, link: LinkId) -> Option<usize> {
        let l = &self.links[link as usize];
        if l.occupied.iter().all(|&o| o) {
            return None; // (without looking through a long queue at a hot spot)
        }
        l.waiters.iter().position(|&(_, vc)| !l.occupied[vc as usize])
    }

    /// Make sure a `Grant` event will fire when `link` can next be given to a waiter. When no
    /// waiter's channel is free (or the NI is full) nothing is scheduled: a release will do it.
    fn schedule_grant(&mut self, q: &mut impl NetQueue, now: u64, link: LinkId) {
        let l = &self.links[link as usize];
        if l.grant_pending || l.waiters.is_empty() {
            return;
        }
        // A full NI first: it is cheaper to look at than the waiters.
        if l.kind == LinkKind::Ejection {
            let ni = &self.nis[l.endpoint as usize];
            if ni.in_used >= ni.in_capacity {
                return;
            }
        }
        let Some(first) = self.first_eligible(link) else { return };
        let at = l.busy_until.max(now);
        let background = self.packets[l.waiters[first].0 as usize].background;
        self.links[link as usize].grant_pending = true;
        self.push(q, at, NetEvent::Grant { link, background });
    }

    /// `NetEvent::Grant`: give `link` to its first waiter if it is available.
    fn on_grant(&mut self, q: &mut impl NetQueue, now: u64, link: LinkId) {
        self.links[link as usize].grant_pending = false;
        if self.link_free(link, now) {
            if let Some(i) = self.first_eligible(link) {
                let (pkt, vc) = self.links[link as usize].waiters.remove(i).expect("eligible waiter");
                self.acquire(q, now, link, pkt, vc, 0);
            }
        }
        self.schedule_grant(q, now, link);
    }

    /// `pkt` takes `link` at `now`. `ahead` > 0: this is the packet's `ahead`th hop run ahead of
    /// its time by an acquisition at an earlier time (`hop_ahead`): the Hop it queues goes on
    /// that depth's own delay line (a line's times must not decrease: the current time plus
    /// `1 + ahead` router hops) or, beyond the lines, on the heap.
    fn acquire(&mut self, q: &mut impl NetQueue, now: u64, link: LinkId, pkt: PacketId, vc: u8, ahead: usize) {
        let bytes = self.packets[pkt as usize].bytes as u64;
        let ser = self.serialization_ps(bytes);
        let (kind, to_router, endpoint, latency, line) = {
            let l = &mut self.links[link as usize];
            debug_assert!(!l.occupied[vc as usize] && l.busy_until <= now, "link {link} acquired while in use");
            l.busy_until = now + ser;
            l.occupied[vc as usize] = true;
            l.busy_ps += ser;
            l.bytes += bytes;
            (l.kind, l.to_router, l.endpoint as usize, l.latency_ps, l.line as usize)
        };
        if ahead > 0 {
            self.ahead_log.push_back((now, link, bytes as u32));
        }
        if let Some(log) = self.packet_log.as_mut() {
            log.on_link(link, pkt, now, now + ser);
        }
        let p = &mut self.packets[pkt as usize];
        let prev = p.link.replace(link);
        let prev_vc = std::mem::replace(&mut p.vc, vc);
        match prev {
            Some(prev) => self.release(q, now, prev, prev_vc),
            None => {
                // Leaving the output queue of the source endpoint.
                let src = endpoint;
                if self.packets[pkt as usize].background {
                    self.cross_bytes += bytes;
                }
                let ni = &mut self.nis[src];
                let head = ni.out.pop_front();
                debug_assert_eq!(head, Some(pkt));
                self.notices.push(NetNotice::OutputSpace(src as u32));
                self.request_injection(q, now, src);
            }
        }
        let background = self.packets[pkt as usize].background;
        let own_ni = self.packets[pkt as usize].ni_latency_ps.filter(|_| kind != LinkKind::Router);
        let latency = own_ni.unwrap_or(latency);
        if kind == LinkKind::Ejection {
            self.nis[endpoint].in_used += 1;
            self.push(q, now + latency + ser, NetEvent::Deliver { pkt, background });
            if self.overflow_ps > 0 {
                self.watch(q, now, endpoint);
            }
        } else {
            let at = now + latency;
            if kind == LinkKind::Router {
                if let Some((next, next_vc)) = self.hop_ahead(q, now, link, pkt, at) {
                    if ahead == 0 {
                        // `now` is the current time: the log's entries before it have passed.
                        while self.ahead_log.front().is_some_and(|&(t, _, _)| t <= now) {
                            self.ahead_log.pop_front();
                        }
                    }
                    self.acquire(q, at, next, pkt, next_vc, ahead + 1);
                    return;
                }
            }
            if self.ahead {
                self.hops_queued[to_router as usize] += 1;
            }
            let ev = NetEvent::Hop { pkt, router: to_router, background };
            if own_ni.is_some() || ahead > AHEAD_LINES {
                // Not the link's fixed latency, or too far ahead: not on a delay line.
                self.push(q, at, ev);
            } else {
                let line = if ahead == 0 { line } else { 1 + ahead };
                q.push_net_line(line, at, self.tie(q, &ev), ev);
            }
        }
    }

    /// Whether `pkt`, which takes router link `link` at `now` and reaches its next router at
    /// `at`, can take its next link at once instead of queueing the `Hop`: the link and its
    /// virtual channel if so. `now` is the current time, or the time of a hop already run ahead
    /// (a packet runs ahead hop after hop while each passes).
    ///
    /// The hop is handled before its time as it would be at `at`. That is exact when nothing
    /// handled in between (every event with a key from the current event's to the hop's) reads
    /// or writes what the hop does: the link it leaves (`link`, from router r to r2), the link
    /// it takes next (from r2) and, for an ejection link, its NI. Only a packet requesting one
    /// of the two links (a `Hop` at r or r2) or a grant or release on them touches them, so it
    /// is enough that
    /// - no Hop is queued at r or r2, and none can be made that is due before this one: a Hop
    ///   is due at least a router hop after it is made (a packet's injection is no shorter,
    ///   checked at construction), so it would have to be made by `now`, by an event pending at
    ///   a time up to `now`: there is none (every future event descends from a pending one);
    /// - `link` has no waiter, no pending grant and no other packet on its other channel;
    /// - the next link has no waiter, no pending grant, no packet on it, is free at `at` and,
    ///   for an ejection link, has an NI slot (slots only free up in between).
    ///
    /// Its `OverflowCheck` watch is then unchanged (nothing waits for the link), a statistics
    /// reset in between keeps the acquisition (`ahead_log`), and no hop runs ahead past the
    /// time limit (so a run stops at the event the reference stops at). Only application
    /// packets run ahead: the event a packet's last hop run ahead queues keeps the run alive,
    /// so the run cannot end before the hops it ran ahead (cross-traffic's events do not, and
    /// its links' statistics would count acquisitions after the end). Interval samples and
    /// traces read links in between: `keep_every_hop_in_time` turns this off for such runs.
    fn hop_ahead(&self, q: &impl NetQueue, now: u64, link: LinkId, pkt: PacketId, at: u64) -> Option<(LinkId, u8)> {
        // The queue's and this router's state first: the next link's is likely not in the host's
        // cache (at 16,384 processors, reading it first made a failed test cost a miss twice).
        if !self.ahead || at > self.max_time_ps || q.next_time() <= now || self.packets[pkt as usize].background {
            return None;
        }
        let l = &self.links[link as usize];
        let (r, r2) = (l.from_router as usize, l.to_router);
        if self.hops_queued[r] != 0 || self.hops_queued[r2 as usize] != 0 {
            return None;
        }
        if !l.waiters.is_empty() || l.grant_pending || l.occupied.iter().filter(|&&o| o).count() != 1 {
            return None;
        }
        let next = self.topo.next_link(r2, self.packets[pkt as usize].dst as usize);
        let n = &self.links[next as usize];
        if !n.waiters.is_empty() || n.grant_pending || n.occupied.iter().any(|&o| o) || !self.link_free(next, at) {
            return None;
        }
        Some((next, self.vc_for(pkt, next)))
    }

    fn release(&mut self, q: &mut impl NetQueue, now: u64, link: LinkId, vc: u8) {
        self.links[link as usize].occupied[vc as usize] = false;
        self.schedule_grant(q, now, link);
    }

    /// `NetEvent::Deliver`: the packet's tail reached its NI. Non-last packets are drained by the
    /// receiving DMA engine at once; the last one holds its slot until `consume`.
    fn on_deliver(&mut self, q: &mut impl NetQueue, now: u64, pkt: PacketId) {
        let p = &self.packets[pkt as usize];
        let (msg, last, background, dst, vc) = (p.msg, p.last, p.background, p.dst as usize, p.vc);
        let link = p.link.expect("delivered packets hold their ejection link");
        self.release(q, now, link, vc);
        if !background {
            self.app_packets_in_flight -= 1;
        }
        if !last || background {
            self.consume(q, now, dst);
        }
        self.notices.push(NetNotice::Delivered { packet: pkt, msg, last, background });
        self.free_packets.push(pkt);
    }

    /// Free one NI input slot at `ep` (a handler finished with its message).
    pub fn consume(&mut self, q: &mut impl NetQueue, now: u64, ep: usize) {
        let ni = &mut self.nis[ep];
        debug_assert!(ni.in_used > 0);
        ni.in_used -= 1;
        let ej = self.topo.ejection_link(ep);
        self.schedule_grant(q, now, ej);
        if self.overflow_ps > 0 {
            self.watch(q, now, ep);
        }
    }

    /// Zero the per-link busy counters and the cross-traffic sent (start of the timed region).
    /// A link taken by a hop run ahead to a time after `now` keeps that acquisition.
    pub fn reset_link_stats(&mut self, now: u64) {
        for l in &mut self.links {
            l.busy_ps = 0;
            l.bytes = 0;
        }
        for &(at, link, bytes) in &self.ahead_log {
            if at > now {
                let ser = self.serialization_ps(bytes as u64);
                let l = &mut self.links[link as usize];
                l.busy_ps += ser;
                l.bytes += bytes as u64;
            }
        }
        self.cross_bytes = 0;
    }

    /// Bytes per link since the last reset.
    /// Each NI's queue depths now: (packets waiting to be injected, input slots in use).
    pub fn ni_depths(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.nis.iter().map(|ni| (ni.out.len() as u32, ni.in_used))
    }

    pub fn link_bytes(&self) -> impl Iterator<Item = u64> + '_ {
        self.links.iter().map(|l| l.bytes)
    }

    /// Busy picoseconds per link since the last reset.
    pub fn link_busy_ps(&self) -> impl Iterator<Item = (LinkId, u64)> + '_ {
        self.links.iter().enumerate().map(|(i, l)| (i as LinkId, l.busy_ps))
    }

    /// Packets waiting in the network (for deadlock reports).
    pub fn stuck_summary(&self) -> String {
        let waiting: usize = self.links.iter().map(|l| l.waiters.len()).sum();
        let full: Vec<usize> =
            (0..self.topo.nprocs()).filter(|&ep| self.nis[ep].in_used >= self.nis[ep].in_capacity).collect();
        format!("{waiting} packets waiting for links; NI input queues full at processors {full:?}")
    }
}
