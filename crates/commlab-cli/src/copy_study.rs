//! What `commlab reproduce copy-transfer` and `commlab experiment copy-transfer|fft2d` share
//! (seed 002, the copy-transfer study of the DEC 8400, Cray T3D and Cray T3E): the strides and
//! the ways of copying of the large-transfer figures (the study's Figs. 9-14), and the 2-D
//! FFT's three figures (Figs. 15-17) read out of an `fft2d` run. Both commands make their
//! runs their own way (the reproduction's plan, the experiment's sweep) and turn the MB/s and
//! the FFT counters into the same series here, so the figures are the same.

use crate::chart::Series;
use commlab_sim::machine::MachineConfig;

/// Strides (64-bit words) of the large-transfer figures: contiguous, small, odd and even
/// neighbours (the T3E's odd/even ripple), powers of two to the study's 64.
pub(crate) const LARGE_STRIDES: [usize; 12] = [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 32, 64];
pub(crate) const QUICK_LARGE_STRIDES: [usize; 6] = [1, 2, 3, 4, 5, 16];
/// The large transfers' working set on a machine whose last cache level holds `last_cache`
/// bytes: twice that level, at least 1 MiB, at most the app's 16 MiB (a power of two). The
/// study's 65 MB made every copy go from DRAM to DRAM; so does this, at a simulated cost that
/// fits the reproduction's budget: the DEC 8400 (4 MB board cache) copies 8 MiB arrays, the
/// T3D (8 KB) and the T3E (96 KB L2) 1 MiB ones, far beyond their caches.
pub(crate) fn large_bytes(last_cache: u64) -> u64 {
    (2 * last_cache).next_power_of_two().clamp(1 << 20, 16 << 20)
}
pub(crate) const QUICK_LARGE_BYTES: u64 = 64 << 10;

/// The machine's cache levels, innermost first: (name, bytes).
pub(crate) fn levels(cfg: &MachineConfig) -> Vec<(String, u64)> {
    let sizes: Vec<u64> = match &cfg.mem.hierarchy {
        Some(h) => h.caches().iter().map(|l| l.lines * l.line_bytes).collect(),
        None => vec![cfg.spec.memory.cache_bytes],
    };
    sizes.into_iter().enumerate().map(|(i, b)| (format!("L{}", i + 1), b)).collect()
}

/// The bytes of the machine's last cache level.
pub(crate) fn last_cache(cfg: &MachineConfig) -> u64 {
    levels(cfg).last().map_or(0, |l| l.1)
}
/// The 2-D FFT's problem sides (n x n complex values), on the study's 4 processors.
pub(crate) const FFT_SIZES: [usize; 5] = [64, 128, 256, 512, 1024];
pub(crate) const QUICK_FFT_SIZES: [usize; 2] = [16, 32];
pub(crate) const FFT_PROCS: usize = 4;

/// One way of copying: a copy-transfer variant and kernel, and what the figures call it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Way {
    pub variant: &'static str,
    pub kernel: &'static str,
    pub label: &'static str,
}

/// Local copies (Figs. 9-11): strided loads to contiguous stores, contiguous loads to strided stores.
pub(crate) const LOCAL_WAYS: [Way; 2] = [
    Way { variant: "local", kernel: "copy-sload", label: "local, strided loads" },
    Way { variant: "local", kernel: "copy-sstore", label: "local, strided stores" },
];

/// Every way of copying the copy-transfer app has: local, coherent loads (`fetch`), one-sided
/// `get` and `put`, each with strided loads or strided stores (the kernel says which side of
/// a remote copy is strided: `copy-sload` the source, `copy-sstore` the destination).
pub(crate) const ALL_WAYS: [Way; 8] = [
    LOCAL_WAYS[0],
    LOCAL_WAYS[1],
    Way { variant: "fetch", kernel: "copy-sload", label: "coherent fetch, strided remote loads" },
    Way { variant: "fetch", kernel: "copy-sstore", label: "coherent fetch, strided local stores" },
    Way { variant: "get", kernel: "copy-sload", label: "fetch (get), strided remote loads" },
    Way { variant: "get", kernel: "copy-sstore", label: "fetch (get), strided local stores" },
    Way { variant: "put", kernel: "copy-sload", label: "deposit (put), strided local loads" },
    Way { variant: "put", kernel: "copy-sstore", label: "deposit (put), strided remote stores" },
];

/// The ways of `variant` (both kernels).
pub(crate) fn ways_of(variant: &str) -> Vec<Way> {
    ALL_WAYS.iter().copied().filter(|w| w.variant == variant).collect()
}

