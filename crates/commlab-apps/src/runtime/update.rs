//! Tempest's update protocol for producer-consumer sharing, as a user protocol over a user
//! region (`Node::alloc_user_region`, software-DSM machines only): readers fault on a block
//! once, register at its home and get the block read-only; afterwards the home pushes every
//! version it publishes to the registered readers, so they never miss again.
//!
//! - A read fault ([`on_fault`]) asks the block's home for it (`GET`); the home registers the
//!   reader and replies with the block by bulk message (`DATA`); the reader installs it and
//!   tags it read-only, and its access retries.
//! - [`publish`]`(node, blocks)`, called by the home after storing new values, sends each
//!   block to its registered readers (`UPDATE`, bulk) and returns once every reader has
//!   acknowledged (`ACK`), so a barrier after it orders the new values before any read.
//!
//! - A write fault away from the home asks the home for the block to write (`WGET`); the home
//!   registers the writer as a reader too and replies with the block (`WDATA`), which the
//!   writer installs writable. Its [`publish`] of a block it does not home sends the new
//!   version to the home (`PUSH`); the home stores it and forwards it (`UPDATE`) to every
//!   other registered reader, whose acknowledgements go to the writer, and tells the writer how
//!   many to expect (`COUNT`). One writer per block between two synchronisations: two writers
//!   of one block in one phase is a program error this protocol does not detect.
//!
//! A fault on a block outside the protocol's region is counted in
//! [`UpdateState::bad_faults`] and not served, so the access waits for a tag that never
//! changes and the run ends with a deadlock report naming that wait.
//!
//! The eight handlers are registered in the program's handler table as one run starting at
//! `first` ([`handlers`]); [`UpdateState::new`] takes the same `first`, so the protocol can
//! sit beside a program's own handlers.

use commlab_api::{AccessTag, Addr, Fault, Handler, HandlerCtx, HandlerId, Message, Node, ProcId};
use std::collections::BTreeMap;

/// The protocol's state at one node.
#[derive(Clone, Debug, Default)]
pub struct UpdateState {
    /// The region's first block, the block size in bytes, and each block's home.
    base: u64,
    block_bytes: u64,
    homes: Vec<ProcId>,
    /// The protocol's first handler number.
    first: u32,
    /// At a home: block address -> the readers registered there, in the order they faulted.
    pub readers: BTreeMap<u64, Vec<ProcId>>,
    /// Acknowledgements of pushed updates received.
    pub acks: u64,
    /// At a writer away from the home: `COUNT` replies received, and the acknowledgements
    /// they announced.
    pub counts: u64,
    pub announced: u64,
    /// Faults the protocol does not serve: faults on blocks outside its region.
    pub bad_faults: u64,
}

impl UpdateState {
    /// The protocol over the user region at `base`, of blocks of `block_bytes` (the machine's
    /// line size) homed at `homes[b]`, with handlers registered from number `first` on.
    pub fn new(base: Addr, block_bytes: u64, homes: Vec<ProcId>, first: u32) -> UpdateState {
        UpdateState { base: base.0, block_bytes, homes, first, ..UpdateState::default() }
    }
    /// The home of `block`, if the region holds it.
    fn home(&self, block: u64) -> Option<ProcId> {
        let k = block.checked_sub(self.base)? / self.block_bytes;
        self.homes.get(usize::try_from(k).ok()?).copied()
    }
    fn handler(&self, k: u32) -> HandlerId {
        HandlerId(self.first + k)
    }
    fn words(&self) -> usize {
        (self.block_bytes / 8) as usize
    }
}

/// A processor state that holds an [`UpdateState`].
pub trait HasUpdate {
    fn update_state(&self) -> &UpdateState;
    fn update_state_mut(&mut self) -> &mut UpdateState;
}

const GET: u32 = 0;
const DATA: u32 = 1;
const UPDATE: u32 = 2;
const ACK: u32 = 3;
const WGET: u32 = 4;
const WDATA: u32 = 5;
const PUSH: u32 = 6;
const COUNT: u32 = 7;

/// The protocol's handlers, in the order their numbers assume: register them at `first`.
pub fn handlers<S: HasUpdate>() -> Vec<Handler<S>> {
    vec![
        on_get::<S>,
        on_data::<S>,
        on_update::<S>,
        on_ack::<S>,
        on_wget::<S>,
        on_wdata::<S>,
        on_push::<S>,
        on_count::<S>,
    ]
}

/// The program's fault handler (`Program::fault_handler`): a fault asks the home, for reading
/// or for writing.
pub fn on_fault<S: HasUpdate>(s: &mut S, ctx: &mut dyn HandlerCtx, f: &Fault) {
    let up = s.update_state_mut();
    match up.home(f.block.0) {
        Some(home) => ctx.send_am(home, up.handler(if f.write { WGET } else { GET }), &[f.block.0]),
        // A block of another user region.
        None => up.bad_faults += 1,
    }
}

