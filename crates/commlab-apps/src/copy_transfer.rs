//! `copy-transfer`: how many MB/s one processor moves for an access pattern (`stride`, in
//! words) and a working set (`bytes`), the copy-transfer benchmarks of the DEC 8400 / T3D /
//! T3E study.
//!
//! Kernels (`--param kernel=`): `load-sum` (strided loads, summed), `copy-sload` (strided
//! loads, contiguous stores), `copy-sstore` (contiguous loads, strided stores). A pass touches
//! every location of the array once: for stride `s`, the words `k, k+s, k+2s, ...` for each
//! start `k` in `0..s`. One untimed pass primes the caches; `passes` timed passes follow.
//!
//! Variants:
//! - `local`: processor 0 alone, on its private arrays (`private_read`/`private_write`: on a
//!   machine with a `[hierarchy]` these do not block, up to its outstanding misses). With
//!   `loaders=N`, processors 0..N each run the same passes on their own private arrays at the
//!   same time (002 §5.1: "all four processors accessing local caches and DRAM memory
//!   independently at the same time"); the bandwidth is processor 0's (they all do the same
//!   work, so the others' differ only by where they stand in the memory's queues). They start
//!   in lockstep unless `stagger=C` starts loader i `i x C` cycles late: independent
//!   processors' phases are not controlled, and the loss the memory shows depends on them.
//! - `fetch`: coherent shared memory. Before each pass the producer (processor 1, or the first
//!   processor on another router than processor 0's where routers are shared: `producer_of`) writes the
//!   array, homed at it; the consumer (processor 0) then loads it (coherent misses to the
//!   producer's cache, or to its memory when the array outgrows that cache); copies store into
//!   the consumer's private array. Only the consumer's pass is timed.
//! - `get` (one-sided fetch, the T3D's and T3E's way): before each pass the producer writes
//!   its array as for `fetch`; the consumer pulls it into an array homed at itself by strided
//!   gets, one per start `k` (the machine splits each into its requests), and a `quiet`. Only
//!   the gets and the `quiet` are timed.
//! - `put` (one-sided deposit): the producer pushes its array, written before the pass, into
//!   an array homed at the consumer, which touched it first (stored zeros before the first
//!   pass) and reads it after every pass; one strided put per start `k` and a `quiet`, timed
//!   on the producer.
//!
//! For `get` and `put` the kernel says which side of the transfer is strided: `copy-sload` the
//! source (the j-th word read lands at word j), `copy-sstore` the destination (word j lands at
//! the j-th strided place), `load-sum` both (word i lands at word i, the whole transfer in
//! strided order). So the remote side is strided in `load-sum` and in `copy-sload` (get) or
//! `copy-sstore` (put). After the transfer (untimed), the consumer loads the destination:
//! every word must be the producer's value of this pass, and load-sum sums it. Both need a
//! machine with one-sided access (`Backend::one_sided`; the simulator's `[remote]` section)
//! and refuse others with an input error.
//!
//! Per word the loop costs `costs.accum_word` (load-sum: the add and the loop's increment,
//! compare and branch; the load simulated) or `costs.memcpy_word` (copies: the two index
//! increments, compare and branch; the load and the store simulated): the same loops as the
//! `accum` and `memcpy` benchmarks, so the same cost entries. These are loops that are not
//! unrolled, whereas `characterize`'s kernels are unrolled four ways; what that difference does
//! to the DEC 8400's rows, and why the loop is unchanged, is written in `validate.rs` above
//! `copy_transfer()`. `get` and `put` have no loop per word: the machine's `[remote]` costs
//! (issue, outstanding words, service) are the transfer.
//!
//! `counters.mbytes_per_s`: array bytes per pass x passes / the timed passes' time. The check:
//! every pass's sum (load-sum) or copy (copies) equals the sequential answer.

