//! The lazy-task-creation scheduler in its two variants (`sm`, `mp`) over one [`Program`], and
//! the plain recursion without a scheduler ([`Sequential`]) that speedups divide. The design is
//! described in the module above.

use super::tree::{Kind, Task, Tree, TASK_WORDS};
use crate::runtime::sched::Sched;
use commlab_api::{
    Addr, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};
use std::collections::VecDeque;
use std::sync::Arc;

/// The parent reference of the root task: its value is the answer.
const ROOT: u64 = u64::MAX;
/// Which slot of its parent frame a task's value fills.
const LEFT: u64 = 0;
const RIGHT: u64 = 1;

// Words of a frame (`sm`: in shared memory homed at its creator; `mp`: the layout of the
// creator's private frame array, whose values live in `MpFrame`).
const F_PARENT: usize = 0;
const F_SIDE: usize = 1;
const F_JOIN: usize = 2;
const F_STOLEN: usize = 3;
const F_LEFT: usize = 4;
const F_RIGHT: usize = 5;
const F_RELEASED: usize = 6;
const F_TASK: usize = 7;
const FRAME_WORDS: usize = 16;

// Words of a deque (`sm`, homed at its owner): lock, top (oldest), bottom (next push), slots.
// The lock has a 16-byte line to itself (word 1 is padding), top and bottom share the next: a
// thief's look at a queue is one miss, and a thief's test-and-set does not take away the line
// of top and bottom that the owner writes and reads on every push and pop.
const D_LOCK: usize = 0;
const D_TOP: usize = 2;
const D_BOTTOM: usize = 3;
const D_SLOTS: usize = 4;
/// `mp`'s private deque: top, bottom, slots.
const P_BOTTOM: usize = 1;
const P_SLOTS: usize = 2;

/// Each processor's shared region starts on a 512-byte boundary (whole lines on any preset).
const REGION_WORDS: usize = 64;
// The control words (`sm`), on processor 0.
const C_DONE: usize = 0;
const C_RESULT: usize = 1;

// `mp` handlers.
const STEAL: HandlerId = HandlerId(0);
const TASK: HandlerId = HandlerId(1);
const REFUSE: HandlerId = HandlerId(2);
const JOIN: HandlerId = HandlerId(3);
const DONE: HandlerId = HandlerId(4);

/// Bits of an `mp` frame reference that hold the frame's index (the creator is above them).
const IDX_MASK: u64 = 0xFFFF_FFFF;

#[derive(Clone, Copy, Debug)]
struct Layout {
    /// Deque slots: more than any processor can have pushed and not popped or lost to a thief
    /// (one per level of the tree below the task it started from).
    cap: usize,
    /// Frames per processor.
    pool: usize,
    deque_words: usize,
    pool_words: usize,
}