/// At the home: register the writer (it holds a copy to be kept up to date too) and send it
/// the block to write.
fn on_wget<S: HasUpdate>(s: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let up = s.update_state_mut();
    let block = m.args[0];
    let readers = up.readers.entry(block).or_default();
    if !readers.contains(&m.src) {
        readers.push(m.src);
    }
    send_block(up, ctx, block, m.src, WDATA);
}

/// At the home: send `block`'s home copy to `dest`, to handler `kind` of the protocol.
fn send_block(up: &UpdateState, ctx: &mut dyn HandlerCtx, block: u64, dest: ProcId, kind: u32) {
    let mut buf = vec![0; up.words()];
    ctx.block_read(Addr(block), &mut buf);
    ctx.send_bulk(dest, up.handler(kind), &[block], &[&buf]);
}

/// At a writer: install the block writable.
fn on_wdata<S: HasUpdate>(_: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.block_write(Addr(m.args[0]), m.payload);
    ctx.set_tag(Addr(m.args[0]), AccessTag::Writable);
}

/// At the home: a writer's new version. Store it, forward it to the other readers (their
/// acknowledgements go to the writer), and tell the writer how many to expect.
fn on_push<S: HasUpdate>(s: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let up = s.update_state_mut();
    let (block, writer) = (m.args[0], m.src);
    ctx.block_write(Addr(block), m.payload);
    let others: Vec<ProcId> =
        up.readers.get(&block).map_or_else(Vec::new, |r| r.iter().copied().filter(|&r| r != writer).collect());
    for &r in &others {
        ctx.send_bulk(r, up.handler(UPDATE), &[block, writer as u64], &[m.payload]);
    }
    ctx.send_am(writer, up.handler(COUNT), &[others.len() as u64]);
}

fn on_count<S: HasUpdate>(s: &mut S, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    let up = s.update_state_mut();
    up.counts += 1;
    up.announced += m.args[0];
}

/// At the home: register the reader and send it the block.
fn on_get<S: HasUpdate>(s: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let up = s.update_state_mut();
    let block = m.args[0];
    up.readers.entry(block).or_default().push(m.src);
    send_block(up, ctx, block, m.src, DATA);
}

/// At a reader: install the block read-only.
fn on_data<S: HasUpdate>(_: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.block_write(Addr(m.args[0]), m.payload);
    ctx.set_tag(Addr(m.args[0]), AccessTag::ReadOnly);
}

/// At a reader: overwrite its copy with the pushed version and acknowledge it to the writer
/// (the home, or the writer named in `args[1]` when the home forwards a writer's version).
fn on_update<S: HasUpdate>(s: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.block_write(Addr(m.args[0]), m.payload);
    let writer = m.args.get(1).map_or(m.src, |&w| w as ProcId);
    ctx.send_am(writer, s.update_state().handler(ACK), &[]);
}

fn on_ack<S: HasUpdate>(s: &mut S, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.update_state_mut().acks += 1;
}

