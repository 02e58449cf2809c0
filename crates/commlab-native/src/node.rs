//! `NativeNode`: the [`Node`] interface on one OS thread, and the handler context.

use crate::arena::LINE_WORDS;
use crate::clock::Clock;
use crate::inbox::{BufferPool, RxEnd, Slot, Target, TxEnd, MAX_ARGS};
use crate::shared::{Abort, Shared, WaitInfo, WaitKind};
use commlab_api::{
    Addr, BarrierKind, Category, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, ReceiveMode,
    TrafficClass,
};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where one processor's time went, in clock ticks (exactly one category accrues at a time).
#[derive(Clone, Debug, Default)]
pub(crate) struct Account {
    pub by_cat: [u64; 4],
    cur: usize,
    last: u64,
    /// Message overhead of sends made since the last switch without reading the clock (short
    /// sends from compute, at their measured cost): moved out of the current category's span
    /// at the next switch, at most all of it, so the categories still sum to the busy time.
    owed: u64,
    /// When the timed region began on this processor (`begin_timing`, else the thread start).
    pub start: u64,
    pub began: bool,
    pub finish: u64,
    /// The thread's CPU time (ns) when the timed region began, and in it once it ended.
    cpu_start_ns: u64,
    pub cpu_ns: u64,
}

impl Account {
    /// On the processor's own thread (its CPU time is the thread's).
    fn new(now: u64) -> Account {
        Account { last: now, start: now, cpu_start_ns: crate::clock::thread_cpu_ns(), ..Account::default() }
    }

    /// Charge the time since the last switch to the current category and go on in `cat`;
    /// returns the category left.
    #[inline]
    fn switch(&mut self, now: u64, cat: usize) -> usize {
        let now = now.max(self.last);
        let span = now - self.last;
        let owed = std::mem::take(&mut self.owed).min(span);
        self.by_cat[MESSAGE] += owed;
        self.by_cat[self.cur] += span - owed;
        self.last = now;
        std::mem::replace(&mut self.cur, cat)
    }

    fn begin(&mut self, now: u64) {
        *self = Account { began: true, ..Account::new(now) };
    }

    fn end(&mut self, now: u64) {
        self.switch(now, self.cur);
        self.finish = self.last;
        self.cpu_ns = crate::clock::thread_cpu_ns().saturating_sub(self.cpu_start_ns);
    }
}

/// Counts over the timed region (messages sent after it began, and their handlers).
#[derive(Clone, Debug, Default)]
pub(crate) struct Counts {
    pub sent: u64,
    pub received: u64,
    pub volume_bytes: [u64; 5],
}

/// What a processor's thread hands back when its main thread returns.
pub(crate) struct ProcResult<S> {
    pub state: S,
    pub acct: Account,
    pub counts: Counts,
}

/// The message barrier's progress on this processor (changed by its handlers).
#[derive(Default)]
struct BarrierState {
    epoch: u64,
    arrivals: u64,
    released: u64,
}

/// Everything of the node a handler's context may touch besides the state.
struct Comm<'a> {
    id: ProcId,
    shared: &'a Shared,
    nhandlers: usize,
    counts: Counts,
    barrier: BarrierState,
    /// This processor's ends of its channels to every processor, and messages sent in all.
    tx: Vec<TxEnd>,
    sent: u64,
}

impl Comm<'_> {
    /// A bulk message's payload, in a buffer from the sender's own pool.
    fn payload(&self, regions: &[&[u64]]) -> Vec<u64> {
        gather(&self.shared.pools[self.id], regions)
    }

    /// Check and deliver a message.
    fn send(&mut self, dest: ProcId, target: Target, args: &[u64], payload: Vec<u64>) {
        let n = self.shared.nprocs;
        if dest >= n {
            self.shared.fail(format!(
                "processor {} sent to processor {dest}, but there are {n} (0..{})",
                self.id,
                n - 1
            ));
        }
        if args.len() > MAX_ARGS {
            self.shared.fail(format!(
                "an active message has {} u64 arguments but the native backend carries at most {MAX_ARGS}",
                args.len()
            ));
        }
        if let Target::App(h) = target {
            if h as usize >= self.nhandlers {
                self.shared.fail(format!("a send names handler {h} but the program registered {}", self.nhandlers));
            }
        }
        let timed = self.shared.timing_started.load(Ordering::Relaxed);
        if timed {
            self.counts.sent += 1;
            self.counts.volume_bytes[TrafficClass::Data as usize] += 8 * (args.len() + payload.len()) as u64;
        }
        self.shared.channels.push(&mut self.tx[dest], self.id, dest, target, timed, args, payload, &mut self.sent);
    }
}

/// Concatenate the regions of a bulk message (natively no DMA alignment: no padding) into a
/// buffer from the sender's pool: one memcpy per region (`extend_from_slice` of `u64`s), no
/// per-word atomics.
fn gather(pool: &BufferPool, regions: &[&[u64]]) -> Vec<u64> {
    let mut out = pool.take(regions.iter().map(|r| r.len()).sum());
    for r in regions {
        out.extend_from_slice(r);
    }
    out
}