impl Layout {
    fn new(max_depth: usize) -> Layout {
        let cap = max_depth + 2;
        let pool = (2 * (max_depth + 1) + 16).next_multiple_of(REGION_WORDS / FRAME_WORDS);
        Layout {
            cap,
            pool,
            deque_words: (D_SLOTS + cap).next_multiple_of(REGION_WORDS),
            pool_words: pool * FRAME_WORDS,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct MpFrame {
    parent: u64,
    side: u64,
    join: u8,
    stolen: bool,
    left: u64,
    right: u64,
    task: Task,
}

#[derive(Clone, Copy, Debug)]
enum Reply {
    /// A stolen continuation: the frame (creator and index) its value joins, and the task.
    Task(u64, Task),
    Refused,
}

/// A processor's private state: its figures, and its scheduler data (`sm`: mirrors of what only
/// it reads; `mp`: its deque and frames).
#[derive(Default)]
pub struct State {
    pub(crate) leaves: Vec<u64>,
    pub(crate) evaluations: u64,
    pub(crate) steals_attempted: u64,
    pub(crate) steals_succeeded: u64,
    /// Continuations moved off their processor: stolen ones, and (`sm`) frames completed by a
    /// processor other than their creator, which carries the parent's continuation on.
    pub(crate) migrated: u64,
    pub(crate) inlined: u64,
    /// The scheduler's messages (`mp`) sent by this processor and handled by it.
    pub(crate) sent: u64,
    pub(crate) handled: u64,
    /// Scheduler invariants found broken (a pop that did not return the expected frame, ...).
    pub(crate) errors: u64,
    pub(crate) start: f64,
    pub(crate) finished_at: Option<f64>,
    pub(crate) result: Option<u64>,
    /// This processor completed the root.
    pub(crate) finisher: bool,
    free: Vec<u32>,
    in_use: Vec<bool>,
    bottom: u64,
    next_victim: usize,
    deque: VecDeque<u32>,
    frames: Vec<MpFrame>,
    reply: Option<Reply>,
    done: bool,
    max_args: usize,
    refuse_cycles: u64,
}

/// Work a processor is about to run: `task`, whose value goes to `side` of frame `dest`.
/// `chain`: every frame between here and `dest` was pushed by this processor since it last
/// took work, so the continuation of a left side may still be at the bottom of its deque.
struct Run {
    task: Task,
    dest: u64,
    side: u64,
    chain: bool,
}

/// One step up from a frame.
enum Step {
    /// The value was deposited; the other side will complete the frame.
    Stop,
    /// The frame is complete: its value goes to `side` of `parent`.
    Up { value: u64, parent: u64, side: u64, joined: bool },
}

/// `sm`'s shared regions.
#[derive(Clone, Copy)]
struct Shared {
    ctl: Addr,
    deques: Addr,
    frames: Addr,
}

pub(crate) struct Lazy<T> {
    tree: Arc<T>,
    mp: bool,
    lazy_call: u64,
    max_args: usize,
    layout: Layout,
    /// The idle loop's own work per failed steal attempt (`costs.sched_idle_loop`) and a
    /// victim's handler that refuses a steal request (`costs.sched_refuse`, `mp`).
    idle_cycles: u64,
    refuse_cycles: u64,
}

impl<T: Tree> Lazy<T> {
    pub(crate) fn new(tree: Arc<T>, mp: bool, lazy_call: u64, max_args: usize, sched: &Sched) -> Lazy<T> {
        let layout = Layout::new(tree.max_depth());
        Lazy { tree, mp, lazy_call, max_args, layout, idle_cycles: sched.idle_loop, refuse_cycles: sched.refuse }
    }
}

/// The plain recursion, charged as the scheduler charges each call; records leaves.
fn recurse<T: Tree, N: Node<State = State>>(tree: &T, lazy_call: u64, node: &mut N, t: &Task) -> u64 {
    let e = tree.expand(t);
    node.compute(lazy_call + e.work_cycles);
    let ev = e.evaluations;
    match e.kind {
        Kind::Leaf { value, id } => {
            node.state(|s| {
                s.evaluations += ev;
                s.leaves.push(id);
            });
            value
        }
        Kind::Split(l, r) => {
            node.state(|s| s.evaluations += ev);
            let a = recurse(tree, lazy_call, node, &l);
            let b = recurse(tree, lazy_call, node, &r);
            T::combine(a, b)
        }
    }
}

/// The recursion on one processor without a scheduler: the sequential time.
pub(crate) struct Sequential<T> {
    tree: Arc<T>,
    lazy_call: u64,
}

impl<T> Sequential<T> {
    pub(crate) fn new(tree: Arc<T>, lazy_call: u64) -> Sequential<T> {
        Sequential { tree, lazy_call }
    }
}

impl<T: Tree> Program for Sequential<T> {
    type State = State;
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State::default()
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        node.begin_timing();
        let start = node.now_cycles();
        let v = recurse(&*self.tree, self.lazy_call, node, &self.tree.root());
        let t = node.now_cycles();
        node.state(|s| {
            s.start = start;
            s.finished_at = Some(t);
            s.result = Some(v);
            s.finisher = true;
        });
    }
}

impl<T: Tree> Program for Lazy<T> {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_steal, on_task, on_refuse, on_join::<T>, on_done]
    }
    fn receive_mode(&self) -> ReceiveMode {
        ReceiveMode::Interrupt
    }
    fn barrier_kind(&self) -> BarrierKind {
        if self.mp {
            BarrierKind::Messages
        } else {
            BarrierKind::SharedMemory
        }
    }
    fn private_arrays(&self, _: ProcId) -> Vec<usize> {
        let l = self.layout;
        // The free list, the `mp` deque, the `mp` frames.
        vec![l.pool, P_SLOTS + l.cap, l.pool_words]
    }
    fn init_state(&self, id: ProcId, nprocs: usize) -> State {
        let pool = self.layout.pool;
        State {
            free: (0..pool as u32).rev().collect(),
            in_use: vec![false; pool],
            frames: if self.mp { vec![MpFrame::default(); pool] } else { Vec::new() },
            next_victim: (id + 1) % nprocs,
            max_args: self.max_args,
            refuse_cycles: self.refuse_cycles,
            ..State::default()
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let (id, n) = (node.id(), node.nprocs());
        let sh = (!self.mp).then(|| Shared {
            ctl: node.alloc_shared(REGION_WORDS, Placement::OnNode(0)),
            deques: node.alloc_shared(n * self.layout.deque_words, Placement::Block),
            frames: node.alloc_shared(n * self.layout.pool_words, Placement::Block),
        });
        node.barrier();
        node.begin_timing();
        let start = node.now_cycles();
        node.state(|s| s.start = start);
        let mut work = (id == 0).then(|| Run { task: self.tree.root(), dest: ROOT, side: LEFT, chain: false });
        loop {
            if let Some(r) = work.take() {
                work = self.run(node, sh, r);
                continue;
            }
            if self.is_done(node, sh) {
                break;
            }
            if n == 1 {
                // Nothing to steal from and the root is not done: cannot happen.
                node.state(|s| s.errors += 1);
                break;
            }
            work = self.steal(node, sh);
        }
    }
}

impl<T: Tree> Lazy<T> {
    /// Descend leftmost from `r`, forking, to a leaf; then return its value up.
    fn run<N: Node<State = State>>(&self, node: &mut N, sh: Option<Shared>, mut r: Run) -> Option<Run> {
        let value = loop {
            let e = self.tree.expand(&r.task);
            node.compute(self.lazy_call + e.work_cycles);
            let ev = e.evaluations;
            match e.kind {
                Kind::Leaf { value, id } => {
                    node.state(|s| {
                        s.evaluations += ev;
                        s.leaves.push(id);
                    });
                    break value;
                }
                Kind::Split(l, rt) => {
                    node.state(|s| s.evaluations += ev);
                    match self.fork(node, sh, r.dest, r.side, &rt) {
                        Some(f) => r = Run { task: l, dest: f, side: LEFT, chain: true },
                        None => {
                            node.state(|s| s.inlined += 1);
                            let a = recurse(&*self.tree, self.lazy_call, node, &l);
                            let b = recurse(&*self.tree, self.lazy_call, node, &rt);
                            break T::combine(a, b);
                        }
                    }
                }
            }
        };
        self.ret(node, sh, value, r.dest, r.side, r.chain)
    }

