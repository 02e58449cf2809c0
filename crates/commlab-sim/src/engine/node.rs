//! `SimNode`: the [`Node`] interface as seen from inside a processor's coroutine.

use super::{MainState, SimError, Wait, World};
use crate::msg::{self, Target};
use commlab_api::{Category, HandlerId, Node, ProcId, ReceiveMode};
use corosensei::Yielder;

pub(crate) struct SimNode<'y, S> {
    id: usize,
    wp: *mut World<S>,
    yielder: &'y Yielder<*mut World<S>, ()>,
}

impl<'y, S> SimNode<'y, S> {
    pub fn new(id: usize, wp: *mut World<S>, yielder: &'y Yielder<*mut World<S>, ()>) -> Self {
        SimNode { id, wp, yielder }
    }

    /// The world, valid until the next yield.
    #[inline]
    fn w(&mut self) -> &mut World<S> {
        // SAFETY: the scheduler is suspended in `resume` while this coroutine runs and holds
        // no reference into the world; callers never keep this borrow across `suspend`.
        unsafe { &mut *self.wp }
    }

    #[inline]
    fn suspend(&mut self) {
        self.wp = self.yielder.suspend(());
    }

    /// Be busy for `ps` in category `cat` (extended by any handler that interrupts).
    fn timed(&mut self, ps: u64, cat: Category) {
        if ps == 0 {
            return;
        }
        let id = self.id;
        let w = self.w();
        let end = w.now + ps;
        let proc = &mut w.procs[id];
        proc.main = MainState::Timed { end, cat };
        proc.acct.switch(cat, w.now);
        w.wake_at(id, end);
        self.suspend();
    }

    /// Block until something wakes this processor (a handler finishing, NI space, ...).
    fn block(&mut self, wait: Wait, cat: Category) {
        let id = self.id;
        let w = self.w();
        let now = w.now;
        let proc = &mut w.procs[id];
        proc.main = MainState::Blocked { wait, cat, since: now };
        proc.acct.switch(cat, now);
        proc.gen = proc.gen.wrapping_add(1); // nothing stale may resume us
        w.try_dispatch(id);
        self.suspend();
    }

    /// Report a program error and stop this processor for good.
    fn fail(&mut self, msg: String) -> ! {
        self.w().fail(SimError::Program(msg));
        loop {
            self.suspend();
        }
    }

    fn check_dest(&mut self, dest: ProcId) {
        let n = self.w().procs.len();
        if dest >= n {
            let id = self.id;
            self.fail(format!("processor {id} sent to processor {dest}, but the machine has {n} (0..{})", n - 1));
        }
    }

    fn check_handler(&mut self, call: &str, handler: HandlerId) {
        let registered = self.w().handlers.len();
        if handler.0 as usize >= registered {
            self.fail(format!("{call} names handler {} but the program registered {registered}", handler.0));
        }
    }

    /// Pay the send cost, wait for NI output space, and launch.
    fn send(
        &mut self,
        dest: ProcId,
        target: Target,
        args: &[u64],
        payload: Vec<u64>,
        regions: Option<usize>,
        cat: Category,
    ) {
        self.check_dest(dest);
        if let Err(e) = msg::check_args(&self.w().cfg, args.len()) {
            self.fail(e);
        }
        let cost = msg::send_cost_cycles(&self.w().cfg, args.len(), regions);
        let ps = self.w().cfg.cycles_to_ps(cost as f64);
        self.timed(ps, cat);
        let id = self.id;
        let max_payload = self.w().cfg.max_packet_payload_bytes;
        let npackets = (8 * (args.len() + payload.len()) as u64).div_ceil(max_payload).max(1) as u32;
        while !self.w().net.output_has_room(id, npackets) {
            self.block(Wait::NiOutput, Category::MemoryNiWait);
        }
        let w = self.w();
        let now = w.now;
        w.launch(id, dest, target, args.to_vec(), payload, now);
    }

    /// Wait (running handlers as they come) until no message waits for this processor.
    fn drain(&mut self) {
        let id = self.id;
        while {
            let p = &self.w().procs[id];
            p.handler_active || !p.inbox.is_empty()
        } {
            self.block(Wait::Drain, Category::MessageOverhead);
        }
    }
}

