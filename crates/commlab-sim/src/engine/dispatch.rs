//! The delivery policy: when a processor takes the next message of its inbox (interrupt,
//! polling, back-edge polling, an SMP node's protocol processor, and the kinds `msg/kind.rs`
//! says are taken at once), how its handler is entered, run and left, how long it occupies the
//! processor and what that does to the interrupted main thread, and what happens when it ends.
//!
//! *Dispatch.* An interrupt preempts and extends the interrupted work; polling waits for `poll()`
//! or a blocked main thread; a processor waiting in the message barrier takes handlers at the
//! poll-dispatch cost unless `messaging.barrier_wait_interrupts` (`alewife-sim`), whose arrival and
//! wake-up handler bodies cost `messaging.barrier_handler_cycles` (0 elsewhere). Handlers' sends
//! are not throttled by the NI output queue (handlers cannot block); main-thread sends are. A bulk
//! message's non-final packets free their NI slot on arrival (the DMA engine drains them); the
//! final one holds it until the handler ends. Polling processors keep serving messages after their
//! main thread returns, uncounted. A handler's effects are made at its start.
//!
//! *SMP nodes* (`node.procs_per_node = 2`, the Blizzard presets, polling Typhoon-0;
//! `node.tag_lock_cycles` and `messaging.poll_mechanism` are inert on one-processor nodes, so
//! `--set node.procs_per_node=1` alone gives interrupt-driven nodes): the second processor runs
//! every handler (`Memory::pp_busy`, one `Event::Dispatch` when busy), entered at
//! `messaging.poll_dispatch_cycles`, never interrupting the compute processor
//! (`World::compute_in_handler` false: a blocked main thread wakes at once; a computing one may see
//! a handler's effects up to its length early). The default protocol's network messages wait in the
//! inbox in arrival order at a protocol processor's cost (no entry or exit); its local steps and
//! deferred handlers take the processor at its next free moment. `poll()` and interrupt mode drain
//! nothing there. A block-access fault runs inline on the processor that took it
//! (`World::run_fault_on_compute`); on software DSM every tag change adds `node.tag_lock_cycles`,
//! folded into `DsmCosts::tag_*_ps`, a key such a node must give
//! (`commlab-sim/tests/delivery_modes.rs`, `commlab-sim/tests/tempest.rs`).
//!
//! *Back-edge polling* (`messaging.backedge_interval_cycles` = K; refused with SMP nodes): a
//! computation passes a back-edge every K cycles on a grid carried across periods (`Proc::edge_at`,
//! `edge_left_ps`); a message that would interrupt waits for the next one (`World::next_backedge`)
//! and is dispatched at `messaging.poll_dispatch_cycles` with no interrupt exit, the grid
//! restarting a full K after the handler (`backedge_handler`); a waiting or finished processor
//! takes it at once, other timed work runs to its end. The default protocol's compute-processor
//! handlers enter the same way; traps and faults keep their own entry. Back-edges that found
//! nothing cost `messaging.poll_cycles` each at the computation's end (`end_of_computation`).
//! Counters `backedge_failed_polls`, `backedge_dispatches`.

use super::error::SimError;
use super::overflow;
use super::state::{Event, MainState, Proc, Wait};
use super::world::World;
use crate::mem::protocol::ProtoKind;
use crate::msg::{self, Ctx, EntryExit, MessageRecord, Target};
use crate::queue::Priority;
use commlab_api::{AccessTag, Category, Fault, FaultHandler, Handler, Message, ProcId, ReceiveMode};
use std::sync::Arc;