/// A handler's view: sends go straight to the destination's inbox; work costs nothing extra
/// (the handler's own code is what takes time, and it is timed as message overhead).
struct Ctx<'a, 'b> {
    comm: &'a mut Comm<'b>,
}

impl HandlerCtx for Ctx<'_, '_> {
    fn id(&self) -> ProcId {
        self.comm.id
    }
    fn nprocs(&self) -> usize {
        self.comm.shared.nprocs
    }
    fn now_cycles(&self) -> f64 {
        let c = &self.comm.shared.clock;
        c.cycles(c.now_ordered())
    }
    fn compute(&mut self, _cycles: u64) {}
    fn private_hits(&mut self, _words: u64) {}
    fn send_am(&mut self, dest: ProcId, handler: HandlerId, args: &[u64]) {
        self.comm.send(dest, Target::App(handler.0), args, Vec::new());
    }
    fn send_bulk(&mut self, dest: ProcId, handler: HandlerId, args: &[u64], regions: &[&[u64]]) {
        let payload = self.comm.payload(regions);
        self.comm.send(dest, Target::App(handler.0), args, payload);
    }
}

pub(crate) struct NativeNode<'a, S> {
    id: ProcId,
    shared: &'a Shared,
    handlers: &'a [Handler<S>],
    state: S,
    comm: Comm<'a>,
    mode: ReceiveMode,
    barrier_kind: BarrierKind,
    barrier_arity: usize,
    acct: Account,
    /// This processor's ends of the channels from every processor, messages handled in all,
    /// and the channel the next interrupt-mode check looks at.
    rx: Vec<RxEnd>,
    handled: u64,
    tick_src: usize,
    /// Shared allocations made.
    allocs: usize,
    /// Private arrays as (base byte address, words).
    private: Vec<(u64, usize)>,
    /// Wait generation (odd while waiting) and conditions evaluated, mirrored for the watchdog.
    gen: u64,
    checks: u64,
}

/// Category indices.
const COMPUTE: usize = Category::Compute as usize;
const MESSAGE: usize = Category::MessageOverhead as usize;
const SYNC: usize = Category::Synchronization as usize;

/// Byte address where processor `p`'s private arrays begin: far above any shared address.
pub(crate) fn private_base(p: ProcId) -> u64 {
    (1u64 << 60) + ((p as u64) << 44)
}

