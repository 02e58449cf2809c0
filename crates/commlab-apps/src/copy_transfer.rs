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
//!   machine with a `[hierarchy]` these do not block, up to its outstanding misses).
//! - `fetch`: coherent shared memory. Before each pass the producer (processor 1) writes the
//!   array, homed at it; the consumer (processor 0) then loads it (coherent misses to the
//!   producer's cache, or to its memory when the array outgrows that cache); copies store into
//!   the consumer's private array. Only the consumer's pass is timed.
//!
//! One-sided `fetch`/`deposit` by get/put (the T3D and T3E, which have no coherent caching of
//! remote data) belong in [`Variant`] beside `Fetch` when `Node::get`/`put` exist: the consumer's
//! pass becomes strided `get`s (or the producer's strided `put`s) and a `quiet`.
//!
//! Per word the loop costs `costs.accum_word` (load-sum: the add and the loop's increment,
//! compare and branch; the load simulated) or `costs.memcpy_word` (copies: the two index
//! increments, compare and branch; the load and the store simulated): the same loops as the
//! `accum` and `memcpy` benchmarks, so the same cost entries.
//!
//! `counters.mbytes_per_s`: array bytes per pass x passes / the timed passes' time. The check:
//! every pass's sum (load-sum) or copy (copies) equals the sequential answer.

use crate::app::{cost, result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::Params;
use commlab_api::{Addr, Backend, BarrierKind, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const INFO: AppInfo = AppInfo {
    name: "copy-transfer",
    summary: "MB/s of strided loads (load-sum) and strided copies (copy-sload, copy-sstore), local or fetched through coherence; counters.mbytes_per_s",
    variants: &["local", "fetch"],
    params: &[
        ParamDoc { name: "kernel", default: "load-sum", doc: "load-sum, copy-sload or copy-sstore" },
        ParamDoc { name: "stride", default: "1", doc: "words between consecutive references (1 to 4096)" },
        ParamDoc {
            name: "bytes",
            default: "65536",
            doc: "working set: the array's bytes (a multiple of 8, at least stride x 8, up to 16 MiB)",
        },
        ParamDoc { name: "passes", default: "1", doc: "timed passes, after one untimed priming pass (1 to 100)" },
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
    // Here: `Get` and `Put` (one-sided fetch and deposit) once the Node has them.
}

const CONSUMER: ProcId = 0;
const PRODUCER: ProcId = 1;

struct CopyTransfer {
    variant: Variant,
    kernel: Kernel,
    stride: usize,
    words: usize,
    passes: usize,
    word_cycles: u64,
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
                let order: Vec<usize> = strided(n, self.stride).collect();
                let ok = (0..n).all(|j| {
                    let (from, to) = if self.kernel == Kernel::CopySload { (order[j], j) } else { (j, order[j]) };
                    copy[to] == element(from, pass)
                });
                (0, ok)
            }
        }
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
        if id != CONSUMER {
            return Vec::new();
        }
        match (self.variant, self.kernel) {
            (Variant::Local, Kernel::LoadSum) => vec![self.words],
            (Variant::Local, _) => vec![self.words, self.words],
            (Variant::Fetch, Kernel::LoadSum) => Vec::new(),
            (Variant::Fetch, _) => vec![self.words],
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
                if id != CONSUMER {
                    return;
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
                let src = node.alloc_shared(self.words, Placement::OnNode(PRODUCER));
                let dst = if id == CONSUMER && self.kernel != Kernel::LoadSum { node.private_array(0) } else { src };
                node.barrier();
                node.begin_timing();
                for pass in 0..=self.passes {
                    if id == PRODUCER {
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
        }
        node.state(|s| {
            s.sums = sums;
            s.copies_ok = copies_ok;
            s.cycles = cycles;
        });
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let variant = match variant {
        "local" => Variant::Local,
        "fetch" => Variant::Fetch,
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
    let words = bytes / 8;
    if stride > words {
        return Err(AppError::Input(format!(
            "--param stride={stride}: copy-transfer needs a stride of at most the array's {words} words (--param bytes={bytes})"
        )));
    }
    if variant == Variant::Fetch && backend.nprocs() < 2 {
        return Err(AppError::Input(format!(
            "copy-transfer fetch needs 2 processors (a producer and a consumer), the machine has {}",
            backend.nprocs()
        )));
    }
    let word_cycles = cost(backend, if kernel == Kernel::LoadSum { "accum_word" } else { "memcpy_word" })?;
    let prog = CopyTransfer { variant, kernel, stride, words, passes, word_cycles };
    let out = backend.run(Arc::new(prog)).map_err(run_err)?;

    let s = &out.states[CONSUMER];
    let mbytes_per_s = (bytes * passes) as f64 / (s.cycles / backend.cycles_per_us());
    let mut counters = BTreeMap::new();
    counters.insert("mbytes_per_s".into(), mbytes_per_s);
    counters.insert("pass_cycles".into(), s.cycles / passes as f64);
    let (ok, detail) = match kernel {
        Kernel::LoadSum => {
            let want: Vec<u64> = (1..=passes)
                .map(|p| {
                    let p = if variant == Variant::Local { 0 } else { p };
                    (0..words).map(|i| element(i, p)).fold(0u64, u64::wrapping_add)
                })
                .collect();
            (s.sums == want, format!("sums of {passes} passes {:?} vs sequential {want:?}", s.sums))
        }
        _ => {
            let good = s.copies_ok.iter().filter(|&&b| b).count();
            (s.copies_ok.len() == passes && good == passes, format!("{good} of {passes} passes copied right"))
        }
    };
    let ok = ok && s.cycles > 0.0;
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
}