use crate::app::{cost, result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Addr, Backend, BarrierKind, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters copy-transfer`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS;
    MBYTES_PER_S = "mbytes_per_s", "MB/s",
        "bytes moved over all passes over the timed processor's time (the producer's for put), at the machine's clock";
    PASS_CYCLES = "pass_cycles", "cycles",
        "the timed processor's time over the passes";
}

pub const INFO: AppInfo = AppInfo {
    name: "copy-transfer",
    summary: "MB/s of strided loads (load-sum) and strided copies (copy-sload, copy-sstore): local, fetched through coherence, or moved by one-sided get/put; counters.mbytes_per_s",
    variants: &["local", "fetch", "get", "put"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "kernel", default: "load-sum", doc: "load-sum, copy-sload or copy-sstore" },
        ParamDoc { name: "stride", default: "1", doc: "words between consecutive references (1 to 4096)" },
        ParamDoc {
            name: "bytes",
            default: "65536",
            doc: "working set: the array's bytes (a multiple of 8, at least stride x 8, up to 16 MiB)",
        },
        ParamDoc { name: "passes", default: "1", doc: "timed passes, after one untimed priming pass (1 to 100)" },
        ParamDoc {
            name: "loaders",
            default: "1",
            doc: "local only: processors 0..N each run the same kernel on their own arrays at once (all loading memory, 002 §5.1); processor 0's time is reported",
        },
        ParamDoc {
            name: "stagger",
            default: "0",
            doc: "with loaders: cycles between consecutive loaders' starts (loader i starts i x stagger cycles after processor 0; 0: in lockstep), the phase the study's independent processors had and did not control",
        },
    ],
};

/// The kernels.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kernel {
    LoadSum,
    CopySload,
    CopySstore,
}

const KERNELS: &[(&str, Kernel)] =
    &[("load-sum", Kernel::LoadSum), ("copy-sload", Kernel::CopySload), ("copy-sstore", Kernel::CopySstore)];

/// How the consumer reaches the data.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Variant {
    /// Private arrays of processor 0.
    Local,
    /// Shared memory written by the producer, loaded through coherence.
    Fetch,
    /// The producer's array pulled by the consumer's one-sided gets.
    Get,
    /// The producer's array pushed by its one-sided puts into the consumer's.
    Put,
}

impl Variant {
    fn one_sided(self) -> bool {
        matches!(self, Variant::Get | Variant::Put)
    }

    /// The processor whose time is measured, given the producer.
    fn timed(self, producer: ProcId) -> ProcId {
        if self == Variant::Put {
            producer
        } else {
            CONSUMER
        }
    }
}

const CONSUMER: ProcId = 0;

/// The producer: the first processor on another router than the consumer's (processor 2 on the
/// T3D, whose nodes pair two processors on one router: the study measured between two nodes,
/// 002 §8), or processor 1 where none is (a bus, a crossbar).
fn producer_of<B: Backend>(backend: &B) -> ProcId {
    (1..backend.nprocs()).find(|&p| backend.hops(CONSUMER, p) > 0).unwrap_or(1)
}

struct CopyTransfer {
    variant: Variant,
    /// The processor whose memory holds the source (`producer_of`).
    producer: ProcId,
    kernel: Kernel,
    stride: usize,
    words: usize,
    passes: usize,
    word_cycles: u64,
    /// Processors running the `local` kernel at once (0..loaders).
    loaders: usize,
    /// Cycles between consecutive loaders' starts (loader i computes `i x stagger` first).
    stagger: u64,
}

#[derive(Default)]
pub struct State {
    /// Per timed pass: the sum (load-sum) or whether the copy was right (copies).
    sums: Vec<u64>,
    copies_ok: Vec<bool>,
    cycles: f64,
}

/// The array's value at word `i` in pass `pass`: differs between passes, so a stale copy shows.
fn element(i: usize, pass: usize) -> u64 {
    (i as u64).wrapping_mul(2_654_435_761).wrapping_add(12_345 + 7 * pass as u64) % 999_983
}

/// The order in which a pass touches an array of `words` with `stride`: every word once.
fn strided(words: usize, stride: usize) -> impl Iterator<Item = usize> {
    (0..stride).flat_map(move |k| (k..words).step_by(stride))
}

impl CopyTransfer {
    /// One pass of the kernel by the consumer over the source (`read(i)` loads word `i`);
    /// copies write the private destination. Returns the sum, or whether the copy is right.
    fn pass<N: Node<State = State>>(
        &self,
        node: &mut N,
        pass: usize,
        dst: Addr,
        mut read: impl FnMut(&mut N, usize) -> u64,
    ) -> (u64, bool) {
        let n = self.words;
        match self.kernel {
            Kernel::LoadSum => {
                let mut sum = 0u64;
                for i in strided(n, self.stride) {
                    sum = sum.wrapping_add(read(node, i));
                    node.compute(self.word_cycles);
                }
                (sum, true)
            }
            Kernel::CopySload | Kernel::CopySstore => {
                // Strided loads to contiguous stores (the j-th word read goes to word j), or
                // contiguous loads to strided stores (word j goes to the j-th strided place).
                let mut copy = vec![0u64; n];
                for (j, i) in strided(n, self.stride).enumerate() {
                    let (from, to) = if self.kernel == Kernel::CopySload { (i, j) } else { (j, i) };
                    copy[to] = read(node, from);
                    node.private_write(dst.word(to));
                    node.compute(self.word_cycles);
                }
                (0, self.placed_right(&copy, pass))
            }
        }
    }

    /// Whether `got` (the destination after a pass) holds pass `pass`'s array where the
    /// kernel puts it: copy-sload the j-th word read at word j, copy-sstore word j at the j-th
    /// strided place, load-sum (one-sided only) word i at word i.
    fn placed_right(&self, got: &[u64], pass: usize) -> bool {
        let n = self.words;
        if self.kernel == Kernel::LoadSum {
            return got.len() == n && (0..n).all(|i| got[i] == element(i, pass));
        }
        let order: Vec<usize> = strided(n, self.stride).collect();
        got.len() == n
            && (0..n).all(|j| {
                let (from, to) = if self.kernel == Kernel::CopySload { (order[j], j) } else { (j, order[j]) };
                got[to] == element(from, pass)
            })
    }

    /// One pass of a one-sided variant: a strided get (by the consumer) or put (by the
    /// producer) per start `k`, from `src` (the producer's array) to `dst` (the consumer's),
    /// then `quiet`.
    fn transfer<N: Node<State = State>>(&self, node: &mut N, src: Addr, dst: Addr) {
        let (n, s) = (self.words, self.stride);
        // Words already moved: where a contiguous side continues.
        let mut done = 0;
        for k in 0..s {
            let count = (n - k).div_ceil(s);
            let (d, ds, r, rs) = match self.kernel {
                Kernel::LoadSum => (dst.word(k), s, src.word(k), s),
                Kernel::CopySload => (dst.word(done), 1, src.word(k), s),
                Kernel::CopySstore => (dst.word(k), s, src.word(done), 1),
            };
            if self.variant == Variant::Put {
                node.put(d, ds, r, rs, count);
            } else {
                node.get(d, ds, r, rs, count);
            }
            done += count;
        }
        node.quiet();
    }
}

impl Program for CopyTransfer {
    type State = State;
    fn handlers(&self) -> Vec<commlab_api::Handler<State>> {
        Vec::new()
    }
    fn barrier_kind(&self) -> BarrierKind {
        BarrierKind::SharedMemory
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        if id != CONSUMER && !(self.variant == Variant::Local && id < self.loaders) {
            return Vec::new();
        }
        match (self.variant, self.kernel) {
            (Variant::Local, Kernel::LoadSum) => vec![self.words],
            (Variant::Local, _) => vec![self.words, self.words],
            (Variant::Fetch, Kernel::LoadSum) => Vec::new(),
            (Variant::Fetch, _) => vec![self.words],
            (Variant::Get | Variant::Put, _) => Vec::new(),
        }
    }
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State::default()
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let id = node.id();
        let mut sums = Vec::new();
        let mut copies_ok = Vec::new();
        let mut cycles = 0.0;
        match self.variant {
            Variant::Local => {
                node.begin_timing();
                if id >= self.loaders {
                    return;
                }
                // Independent loaders start out of step (002 §5.1 ran them "independently");
                // `stagger` says by how much.
                if id > 0 && self.stagger > 0 {
                    node.compute(id as u64 * self.stagger);
                }
                let src = node.private_array(0);
                let dst = if self.kernel == Kernel::LoadSum { src } else { node.private_array(1) };
                // The private source holds pass 0's values throughout.
                for pass in 0..=self.passes {
                    let t0 = node.now_cycles();
                    let (sum, ok) = self.pass(node, 0, dst, |node, i| {
                        node.private_read(src.word(i));
                        element(i, 0)
                    });
                    if pass > 0 {
                        cycles += node.now_cycles() - t0;
                        sums.push(sum);
                        copies_ok.push(ok);
                    }
                }
            }
            Variant::Fetch => {
                let src = node.alloc_shared(self.words, Placement::OnNode(self.producer));
                let dst = if id == CONSUMER && self.kernel != Kernel::LoadSum { node.private_array(0) } else { src };
                node.barrier();
                node.begin_timing();
                for pass in 0..=self.passes {
                    if id == self.producer {
                        for i in 0..self.words {
                            node.store(src.word(i), element(i, pass));
                        }
                    }
                    node.barrier();
                    if id == CONSUMER {
                        let t0 = node.now_cycles();
                        let (sum, ok) = self.pass(node, pass, dst, |node, i| node.load(src.word(i)));
                        if pass > 0 {
                            cycles += node.now_cycles() - t0;
                            sums.push(sum);
                            copies_ok.push(ok);
                        }
                    }
                    node.barrier();
                }
            }
            Variant::Get | Variant::Put => {
                let src = node.alloc_shared(self.words, Placement::OnNode(self.producer));
                let dst = node.alloc_shared(self.words, Placement::OnNode(CONSUMER));
                // The consumer touches its array first.
                if id == CONSUMER {
                    for i in 0..self.words {
                        node.store(dst.word(i), 0);
                    }
                }
                node.barrier();
                node.begin_timing();
                for pass in 0..=self.passes {
                    if id == self.producer {
                        for i in 0..self.words {
                            node.store(src.word(i), element(i, pass));
                        }
                    }
                    node.barrier();
                    if id == self.variant.timed(self.producer) {
                        let t0 = node.now_cycles();
                        self.transfer(node, src, dst);
                        if pass > 0 {
                            cycles += node.now_cycles() - t0;
                        }
                    }
                    node.barrier();
                    if id == CONSUMER {
                        let got: Vec<u64> = (0..self.words).map(|i| node.load(dst.word(i))).collect();
                        if pass > 0 {
                            sums.push(got.iter().fold(0u64, |a, &v| a.wrapping_add(v)));
                            copies_ok.push(self.placed_right(&got, pass));
                        }
                    }
                }
            }
        }
        node.state(|s| {
            s.sums = sums;
            s.copies_ok = copies_ok;
            s.cycles = cycles;
        });
    }
}

pub fn run<B: Backend>(backend: &B, variant_name: &str, params: &Params) -> Result<AppResult, AppError> {
    let variant = match variant_name {
        "local" => Variant::Local,
        "fetch" => Variant::Fetch,
        "get" => Variant::Get,
        "put" => Variant::Put,
        other => unreachable!("copy-transfer variant `{other}` is listed but not handled"),
    };
    let kernel_name = params.raw("kernel");
    let kernel = KERNELS.iter().find(|(k, _)| *k == kernel_name).map(|&(_, k)| k).ok_or_else(|| {
        AppError::Input(format!(
            "--param kernel={kernel_name}: copy-transfer needs one of {}",
            KERNELS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
        ))
    })?;
    let stride: usize = params.get("stride", ("a whole number from 1 to 4096", |v| (1..=4096).contains(&v)))?;
    let bytes: usize =
        params.get("bytes", ("a multiple of 8 from 8 to 16777216", |v| v % 8 == 0 && (8..=16 << 20).contains(&v)))?;
    let passes: usize = params.get("passes", ("a whole number from 1 to 100", |v| (1..=100).contains(&v)))?;
    let loaders: usize = params.get("loaders", ("a whole number from 1 to 4096", |v| (1..=4096).contains(&v)))?;
    if loaders > backend.nprocs() {
        return Err(AppError::Input(format!(
            "--param loaders={loaders}: copy-transfer needs a processor per loader, the machine has {}",
            backend.nprocs()
        )));
    }
    let stagger: u64 = params.get("stagger", ("a whole number of cycles from 0 to 1000000", |v| v <= 1_000_000))?;
    if stagger > 0 && loaders == 1 {
        return Err(AppError::Input(format!(
            "--param stagger={stagger}: staggers the starts of concurrent loaders; it needs --param loaders of 2 or more"
        )));
    }
    if loaders > 1 && variant != Variant::Local {
        return Err(AppError::Input(format!(
            "--param loaders={loaders}: concurrent loaders run the local variant only (got {variant_name})"
        )));
    }
    let words = bytes / 8;
    if stride > words {
        return Err(AppError::Input(format!(
            "--param stride={stride}: copy-transfer needs a stride of at most the array's {words} words (--param bytes={bytes})"
        )));
    }
    if variant.one_sided() && !backend.one_sided() {
        return Err(AppError::Input(format!(
            "copy-transfer {variant_name} moves data by one-sided gets and puts, and this machine has no one-sided remote access (no [remote] section in its machine file); variants that run here: local, fetch"
        )));
    }
    if variant != Variant::Local && backend.nprocs() < 2 {
        return Err(AppError::Input(format!(
            "copy-transfer {variant_name} needs 2 processors (a producer and a consumer), the machine has {}",
            backend.nprocs()
        )));
    }
    let word_cycles = cost(backend, if kernel == Kernel::LoadSum { "accum_word" } else { "memcpy_word" })?;
    let producer = producer_of(backend);
    let prog = CopyTransfer { variant, producer, kernel, stride, words, passes, word_cycles, loaders, stagger };
    let out = backend.run(Arc::new(prog)).map_err(run_err)?;

    // The answers are the consumer's; the time is the timed processor's (the producer's for put).
    let s = &out.states[CONSUMER];
    let cycles = out.states[variant.timed(producer)].cycles;
    let mbytes_per_s = (bytes * passes) as f64 / (cycles / backend.cycles_per_us());
    let mut counters = BTreeMap::new();
    counters.set(&MBYTES_PER_S, mbytes_per_s);
    counters.set(&PASS_CYCLES, cycles / passes as f64);
    let (ok, detail) = match kernel {
        Kernel::LoadSum => {
            let want: Vec<u64> = (1..=passes)
                .map(|p| {
                    let p = if variant == Variant::Local { 0 } else { p };
                    (0..words).map(|i| element(i, p)).fold(0u64, u64::wrapping_add)
                })
                .collect();
            // One-sided: also every word where it belongs (local and fetch record `true`).
            let placed = s.copies_ok.len() == passes && s.copies_ok.iter().all(|&b| b);
            let detail = format!("sums of {passes} passes {:?} vs sequential {want:?}", s.sums);
            (s.sums == want && placed, if placed { detail } else { format!("{detail}; words misplaced") })
        }
        _ => {
            let good = s.copies_ok.iter().filter(|&&b| b).count();
            (s.copies_ok.len() == passes && good == passes, format!("{good} of {passes} passes copied right"))
        }
    };
    let ok = ok && cycles > 0.0;
    let check = Check { ok, max_error: if ok { 0.0 } else { 1.0 }, detail };
    Ok(result(out.stats, counters, check))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strided_pass_touches_every_word_once() {
        for (n, s) in [(16, 1), (16, 3), (17, 4), (8, 8)] {
            let mut seen: Vec<usize> = strided(n, s).collect();
            assert_eq!(seen.len(), n);
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
        assert_eq!(strided(6, 2).collect::<Vec<_>>(), [0, 2, 4, 1, 3, 5]);
    }

    /// processor 0's MB/s of `copy-transfer local` on dec8400 (with `--set` overrides).
    fn dec8400(sets: &[&str], params: &[&str]) -> f64 {
        let set: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let machine = commlab_sim::machine::MachineConfig::preset("dec8400", &set, None).expect("dec8400");
        let s = commlab_sim::Simulator::new(machine);
        let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
        let (variant, params) = params.split_first().expect("a variant");
        let params = Params::parse(&INFO, params).expect("parameters");
        let r = run(&s, variant, &params).expect("runs");
        assert!(r.check.ok, "{params:?}: {}", r.check.detail);
        r.counters["mbytes_per_s"]
    }

    /// Issue 33 item 3: the DEC 8400's one system bus (TLSB). Four processors loading DRAM at
    /// once lose bandwidth through it: strided loads (every word a new line) fall below one
    /// loader's, and with a bus too wide to be held (the what-if) the fall is gone. One
    /// loader's bandwidth is the same either way (it never waits for the bus).
    #[test]
    fn concurrent_loading_on_the_dec8400_loses_bandwidth_through_its_bus() {
        let load = |sets: &[&str], loaders: &str| {
            dec8400(sets, &["local", "kernel=load-sum", "bytes=8388608", "stride=16", loaders])
        };
        let (alone, four) = (load(&[], "loaders=1"), load(&[], "loaders=4"));
        assert!(four < 0.95 * alone, "4 loaders {four:.1} against {alone:.1} alone");
        let wide = ["hierarchy.dram.bytes_per_cycle=1000"];
        let (wide_alone, wide_four) = (load(&wide, "loaders=1"), load(&wide, "loaders=4"));
        assert!(wide_four >= 0.999 * wide_alone, "a free bus: 4 loaders {wide_four:.1} against {wide_alone:.1}");
        assert!((wide_alone - alone).abs() < 0.01 * alone, "one loader: {wide_alone:.1} against {alone:.1}");
    }

    /// `hierarchy.dram.bus_coherent` (on for the DEC 8400): the protocol's line transfers hold
    /// the same bus. With the bus slowed to 0.1 byte a cycle (a 64-byte line holds it 640
    /// cycles: 30 MB/s at 300 MHz), fetching the producer's lines is bound by the bus only when
    /// they hold it; at the real bus rate one pair alone never waits for it. Without a shared
    /// memory the key is refused by name.
    #[test]
    fn the_dec8400s_coherent_transfers_hold_its_bus() {
        let fetch = |sets: &[&str]| dec8400(sets, &["fetch", "kernel=load-sum", "bytes=1048576", "stride=1"]);
        let slow = "hierarchy.dram.bytes_per_cycle=0.1";
        let (on, off) = (fetch(&[slow]), fetch(&[slow, "hierarchy.dram.bus_coherent=false"]));
        assert!((on - 30.0).abs() < 0.02 * 30.0, "bus-bound fetch {on:.1} MB/s, the bus's 30");
        assert!(off > 3.0 * on, "without the key the fetch does not use the bus: {off:.1}");
        assert_eq!(fetch(&[]), fetch(&["hierarchy.dram.bus_coherent=false"]), "one pair alone");
        let e = commlab_sim::machine::MachineConfig::preset("dec8400", &["hierarchy.dram.shared=false".into()], None)
            .expect_err("refused");
        assert!(e.to_string().contains("hierarchy.dram.bus_coherent"), "{e}");
    }
}