impl<'a, S> NativeNode<'a, S> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: ProcId,
        shared: &'a Shared,
        handlers: &'a [Handler<S>],
        state: S,
        mode: ReceiveMode,
        barrier_kind: BarrierKind,
        barrier_arity: usize,
        private_sizes: &[usize],
    ) -> Self {
        let mut private = Vec::with_capacity(private_sizes.len());
        let mut next = private_base(id);
        for &words in private_sizes {
            private.push((next, words));
            next += 8 * (words.div_ceil(LINE_WORDS).max(1) * LINE_WORDS) as u64;
        }
        let now = shared.clock.now();
        let (tx, rx) = shared.channels.ends();
        NativeNode {
            id,
            shared,
            handlers,
            state,
            comm: Comm {
                id,
                shared,
                nhandlers: handlers.len(),
                counts: Counts::default(),
                barrier: BarrierState::default(),
                tx,
                sent: 0,
            },
            mode,
            barrier_kind,
            barrier_arity,
            acct: Account::new(now),
            rx,
            handled: 0,
            tick_src: 0,
            allocs: 0,
            private,
            gen: 0,
            checks: 0,
        }
    }

    fn fail(&self, msg: String) -> ! {
        self.shared.fail(msg)
    }

    /// Go on in category `cat`; returns the one left.
    #[inline]
    fn enter(&mut self, cat: usize) -> usize {
        let now = self.shared.clock.now();
        self.acct.switch(now, cat)
    }

    #[inline]
    fn leave(&mut self, prev: usize) {
        self.enter(prev);
    }

    /// Run the handler of every message waiting, looking at the channels from every sender
    /// in turn until none has one (timed as message overhead: the clock is read only when a
    /// message has come); whether there was one.
    fn drain(&mut self) -> bool {
        if !self.any_waiting() {
            return false;
        }
        let prev = self.enter(MESSAGE);
        while self.handle_waiting() {}
        self.leave(prev);
        true
    }

    /// Whether a message from any sender has come (one load per sender, no clock).
    #[inline]
    fn any_waiting(&mut self) -> bool {
        let shared: &'a Shared = self.shared;
        (0..shared.nprocs).any(|src| shared.channels.look(&mut self.rx[src], src, self.id).is_some())
    }

    /// One pass over the senders, running the handler of every message that has come from
    /// each (not timed here: the caller accounts for the time); whether there was one.
    #[inline]
    fn handle_waiting(&mut self) -> bool {
        let shared: &'a Shared = self.shared;
        let mut got = false;
        for src in 0..shared.nprocs {
            while let Some(slot) = shared.channels.look(&mut self.rx[src], src, self.id) {
                self.handle(src, slot);
                got = true;
            }
        }
        got
    }

    /// Run the handler of the message from `src` in `slot`.
    #[inline]
    fn handle(&mut self, src: ProcId, slot: &'a Slot) {
        let shared: &'a Shared = self.shared;
        let m = shared.channels.take(slot);
        if m.timed {
            self.comm.counts.received += 1;
        }
        match m.target {
            Target::App(h) => {
                let message = Message { src, args: m.args, payload: &m.payload };
                let handler = self.handlers[h as usize];
                handler(&mut self.state, &mut Ctx { comm: &mut self.comm }, &message);
            }
            Target::BarrierArrive => self.comm.barrier.arrivals += 1,
            Target::BarrierRelease(e) => self.comm.barrier.released = self.comm.barrier.released.max(e),
        }
        // Back to the sender's pool.
        shared.pools[src].give(m.payload);
        shared.channels.done(&mut self.rx[src], src, self.id, &mut self.handled);
    }

    /// At every `Node` call: in interrupt mode, the channel from one sender (each in turn) is
    /// looked at, and if a message has come, the handlers of every message waiting run now
    /// (the closest a host thread gets to an interrupt; one look per call keeps a call's cost
    /// independent of the number of processors).
    #[inline]
    fn tick(&mut self) {
        if self.mode == ReceiveMode::Interrupt {
            let src = self.tick_src;
            self.tick_src = if src + 1 == self.shared.nprocs { 0 } else { src + 1 };
            if self.shared.channels.look(&mut self.rx[src], src, self.id).is_some() {
                self.drain();
            }
        }
    }

    /// Wait until `done` holds, running handlers (in either receive mode) as messages come,
    /// and telling the watchdog what this processor waits for. Called in synchronization time.
    ///
    /// Each look reads the clock once, first: the span since the previous look is charged to
    /// synchronization, or to message overhead when that look ran handlers. So a message found
    /// goes to its handler with no clock read in between (the read at the top of the look is
    /// its start), and a look costs one clock read whether or not a message came. The look
    /// spins for up to `spin_ticks` since the last message (thousands of times what a message or
    /// a store from another core takes), with the CPU's pause hint once in 64 looks (a pause on
    /// every look, about 30 ns on this host's cores, delays seeing a message by half that on
    /// average), then gives the core away on every look (so more threads than cores still
    /// progress; a yield is a system call, a few hundred nanoseconds when nothing else runs).
    fn wait(&mut self, info: WaitInfo, mut done: impl FnMut(&mut Self) -> bool) {
        self.drain();
        if done(self) {
            return;
        }
        let status = &self.shared.status[self.id];
        *status.info.lock().unwrap_or_else(|e| e.into_inner()) = info;
        self.gen += 1;
        status.gen.store(self.gen, Ordering::SeqCst);
        let clock: Clock = self.shared.clock;
        let spin = self.shared.spin_ticks;
        let mut since = clock.now();
        let mut looks: u64 = 0;
        loop {
            let now = clock.now();
            self.acct.switch(now, SYNC);
            if self.shared.abort.load(Ordering::Relaxed) {
                std::panic::resume_unwind(Box::new(Abort));
            }
            if self.handle_waiting() {
                // The span from `now` to the next read (the handlers) is message overhead;
                // messages keep coming: spin on before yielding.
                self.acct.cur = MESSAGE;
                since = now;
            }
            if done(self) {
                break;
            }
            looks += 1;
            if looks.is_multiple_of(64) {
                // Published once in 64 looks: a SeqCst store is a full fence, too dear for every
                // look (the watchdog only needs the count to move).
                self.checks += 1;
                self.shared.status[self.id].checks.store(self.checks, Ordering::SeqCst);
                if now.saturating_sub(since) >= spin {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
        }
        self.gen += 1;
        self.shared.status[self.id].gen.store(self.gen, Ordering::SeqCst);
    }

    fn info(&self, kind: WaitKind, what: &'static str, detail: u64) -> WaitInfo {
        WaitInfo { kind, what, detail, mode: self.mode }
    }

    /// The shared word at byte address `addr`, or a program error naming the access.
    #[inline]
    fn word(&self, addr: Addr, what: &str) -> &'a AtomicU64 {
        let shared: &'a Shared = self.shared;
        match shared.arena.word((addr.0 / 8) as usize) {
            Some(w) if addr.0.is_multiple_of(8) => w,
            _ => self.bad_addr(addr, what),
        }
    }

    #[cold]
    fn bad_addr(&self, addr: Addr, what: &str) -> ! {
        let owner = (0..self.shared.nprocs).rev().find(|&p| addr.0 >= private_base(p));
        match owner {
            Some(p) if addr.0 < private_base(p) + (1 << 44) => self.fail(format!(
                "processor {}: {what} of address {:#x}, which is private memory of processor {p} (use private_read/private_write)",
                self.id, addr.0
            )),
            _ => self.fail(format!(
                "processor {}: {what} of address {:#x}, which is not an aligned word of shared memory (allocated: {} bytes)",
                self.id,
                addr.0,
                self.shared.arena.len() * 8
            )),
        }
    }

    fn barrier_messages(&mut self) {
        let epoch = self.comm.barrier.epoch + 1;
        self.comm.barrier.epoch = epoch;
        let (parent, children) = barrier_tree(self.id, self.shared.nprocs, self.barrier_arity);
        let nchildren = children.len() as u64;
        self.wait(self.info(WaitKind::BarrierMessages, "barrier (children arriving)", epoch), |me| {
            me.comm.barrier.arrivals >= nchildren
        });
        self.comm.barrier.arrivals -= nchildren;
        match parent {
            Some(parent) => {
                self.comm.send(parent, Target::BarrierArrive, &[], Vec::new());
                self.wait(self.info(WaitKind::BarrierMessages, "barrier (release)", epoch), |me| {
                    me.comm.barrier.released >= epoch
                });
            }
            None => self.comm.barrier.released = epoch,
        }
        for c in children {
            self.comm.send(c, Target::BarrierRelease(epoch), &[epoch], Vec::new());
        }
    }

    fn barrier_shared_memory(&mut self) {
        let epoch = self.comm.barrier.epoch + 1;
        self.comm.barrier.epoch = epoch;
        let (parent, children) = barrier_tree(self.id, self.shared.nprocs, self.barrier_arity);
        let nchildren = children.len() as u64;
        let shared = self.shared;
        let id = self.id;
        if nchildren > 0 {
            self.wait(self.info(WaitKind::BarrierShared, "barrier (children arriving)", epoch), |_| {
                shared.bar_count[id].load(Ordering::SeqCst) >= epoch * nchildren
            });
        }
        if let Some(parent) = parent {
            shared.bar_count[parent].fetch_add(1, Ordering::SeqCst);
            self.wait(self.info(WaitKind::BarrierShared, "barrier (release)", epoch), |_| {
                shared.bar_flag[id].load(Ordering::SeqCst) >= epoch
            });
        }
        for c in children {
            shared.bar_flag[c].store(epoch, Ordering::SeqCst);
        }
    }

    /// The main thread returned: close the account, then keep handling messages (as a
    /// finished simulated processor does) until the watchdog sees every processor finished
    /// and no message left.
    pub fn finish(mut self) -> ProcResult<S> {
        let now = self.shared.clock.now();
        self.acct.end(now);
        // Handlers after this are not in the processor's busy time (as on the simulator).
        let acct = self.acct.clone();
        self.shared.finished.fetch_add(1, Ordering::SeqCst);
        let shared = self.shared;
        self.wait(self.info(WaitKind::Finished, "finished", 0), |_| shared.stop.load(Ordering::SeqCst));
        ProcResult { state: self.state, acct, counts: self.comm.counts }
    }
}

