//! Shared memory on the simulated machine, with the coherence invariant checker on:
//! atomicity, locks, barriers, deadlock reports, determinism, and random access streams.

use commlab_api::{Addr, Backend, BarrierKind, Handler, Node, Placement, ProcId, Program, RunOutput};
use commlab_sim::machine::MachineConfig;
use commlab_sim::{SimError, Simulator};
use proptest::prelude::*;
use std::sync::Arc;

fn machine(set: &[&str], procs: usize) -> Simulator {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Simulator::new(
        MachineConfig::preset("alewife", &[set, vec!["limits.max_events=3000000".to_string()]].concat(), Some(procs))
            .unwrap(),
    )
    .checked(true)
}

/// A shared-memory program from a plain function of (node, id).
struct Shm {
    barrier: BarrierKind,
    main: fn(&mut dyn FnMut(Op) -> u64, ProcId, usize),
}

enum Op {
    Alloc(usize, Placement),
    Load(Addr),
    Store(Addr, u64),
    FetchAdd(Addr, u64),
    Lock(Addr),
    Unlock(Addr),
    Compute(u64),
    Barrier,
}

impl Program for Shm {
    type State = ();
    fn handlers(&self) -> Vec<Handler<()>> {
        vec![]
    }
    fn barrier_kind(&self) -> BarrierKind {
        self.barrier
    }
    fn init_state(&self, _: ProcId, _: usize) {}
    fn main<N: Node<State = ()>>(&self, node: &mut N) {
        let (id, n) = (node.id(), node.nprocs());
        let mut exec = |op: Op| -> u64 {
            match op {
                Op::Alloc(w, p) => node.alloc_shared(w, p).0,
                Op::Load(a) => node.load(a),
                Op::Store(a, v) => {
                    node.store(a, v);
                    0
                }
                Op::FetchAdd(a, v) => node.fetch_add(a, v),
                Op::Lock(a) => {
                    node.lock(a);
                    0
                }
                Op::Unlock(a) => {
                    node.unlock(a);
                    0
                }
                Op::Compute(c) => {
                    node.compute(c);
                    0
                }
                Op::Barrier => {
                    node.barrier();
                    0
                }
            }
        };
        (self.main)(&mut exec, id, n);
    }
}

fn run(
    sim: &Simulator,
    barrier: BarrierKind,
    main: fn(&mut dyn FnMut(Op) -> u64, ProcId, usize),
) -> Result<RunOutput<()>, SimError> {
    sim.run(Arc::new(Shm { barrier, main }))
}

#[test]
fn fetch_add_is_atomic() {
    let out = run(&machine(&[], 8), BarrierKind::Messages, |x, _, _| {
        let c = Addr(x(Op::Alloc(1, Placement::OnNode(3))));
        for _ in 0..50 {
            x(Op::FetchAdd(c, 1));
        }
        x(Op::Barrier);
    })
    .unwrap();
    assert_eq!(out.memory[out.memory.len() - 2], 8 * 50, "counter (first word of the last line)");
}

#[test]
fn lock_protects_a_read_modify_write_sequence() {
    let out = run(&machine(&[], 8), BarrierKind::SharedMemory, |x, _, _| {
        let base = Addr(x(Op::Alloc(4, Placement::OnNode(0))));
        let (lock, counter) = (base, base.word(2));
        for _ in 0..20 {
            x(Op::Lock(lock));
            let v = x(Op::Load(counter));
            x(Op::Compute(10));
            x(Op::Store(counter, v + 1));
            x(Op::Unlock(lock));
        }
        x(Op::Barrier);
    })
    .unwrap();
    assert_eq!(out.load(Addr(out.memory.len() as u64 * 8 - 16)), 8 * 20);
}

#[test]
fn shared_memory_barrier_separates_phases() {
    for procs in [1, 2, 5, 16] {
        run(&machine(&[], procs), BarrierKind::SharedMemory, |x, id, n| {
            let slots = Addr(x(Op::Alloc(n, Placement::Cyclic)));
            for round in 1..=5u64 {
                x(Op::Store(slots.word(id), round));
                x(Op::Barrier);
                for p in 0..n {
                    assert_eq!(x(Op::Load(slots.word(p))), round, "processor {id} sees {p}'s round-{round} value");
                }
                x(Op::Barrier);
            }
        })
        .unwrap();
    }
}

