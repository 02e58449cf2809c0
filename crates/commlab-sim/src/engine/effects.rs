//! How the engine carries out what its components report: the memory controller's effects
//! (protocol messages to send or deliver, processors to resume) and the network's notices
//! (space in an NI output queue, delivered packets). Components below the engine never touch
//! the event queue for another component or a processor themselves.

use super::error::SimError;
use super::state::{Event, MainState, Wait};
use super::world::World;
use crate::mem::protocol::ProtoKind;
use crate::mem::{MemEffect, Memory};
use crate::msg::{Arrival, MessageRecord, Target};
use crate::net::{NetNotice, Packet};
use crate::queue::Priority;
use commlab_api::TrafficClass;
use std::sync::Arc;

impl<S> World<S> {
    /// Call the memory controller at the current time, then carry out its effects in order.
    pub(crate) fn mem_call<R>(&mut self, f: impl FnOnce(&mut Memory) -> R) -> R {
        self.mem.set_now(self.now);
        let r = f(&mut self.mem);
        self.apply_mem_effects();
        r
    }

    /// `p` performed its access on its pinned line; returns the processor time the software
    /// handlers of requests deferred on it take (see [`Memory::unpin`]).
    pub(crate) fn unpin(&mut self, p: usize) -> u64 {
        self.mem_call(|mem| mem.unpin(p))
    }

    /// A protocol message (record `msg`) reaches the memory controller of `node`.
    pub(crate) fn mem_receive(&mut self, node: usize, msg: u32) {
        let rec = self.take_msg(msg);
        let Target::Protocol { kind, line, requester } = rec.target else { unreachable!("not a protocol message") };
        self.mem_call(|mem| mem.receive(node, rec.src as usize, kind, line, requester as usize));
    }

    /// Carry out the memory controller's effects, in order (most calls leave none).
    #[inline]
    pub(super) fn apply_mem_effects(&mut self) {
        if self.mem.has_effects() {
            self.carry_out_mem_effects();
        }
    }

    fn carry_out_mem_effects(&mut self) {
        let mut effects = self.mem.take_outbox();
        for effect in effects.drain(..) {
            match effect {
                MemEffect::Send { from, to, kind, line, requester, at } => {
                    self.launch_protocol(from, to, kind, line, requester, at)
                }
                MemEffect::Deliver { node, kind, line, requester, at } => {
                    let msg = self.alloc_msg(MessageRecord::new(
                        node as u32,
                        Target::Protocol { kind, line, requester: requester as u32 },
                        Vec::new(),
                        Vec::new(),
                    ));
                    self.push(at, Priority::Network, Event::Proto { msg, dst: node as u32 });
                }
                MemEffect::Retry { p, at } => {
                    let proc = &self.procs[p];
                    if let MainState::Blocked { wait: Wait::Miss(_) | Wait::PrefetchBuffer, .. } = proc.main {
                        if !self.compute_in_handler(p) {
                            self.wake_at(p, at);
                        }
                    }
                }
                MemEffect::LineLost { p, line } => {
                    let proc = &self.procs[p];
                    if let MainState::Blocked { wait: Wait::Spin(_, l), .. } = proc.main {
                        if l == line && !self.compute_in_handler(p) {
                            self.wake_at(p, self.now);
                        }
                    }
                }
                MemEffect::Trap { node, at, body_ps } => {
                    self.push(at, Priority::Network, Event::Trap { p: node as u32, body_ps })
                }
                MemEffect::Fault(msg) => self.fail(SimError::Internal(msg)),
            }
        }
        // Keep the buffer's allocation for the next call.
        self.mem.restore_outbox(effects);
    }

    /// Send a protocol message over the network as one packet: header, plus a line of data
    /// for the kinds that carry one.
    fn launch_protocol(&mut self, src: usize, dst: usize, kind: ProtoKind, line: u64, requester: usize, ready_ps: u64) {
        let cfg = Arc::clone(&self.cfg);
        let payload = if kind.carries_line() { cfg.mem.line_bytes } else { 0 };
        if kind.carries_line() {
            self.traffic.add(TrafficClass::Headers, cfg.header_bytes);
            self.traffic.add(TrafficClass::Data, payload);
        } else {
            self.traffic.add(kind.class(), cfg.header_bytes);
        }
        self.traffic.packets += 1;
        self.traffic.protocol_messages += 1;
        let msg = self.alloc_msg(MessageRecord::new(
            src as u32,
            Target::Protocol { kind, line, requester: requester as u32 },
            Vec::new(),
            Vec::new(),
        ));
        let pkt = Packet {
            msg,
            dst: dst as u32,
            bytes: (cfg.header_bytes + payload) as u32,
            last: true,
            background: false,
            ready_ps,
            link: None,
            vc: 0,
            ni_latency_ps: None,
            serial: 0,
        };
        self.label_packet(msg, src, dst);
        self.net.send_packet(&mut self.q, self.now, src, pkt);
    }

    /// Carry out what the network reported: wake senders waiting for NI output space, and
    /// hand delivered messages to the memory controller or the destination's inbox (most
    /// events report nothing).
    #[inline]
    pub(super) fn drain_notices(&mut self) {
        if !self.net.notices.is_empty() {
            self.carry_out_notices();
        }
    }

    fn carry_out_notices(&mut self) {
        while let Some(n) = self.net.notices.pop() {
            match n {
                NetNotice::OutputSpace(ep) => {
                    let ep = ep as usize;
                    if ep < self.procs.len() {
                        if let MainState::Blocked { wait: Wait::NiOutput, .. } = self.procs[ep].main {
                            if !self.compute_in_handler(ep) {
                                self.wake_at(ep, self.now);
                            }
                        }
                    } else {
                        self.cross_space(ep);
                    }
                }
                NetNotice::Overflow(ep) => self.overflow_trap(ep as usize),
                NetNotice::Delivered { msg, last, background, packet } => {
                    if !last {
                        continue;
                    }
                    if background {
                        self.free_msg(msg);
                        continue;
                    }
                    let dst = self.net.packet(packet).dst as usize;
                    let arrival = self.msg(msg).target.arrival();
                    if arrival == Arrival::Memory {
                        // Served by the node's memory (or answered to its requester) in
                        // hardware: taken off the NI at once.
                        self.net.consume(&mut self.q, self.now, dst);
                        self.one_sided_arrive(dst, msg);
                        continue;
                    }
                    // (An SMP node's protocol processor takes the default protocol's messages
                    // in arrival order with the program's, from its inbox.)
                    let via_inbox = self.mem.software().is_some_and(|sw| sw.on_compute()) || self.cfg.smp_nodes;
                    if arrival == Arrival::Controller && !via_inbox {
                        // The memory controller (or protocol processor) takes protocol
                        // messages off the NI at once (software DSM on the compute processor:
                        // a handler like any other).
                        self.net.consume(&mut self.q, self.now, dst);
                        self.mem_receive(dst, msg);
                        continue;
                    }
                    let (src, target) = (self.msg(msg).src as usize, self.msg(msg).target);
                    self.flow.arrived(src, dst, target);
                    if self.cfg.poll.is_some() {
                        self.poll_arrive(dst, msg);
                    }
                    self.procs[dst].inbox.push_back(msg);
                    self.try_dispatch(dst);
                }
            }
        }
    }
}