/// Parent and children of processor `p` in the barrier's combining tree (rooted at 0), as in
/// the simulator: `p`'s children are `k p + 1 ..= k p + k`.
fn barrier_tree(p: usize, n: usize, arity: usize) -> (Option<usize>, std::ops::Range<usize>) {
    let parent = if p == 0 { None } else { Some((p - 1) / arity) };
    let first = arity.saturating_mul(p).saturating_add(1).min(n);
    let last = arity.saturating_mul(p).saturating_add(arity).saturating_add(1).min(n);
    (parent, first..last)
}

impl<S> Node for NativeNode<'_, S> {
    type State = S;

    fn id(&self) -> ProcId {
        self.id
    }

    fn nprocs(&self) -> usize {
        self.shared.nprocs
    }

    fn now_cycles(&self) -> f64 {
        let c = &self.shared.clock;
        c.cycles(c.now_ordered())
    }

    fn state<R>(&mut self, f: impl FnOnce(&mut S) -> R) -> R {
        f(&mut self.state)
    }

    /// Costs nothing natively: the application's own arithmetic is the work.
    fn compute(&mut self, _cycles: u64) {
        self.tick();
    }

    fn message_work(&mut self, _cycles: u64) {
        self.tick();
    }

    fn set_receive_mode(&mut self, mode: ReceiveMode) {
        self.mode = mode;
        self.tick();
    }

    /// Not timed with the clock (two reads would cost several times the send's own stores,
    /// and the first would delay the message): the send's cost measured for this many
    /// argument words ([`short_send_ticks`]) is moved from compute to message overhead.
    fn send_am(&mut self, dest: ProcId, handler: HandlerId, args: &[u64]) {
        self.tick();
        self.comm.send(dest, Target::App(handler.0), args, Vec::new());
        if self.acct.cur == COMPUTE {
            self.acct.owed += self.shared.send_ticks[args.len().min(MAX_ARGS)];
        }
    }

    /// Timed with the clock: the copy into the receiver's buffer is the send's work.
    fn send_bulk(&mut self, dest: ProcId, handler: HandlerId, args: &[u64], regions: &[&[u64]]) {
        self.tick();
        let prev = self.enter(MESSAGE);
        let payload = self.comm.payload(regions);
        self.comm.send(dest, Target::App(handler.0), args, payload);
        self.leave(prev);
    }

    /// Runs the waiting handlers; a poll that finds nothing costs one load per sender (of
    /// the slot its next message will be in), reads no clock and is counted as compute.
    fn poll(&mut self) {
        self.drain();
    }

    fn wait_until(&mut self, what: &'static str, mut cond: impl FnMut(&S) -> bool) {
        self.drain();
        if cond(&self.state) {
            return;
        }
        let prev = self.enter(SYNC);
        self.wait(self.info(WaitKind::Cond, what, 0), |me| cond(&me.state));
        self.leave(prev);
    }

    fn barrier(&mut self) {
        self.tick();
        let prev = self.enter(SYNC);
        match self.barrier_kind {
            BarrierKind::Messages => self.barrier_messages(),
            BarrierKind::SharedMemory => self.barrier_shared_memory(),
        }
        self.leave(prev);
    }

    fn alloc_shared(&mut self, words: usize, placement: Placement) -> Addr {
        self.tick();
        let (k, n) = (self.allocs, self.shared.nprocs);
        self.allocs += 1;
        match self.shared.arena.alloc(self.id, k, words, &placement, n) {
            Ok(base) => {
                self.shared.arena.first_touch(self.id, base, words, &placement, n);
                Addr(8 * base as u64)
            }
            Err(e) => self.fail(e),
        }
    }

    /// Sequentially consistent, as the interface promises: `SeqCst` loads and stores (and
    /// read-modify-writes) form one total order that every thread agrees on, which is what a
    /// program relying on store-then-load ordering across processors (Dekker-style flags)
    /// needs; acquire/release alone would let a store and a later load to another word be
    /// reordered. On x86_64 a `SeqCst` load is a plain load and a store an `xchg`.
    #[inline]
    fn load(&mut self, addr: Addr) -> u64 {
        self.tick();
        self.word(addr, "load").load(Ordering::SeqCst)
    }

    #[inline]
    fn store(&mut self, addr: Addr, value: u64) {
        self.tick();
        self.word(addr, "store").store(value, Ordering::SeqCst);
    }

    fn private_array(&mut self, k: usize) -> Addr {
        match self.private.get(k) {
            Some(&(base, _)) => Addr(base),
            None => self.fail(format!(
                "processor {} asked for private array {k}, but its program declared {}",
                self.id,
                self.private.len()
            )),
        }
    }

    /// The data stays in the program's own arrays; natively there is nothing to time apart
    /// (the real reference is the program's own code), so this only checks the address.
    #[inline]
    fn private_read(&mut self, addr: Addr) {
        self.tick();
        self.check_private(addr, "private_read");
    }

    #[inline]
    fn private_write(&mut self, addr: Addr) {
        self.tick();
        self.check_private(addr, "private_write");
    }

    #[inline]
    fn prefetch_read(&mut self, addr: Addr) {
        self.tick();
        let w = self.word(addr, "prefetch");
        prefetch(w, false);
    }

    #[inline]
    fn prefetch_write(&mut self, addr: Addr) {
        self.tick();
        let w = self.word(addr, "prefetch");
        prefetch(w, true);
    }

    fn fetch_add(&mut self, addr: Addr, value: u64) -> u64 {
        self.tick();
        self.word(addr, "read-modify-write").fetch_add(value, Ordering::SeqCst)
    }

    /// Natively a get is the copy itself, done at once (the host's memory is one address
    /// space), so `quiet` has nothing to wait for; the time is the caller's compute.
    fn get(&mut self, dst: Addr, dst_stride: usize, src: Addr, src_stride: usize, words: usize) {
        self.tick();
        for i in 0..words {
            let v = self.word(src.word(i * src_stride), "get").load(Ordering::SeqCst);
            self.word(dst.word(i * dst_stride), "get").store(v, Ordering::SeqCst);
        }
    }

    fn put(&mut self, dst: Addr, dst_stride: usize, src: Addr, src_stride: usize, words: usize) {
        self.tick();
        for i in 0..words {
            let v = self.word(src.word(i * src_stride), "put").load(Ordering::SeqCst);
            self.word(dst.word(i * dst_stride), "put").store(v, Ordering::SeqCst);
        }
    }

    fn get_indexed(&mut self, dst: Addr, src: &[Addr]) {
        self.tick();
        for (i, &s) in src.iter().enumerate() {
            let v = self.word(s, "get_indexed").load(Ordering::SeqCst);
            self.word(dst.word(i), "get_indexed").store(v, Ordering::SeqCst);
        }
    }

    fn put_indexed(&mut self, dst: &[Addr], src: Addr) {
        self.tick();
        for (i, &d) in dst.iter().enumerate() {
            let v = self.word(src.word(i), "put_indexed").load(Ordering::SeqCst);
            self.word(d, "put_indexed").store(v, Ordering::SeqCst);
        }
    }

    fn quiet(&mut self) {
        self.tick();
    }

    fn compare_swap(&mut self, addr: Addr, expected: u64, new: u64) -> u64 {
        self.tick();
        match self.word(addr, "read-modify-write").compare_exchange(expected, new, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(v) | Err(v) => v,
        }
    }

    /// Test-and-test-and-set: one atomic swap when the lock looks free, spinning with plain
    /// loads (in the local cache) while it is held.
    fn lock(&mut self, addr: Addr) {
        self.tick();
        let w = self.word(addr, "lock");
        if w.swap(1, Ordering::SeqCst) == 0 {
            return;
        }
        let prev = self.enter(SYNC);
        let mut taken = false;
        self.wait(self.info(WaitKind::Lock, "lock", addr.0), |_| {
            taken = w.load(Ordering::SeqCst) == 0 && w.swap(1, Ordering::SeqCst) == 0;
            taken
        });
        self.leave(prev);
    }

    fn unlock(&mut self, addr: Addr) {
        self.tick();
        self.word(addr, "unlock").store(0, Ordering::SeqCst);
    }

    fn spin_until(&mut self, what: &'static str, addr: Addr, mut cond: impl FnMut(u64) -> bool) -> u64 {
        self.tick();
        let w = self.word(addr, "spin_until");
        let v = w.load(Ordering::SeqCst);
        if cond(v) {
            return v;
        }
        let prev = self.enter(SYNC);
        let mut seen = v;
        self.wait(self.info(WaitKind::Spin, what, addr.0), |_| {
            seen = w.load(Ordering::SeqCst);
            cond(seen)
        });
        self.leave(prev);
        seen
    }

    fn begin_timing(&mut self) {
        self.tick();
        let now = self.shared.clock.now();
        self.acct.begin(now);
        self.shared.timing_started.store(true, Ordering::Relaxed);
    }
}

