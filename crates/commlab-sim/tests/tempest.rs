//! Tempest user protocols on the software-DSM machines: an update protocol for
//! producer-consumer sharing built from access tags, block copies, a fault handler and active
//! messages; its answers, its fault count (readers never miss after the first time), the
//! invariant checker at barriers, and machines without fine-grain access control refusing.

use commlab_api::{
    AccessTag, Addr, Backend, Fault, FaultHandler, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId,
    Program,
};
use commlab_sim::machine::MachineConfig;
use commlab_sim::{SimError, Simulator};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The update protocol's state at one node. Blocks are written only at their home, which keeps
/// the readers that faulted on each block and pushes every published version to them.
#[derive(Default)]
struct Update {
    /// First block's address, block size in bytes, and each block's home.
    base: u64,
    block_bytes: u64,
    homes: Vec<ProcId>,
    /// At a home: block address -> readers registered there.
    readers: BTreeMap<u64, Vec<ProcId>>,
    /// Acknowledgements of pushed updates received.
    acks: u64,
    /// Store faults (the protocol has none: only the home writes).
    bad_faults: u64,
}

const GET: HandlerId = HandlerId(0);
const DATA: HandlerId = HandlerId(1);
const UPDATE: HandlerId = HandlerId(2);
const ACK: HandlerId = HandlerId(3);

impl Update {
    fn home(&self, block: u64) -> ProcId {
        self.homes[((block - self.base) / self.block_bytes) as usize]
    }
}

/// A read fault: ask the home for the block.
fn fault(s: &mut St, ctx: &mut dyn HandlerCtx, f: &Fault) {
    if f.write {
        s.up.bad_faults += 1;
        return;
    }
    ctx.send_am(s.up.home(f.block.0), GET, &[f.block.0]);
}

/// At the home: register the reader and send it the block.
fn get(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let block = m.args[0];
    s.up.readers.entry(block).or_default().push(m.src);
    let mut buf = vec![0; (s.up.block_bytes / 8) as usize];
    ctx.block_read(Addr(block), &mut buf);
    ctx.send_bulk(m.src, DATA, &[block], &[&buf]);
}

/// At a reader: install the block read-only.
fn data(_: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.block_write(Addr(m.args[0]), m.payload);
    ctx.set_tag(Addr(m.args[0]), AccessTag::ReadOnly);
}

/// At a reader: overwrite its copy with the pushed version and acknowledge.
fn update(_: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.block_write(Addr(m.args[0]), m.payload);
    ctx.send_am(m.src, ACK, &[]);
}

fn ack(s: &mut St, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.up.acks += 1;
}

/// At the home, after storing new values into `blocks`: push them to every registered reader
/// and wait until each has acknowledged, so the next synchronisation orders them before any
/// read.
fn publish<N: Node<State = St>>(node: &mut N, blocks: &[u64]) {
    let words = (node.state(|s| s.up.block_bytes) / 8) as usize;
    // Acknowledgements may come in while the later updates are sent.
    let before = node.state(|s| s.up.acks);
    let mut pushed = 0;
    for &b in blocks {
        let readers = node.state(|s| s.up.readers.get(&b).cloned().unwrap_or_default());
        if readers.is_empty() {
            continue;
        }
        let values: Vec<u64> = (0..words).map(|w| node.load(Addr(b).word(w))).collect();
        for r in readers {
            node.send_bulk(r, UPDATE, &[b], &[&values]);
            pushed += 1;
        }
    }
    let target = before + pushed;
    node.wait_until("update acknowledgements", |s| s.up.acks == target);
}

#[derive(Default)]
struct St {
    up: Update,
    /// Words a reader found other than the value of the last iteration it synchronised with.
    stale: u64,
    words_read: u64,
    /// `alloc_user_region`'s refusal, if it refused.
    refused: Option<String>,
}