    /// Return `v` into `side` of frame `f` and on up while frames complete. Returns the right
    /// task of a frame whose continuation was still ours, or None (deposited, or done).
    fn ret<N: Node<State = State>>(
        &self,
        node: &mut N,
        sh: Option<Shared>,
        mut v: u64,
        mut f: u64,
        mut side: u64,
        mut chain: bool,
    ) -> Option<Run> {
        loop {
            if f == ROOT {
                self.finish(node, sh, v);
                return None;
            }
            if side == LEFT && chain {
                match self.pop_own(node, sh) {
                    Some(g) if g == f => {
                        let task = self.resume(node, sh, f, v);
                        return Some(Run { task, dest: f, side: RIGHT, chain: true });
                    }
                    Some(_) => {
                        node.state(|s| s.errors += 1);
                        return None;
                    }
                    None => {}
                }
            }
            match self.step(node, sh, v, f, side) {
                Step::Stop => return None,
                Step::Up { value, parent, side: s, joined } => {
                    v = value;
                    f = parent;
                    side = s;
                    chain &= !joined;
                }
            }
        }
    }

    fn deque(&self, sh: Shared, p: ProcId) -> Addr {
        sh.deques.word(p * self.layout.deque_words)
    }

    fn slot(&self, dq: Addr, i: u64) -> Addr {
        dq.word(D_SLOTS + (i % self.layout.cap as u64) as usize)
    }

    fn frame_addr(&self, sh: Shared, p: ProcId, idx: usize) -> Addr {
        sh.frames.word(p * self.layout.pool_words + idx * FRAME_WORDS)
    }