#[test]
fn crossed_locks_end_in_a_deadlock_report() {
    let err = run(&machine(&[], 4), BarrierKind::Messages, |x, id, _| {
        let base = Addr(x(Op::Alloc(4, Placement::Cyclic)));
        let (a, b) = (base, base.word(2));
        if id == 0 {
            x(Op::Lock(a));
            x(Op::Compute(500));
            x(Op::Lock(b));
        } else if id == 1 {
            x(Op::Lock(b));
            x(Op::Compute(500));
            x(Op::Lock(a));
        }
    })
    .err()
    .expect("must deadlock");
    let msg = err.to_string();
    assert!(matches!(err, SimError::Deadlock(_)), "{msg}");
    assert!(msg.contains("P0: spins in lock") && msg.contains("held by P1"), "{msg}");
    assert!(msg.contains("P1: spins in lock") && msg.contains("held by P0"), "{msg}");
}

#[test]
fn shared_memory_runs_are_deterministic() {
    let go = || {
        let out =
            run(&machine(&["cross_traffic.rate_bytes_per_cycle=3"], 16), BarrierKind::SharedMemory, |x, id, n| {
                let a = Addr(x(Op::Alloc(64, Placement::Block)));
                for i in 0..200usize {
                    let w = (id * 7 + i * 13) % 64;
                    if i % 3 == 0 {
                        x(Op::FetchAdd(a.word(w), 1));
                    } else {
                        x(Op::Load(a.word((w + n) % 64)));
                    }
                }
                x(Op::Barrier);
            })
            .unwrap();
        (out.stats.cycles, out.stats.procs.clone(), out.stats.volume_bytes, out.memory.clone(), out.stats.events)
    };
    assert_eq!(go(), go());
}

/// One random operation of a random stream.
#[derive(Clone, Debug)]
enum RandOp {
    Load(usize),
    Store(usize, u64),
    Add(usize),
    Cas(usize, u64),
    PrefetchRead(usize),
    PrefetchWrite(usize),
    Compute(u64),
}

fn rand_op(words: usize) -> impl Strategy<Value = RandOp> {
    prop_oneof![
        4 => (0..words).prop_map(RandOp::Load),
        3 => (0..words, any::<u64>()).prop_map(|(w, v)| RandOp::Store(w, v)),
        2 => (0..words).prop_map(RandOp::Add),
        1 => (0..words, 0..3u64).prop_map(|(w, v)| RandOp::Cas(w, v)),
        1 => (0..words).prop_map(RandOp::PrefetchRead),
        1 => (0..words).prop_map(RandOp::PrefetchWrite),
        1 => (0..40u64).prop_map(RandOp::Compute),
    ]
}

struct RandomStreams {
    words: usize,
    streams: Vec<Vec<RandOp>>,
    /// Total of all `Add`s, to check atomicity on word 0 (which only `Add` touches).
    barrier: BarrierKind,
}