/// After storing new values into `blocks`: push them to every registered reader and wait
/// until each has acknowledged. A block this node homes goes to its readers directly; one it
/// does not (it wrote the block after a write fault) goes to the home, which forwards it.
pub fn publish<S: HasUpdate, N: Node<State = S>>(node: &mut N, blocks: &[u64]) {
    let id = node.id();
    let words = node.state(|s| s.update_state().words());
    // Acknowledgements (and counts) may come in while the later updates are sent.
    let (acks0, counts0, announced0) = node.state(|s| {
        let up = s.update_state();
        (up.acks, up.counts, up.announced)
    });
    let (mut pushed, mut via_home) = (0, 0);
    for &b in blocks {
        let (home, readers) = node.state(|s| {
            let up = s.update_state();
            (up.home(b), up.readers.get(&b).cloned().unwrap_or_default())
        });
        let home = home.unwrap_or_else(|| panic!("publish of block {b:#x}, outside the protocol's region"));
        if home == id && readers.is_empty() {
            continue;
        }
        let values: Vec<u64> = (0..words).map(|w| node.load(Addr(b).word(w))).collect();
        if home != id {
            let push = node.state(|s| s.update_state().handler(PUSH));
            node.send_bulk(home, push, &[b], &[&values]);
            via_home += 1;
            continue;
        }
        let update = node.state(|s| s.update_state().handler(UPDATE));
        for r in readers {
            node.send_bulk(r, update, &[b], &[&values]);
            pushed += 1;
        }
    }
    node.wait_until("update acknowledgements", |s| {
        let up = s.update_state();
        up.counts == counts0 + via_home && up.acks == acks0 + pushed + (up.announced - announced0)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use commlab_api::{Backend, FaultHandler, Placement, Program};
    use commlab_sim::machine::MachineConfig;
    use commlab_sim::{SimError, Simulator};
    use std::sync::Arc;

    #[derive(Default)]
    struct St {
        up: UpdateState,
        /// Words a reader found other than the value of the last iteration it synchronised with.
        stale: u64,
        words_read: u64,
    }

    impl HasUpdate for St {
        fn update_state(&self) -> &UpdateState {
            &self.up
        }
        fn update_state_mut(&mut self) -> &mut UpdateState {
            &mut self.up
        }
    }

    /// The program's own handler, before the protocol's (which start at number 1): unused
    /// here but for showing the protocol can sit after others.
    fn nothing(_: &mut St, _: &mut dyn HandlerCtx, _: &Message<'_>) {}

    /// Every processor is home of `blocks` blocks and writes them each iteration; every
    /// processor reads the blocks of the next one. `publish: false` is a broken use that never
    /// pushes updates after the first iteration.
    struct ProducerConsumer {
        block_bytes: u64,
        blocks: usize,
        iterations: u64,
        publish: bool,
    }

    fn value(t: u64, block: usize, word: usize) -> u64 {
        (t + 1) * 1_000_000 + block as u64 * 100 + word as u64
    }

    impl Program for ProducerConsumer {
        type State = St;
        fn handlers(&self) -> Vec<Handler<St>> {
            let mut h: Vec<Handler<St>> = vec![nothing];
            h.extend(handlers::<St>());
            h
        }
        fn fault_handler(&self) -> Option<FaultHandler<St>> {
            Some(on_fault::<St>)
        }
        fn init_state(&self, _: ProcId, _: usize) -> St {
            St::default()
        }
        fn main<N: Node<State = St>>(&self, node: &mut N) {
            let (id, n, k) = (node.id(), node.nprocs(), self.blocks);
            let block_bytes = self.block_bytes;
            let words = block_bytes as usize / 8;
            let base = node.alloc_user_region(n * k * words, Placement::Block, block_bytes as usize).unwrap();
            let homes = (0..n * k).map(|b| b / k).collect();
            node.state(|s| s.up = UpdateState::new(base, block_bytes, homes, 1));
            let block = |b: usize| Addr(base.0 + b as u64 * block_bytes);
            node.barrier();
            node.begin_timing();
            let mine: Vec<u64> = (id * k..(id + 1) * k).map(|b| block(b).0).collect();
            let next = (id + 1) % n;
            for t in 0..self.iterations {
                for b in id * k..(id + 1) * k {
                    for w in 0..words {
                        node.store(block(b).word(w), value(t, b, w));
                    }
                }
                if self.publish || t == 0 {
                    publish(node, &mine);
                }
                node.barrier();
                for b in next * k..(next + 1) * k {
                    for w in 0..words {
                        let v = node.load(block(b).word(w));
                        node.state(|s| {
                            s.words_read += 1;
                            s.stale += u64::from(v != value(t, b, w));
                        });
                    }
                }
                node.barrier();
            }
        }
    }

    fn sim(machine: &str, procs: usize, checked: bool) -> Simulator {
        let cfg = MachineConfig::preset(machine, &[], Some(procs)).unwrap();
        Simulator::new(cfg).checked(checked)
    }

    /// Blocks of `lines` machine lines.
    fn pc(s: &Simulator, lines: usize, blocks: usize, iterations: u64, publish: bool) -> Arc<ProducerConsumer> {
        Arc::new(ProducerConsumer { block_bytes: (lines * s.line_bytes()) as u64, blocks, iterations, publish })
    }

    #[test]
    fn the_update_protocol_gives_fresh_values_and_readers_fault_only_once() {
        let (n, k, iters) = (4, 3, 4u64);
        // Blocks of one line, and of four (the study's 512 bytes on 128-byte lines).
        for (machine, lines) in [("blizzard-s", 1), ("blizzard-e", 1), ("blizzard-t", 1), ("blizzard-s", 4)] {
            // With the invariant checker on: a reader never sees a value older than the last
            // write before the barrier it synchronised with.
            let s = sim(machine, n, true);
            let words = lines * s.line_bytes() / 8;
            let run = || s.run(pc(&s, lines, k, iters, true)).unwrap();
            let out = run();
            for (p, st) in out.states.iter().enumerate() {
                assert_eq!(st.words_read, iters * (k * words) as u64, "{machine} P{p}");
                assert_eq!(st.stale, 0, "{machine} P{p}: a reader saw an old value");
                assert_eq!(st.up.bad_faults, 0);
                // Each reader of the block registered exactly once.
                for (b, r) in &st.up.readers {
                    assert_eq!(r, &vec![(p + n - 1) % n], "{machine} block {b:#x}");
                }
                // Every push to this home's reader was acknowledged: k blocks each iteration
                // but the first (its reader registers only when it reads, after that publish).
                assert_eq!(st.up.acks, k as u64 * (iters - 1), "{machine} P{p}");
            }
            let c = &out.stats.counters;
            // Readers never miss after the first time: one fault per (reader, block).
            assert_eq!(c["tempest_faults"], (n * k) as f64, "{machine}");
            // One tag change per fault (the reader's block made read-only).
            assert_eq!(c["tempest_tag_changes"], (n * k) as f64, "{machine}");
            // Block copies: per fault, the home's read and the reader's write; per later
            // iteration, each reader's write of the pushed update.
            assert_eq!(c["tempest_block_copies"], (2 * n * k) as f64 + (n * k) as f64 * (iters - 1) as f64);
            // The home's final values are the last iteration's.
            let base = out.states[0].up.base;
            for b in 0..n * k {
                for w in 0..words {
                    assert_eq!(out.load(Addr(base).word(b * words + w)), value(iters - 1, b, w));
                }
            }
            for p in &out.stats.procs {
                assert!((p.sum() - p.busy).abs() < 1e-6 * p.busy.max(1.0), "categories sum: {p:?}");
            }
            let sent: u64 = out.stats.nodes.iter().map(|x| x.messages_sent).sum();
            let received: u64 = out.stats.nodes.iter().map(|x| x.messages_received).sum();
            assert_eq!(sent, received);
            let again = run();
            assert_eq!((again.stats.cycles, &again.stats.counters), (out.stats.cycles, &out.stats.counters));
        }
    }

    #[test]
    fn the_checker_catches_a_use_that_leaves_readers_stale() {
        // Unchecked, the program's own reads see the stale values ...
        let s = sim("blizzard-s", 3, false);
        let out = s.run(pc(&s, 1, 2, 2, false)).unwrap();
        assert!(out.states.iter().all(|s| s.stale > 0));
        // ... and the checker stops the run at the barrier after the unpublished writes.
        let s = sim("blizzard-s", 3, true);
        let err = s.run(pc(&s, 1, 2, 2, false)).err().expect("the checker fails the run");
        assert!(matches!(&err, SimError::Internal(m) if m.contains("Tempest invariant")), "{err}");
    }

    /// Processor 2 reads a block homed at processor 0; then processor 1 writes it twice, each
    /// time publishing (through the home) before a barrier, and processors 2 and 0 read it.
    struct RemoteWrite;

    impl Program for RemoteWrite {
        type State = St;
        fn handlers(&self) -> Vec<Handler<St>> {
            handlers::<St>()
        }
        fn fault_handler(&self) -> Option<FaultHandler<St>> {
            Some(on_fault::<St>)
        }
        fn init_state(&self, _: ProcId, _: usize) -> St {
            St::default()
        }
        fn main<N: Node<State = St>>(&self, node: &mut N) {
            let base = node.alloc_user_region(16, Placement::OnNode(0), 128).unwrap();
            node.state(|s| s.up = UpdateState::new(base, 128, vec![0], 0));
            let id = node.id();
            let read = |node: &mut N, want: u64| {
                let v = node.load(base.word(5));
                node.state(|s| {
                    s.words_read += 1;
                    s.stale += u64::from(v != want);
                });
            };
            if id == 2 {
                read(node, 0);
            }
            node.barrier();
            for version in [7, 8] {
                if id == 1 {
                    node.store(base.word(5), version);
                    publish(node, &[base.0]);
                }
                node.barrier();
                if id != 1 {
                    read(node, version);
                }
                node.barrier();
            }
        }
    }

    #[test]
    fn a_writer_away_from_the_home_publishes_through_the_home() {
        for machine in ["blizzard-s", "blizzard-e", "blizzard-t"] {
            // The checker is on: at each barrier every readable copy equals the home's.
            let out = sim(machine, 3, true).run(Arc::new(RemoteWrite)).unwrap_or_else(|e| panic!("{machine}: {e}"));
            let (p0, p1, p2) = (&out.states[0], &out.states[1], &out.states[2]);
            assert_eq!((p0.words_read, p2.words_read), (2, 3), "{machine}");
            assert_eq!(p0.stale + p2.stale, 0, "{machine}: a reader saw an old version");
            // The reader faulted once, the writer once; the home announced one reader to
            // acknowledge each of the two publishes, and it did.
            assert_eq!(out.stats.counters["tempest_faults"], 2.0, "{machine}");
            assert_eq!((p1.up.counts, p1.up.announced, p1.up.acks), (2, 2, 2), "{machine}");
            assert_eq!(p0.up.readers[&out.states[0].up.base], vec![2, 1], "{machine}: reader, then writer");
            assert_eq!(out.load(Addr(p0.up.base).word(5)), 8, "{machine}: the home holds the last version");
        }
    }
}