impl<S> NativeNode<'_, S> {
    #[inline]
    fn check_private(&self, addr: Addr, what: &str) {
        let ok = addr.0.is_multiple_of(8)
            && self.private.iter().any(|&(base, words)| addr.0 >= base && addr.0 < base + 8 * words as u64);
        if !ok {
            self.fail(format!(
                "processor {}: {what} of address {:#x}, which is not an aligned word of its private arrays",
                self.id, addr.0
            ));
        }
    }
}

/// The CPU's prefetch instruction for the line holding `w` (for writing: with intent to
/// modify, `prefetchw`, where the CPU has it; older ones treat it as a no-op).
#[inline]
fn prefetch(w: &AtomicU64, write: bool) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0, _MM_HINT_T0};
        let p = w.as_ptr() as *const i8;
        // SAFETY: a prefetch is a hint that never faults, and `p` is a valid address anyway.
        unsafe {
            if write {
                _mm_prefetch::<_MM_HINT_ET0>(p);
            } else {
                _mm_prefetch::<_MM_HINT_T0>(p);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (w, write);
    }
}

/// What a send without payload costs natively, in clock ticks, by number of argument words:
/// measured once per process on the calling thread, as the median over 1000 sends into a
/// private channel (the same code as every send) of the clock read after the send less the
/// read before, less the median of two reads back to back; linear between 0 and
/// [`MAX_ARGS`] words (each word is one more store).
pub(crate) fn short_send_ticks(clock: &Clock) -> [u64; MAX_ARGS + 1] {
    static TICKS: std::sync::OnceLock<[u64; MAX_ARGS + 1]> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        const N: usize = 1000;
        let shared = Shared::new(1, *clock, 0, [0; MAX_ARGS + 1]);
        let (tx, mut rx) = shared.channels.ends();
        let mut comm = Comm {
            id: 0,
            shared: &shared,
            nhandlers: 1,
            counts: Counts::default(),
            barrier: BarrierState::default(),
            tx,
            sent: 0,
        };
        let median = |mut v: Vec<u64>| {
            v.sort_unstable();
            v[v.len() / 2]
        };
        let pair = median(
            (0..N)
                .map(|_| {
                    let a = clock.now();
                    clock.now().saturating_sub(a)
                })
                .collect(),
        );
        let args = [0u64; MAX_ARGS];
        let mut handled = 0;
        let mut cost = |words: usize| {
            let mut t = Vec::with_capacity(N);
            for _ in 0..N {
                let a = clock.now();
                comm.send(0, Target::App(0), &args[..words], Vec::new());
                t.push(clock.now().saturating_sub(a));
                if let Some(slot) = shared.channels.look(&mut rx[0], 0, 0) {
                    let _ = shared.channels.take(slot);
                    shared.channels.done(&mut rx[0], 0, 0, &mut handled);
                }
            }
            median(t).saturating_sub(pair)
        };
        let (none, full) = (cost(0), cost(MAX_ARGS));
        std::array::from_fn(|k| none + (full.saturating_sub(none) * k as u64).div_ceil(MAX_ARGS as u64))
    })
}