impl<S> Node for SimNode<'_, S> {
    type State = S;

    fn id(&self) -> ProcId {
        self.id
    }

    fn nprocs(&self) -> usize {
        // SAFETY: as in `w`; shared read only.
        unsafe { (*self.wp).procs.len() }
    }

    fn now_cycles(&self) -> f64 {
        // SAFETY: as in `w`; shared read only.
        let w = unsafe { &*self.wp };
        w.cfg.ps_to_cycles(w.now)
    }

    fn state<R>(&mut self, f: impl FnOnce(&mut S) -> R) -> R {
        let id = self.id;
        f(&mut self.w().procs[id].state)
    }

    fn compute(&mut self, cycles: u64) {
        let ps = self.w().cfg.cycles_to_ps(cycles as f64);
        self.timed(ps, Category::Compute);
    }

    fn cost(&self, name: &str) -> u64 {
        // SAFETY: as in `w`; shared read only.
        let w = unsafe { &*self.wp };
        msg::lookup_cost(&w.costs, name)
    }

    fn set_receive_mode(&mut self, mode: ReceiveMode) {
        let id = self.id;
        self.w().procs[id].mode = mode;
        if mode == ReceiveMode::Interrupt {
            // Messages that waited for a poll are taken now, as the interrupt would.
            self.drain();
        }
    }

    fn send_am(&mut self, dest: ProcId, handler: HandlerId, args: &[u64]) {
        self.check_handler("send_am", handler);
        self.send(dest, Target::App(handler), args, Vec::new(), None, Category::MessageOverhead);
    }

    fn send_bulk(&mut self, dest: ProcId, handler: HandlerId, args: &[u64], regions: &[&[u64]]) {
        self.check_handler("send_bulk", handler);
        let payload = msg::gather_regions(regions, self.w().cfg.msg.dma_align_bytes);
        self.send(dest, Target::App(handler), args, payload, Some(regions.len()), Category::MessageOverhead);
    }

    fn poll(&mut self) {
        let ps = {
            let cfg = &self.w().cfg;
            cfg.cycles_to_ps(cfg.msg.poll as f64)
        };
        self.timed(ps, Category::MessageOverhead);
        let id = self.id;
        if self.w().procs[id].mode == ReceiveMode::Polling {
            self.drain();
        }
    }

    fn wait_until(&mut self, what: &'static str, mut cond: impl FnMut(&S) -> bool) {
        let id = self.id;
        while !cond(&self.w().procs[id].state) {
            self.block(Wait::Cond(what), Category::Synchronization);
        }
    }

    fn barrier(&mut self) {
        let id = self.id;
        let (n, arity) = {
            let w = self.w();
            (w.procs.len(), w.cfg.msg.barrier_arity as usize)
        };
        let epoch = {
            let b = &mut self.w().procs[id].barrier;
            b.epoch += 1;
            b.epoch
        };
        let (parent, children) = msg::barrier_tree(id, n, arity);
        let nchildren = children.len() as u64;
        while self.w().procs[id].barrier.arrivals < nchildren {
            self.block(Wait::Barrier(epoch), Category::Synchronization);
        }
        self.w().procs[id].barrier.arrivals -= nchildren;
        match parent {
            Some(parent) => {
                self.send(parent, Target::BarrierArrive, &[], Vec::new(), None, Category::Synchronization);
                while self.w().procs[id].barrier.released < epoch {
                    self.block(Wait::Barrier(epoch), Category::Synchronization);
                }
            }
            None => self.w().procs[id].barrier.released = epoch,
        }
        for c in children {
            self.send(c, Target::BarrierRelease, &[epoch], Vec::new(), None, Category::Synchronization);
        }
    }

    fn begin_timing(&mut self) {
        let id = self.id;
        let w = self.w();
        let now = w.now;
        w.procs[id].acct.begin(now);
        if w.timing_start.is_none() {
            w.timing_start = Some(now);
            w.traffic = Default::default();
            w.net.reset_link_stats();
        }
    }
}