    /// A frame from the free list (`sm`: reclaiming frames others completed when it is empty).
    fn take_frame<N: Node<State = State>>(&self, node: &mut N, sh: Option<Shared>) -> Option<usize> {
        let list = node.private_array(0);
        let pop = |node: &mut N| {
            node.state(|s| {
                let i = s.free.pop()? as usize;
                s.in_use[i] = true;
                Some((i, s.free.len()))
            })
        };
        if let Some((i, at)) = pop(node) {
            node.private_read(list.word(at));
            return Some(i);
        }
        let sh = sh?;
        let me = node.id();
        let used: Vec<usize> = node.state(|s| (0..s.in_use.len()).filter(|&i| s.in_use[i]).collect());
        for i in used {
            if node.load(self.frame_addr(sh, me, i).word(F_RELEASED)) != 0 {
                let at = node.state(|s| s.free.len());
                node.private_write(list.word(at));
                node.state(|s| {
                    s.in_use[i] = false;
                    s.free.push(i as u32);
                });
            }
        }
        let (i, at) = pop(node)?;
        node.private_read(list.word(at));
        Some(i)
    }

    /// Give a frame this processor created back to its free list.
    fn free_frame<N: Node<State = State>>(&self, node: &mut N, idx: usize) {
        let list = node.private_array(0);
        let at = node.state(|s| {
            s.in_use[idx] = false;
            s.free.push(idx as u32);
            s.free.len() - 1
        });
        node.private_write(list.word(at));
    }

    /// Make a frame for a split whose value goes to `side` of `dest`, with `right` as the
    /// stealable continuation; push it. None when the frame pool is exhausted.
    fn fork<N: Node<State = State>>(
        &self,
        node: &mut N,
        sh: Option<Shared>,
        dest: u64,
        side: u64,
        right: &Task,
    ) -> Option<u64> {
        let me = node.id();
        let idx = self.take_frame(node, sh)?;
        match sh {
            Some(sh) => {
                let f = self.frame_addr(sh, me, idx);
                node.store(f.word(F_PARENT), dest);
                node.store(f.word(F_SIDE), side);
                node.store(f.word(F_JOIN), 0);
                node.store(f.word(F_STOLEN), 0);
                node.store(f.word(F_RELEASED), 0);
                for (k, w) in right.iter().enumerate() {
                    node.store(f.word(F_TASK + k), *w);
                }
                // The push: the entry first, then the bottom index a thief reads under the lock.
                let dq = self.deque(sh, me);
                let b = node.state(|s| s.bottom);
                node.store(self.slot(dq, b), f.0);
                node.store(dq.word(D_BOTTOM), b + 1);
                node.state(|s| s.bottom = b + 1);
                Some(f.0)
            }
            None => {
                let len = node.state(|s| {
                    s.frames[idx] =
                        MpFrame { parent: dest, side, join: 0, stolen: false, left: 0, right: 0, task: *right };
                    s.deque.push_back(idx as u32);
                    s.deque.len()
                });
                let f = node.private_array(2).word(idx * FRAME_WORDS);
                for w in [F_PARENT, F_SIDE, F_JOIN, F_STOLEN] {
                    node.private_write(f.word(w));
                }
                for k in 0..TASK_WORDS {
                    node.private_write(f.word(F_TASK + k));
                }
                let dq = node.private_array(1);
                node.private_write(dq.word(P_SLOTS + len % self.layout.cap));
                node.private_write(dq.word(P_BOTTOM));
                Some(((me as u64) << 32) | idx as u64)
            }
        }
    }