/// Every processor is home of `blocks` blocks and writes them each iteration; every processor
/// reads the blocks of the next one. `publish: false` is a broken protocol that never pushes
/// updates after the first iteration.
struct ProducerConsumer {
    /// The machine's block (line) size in bytes: block b starts at base + b * block_bytes.
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
        vec![get, data, update, ack]
    }
    fn fault_handler(&self) -> Option<FaultHandler<St>> {
        Some(fault)
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        let (id, n, k) = (node.id(), node.nprocs(), self.blocks);
        let block_bytes = self.block_bytes;
        let words = block_bytes as usize / 8;
        let base = match node.alloc_user_region(n * k * words, Placement::Block) {
            Ok(a) => a,
            Err(e) => {
                node.state(|s| s.refused = Some(e));
                return;
            }
        };
        node.state(|s| {
            s.up = Update { base: base.0, block_bytes, homes: (0..n * k).map(|b| b / k).collect(), ..Update::default() }
        });
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

fn pc(s: &Simulator, blocks: usize, iterations: u64, publish: bool) -> Arc<ProducerConsumer> {
    Arc::new(ProducerConsumer { block_bytes: s.line_bytes() as u64, blocks, iterations, publish })
}

#[test]
fn the_update_protocol_gives_fresh_values_and_readers_fault_only_once() {
    let (n, k, iters) = (4, 3, 4u64);
    for machine in ["blizzard-s", "blizzard-e", "blizzard-t"] {
        let s = sim(machine, n, true);
        let words = s.line_bytes() / 8;
        let run = || s.run(pc(&s, k, iters, true)).unwrap();
        let out = run();
        for (p, st) in out.states.iter().enumerate() {
            assert_eq!(st.refused, None);
            assert_eq!(st.words_read, iters * (k * words) as u64, "{machine} P{p}");
            assert_eq!(st.stale, 0, "{machine} P{p}: a reader saw an old value");
            assert_eq!(st.up.bad_faults, 0);
            // Each reader of the block registered exactly once.
            for (b, r) in &st.up.readers {
                assert_eq!(r, &vec![(p + n - 1) % n], "{machine} block {b:#x}");
            }
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

/// Processor 0 asks processor 1 to take its own block away and give it back.
struct Retag;

fn retag(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.words_read += 1;
    ctx.set_tag(Addr(m.args[0]), AccessTag::Invalid);
    ctx.set_tag(Addr(m.args[0]), AccessTag::Writable);
}

impl Program for Retag {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        vec![retag]
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        let base = node.alloc_user_region(64, Placement::OnNode(1)).unwrap();
        node.begin_timing();
        if node.id() == 0 {
            node.send_am(1, HandlerId(0), &[base.0]);
        } else {
            node.wait_until("retag", |s| s.words_read == 1);
        }
    }
}

#[test]
fn tag_changes_cost_the_presets_dsm_costs_more_on_blizzard_e_than_on_blizzard_t() {
    // Invalidating a block is a kernel protection change on blizzard-e and a per-granule
    // hardware tag write on blizzard-t (the presets' own [dsm] costs, which the default
    // protocol pays for the same change); the handler is entry + both changes + exit.
    let handler = |m: &str| {
        let s = sim(m, 2, false);
        let out = s.run(Arc::new(Retag)).unwrap();
        let cfg = s.config();
        let sw = cfg.coherence.software().unwrap();
        let c = |ps: u64| cfg.ps_to_cycles(ps).ceil();
        let want = (cfg.msg.interrupt_entry_cycles + cfg.msg.interrupt_exit_cycles) as f64
            + c(sw.tag_invalidate_ps)
            + c(sw.tag_valid_ps);
        let got = out.stats.procs[1].get(commlab_api::Category::MessageOverhead);
        assert!((got - want).abs() < 1e-3, "{m}: {got} vs {want}");
        assert_eq!(out.stats.counters["tempest_tag_changes"], 2.0);
        c(sw.tag_invalidate_ps) + c(sw.tag_valid_ps)
    };
    assert!(handler("blizzard-e") > handler("blizzard-t"));
    handler("blizzard-s");
}

#[test]
fn the_checker_catches_a_protocol_that_leaves_readers_stale() {
    // Unchecked, the program's own reads see the stale values ...
    let s = sim("blizzard-s", 3, false);
    let out = s.run(pc(&s, 2, 2, false)).unwrap();
    assert!(out.states.iter().all(|s| s.stale > 0));
    // ... and the checker stops the run at the barrier after the unpublished writes.
    let s = sim("blizzard-s", 3, true);
    let err = s.run(pc(&s, 2, 2, false)).err().expect("the checker fails the run");
    assert!(matches!(&err, SimError::Internal(m) if m.contains("Tempest invariant")), "{err}");
}

#[test]
fn machines_with_hardware_coherence_refuse_user_regions() {
    let s = sim("alewife", 2, false);
    let out = s.run(pc(&s, 1, 1, true)).unwrap();
    for s in &out.states {
        let e = s.refused.as_deref().expect("refused");
        assert!(e.contains("memory.model = \"software\""), "{e}");
    }
}