/// Remote copies (Figs. 12-14): with one-sided access (T3D, T3E) fetch (get) and deposit (put),
/// each with either side strided; without (DEC 8400: the study's "pulling" through coherence)
/// the consumer's coherent loads of the producer's data, strided loads or strided stores.
pub(crate) fn remote_ways(one_sided: bool) -> Vec<Way> {
    if one_sided {
        [ways_of("get"), ways_of("put")].concat()
    } else {
        ways_of("fetch")
    }
}

/// One curve per way: MB/s against stride (`mb(way, stride)`; missing points left out).
pub(crate) fn stride_series(ways: &[Way], strides: &[usize], mb: &dyn Fn(&Way, usize) -> Option<f64>) -> Vec<Series> {
    ways.iter()
        .map(|w| Series {
            name: w.label.to_string(),
            points: strides.iter().filter_map(|&s| mb(w, s).map(|v| (s as f64, v))).collect(),
        })
        .collect()
}

/// What an `fft2d` run gives the three figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FftPoint {
    /// The whole timed region's MFlop/s (counter `mflops`: `5 n^2 log2(n^2)` flops).
    pub mflops: f64,
    /// The run's cycles, and the slowest processor's in the FFT phases and in the transposes.
    pub cycles: f64,
    pub fft_cycles: f64,
    pub transpose_cycles: f64,
}

impl FftPoint {
    /// Fig. 15: the whole 2-D FFT, MFlop/s over all processors.
    pub fn total(&self) -> f64 {
        self.mflops
    }
    /// Fig. 16: the local computation, the FFT's flops over the time of the two row-FFT phases.
    pub fn local(&self) -> f64 {
        self.mflops * self.cycles / self.fft_cycles
    }
    /// Fig. 17: the transposes, the FFT's flops over the time of the two transposes (the same
    /// unit as Figs. 15 and 16: 1 / total = 1 / local + 1 / transposes, barriers aside).
    pub fn transposes(&self) -> f64 {
        self.mflops * self.cycles / self.transpose_cycles
    }
    /// The transposes as MB/s per processor: both transposes move the whole matrix
    /// (16 bytes a value), `procs` processors at once.
    pub fn transpose_mb_per_proc(&self, n: usize, procs: usize) -> f64 {
        let flops = 5.0 * (n * n) as f64 * 2.0 * (n.trailing_zeros() as f64);
        let seconds_us = flops / self.transposes();
        2.0 * 16.0 * (n * n) as f64 / procs as f64 / seconds_us
    }
}

/// The three figures' curves for one machine (or variant): (total, local, transposes), each
/// MFlop/s against the problem side `n`.
pub(crate) fn fft_series(name: &str, points: &[(usize, FftPoint)]) -> [Series; 3] {
    let curve = |f: fn(&FftPoint) -> f64| Series {
        name: name.to_string(),
        points: points.iter().map(|(n, p)| (*n as f64, f(p))).filter(|p| p.1.is_finite()).collect(),
    };
    [curve(FftPoint::total), curve(FftPoint::local), curve(FftPoint::transposes)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fft_parts_add_up_and_transposes_convert_to_bytes() {
        // 1000 cycles: 600 of FFT, 400 of transposes, at 100 MFlop/s overall.
        let p = FftPoint { mflops: 100.0, cycles: 1000.0, fft_cycles: 600.0, transpose_cycles: 400.0 };
        assert!((1.0 / p.total() - (1.0 / p.local() + 1.0 / p.transposes())).abs() < 1e-12);
        assert!((p.local() - 166.666_666_666).abs() < 1e-6);
        // n = 4: 5 x 16 x 4 = 320 flops; at 250 MFlop/s that is 1.28 µs for 2 x 16 x 16 bytes
        // on 2 processors: 256 / 1.28 = 200 MB/s each.
        assert!((p.transpose_mb_per_proc(4, 2) - 200.0).abs() < 1e-9);
        let [t, l, x] = fft_series("m", &[(4, p)]);
        assert_eq!((t.points[0], l.points[0].0, x.points[0].1), ((4.0, 100.0), 4.0, 250.0));
    }

    #[test]
    fn large_transfers_reach_beyond_the_last_cache() {
        assert_eq!(large_bytes(4 << 20), 8 << 20);
        assert_eq!(large_bytes(8192), 1 << 20);
        assert_eq!(large_bytes(98304), 1 << 20);
        assert_eq!(large_bytes(64 << 20), 16 << 20);
    }

    #[test]
    fn ways_and_series() {
        assert_eq!(remote_ways(true).len(), 4);
        assert!(remote_ways(false).iter().all(|w| w.variant == "fetch"));
        let s = stride_series(&LOCAL_WAYS, &[1, 2], &|w, s| (w.kernel == "copy-sload" || s == 1).then_some(s as f64));
        assert_eq!(s[0].points, [(1.0, 1.0), (2.0, 2.0)]);
        assert_eq!(s[1].points, [(1.0, 1.0)]);
    }
}