impl Program for RandomStreams {
    type State = ();
    fn handlers(&self) -> Vec<Handler<()>> {
        vec![]
    }
    fn barrier_kind(&self) -> BarrierKind {
        self.barrier
    }
    fn init_state(&self, _: ProcId, _: usize) {}
    fn main<N: Node<State = ()>>(&self, node: &mut N) {
        let a = node.alloc_shared(self.words + 1, Placement::Cyclic);
        let counter = a.word(self.words);
        for op in &self.streams[node.id()] {
            match *op {
                RandOp::Load(w) => {
                    node.load(a.word(w));
                }
                RandOp::Store(w, v) => node.store(a.word(w), v),
                RandOp::Add(w) => {
                    node.fetch_add(a.word(w), 1);
                    node.fetch_add(counter, 1);
                }
                RandOp::Cas(w, v) => {
                    node.compare_swap(a.word(w), v, v + 1);
                }
                RandOp::PrefetchRead(w) => node.prefetch_read(a.word(w)),
                RandOp::PrefetchWrite(w) => node.prefetch_write(a.word(w)),
                RandOp::Compute(c) => node.compute(c),
            }
        }
        node.barrier();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(0x00c0_ffee), .. ProptestConfig::default() })]

    /// Random access streams over random machine shapes, cache geometries and seeds, with the
    /// invariant checker on after every protocol event and access.
    #[test]
    fn random_streams_keep_coherence(
        procs in 1usize..12,
        topology in 0usize..4,
        line_bytes in prop::sample::select(vec![16u64, 32, 64]),
        cache_lines in prop::sample::select(vec![2u64, 4, 16, 64]),
        ways in prop::sample::select(vec![1u64, 2]),
        hw_pointers in 1u64..6,
        words in 1usize..24,
        sm_barrier in any::<bool>(),
        software in any::<bool>(),
        streams in prop::collection::vec(prop::collection::vec(rand_op(24), 0..60), 12),
    ) {
        let topo = ["network.topology=mesh", "network.topology=torus", "network.topology=fat-tree", "network.topology=crossbar"][topology];
        let mut set: Vec<String> = vec![
            topo.to_string(),
            format!("memory.line_bytes={line_bytes}"),
            format!("memory.cache_bytes={}", line_bytes * cache_lines.max(ways)),
            format!("memory.associativity={ways}"),
            format!("memory.hw_pointers={hw_pointers}"),
            "limits.max_events=3000000".to_string(),
        ];
        match topology {
            1 => { set.push(format!("network.dims=[{procs}]")); set.push("network.io_nodes=false".into()); }
            2 | 3 => set.push(format!("network.nprocs={procs}")),
            _ => {}
        }
        // Software DSM (Blizzard-S costs, handlers on the compute processor) or hardware.
        let base = if software { "blizzard-s" } else { "alewife" };
        if software {
            set.push("dsm.tag_granule_bytes=8".into());
            if topology == 0 {
                set.push("network.dims=[4,4]".into());
            }
        }
        let set_refs: Vec<&str> = set.iter().map(|s| s.as_str()).collect();
        let cfg = MachineConfig::preset(base, &set.iter().map(|s| s.to_string()).collect::<Vec<_>>(), if topology == 0 { Some(procs) } else { None });
        let cfg = cfg.unwrap_or_else(|e| panic!("{set_refs:?}: {e}"));
        let n = cfg.nprocs();
        let streams: Vec<Vec<RandOp>> = streams.into_iter().take(n).map(|s| s.into_iter().map(|op| clamp(op, words)).collect()).collect();
        let adds: u64 = streams.iter().flatten().filter(|o| matches!(o, RandOp::Add(_))).count() as u64;
        let prog = RandomStreams { words, streams, barrier: if sm_barrier { BarrierKind::SharedMemory } else { BarrierKind::Messages } };
        let sim = Simulator::new(cfg).checked(true);
        let out = sim.run(Arc::new(prog)).unwrap_or_else(|e| panic!("{set_refs:?}: {e}"));
        // The atomic counter saw every add exactly once.
        let base = out.memory.len() - (words + 1).div_ceil((line_bytes / 8) as usize) * (line_bytes / 8) as usize;
        prop_assert_eq!(out.memory[base + words], adds);
        for p in &out.stats.procs {
            prop_assert!((p.sum() - p.busy).abs() < 1e-6 * p.busy.max(1.0));
        }
    }
}

fn clamp(op: RandOp, words: usize) -> RandOp {
    match op {
        RandOp::Load(w) => RandOp::Load(w % words),
        RandOp::Store(w, v) => RandOp::Store(w % words, v),
        RandOp::Add(w) => RandOp::Add(w % words),
        RandOp::Cas(w, v) => RandOp::Cas(w % words, v),
        RandOp::PrefetchRead(w) => RandOp::PrefetchRead(w % words),
        RandOp::PrefetchWrite(w) => RandOp::PrefetchWrite(w % words),
        RandOp::Compute(c) => RandOp::Compute(c),
    }
}

/// A store to a line the cache dropped silently (its sharer entry is stale) is a full write
/// miss: the data must come back, not just ownership.
#[test]
fn store_after_silent_eviction_fetches_the_data() {
    struct StaleSharer;
    impl Program for StaleSharer {
        type State = f64;
        fn handlers(&self) -> Vec<Handler<f64>> {
            vec![]
        }
        fn init_state(&self, _: ProcId, _: usize) -> f64 {
            0.0
        }
        fn main<N: Node<State = f64>>(&self, node: &mut N) {
            // Two lines homed at processor 1 that map to the same (only) cache line.
            let a = node.alloc_shared(4, Placement::OnNode(1));
            node.barrier();
            if node.id() == 0 {
                node.load(a);
                node.load(a.word(2)); // evicts a's line silently: the home still lists us
                node.compute(1000);
                let t0 = node.now_cycles();
                node.store(a, 7);
                let t1 = node.now_cycles();
                node.state(|s| *s = t1 - t0);
            }
            node.barrier();
        }
    }
    let set = ["memory.cache_bytes=16".to_string()];
    let sim = Simulator::new(MachineConfig::preset("alewife", &set, Some(2)).unwrap()).checked(true);
    let out = sim.run(Arc::new(StaleSharer)).unwrap();
    // A remote clean write miss on this machine takes 38.8 cycles; ownership alone would be ~31.7.
    assert!(out.states[0] > 37.0, "store took {} cycles", out.states[0]);
    assert_eq!(out.memory[out.memory.len() - 4], 7, "the stored word (first of the 4-word region)");
}
