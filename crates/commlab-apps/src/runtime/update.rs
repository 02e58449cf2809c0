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
//! Writes happen at the home only: a write fault (a non-home store) is counted in
//! [`UpdateState::bad_faults`] and not served, so the writer waits for a tag that never
//! changes and the run ends with a deadlock report naming that wait.
//!
//! The four handlers are registered in the program's handler table as one run starting at
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
    /// Faults the protocol does not serve: stores (only the home writes) and faults on blocks
    /// outside its region.
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

/// The protocol's handlers, in the order their numbers assume: register them at `first`.
pub fn handlers<S: HasUpdate>() -> Vec<Handler<S>> {
    vec![on_get::<S>, on_data::<S>, on_update::<S>, on_ack::<S>]
}

/// The program's fault handler (`Program::fault_handler`): a read fault asks the home.
pub fn on_fault<S: HasUpdate>(s: &mut S, ctx: &mut dyn HandlerCtx, f: &Fault) {
    let up = s.update_state_mut();
    match up.home(f.block.0) {
        Some(home) if !f.write => ctx.send_am(home, up.handler(GET), &[f.block.0]),
        // A store away from the home, or a block of another user region.
        _ => up.bad_faults += 1,
    }
}

/// At the home: register the reader and send it the block.
fn on_get<S: HasUpdate>(s: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let up = s.update_state_mut();
    let block = m.args[0];
    up.readers.entry(block).or_default().push(m.src);
    let mut buf = vec![0; up.words()];
    ctx.block_read(Addr(block), &mut buf);
    ctx.send_bulk(m.src, up.handler(DATA), &[block], &[&buf]);
}

/// At a reader: install the block read-only.
fn on_data<S: HasUpdate>(_: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.block_write(Addr(m.args[0]), m.payload);
    ctx.set_tag(Addr(m.args[0]), AccessTag::ReadOnly);
}

/// At a reader: overwrite its copy with the pushed version and acknowledge.
fn on_update<S: HasUpdate>(s: &mut S, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.block_write(Addr(m.args[0]), m.payload);
    ctx.send_am(m.src, s.update_state().handler(ACK), &[]);
}

fn on_ack<S: HasUpdate>(s: &mut S, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.update_state_mut().acks += 1;
}

/// At the home, after storing new values into `blocks` (addresses of blocks it homes): push
/// them to every registered reader and wait until each has acknowledged.
pub fn publish<S: HasUpdate, N: Node<State = S>>(node: &mut N, blocks: &[u64]) {
    let words = node.state(|s| s.update_state().words());
    // Acknowledgements may come in while the later updates are sent.
    let before = node.state(|s| s.update_state().acks);
    let mut pushed = 0;
    for &b in blocks {
        let readers = node.state(|s| s.update_state().readers.get(&b).cloned().unwrap_or_default());
        if readers.is_empty() {
            continue;
        }
        let values: Vec<u64> = (0..words).map(|w| node.load(Addr(b).word(w))).collect();
        let update = node.state(|s| s.update_state().handler(UPDATE));
        for r in readers {
            node.send_bulk(r, update, &[b], &[&values]);
            pushed += 1;
        }
    }
    let target = before + pushed;
    node.wait_until("update acknowledgements", |s| s.update_state().acks == target);
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

    /// Processor 1 stores into a block homed at processor 0.
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
            if node.id() == 1 {
                node.store(base, 7);
            }
        }
    }

    #[test]
    fn a_store_away_from_the_home_is_reported_not_served() {
        let err = sim("blizzard-s", 2, false).run(Arc::new(RemoteWrite)).err().expect("a deadlock");
        let text = err.to_string();
        assert!(text.contains("Tempest user block"), "{text}");
    }
}