/// What the pieces of a null message's path between the two cores cost natively, in
/// nanoseconds, each measured on one core (no second core: the line transfers themselves are
/// the host's floor, `two_line_ns`): what a message's one-way time (send start to handler entry)
/// adds to that floor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessagePathNs {
    /// One timestamp as a program takes it (`now_cycles`: `lfence` then the clock), as the
    /// sender's start and the handler's entry are taken.
    pub stamp: f64,
    /// A null send after its start stamp: checks, the slot's header and sequence number, the
    /// published count.
    pub send: f64,
    /// One look of a wait with nothing come (the clock read that charges the span, a look at
    /// every sender's next slot, the condition): a message is seen on average half a look
    /// after its line arrives.
    pub look: f64,
    /// A message found to its handler's entry and back: taking it from its slot, the
    /// handler's call (an empty handler), giving the slot back.
    pub dispatch: f64,
}

impl MessagePathNs {
    /// The path's own time beside the floor: the send, half a look, the dispatch and the
    /// handler's stamp (the sender's stamp is read before its start).
    pub fn added(&self) -> f64 {
        self.send + self.look / 2.0 + self.dispatch + self.stamp
    }
}

/// The median of a sample of clock ticks.
fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// The median, in `clock` ticks, of `n` timings of `f` (each between two clock reads).
fn median_ticks(clock: &Clock, n: usize, f: &mut dyn FnMut()) -> u64 {
    median(
        (0..n)
            .map(|_| {
                let a = clock.now();
                f();
                clock.now().saturating_sub(a)
            })
            .collect(),
    )
}