    /// Pop the bottom of this processor's deque (None: it is empty, everything was stolen).
    fn pop_own<N: Node<State = State>>(&self, node: &mut N, sh: Option<Shared>) -> Option<u64> {
        let me = node.id();
        match sh {
            Some(sh) => {
                // Lazy task creation's queue protocol (Mohr, Kranz & Halstead): the owner pops
                // without the lock -- it lowers bottom, then reads top -- and takes the lock only
                // when a thief may be taking the same entry (top has passed the new bottom).
                // Thieves raise top under the lock, then read bottom (`steal_sm`); with
                // sequentially consistent memory one of the two always sees the other.
                let dq = self.deque(sh, me);
                let b = node.state(|s| s.bottom);
                if b == 0 {
                    return None;
                }
                node.store(dq.word(D_BOTTOM), b - 1);
                let t = node.load(dq.word(D_TOP));
                if t < b {
                    node.state(|s| s.bottom = b - 1);
                    return Some(node.load(self.slot(dq, b - 1)));
                }
                // A thief got there first, or is about to: settle it under the lock.
                node.store(dq.word(D_BOTTOM), b);
                node.lock(dq.word(D_LOCK));
                let t = node.load(dq.word(D_TOP));
                let got = if b > t {
                    node.store(dq.word(D_BOTTOM), b - 1);
                    node.state(|s| s.bottom = b - 1);
                    Some(node.load(self.slot(dq, b - 1)))
                } else {
                    None
                };
                node.unlock(dq.word(D_LOCK));
                got
            }
            None => {
                let dq = node.private_array(1);
                node.private_read(dq.word(P_BOTTOM));
                let (idx, len) = node.state(|s| {
                    let len = s.deque.len();
                    (s.deque.pop_back(), len)
                });
                let idx = idx?;
                node.private_read(dq.word(P_SLOTS + len % self.layout.cap));
                node.private_write(dq.word(P_BOTTOM));
                Some(((me as u64) << 32) | idx as u64)
            }
        }
    }

    /// The continuation of frame `f` was still ours: keep the left value, read the right task.
    fn resume<N: Node<State = State>>(&self, node: &mut N, sh: Option<Shared>, f: u64, v: u64) -> Task {
        let mut task = [0; TASK_WORDS];
        match sh {
            Some(_) => {
                let fa = Addr(f);
                node.store(fa.word(F_LEFT), v);
                for (k, w) in task.iter_mut().enumerate() {
                    *w = node.load(fa.word(F_TASK + k));
                }
            }
            None => {
                let idx = (f & IDX_MASK) as usize;
                task = node.state(|s| {
                    s.frames[idx].left = v;
                    s.frames[idx].task
                });
                let fa = node.private_array(2).word(idx * FRAME_WORDS);
                node.private_write(fa.word(F_LEFT));
                for k in 0..TASK_WORDS {
                    node.private_read(fa.word(F_TASK + k));
                }
            }
        }
        task
    }

    /// Deliver `v` to `side` of frame `f` whose continuation is not ours to pop.
    fn step<N: Node<State = State>>(&self, node: &mut N, sh: Option<Shared>, v: u64, f: u64, side: u64) -> Step {
        let me = node.id();
        match sh {
            Some(sh) => {
                let fa = Addr(f);
                let (value, joined) = if side == LEFT {
                    // Our continuation for this frame was stolen: join.
                    node.store(fa.word(F_LEFT), v);
                    if node.fetch_add(fa.word(F_JOIN), 1) == 0 {
                        return Step::Stop;
                    }
                    (T::combine(v, node.load(fa.word(F_RIGHT))), true)
                } else if node.load(fa.word(F_STOLEN)) != 0 {
                    node.store(fa.word(F_RIGHT), v);
                    if node.fetch_add(fa.word(F_JOIN), 1) == 0 {
                        return Step::Stop;
                    }
                    (T::combine(node.load(fa.word(F_LEFT)), v), true)
                } else {
                    // The creator popped the continuation and kept the left value here.
                    (T::combine(node.load(fa.word(F_LEFT)), v), false)
                };
                let parent = node.load(fa.word(F_PARENT));
                let pside = node.load(fa.word(F_SIDE));
                let offset = (f - sh.frames.0) as usize / 8;
                let (creator, idx) = (offset / self.layout.pool_words, offset % self.layout.pool_words / FRAME_WORDS);
                if creator == me {
                    self.free_frame(node, idx);
                } else {
                    node.store(fa.word(F_RELEASED), 1);
                    node.state(|s| s.migrated += 1);
                }
                Step::Up { value, parent, side: pside, joined }
            }
            None => {
                let creator = (f >> 32) as usize;
                let idx = (f & IDX_MASK) as usize;
                if creator != me {
                    node.send_am(creator, JOIN, &[idx as u64 | side << 32, v]);
                    node.state(|s| s.sent += 1);
                    return Step::Stop;
                }
                let (step, free_at) = node.state(|s| {
                    let step = local_step::<T>(s, idx, side, v);
                    (step, s.free.len())
                });
                let fa = node.private_array(2).word(idx * FRAME_WORDS);
                node.private_read(fa.word(F_STOLEN));
                node.private_write(fa.word(if side == LEFT { F_LEFT } else { F_RIGHT }));
                if let Step::Up { .. } = step {
                    node.private_read(fa.word(F_PARENT));
                    let list = node.private_array(0);
                    node.private_write(list.word(free_at.saturating_sub(1)));
                }
                step
            }
        }
    }