impl<S> World<S> {
    /// Run the next waiting handler on `p` if the receive mode allows it now.
    pub(super) fn try_dispatch(&mut self, p: usize) {
        let proc = &self.procs[p];
        if proc.handler_active || proc.inbox.is_empty() {
            return;
        }
        if self.cfg.smp_nodes {
            // The protocol processor's dispatch loop polls all the time: a handler starts as
            // soon as it is done with what it is doing (a default-protocol handler included).
            let free = self.poll_start(p, self.mem.pp_busy(p));
            if free <= self.now {
                self.start_handler(p, false);
            } else if !self.procs[p].dispatch_queued {
                self.procs[p].dispatch_queued = true;
                self.push(free, Priority::HandlerDone, Event::Dispatch { p: p as u32 });
            }
            return;
        }
        let head = self.msg(*proc.inbox.front().expect("non-empty")).target;
        if self.cfg.msg.backedge_interval_ps > 0 && !head.is_local() {
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
        let protocol = head.taken_at_once();
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
    pub(super) fn backedge_ps(&self) -> u64 {
        self.cfg.msg.backedge_interval_ps
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

    /// Start the handler of the message at the head of `p`'s inbox, taken as an interrupt or
    /// not (the overflow trap's record starts the trap's first step instead).
    pub(super) fn start_handler(&mut self, p: usize, interrupt: bool) {
        let msg_id = *self.procs[p].inbox.front().expect("inbox not empty");
        if self.lat.is_some() || self.flows.is_some() {
            self.record_message(p, msg_id);
        }
        if self.msg(msg_id).target.is_overflow_trap() {
            self.start_overflow_trap(p);
            return;
        }
        self.with_msg(msg_id, |w, rec| w.run_handler(p, msg_id, rec, interrupt));
    }

    /// Getting into the handler of `rec` on `p`, then reading the message's arguments (protocol
    /// messages and traps are handled by the memory system, not read by a handler).
    fn entry_ps(&self, p: usize, rec: &MessageRecord, interrupt: bool) -> u64 {
        let cfg = &self.cfg;
        let read = if rec.target.is_software_message() { cfg.msg.receive_cost_ps(rec.args.len()) } else { 0 };
        match (rec.target.entry_exit(), self.mem.software()) {
            // A block-access fault enters its handler as the default protocol's miss does: the
            // trap, and for a store to a read-only block the upgrade fault's extra on top.
            (EntryExit::Fault { write, line }, Some(_)) => self.fault_entry_ps(p, line, write),
            // Copied into memory by the overflow trap: dispatched from there.
            _ if rec.in_memory => overflow::dispatch_ps(cfg) + read,
            // A polling mechanism: the poll that sees the message, then the receive path.
            _ if cfg.poll.is_some() => rec.poll_seen_ps + cfg.poll.map_or(0, |pc| pc.receive_ps) + read,
            _ => (if interrupt { cfg.msg.interrupt_entry_ps } else { cfg.msg.poll_dispatch_ps }) + read,
        }
    }

    /// Leaving the handler of `rec`: a fault handler resumes the faulting access, an interrupt
    /// returns from the interrupt (nothing after a poll or a dispatch from memory).
    fn exit_ps(&self, rec: &MessageRecord, interrupt: bool) -> u64 {
        match (rec.target.entry_exit(), self.mem.software()) {
            (EntryExit::Fault { .. }, Some(sw)) => sw.resume_ps,
            _ if rec.in_memory => 0,
            _ if interrupt => self.cfg.msg.interrupt_exit_ps,
            _ => 0,
        }
    }

    /// Run the handler of message `msg_id` (`rec`, lent out of the store) on `p` now: flow
    /// control's credits, the handler's body, then its length (entry, body, exit) occupies the
    /// processor and its sends are launched.
    fn run_handler(&mut self, p: usize, msg_id: u32, rec: &MessageRecord, interrupt: bool) {
        let now = self.now;
        let cfg = Arc::clone(&self.cfg);
        let entry = self.entry_ps(p, rec, interrupt);
        let exit = self.exit_ps(rec, interrupt);
        let mut ctx = Ctx {
            id: p,
            nprocs: self.procs.len(),
            handlers: self.handlers.len(),
            cfg: &cfg,
            start_ps: now,
            offset_ps: entry,
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
        run_body(&self.handlers, self.fault_handler, proc, &mut ctx, rec);
        if let Target::Protocol { kind, line, requester } = rec.target {
            drop(ctx);
            self.run_protocol_handler(p, rec.src as usize, rec.poll_seen_ps, kind, line, requester as usize);
            return;
        }
        // Before the handler's length is fixed: an explicit acknowledgement's send is the
        // handler's work too.
        ctx.acknowledge(src);
        let mut duration_ps = ctx.offset_ps + exit;
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

    /// A software protocol handler on `p` for a message from `from` (seen by a poll that cost
    /// `poll_seen_ps`): its length is what its actions cost.
    fn run_protocol_handler(
        &mut self,
        p: usize,
        from: usize,
        poll_seen_ps: u64,
        kind: ProtoKind,
        line: u64,
        requester: usize,
    ) {
        let (now, cfg) = (self.now, Arc::clone(&self.cfg));
        let sw = self.mem.software().expect("software DSM");
        // On an SMP node's protocol processor it costs what it costs on a dedicated one.
        // With a polling mechanism, it is seen by a poll and received as any message.
        let (entry_ps, exit_ps) = match cfg.poll {
            Some(pc) if cfg.smp_nodes => (poll_seen_ps + pc.receive_ps, 0),
            _ if cfg.smp_nodes => (0, 0),
            _ => (sw.entry_ps, sw.exit_ps),
        };
        let body_end = now + entry_ps + sw.handler_ps;
        self.mem_call(|mem| {
            mem.run_software_handler(p, from, kind, line, requester, body_end);
            mem.check_line(line);
        });
        let duration_ps = self.mem.handler_end() - now + exit_ps;
        self.finish_handler_start(p, now, duration_ps, Vec::new());
    }

    /// Entering a block-access fault's handler, as the default protocol's miss enters its
    /// handler: the trap, and for a store to a read-only block the upgrade fault's extra.
    fn fault_entry_ps(&self, p: usize, line: u64, write: bool) -> u64 {
        let sw = self.mem.software().expect("user regions exist only under software DSM");
        let upgrade = write && self.mem.tempest().tag(p, line, self.mem.home_of(line)) == AccessTag::ReadOnly;
        sw.miss_trap_ps + if upgrade { sw.upgrade_fault_ps } else { 0 }
    }

    /// SMP node: the compute processor runs the fault handler of its own access at once (its
    /// protocol processor runs the handlers of messages). Returns the handler's length, which
    /// the caller spends.
    pub(super) fn run_fault_on_compute(&mut self, p: usize, line: u64, write: bool) -> u64 {
        let cfg = Arc::clone(&self.cfg);
        let entry = self.fault_entry_ps(p, line, write);
        let sw = self.mem.software().expect("user regions exist only under software DSM");
        let mut ctx = Ctx {
            id: p,
            nprocs: self.procs.len(),
            handlers: self.handlers.len(),
            cfg: &cfg,
            start_ps: self.now,
            offset_ps: entry,
            sends: Vec::new(),
            error: None,
            flow: &mut self.flow,
            mem: &mut self.mem,
        };
        call_fault_handler(self.fault_handler, &mut self.procs[p].state, &mut ctx, line, write);
        let duration_ps = ctx.offset_ps + sw.resume_ps;
        let (sends, error) = (std::mem::take(&mut ctx.sends), ctx.error.take());
        if let Some(e) = error {
            self.fail(SimError::Program(format!("in the fault handler on processor {p}: {e}")));
        }
        for s in sends {
            let at = self.now + s.at_ps;
            self.launch(p, s.dest, s.target, s.args, s.payload, at);
        }
        self.mem.add_handler_ps_compute(duration_ps);
        duration_ps
    }

    /// Launch a started handler's sends and account for its length on the processor.
    fn finish_handler_start(&mut self, p: usize, now: u64, duration_ps: u64, sends: Vec<msg::HandlerSend>) {
        for s in sends {
            let at = now + s.at_ps;
            self.launch(p, s.dest, s.target, s.args, s.payload, at);
        }
        self.occupy(p, now, duration_ps);
        self.push(now + duration_ps, Priority::HandlerDone, Event::HandlerDone { p: p as u32 });
    }

    /// A handler (or a step of the overflow trap) occupies `p`'s processor from `now` for
    /// `duration_ps`: on an SMP node its protocol processor; otherwise its compute processor,
    /// whose interrupted work is extended by as much (consecutive steps add up exactly as one
    /// handler of their total length would).
    pub(super) fn occupy(&mut self, p: usize, now: u64, duration_ps: u64) {
        if self.cfg.smp_nodes {
            // On the protocol processor, which default-protocol handlers share.
            self.mem.add_handler_ps_protocol(duration_ps);
            self.mem.set_pp_busy(p, now + duration_ps);
            return;
        }
        self.mem.add_handler_ps_compute(duration_ps);
        // The interrupted main thread loses the handler's time; a blocked one is re-woken
        // when the handler is done.
        let main = self.procs[p].main;
        self.procs[p].gen = self.procs[p].gen.wrapping_add(1);
        if self.cfg.msg.backedge_interval_ps > 0 && matches!(main, MainState::Timed { cat: Category::Compute, .. }) {
            self.backedge_handler(p, duration_ps);
        }
        if let MainState::Timed { end, cat } = main {
            let end = end + duration_ps;
            self.procs[p].main = MainState::Timed { end, cat };
            self.wake_at(p, end);
        }
    }

    pub(super) fn on_handler_done(&mut self, p: usize) {
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

/// The body of a handler that runs on the processor: the program's handler, the barrier's
/// bookkeeping or the program's fault handler (protocol messages, directory traps and
/// acknowledgements have none here: their costs are the memory system's or the entry's).
fn run_body<S>(
    handlers: &[Handler<S>],
    fault_handler: Option<FaultHandler<S>>,
    proc: &mut Proc<S>,
    ctx: &mut Ctx<'_>,
    rec: &MessageRecord,
) {
    match rec.target {
        Target::App(h) => {
            let message = Message { src: rec.src as ProcId, args: &rec.args, payload: &rec.payload };
            (handlers[h.0 as usize])(&mut proc.state, ctx, &message);
        }
        Target::BarrierArrive => {
            proc.barrier.arrivals += 1;
            ctx.offset_ps += ctx.cfg.msg.barrier_handler_ps;
        }
        Target::BarrierRelease => {
            proc.barrier.released = proc.barrier.released.max(rec.args[0]);
            ctx.offset_ps += ctx.cfg.msg.barrier_handler_ps;
        }
        Target::Protocol { .. } | Target::Trap { .. } | Target::FlowAck => {}
        Target::Fault { line, write } => call_fault_handler(fault_handler, &mut proc.state, ctx, line, write),
        Target::Sink | Target::OneSidedRequest { .. } | Target::OneSidedReply { .. } => {
            unreachable!("cross-traffic and one-sided messages never reach a processor's inbox")
        }
        Target::OverflowTrap => unreachable!("the overflow trap is started by start_overflow_trap"),
    }
}