/// [`MessagePathNs`] on the calling thread: medians over 2000 repetitions (looks: of 64 looks
/// each) less the median of two clock reads back to back; measured once per process.
pub(crate) fn message_path_ns(clock: &Clock) -> MessagePathNs {
    static PATH: std::sync::OnceLock<MessagePathNs> = std::sync::OnceLock::new();
    *PATH.get_or_init(|| {
        const N: usize = 2000;
        const LOOKS: u64 = 64;
        let mhz = crate::clock::host_clock().mhz;
        let ns = |ticks: f64| clock.cycles(1) * ticks * 1e3 / mhz;
        let timed = |f: &mut dyn FnMut()| median_ticks(clock, N, f);
        let pair = timed(&mut || {});
        let stamp = timed(&mut || {
            std::hint::black_box(clock.now_ordered());
        });
        // Two processors, as am-latency's (a look reads both senders' next slots); processor 0
        // sends to itself. Spin, never yield, in the looks below.
        let shared = Shared::new(2, *clock, 1_000_000_000, [0; MAX_ARGS + 1]);
        let handlers: [Handler<u64>; 1] = [|s, _, _| *s += 1];
        let mut node =
            NativeNode::new(0, &shared, &handlers, 0u64, ReceiveMode::Polling, BarrierKind::SharedMemory, 2, &[]);
        let send = timed(&mut || node.comm.send(0, Target::App(0), &[], Vec::new()));
        while node.handle_waiting() {}
        let info = node.info(WaitKind::Cond, "measuring", 0);
        let looks = timed(&mut || {
            let mut k = 0;
            node.wait(info, |_| {
                k += 1;
                k > LOOKS
            });
        });
        let empty = timed(&mut || {
            node.handle_waiting();
        });
        let mut one = median(
            (0..N)
                .map(|_| {
                    node.comm.send(0, Target::App(0), &[], Vec::new());
                    let a = clock.now();
                    node.handle_waiting();
                    clock.now().saturating_sub(a)
                })
                .collect(),
        );
        // The pass that found the message also looked once more and found none.
        one = one.saturating_sub(empty);
        MessagePathNs {
            stamp: ns(stamp.saturating_sub(pair) as f64),
            send: ns(send.saturating_sub(pair) as f64),
            look: ns(looks.saturating_sub(pair) as f64 / LOOKS as f64),
            dispatch: ns(one as f64),
        }
    })
}

/// What the runtime's per-operation steps cost natively, in nanoseconds, each measured on one
/// core with nothing else in flight: the per-operation figures `commlab characterize
/// --emit-machine` turns into a machine's costs (beside [`MessagePathNs`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OperationNs {
    /// One `private_read` of a cached word (the runtime's check of the address against the
    /// processor's private arrays; the program's own load is its code), with eight private
    /// arrays declared, read in turn.
    pub private_ref: f64,
    /// One shared-memory `load` of a word homed on this processor and cached (the arena's
    /// lookup and the load).
    pub shared_ref: f64,
    /// One `poll` that finds nothing (a look at every sender's next slot, no clock).
    pub poll: f64,
    /// What every operation adds in interrupt mode (a `compute` call: a look at one sender's
    /// next slot, taken in turn, as a message is found without an interrupt natively).
    pub interrupt_tick: f64,
    /// What each more 64-bit argument word adds to a send (the slope of the short send's cost
    /// from no argument to the most).
    pub send_per_arg_u64: f64,
    /// A bulk send of one line of payload less a null send: taking a buffer from the pool and
    /// copying the line.
    pub bulk_extra: f64,
}