    fn finish<N: Node<State = State>>(&self, node: &mut N, sh: Option<Shared>, v: u64) {
        let t = node.now_cycles();
        node.state(|s| {
            s.finished_at = Some(t);
            s.result = Some(v);
            s.finisher = true;
            s.done = true;
        });
        match sh {
            Some(sh) => {
                node.store(sh.ctl.word(C_RESULT), v);
                node.store(sh.ctl.word(C_DONE), 1);
            }
            None => {
                let me = node.id();
                for p in (0..node.nprocs()).filter(|&p| p != me) {
                    node.send_am(p, DONE, &[v]);
                    node.state(|s| s.sent += 1);
                }
            }
        }
    }

    fn is_done<N: Node<State = State>>(&self, node: &mut N, sh: Option<Shared>) -> bool {
        match sh {
            Some(sh) => node.load(sh.ctl.word(C_DONE)) != 0,
            None => node.state(|s| s.done),
        }
    }

    /// One steal attempt from the next victim (round-robin from this processor's id + 1; the
    /// same victim again after a success).
    fn steal<N: Node<State = State>>(&self, node: &mut N, sh: Option<Shared>) -> Option<Run> {
        let (me, n) = (node.id(), node.nprocs());
        let victim = node.state(|s| {
            s.steals_attempted += 1;
            s.next_victim
        });
        let got = match sh {
            Some(sh) => self.steal_sm(node, sh, victim),
            None => {
                node.state(|s| {
                    s.reply = None;
                    s.sent += 1;
                });
                node.send_am(victim, STEAL, &[]);
                node.wait_until("a steal reply", |s| s.reply.is_some());
                match node.state(|s| s.reply.take()) {
                    Some(Reply::Task(f, task)) => Some((f, task)),
                    _ => None,
                }
            }
        };
        match got {
            Some((f, task)) => {
                node.state(|s| {
                    s.steals_succeeded += 1;
                    s.migrated += 1;
                });
                Some(Run { task, dest: f, side: RIGHT, chain: false })
            }
            None => {
                node.state(|s| {
                    let mut v = (s.next_victim + 1) % n;
                    if v == me {
                        v = (v + 1) % n;
                    }
                    s.next_victim = v;
                });
                // The idle loop's own instructions before the next attempt.
                node.compute(self.idle_cycles);
                None
            }
        }
    }

