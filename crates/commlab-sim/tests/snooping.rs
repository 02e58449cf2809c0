//! `memory.snooping` (a snooping bus: a dirty owner is asked as the memory's read starts) with
//! the coherence invariant checker on: random access streams on small caches, where requests
//! to one line queue behind each other and a forward may be sent while the previous owner's
//! own fill is still on its way. The answers must be right (every atomic add counted once) and
//! every processor's time accounted for.

use commlab_api::{Backend, BarrierKind, Handler, Node, Placement, ProcId, Program};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use proptest::prelude::*;
use std::sync::Arc;

#[derive(Clone, Debug)]
enum Op {
    Load(usize),
    Store(usize, u64),
    Add(usize),
    Prefetch(usize, bool),
    Compute(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..8usize).prop_map(Op::Load),
        3 => (0..8usize, any::<u64>()).prop_map(|(w, v)| Op::Store(w, v)),
        3 => (0..8usize).prop_map(Op::Add),
        1 => (0..8usize, any::<bool>()).prop_map(|(w, x)| Op::Prefetch(w, x)),
        1 => (0..30u64).prop_map(Op::Compute),
    ]
}

struct Streams {
    words: usize,
    streams: Vec<Vec<Op>>,
}

impl Program for Streams {
    type State = ();
    fn handlers(&self) -> Vec<Handler<()>> {
        vec![]
    }
    fn barrier_kind(&self) -> BarrierKind {
        BarrierKind::SharedMemory
    }
    fn init_state(&self, _: ProcId, _: usize) {}
    fn main<N: Node<State = ()>>(&self, node: &mut N) {
        let a = node.alloc_shared(self.words + 1, Placement::Cyclic);
        let counter = a.word(self.words);
        for op in &self.streams[node.id()] {
            match *op {
                Op::Load(w) => {
                    node.load(a.word(w % self.words));
                }
                Op::Store(w, v) => node.store(a.word(w % self.words), v),
                Op::Add(w) => {
                    node.fetch_add(a.word(w % self.words), 1);
                    node.fetch_add(counter, 1);
                }
                Op::Prefetch(w, true) => node.prefetch_write(a.word(w % self.words)),
                Op::Prefetch(w, false) => node.prefetch_read(a.word(w % self.words)),
                Op::Compute(c) => node.compute(c),
            }
        }
        node.barrier();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, rng_seed: proptest::test_runner::RngSeed::Fixed(0x5_1008), .. ProptestConfig::default() })]

    /// On the DEC 8400 (snooping, with its hierarchy) and on Alewife with snooping switched on
    /// (a mesh: answers can take different paths), shrunk to a few lines of cache.
    #[test]
    fn snooping_keeps_coherence(
        dec in any::<bool>(),
        procs in 2usize..5,
        line_bytes in prop::sample::select(vec![16u64, 64]),
        cache_lines in prop::sample::select(vec![2u64, 4, 16]),
        dir in prop::sample::select(vec![0u64, 10, 60, 200]),
        words in 1usize..8,
        streams in prop::collection::vec(prop::collection::vec(op(), 0..50), 4),
    ) {
        let mut set = vec![
            format!("memory.line_bytes={line_bytes}"),
            format!("memory.cache_bytes={}", line_bytes * cache_lines),
            format!("memory.dir_cycles={dir}"),
            "memory.snooping=true".to_string(),
            "limits.max_events=3000000".to_string(),
        ];
        let (base, resize) = if dec {
            set.push(format!("network.nprocs={procs}"));
            // Inner levels no larger than the shrunk coherent cache, with lines no longer.
            set.push(format!("hierarchy.l1.bytes={}", line_bytes.min(32)));
            set.push(format!("hierarchy.l1.line_bytes={}", line_bytes.min(32)));
            set.push(format!("hierarchy.l2.bytes={line_bytes}"));
            set.push(format!("hierarchy.l2.line_bytes={line_bytes}"));
            set.push("hierarchy.l2.associativity=1".to_string());
            // The write buffer merges stores within one innermost line at most.
            set.push(format!("hierarchy.write_buffer.block_bytes={}", line_bytes.clamp(8, 32)));
            ("dec8400", None)
        } else {
            ("alewife", Some(procs))
        };
        let cfg = MachineConfig::preset(base, &set, resize).unwrap_or_else(|e| panic!("{base} {set:?}: {e}"));
        prop_assert!(cfg.mem.snooping);
        let n = cfg.nprocs();
        let streams: Vec<Vec<Op>> = streams.into_iter().take(n).collect();
        let adds = streams.iter().flatten().filter(|o| matches!(o, Op::Add(_))).count() as u64;
        let out = Simulator::new(cfg)
            .checked(true)
            .run(Arc::new(Streams { words, streams }))
            .unwrap_or_else(|e| panic!("{base} {set:?}: {e}"));
        let lw = (line_bytes / 8) as usize;
        let first = out.memory.len() - (words + 1).div_ceil(lw) * lw;
        prop_assert_eq!(out.memory[first + words], adds);
        for p in &out.stats.procs {
            prop_assert!((p.sum() - p.busy).abs() < 1e-6 * p.busy.max(1.0));
        }
    }
}

/// A store by one processor, then a load by another while the home's grant to the first has
/// not left yet (the memory's read is long): the snooped forward to the new owner is sent
/// first, and must still reach it after its own data (the home's packets leave in the order
/// sent). Swept over the load's delay so some land in that window; the checker is on.
struct StoreThenLoad {
    delay: u64,
}

impl Program for StoreThenLoad {
    type State = u64;
    fn handlers(&self) -> Vec<Handler<u64>> {
        vec![]
    }
    fn barrier_kind(&self) -> BarrierKind {
        BarrierKind::SharedMemory
    }
    fn init_state(&self, _: ProcId, _: usize) -> u64 {
        0
    }
    fn main<N: Node<State = u64>>(&self, node: &mut N) {
        let a = node.alloc_shared(1, Placement::OnNode(0));
        node.barrier();
        match node.id() {
            1 => node.store(a.word(0), 7),
            2 => {
                node.compute(self.delay);
                let v = node.load(a.word(0));
                node.state(|s| *s = v);
            }
            _ => {}
        }
        node.barrier();
    }
}

#[test]
fn a_forward_waits_for_the_owners_grant() {
    for delay in (0..400).step_by(7) {
        let set: Vec<String> =
            ["memory.snooping=true", "memory.dir_cycles=200", "limits.max_events=3000000"].map(String::from).to_vec();
        let cfg = MachineConfig::preset("alewife", &set, Some(4)).expect("alewife");
        let out = Simulator::new(cfg)
            .checked(true)
            .run(Arc::new(StoreThenLoad { delay }))
            .unwrap_or_else(|e| panic!("delay {delay}: {e}"));
        assert!(out.states[2] == 0 || out.states[2] == 7, "delay {delay}: loaded {}", out.states[2]);
    }
}