/// [`OperationNs`] on the calling thread: medians over 2000 timings of 32 operations each,
/// less the median of two clock reads back to back, per operation; measured once per process.
pub(crate) fn operation_ns(clock: &Clock) -> OperationNs {
    static OPS: std::sync::OnceLock<OperationNs> = std::sync::OnceLock::new();
    *OPS.get_or_init(|| {
        const N: usize = 2000;
        const K: usize = 32;
        let mhz = crate::clock::host_clock().mhz;
        let ns = |ticks: f64| clock.cycles(1) * ticks * 1e3 / mhz;
        let timed = |f: &mut dyn FnMut()| median_ticks(clock, N, f);
        let pair = timed(&mut || {});
        let per_op = |ticks: u64| ns(ticks.saturating_sub(pair) as f64 / K as f64);
        let shared = Shared::new(2, *clock, 1_000_000_000, [0; MAX_ARGS + 1]);
        let handlers: [Handler<u64>; 1] = [|s, _, _| *s += 1];
        let arrays = [64usize; 8];
        let mut node =
            NativeNode::new(0, &shared, &handlers, 0u64, ReceiveMode::Polling, BarrierKind::SharedMemory, 2, &arrays);
        let bases: Vec<Addr> = (0..arrays.len()).map(|k| node.private_array(k)).collect();
        let private_ref = per_op(timed(&mut || {
            for i in 0..K {
                node.private_read(bases[i % bases.len()].word(i));
            }
        }));
        let base = node.alloc_shared(64, Placement::OnNode(0));
        let shared_ref = per_op(timed(&mut || {
            for i in 0..K {
                std::hint::black_box(node.load(base.word(i)));
            }
        }));
        let poll = per_op(timed(&mut || {
            for _ in 0..K {
                node.poll();
            }
        }));
        node.set_receive_mode(ReceiveMode::Interrupt);
        let interrupt_tick = per_op(timed(&mut || {
            for _ in 0..K {
                node.compute(0);
            }
        }));
        node.set_receive_mode(ReceiveMode::Polling);
        let ticks = short_send_ticks(clock);
        let send_per_arg_u64 = ns(ticks[MAX_ARGS].saturating_sub(ticks[0]) as f64 / MAX_ARGS as f64);
        let line = [0u64; LINE_WORDS];
        let one = |node: &mut NativeNode<'_, u64>, bulk: bool| {
            median(
                (0..N)
                    .map(|_| {
                        let a = clock.now();
                        if bulk {
                            let payload = node.comm.payload(&[&line]);
                            node.comm.send(0, Target::App(0), &[], payload);
                        } else {
                            node.comm.send(0, Target::App(0), &[], Vec::new());
                        }
                        let t = clock.now().saturating_sub(a);
                        while node.handle_waiting() {}
                        t
                    })
                    .collect(),
            )
        };
        let null = one(&mut node, false);
        let bulk = one(&mut node, true);
        OperationNs {
            private_ref,
            shared_ref,
            poll,
            interrupt_tick,
            send_per_arg_u64,
            bulk_extra: ns(bulk.saturating_sub(null) as f64),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owed_send_time_moves_to_message_overhead_and_the_categories_still_sum() {
        let mut a = Account::new(100);
        // 50 ticks of compute, 30 of them owed to sends.
        a.owed = 30;
        assert_eq!(a.switch(150, SYNC), COMPUTE);
        assert_eq!((a.by_cat[COMPUTE], a.by_cat[MESSAGE], a.owed), (20, 30, 0));
        a.switch(170, COMPUTE);
        assert_eq!(a.by_cat[SYNC], 20);
        // More owed than the span: only the span moves.
        a.owed = 500;
        a.end(180);
        assert_eq!((a.by_cat[COMPUTE], a.by_cat[MESSAGE]), (20, 40));
        assert_eq!(a.by_cat.iter().sum::<u64>(), a.finish - a.start);
    }

    #[test]
    fn the_message_paths_pieces_are_measured_and_sum() {
        let p = message_path_ns(&Clock::new(crate::clock::host_clock().mhz));
        for (what, v) in [("stamp", p.stamp), ("send", p.send), ("look", p.look), ("dispatch", p.dispatch)] {
            // Zero is possible (a piece below the clock's resolution); a millisecond is broken.
            assert!(v.is_finite() && (0.0..1e6).contains(&v), "{what}: {v} ns in {p:?}");
        }
        assert_eq!(p.added(), p.send + p.look / 2.0 + p.dispatch + p.stamp);
    }

    #[test]
    fn the_operations_are_measured() {
        let o = operation_ns(&Clock::new(crate::clock::host_clock().mhz));
        for (what, v) in [
            ("private_ref", o.private_ref),
            ("shared_ref", o.shared_ref),
            ("poll", o.poll),
            ("interrupt_tick", o.interrupt_tick),
            ("send_per_arg_u64", o.send_per_arg_u64),
            ("bulk_extra", o.bulk_extra),
        ] {
            // Zero is possible (below the clock's resolution); a millisecond is broken.
            assert!(v.is_finite() && (0.0..1e6).contains(&v), "{what}: {v} ns in {o:?}");
        }
    }

    #[test]
    fn short_send_costs_grow_with_the_arguments_and_are_sane() {
        let clock = Clock::new(crate::clock::host_clock().mhz);
        let t = short_send_ticks(&clock);
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
        // A send is at least a store: a whole second per send would be a broken calibration.
        assert!(clock.cycles(t[MAX_ARGS]) < 1e3 * crate::clock::host_clock().mhz * 1e3, "{t:?}");
    }
}