    /// Take the oldest continuation of `victim`'s shared deque: look without the lock, then
    /// try the lock once and look again; read the migrated task from its frame.
    fn steal_sm<N: Node<State = State>>(&self, node: &mut N, sh: Shared, victim: ProcId) -> Option<(u64, Task)> {
        let dq = self.deque(sh, victim);
        if node.load(dq.word(D_TOP)) >= node.load(dq.word(D_BOTTOM)) {
            return None;
        }
        // One test-and-set, no spinning: a lock held means another thief is taking the entry
        // this one saw (or the owner is settling its last one), so it goes on to its next
        // victim. Waiting instead made every idle processor a spinner on the lock of the one
        // processor with work, whose releases then overflowed the directory's pointers.
        if node.compare_swap(dq.word(D_LOCK), 0, 1) != 0 {
            return None;
        }
        // Claim the top entry first, then check the owner has not popped it (see `pop_own`).
        let t = node.load(dq.word(D_TOP));
        node.store(dq.word(D_TOP), t + 1);
        let b = node.load(dq.word(D_BOTTOM));
        let f = if t < b {
            Some(node.load(self.slot(dq, t)))
        } else {
            node.store(dq.word(D_TOP), t);
            None
        };
        node.store(dq.word(D_LOCK), 0);
        let fa = Addr(f?);
        node.store(fa.word(F_STOLEN), 1);
        let mut task = [0; TASK_WORDS];
        for (k, w) in task.iter_mut().enumerate() {
            *w = node.load(fa.word(F_TASK + k));
        }
        Some((fa.0, task))
    }
}

/// `mp`: deliver `v` to `side` of this processor's frame `idx` (a join if its continuation
/// was stolen; else the creator kept the left value there and this is the right side).
fn local_step<T: Tree>(s: &mut State, idx: usize, side: u64, v: u64) -> Step {
    let fr = &mut s.frames[idx];
    let (value, joined) = if fr.stolen {
        if side == LEFT {
            fr.left = v;
        } else {
            fr.right = v;
        }
        fr.join += 1;
        if fr.join == 1 {
            return Step::Stop;
        }
        (T::combine(fr.left, fr.right), true)
    } else if side == RIGHT {
        (T::combine(fr.left, v), false)
    } else {
        // A left value for a frame whose continuation nobody stole, yet not popped by us.
        s.errors += 1;
        return Step::Stop;
    };
    let (parent, pside) = (fr.parent, fr.side);
    s.in_use[idx] = false;
    s.free.push(idx as u32);
    Step::Up { value, parent, side: pside, joined }
}

/// `mp`: the root is complete; tell everyone.
fn finish_in_handler(s: &mut State, ctx: &mut dyn HandlerCtx, v: u64) {
    s.finished_at = Some(ctx.now_cycles());
    s.result = Some(v);
    s.finisher = true;
    s.done = true;
    let me = ctx.id();
    for p in (0..ctx.nprocs()).filter(|&p| p != me) {
        ctx.send_am(p, DONE, &[v]);
        s.sent += 1;
    }
}

/// A thief asks for work: reply with the oldest continuation, or refuse.
fn on_steal(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.handled += 1;
    s.sent += 1;
    match s.deque.pop_front() {
        Some(idx) => {
            let fr = &mut s.frames[idx as usize];
            fr.stolen = true;
            let mut args = vec![idx as u64];
            args.extend_from_slice(&fr.task);
            // Top index, entry, stolen flag, the task's words.
            ctx.private_hits(3 + TASK_WORDS as u64);
            if args.len() <= s.max_args {
                ctx.send_am(m.src, TASK, &args);
            } else {
                ctx.send_bulk(m.src, TASK, &[], &[&args]);
            }
        }
        None => {
            // Its queue's top and bottom, the test, the refusal's handler word.
            ctx.compute(s.refuse_cycles);
            ctx.send_am(m.src, REFUSE, &[]);
        }
    }
}

/// A stolen continuation arrives (in the arguments, or by DMA when it did not fit them).
fn on_task(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.handled += 1;
    let w = if m.args.is_empty() { m.payload } else { m.args };
    let mut task = [0; TASK_WORDS];
    task.copy_from_slice(&w[1..=TASK_WORDS]);
    ctx.private_hits(1 + TASK_WORDS as u64);
    s.reply = Some(Reply::Task(((m.src as u64) << 32) | w[0], task));
}

fn on_refuse(s: &mut State, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.handled += 1;
    s.reply = Some(Reply::Refused);
}

/// A value for one of this processor's frames: join, and carry a completed frame's value on
/// up (through local frames here, to a remote one by another message).
fn on_join<T: Tree>(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.handled += 1;
    let me = ctx.id();
    let (mut idx, mut side, mut v) = ((m.args[0] & IDX_MASK) as usize, m.args[0] >> 32, m.args[1]);
    let mut words = 0;
    loop {
        // Stolen flag, the value deposited, the join count; then parent, side, the free list.
        words += 3;
        match local_step::<T>(s, idx, side, v) {
            Step::Stop => break,
            Step::Up { value, parent, side: ps, .. } => {
                words += 3;
                if parent == ROOT {
                    finish_in_handler(s, ctx, value);
                    break;
                }
                let creator = (parent >> 32) as usize;
                if creator != me {
                    ctx.send_am(creator, JOIN, &[(parent & IDX_MASK) | ps << 32, value]);
                    s.sent += 1;
                    break;
                }
                idx = (parent & IDX_MASK) as usize;
                side = ps;
                v = value;
            }
        }
    }
    ctx.private_hits(words);
}

fn on_done(s: &mut State, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.handled += 1;
    s.done = true;
    s.result = Some(m.args[0]);
}
