//! The microbenchmark kernels of the copy-transfer model, and the clock, latency and
//! synchronisation they need.
//!
//! Every buffer is a slice of `AtomicU64` words accessed with `Relaxed` loads and stores: on
//! x86-64 and AArch64 these compile to the plain 64-bit moves a copy loop issues, and they let
//! two threads share a buffer without `unsafe` (the [`Rendezvous`] between phases orders the
//! producer's stores before the consumer's loads).
//!
//! A *pass* touches every word of the working set exactly once: with stride `s` (in 64-bit
//! words) it walks offsets `0, s, 2s, ...`, then `1, 1+s, ...`, up to offset `s - 1`. Loops are
//! unrolled four ways with independent accumulators, and every result goes through
//! [`std::hint::black_box`], so nothing is optimised away.

use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::time::Instant;

/// A buffer of `words` 64-bit words, zeroed. Large buffers come from fresh pages (the
/// allocator maps them), so the first thread to write a page places it (first touch).
pub fn buffer(words: usize) -> Vec<AtomicU64> {
    (0..words).map(|_| AtomicU64::new(0)).collect()
}

/// Write every word of `a` (the producer's data generation; also how a thread first-touches a
/// buffer). `seed` changes the values so no pass writes what is already there.
pub fn fill(a: &[AtomicU64], seed: u64) {
    for (i, w) in a.iter().enumerate() {
        w.store(seed.wrapping_add(i as u64), Relaxed);
    }
}

#[inline(always)]
fn ld(a: &[AtomicU64], i: usize) -> u64 {
    // Bounds-checked: the checks are a compare and a never-taken branch beside each load.
    a[i].load(Relaxed)
}

#[inline(always)]
fn st(a: &[AtomicU64], i: usize, v: u64) {
    a[i].store(v, Relaxed)
}

/// **load-sum**: the sum of every word of `a`, loaded with stride `s`.
pub fn load_sum(a: &[AtomicU64], s: usize) -> u64 {
    let n = a.len();
    let (mut s0, mut s1, mut s2, mut s3) = (0u64, 0u64, 0u64, 0u64);
    for off in 0..s.min(n) {
        let mut i = off;
        while i + 3 * s < n {
            s0 = s0.wrapping_add(ld(a, i));
            s1 = s1.wrapping_add(ld(a, i + s));
            s2 = s2.wrapping_add(ld(a, i + 2 * s));
            s3 = s3.wrapping_add(ld(a, i + 3 * s));
            i += 4 * s;
        }
        while i < n {
            s0 = s0.wrapping_add(ld(a, i));
            i += s;
        }
    }
    black_box(s0.wrapping_add(s1).wrapping_add(s2).wrapping_add(s3))
}

/// **copy, strided loads**: `dst[j] = src[i]` with `i` walking `src` with stride `s` and `j`
/// walking `dst` contiguously (a gather, or packing).
pub fn copy_gather(src: &[AtomicU64], dst: &[AtomicU64], s: usize) {
    let n = src.len().min(dst.len());
    let mut j = 0;
    for off in 0..s.min(n) {
        let mut i = off;
        while i + 3 * s < n {
            let (a, b, c, d) = (ld(src, i), ld(src, i + s), ld(src, i + 2 * s), ld(src, i + 3 * s));
            st(dst, j, a);
            st(dst, j + 1, b);
            st(dst, j + 2, c);
            st(dst, j + 3, d);
            i += 4 * s;
            j += 4;
        }
        while i < n {
            st(dst, j, ld(src, i));
            i += s;
            j += 1;
        }
    }
    black_box(dst);
}

/// **copy, strided stores**: `dst[i] = src[j]` with `j` walking `src` contiguously and `i`
/// walking `dst` with stride `s` (a scatter, or unpacking).
pub fn copy_scatter(src: &[AtomicU64], dst: &[AtomicU64], s: usize) {
    let n = src.len().min(dst.len());
    let mut j = 0;
    for off in 0..s.min(n) {
        let mut i = off;
        while i + 3 * s < n {
            let (a, b, c, d) = (ld(src, j), ld(src, j + 1), ld(src, j + 2), ld(src, j + 3));
            st(dst, i, a);
            st(dst, i + s, b);
            st(dst, i + 2 * s, c);
            st(dst, i + 3 * s, d);
            i += 4 * s;
            j += 4;
        }
        while i < n {
            st(dst, i, ld(src, j));
            i += s;
            j += 1;
        }
    }
    black_box(dst);
}

/// **memcpy**: the best time in seconds of one `copy_from_slice` (the C library's memcpy) of
/// `bytes` bytes between two plain buffers of the calling thread (written first, so their pages
/// are its and primed in its caches), `samples` samples of enough copies to move 1 MB at least.
/// Not a grid kernel: the reference a native bulk transfer is compared with (`commlab run
/// bulk-bw --machine host`), since the native backend copies a bulk message's payload with
/// memcpy.
pub fn memcpy_secs(bytes: usize, samples: usize) -> f64 {
    let words = (bytes / 8).max(1);
    let src: Vec<u64> = (0..words as u64).collect();
    let mut dst = vec![1u64; words];
    let passes = (1usize << 20).div_ceil(8 * words);
    best_per_pass(samples, passes, || {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    })
}

/// Uniformly random indices below `n` (a fixed xorshift seed, so every run measures the same
/// pattern).
fn random_indices(count: usize, n: usize) -> Vec<u32> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n.max(1) as u64) as u32
        })
        .collect()
}

/// **Sparse update**: the best time in seconds of one pass of a relaxation over a compressed
/// row structure (an irregular graph's update, a sparse matrix-vector product): for each of
/// `rows` rows `acc = dst[j]`, then for each of its `degree` entries `acc -= coef[e] *
/// src[idx[e]]` (`idx` uniformly random over `rows` source values), then `dst[j] = acc`. Plain
/// arrays of the calling thread, primed in its caches by an untimed pass; `samples` samples of
/// enough passes to make 1 M entries. Not a grid kernel: two degrees give the cost of an entry
/// and of a row (`commlab characterize --emit-machine`).
pub fn sparse_update_secs(rows: usize, degree: usize, samples: usize) -> f64 {
    let entries = rows * degree;
    let idx = random_indices(entries, rows);
    let coef: Vec<f64> = (0..entries).map(|e| 1e-3 * (e % 7) as f64).collect();
    let src: Vec<f64> = (0..rows).map(|i| i as f64).collect();
    let mut dst = vec![1.0f64; rows];
    let passes = (1usize << 20).div_ceil(entries.max(1));
    best_per_pass(samples, passes, || {
        let (idx, coef, src) = (black_box(&idx), black_box(&coef), black_box(&src));
        for (j, d) in dst.iter_mut().enumerate() {
            let mut acc = *d;
            for e in j * degree..(j + 1) * degree {
                acc -= coef[e] * src[idx[e] as usize];
            }
            *d = acc;
        }
        black_box(&mut dst);
    })
}

/// **Indexed gather**: the best time in seconds of one pass of `out[i] = src[idx[i]]` over
/// `values` values (`idx` uniformly random over `src`, as long as `out`), the arrays primed in
/// the calling thread's caches; `samples` samples of enough passes to move 1 M values. What
/// packing scattered values into a message costs per value.
pub fn gather_secs(values: usize, samples: usize) -> f64 {
    let idx = random_indices(values, values);
    let src: Vec<u64> = (0..values as u64).collect();
    let mut out = vec![0u64; values];
    let passes = (1usize << 20).div_ceil(values.max(1));
    best_per_pass(samples, passes, || {
        let (idx, src) = (black_box(&idx), black_box(&src));
        for (o, &i) in out.iter_mut().zip(idx.iter()) {
            *o = src[i as usize];
        }
        black_box(&mut out);
    })
}

/// A cross-core copy's two halves, in seconds (each the best of the samples).
#[derive(Clone, Copy, Debug)]
pub struct CrossCopy {
    /// From the sender's copy starting to the receiver seeing that it is done: the sender
    /// copies its source (`copy_from_slice`, the C library's memcpy, as the native backend
    /// copies a bulk payload) into a buffer the receiver read two copies before, then stores a flag the
    /// receiver polls. The same span as a native transfer's (send start to handler entry).
    pub write_secs: f64,
    /// The receiver then reading every word of the buffer (a sum), from its seeing the flag:
    /// what a handler pays to read a payload that is still in the sender's caches or memory.
    pub read_secs: f64,
}

/// **Cross-core copy**: `bytes` bytes from a thread pinned to OS core `a` to one pinned to
/// `b`, `samples` samples after two untimed ones (which also fault the two buffers' pages in:
/// the floor is the copy, not the operating system's page faults). Per sample the sender, after
/// a rendezvous, reads the clock, copies its source into one of two shared buffers, taken in
/// turn, and stores the sample's number in a flag alone on its lines; the receiver, polling the
/// flag, reads the clock when it sees it ([`CrossCopy::write_secs`]), then reads the whole
/// buffer and the clock again ([`CrossCopy::read_secs`]). So each copy meets lines the receiver
/// read two samples before, as the native backend's receive buffers do: a sender's pool hands
/// out two buffers in turn (double buffering, `commlab-native`'s `inbox.rs`). The two clock
/// readings are on different cores (`Instant`: the monotonic clock, one for the whole system).
/// A buffer is handed over under a mutex, taken by the sender before its clock read and
/// released before the flag, so the lock is no part of either span.
pub fn cross_copy(a: usize, b: usize, bytes: usize, samples: usize) -> CrossCopy {
    let words = (bytes / 8).max(1);
    let bufs = [std::sync::Mutex::new(vec![0u64; words]), std::sync::Mutex::new(vec![0u64; words])];
    let buf = |k: u64| &bufs[(k % 2) as usize];
    let (flag, began) = (Flag::default(), Flag::default());
    let start = Rendezvous::default();
    let origin = Instant::now();
    let ns = |t: Instant| t.duration_since(origin).as_nanos() as u64;
    let untimed = 2;
    let total = samples.max(1) as u64 + untimed;
    std::thread::scope(|sc| {
        sc.spawn(|| {
            pin(a);
            let src: Vec<u64> = (0..words as u64).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
            let mut calls = 0;
            for k in 1..=total {
                start.wait(&mut calls);
                let mut g = buf(k).lock().unwrap_or_else(|e| e.into_inner());
                began.0.store(ns(Instant::now()), Relaxed);
                g.copy_from_slice(black_box(&src));
                drop(g);
                flag.0.store(k, Release);
                // The receiver's read of this sample before the next copy.
                start.wait(&mut calls);
            }
        });
        let mine = sc.spawn(|| {
            pin(b);
            let mut calls = 0;
            let (mut write, mut read) = (f64::INFINITY, f64::INFINITY);
            for k in 1..=total {
                start.wait(&mut calls);
                while flag.0.load(Acquire) != k {
                    std::hint::spin_loop();
                }
                let seen = ns(Instant::now());
                let g = buf(k).lock().unwrap_or_else(|e| e.into_inner());
                let sum = g.iter().fold(0u64, |s, &w| s.wrapping_add(w));
                black_box(sum);
                drop(g);
                let finished = ns(Instant::now());
                if k > untimed {
                    write = write.min(seen.saturating_sub(began.0.load(Relaxed)) as f64 * 1e-9);
                    read = read.min(finished.saturating_sub(seen) as f64 * 1e-9);
                }
                start.wait(&mut calls);
            }
            CrossCopy { write_secs: write, read_secs: read }
        });
        mine.join().expect("cross-copy thread")
    })
}

/// Seconds of `f`, timed with the monotonic clock.
pub fn timed(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// The best (smallest) time of `samples` samples of `passes` passes of `f`, per pass, after
/// one untimed pass that primes the caches.
pub fn best_per_pass(samples: usize, passes: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    for _ in 0..samples.max(1) {
        let t = timed(|| {
            for _ in 0..passes.max(1) {
                f();
            }
        });
        best = best.min(t / passes.max(1) as f64);
    }
    best
}

/// A rendezvous of two threads: each call waits until the other thread has made the same
/// number of calls. The counter only grows; a party's `k`-th call returns once it reaches
/// `2k`. Release on the increment and Acquire on the wait order each thread's stores before
/// the rendezvous before the other's loads after it.
#[repr(align(128))]
#[derive(Default)]
pub struct Rendezvous {
    count: AtomicU64,
}

impl Rendezvous {
    /// Wait for the other party; `calls` counts this party's calls.
    pub fn wait(&self, calls: &mut u64) {
        *calls += 1;
        self.count.fetch_add(1, Release);
        while self.count.load(Acquire) < 2 * *calls {
            std::hint::spin_loop();
        }
    }
}

/// Pin the calling thread to an OS core id; false if the OS refused.
pub fn pin(core: usize) -> bool {
    core_affinity::set_for_current(core_affinity::CoreId { id: core })
}

/// A flag alone on its cache lines (128 bytes: adjacent-line prefetchers pair lines).
#[repr(align(128))]
#[derive(Default)]
struct Flag(AtomicU64);

/// Core-to-core one-way latency in ns: threads pinned to `a` and `b` bounce a counter on one
/// cache line (`a` writes an odd value, `b` answers with the next even one), `rounds` round
/// trips per sample; the best sample's round-trip time halved.
pub fn ping_pong_ns(a: usize, b: usize, rounds: u64, samples: usize) -> f64 {
    let flag = Flag::default();
    let start = Rendezvous::default();
    let total = rounds * samples as u64;
    std::thread::scope(|sc| {
        sc.spawn(|| {
            pin(b);
            let mut calls = 0;
            start.wait(&mut calls);
            for k in 0..total {
                while flag.0.load(Acquire) != 2 * k + 1 {
                    std::hint::spin_loop();
                }
                flag.0.store(2 * k + 2, Release);
            }
        });
        let mine = sc.spawn(|| {
            pin(a);
            let mut calls = 0;
            start.wait(&mut calls);
            let mut best = f64::INFINITY;
            let mut k = 0;
            for _ in 0..samples {
                let t = timed(|| {
                    for _ in 0..rounds {
                        flag.0.store(2 * k + 1, Release);
                        while flag.0.load(Acquire) != 2 * k + 2 {
                            std::hint::spin_loop();
                        }
                        k += 1;
                    }
                });
                best = best.min(t);
            }
            best
        });
        mine.join().expect("ping-pong thread") * 1e9 / (2 * rounds) as f64
    })
}

/// One-way latency in ns of a message through a polled queue at its cheapest: as
/// [`ping_pong_ns`], but the two directions on two lines (`a` writes a counter into one, `b`,
/// which polls it, answers in the other), as in any queue from one core to another, where the
/// receiver polls the line the sender writes next. Each way then moves the line twice (the
/// sender must take it back from the core polling it before its store, then that core's load
/// fetches it), where the single line of [`ping_pong_ns`] moves once (each core writes the line
/// it has just read): the floor of a native active message's one-way time on this host.
pub fn two_line_ping_pong_ns(a: usize, b: usize, rounds: u64, samples: usize) -> f64 {
    let (there, back) = (Flag::default(), Flag::default());
    let start = Rendezvous::default();
    let total = rounds * samples as u64;
    std::thread::scope(|sc| {
        sc.spawn(|| {
            pin(b);
            let mut calls = 0;
            start.wait(&mut calls);
            for k in 1..=total {
                while there.0.load(Acquire) != k {
                    std::hint::spin_loop();
                }
                back.0.store(k, Release);
            }
        });
        let mine = sc.spawn(|| {
            pin(a);
            let mut calls = 0;
            start.wait(&mut calls);
            let mut best = f64::INFINITY;
            let mut k = 0;
            for _ in 0..samples {
                let t = timed(|| {
                    for _ in 0..rounds {
                        k += 1;
                        there.0.store(k, Release);
                        while back.0.load(Acquire) != k {
                            std::hint::spin_loop();
                        }
                    }
                });
                best = best.min(t);
            }
            best
        });
        mine.join().expect("ping-pong thread") * 1e9 / (2 * rounds) as f64
    })
}

/// Dependent-load latency in ns per load over a working set of `bytes`: each 64-byte line
/// holds the index of the next in a pseudo-random cyclic order (so hardware prefetchers cannot
/// follow), `loads` loads per sample after one untimed walk of the whole cycle, the best of
/// `samples` samples. The order visits the
/// pages (4 KB) in random order and the lines of each page in random order before moving on, so
/// a TLB miss (expensive in a virtual machine: a two-level page walk) is paid once per 64 loads
/// and the figure is the cache-miss latency, not the page-walk latency.
pub fn chase_ns(bytes: usize, loads: u64, samples: usize) -> f64 {
    const LINE_WORDS: usize = 8;
    const PAGE_LINES: usize = 64;
    let lines = (bytes / 64).max(2);
    let a = buffer(lines * LINE_WORDS);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut shuffle = |v: &mut [usize]| {
        for i in (1..v.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.swap(i, (x % (i as u64 + 1)) as usize);
        }
    };
    let pages = lines.div_ceil(PAGE_LINES);
    let mut page_order: Vec<usize> = (0..pages).collect();
    shuffle(&mut page_order);
    let mut order = Vec::with_capacity(lines);
    for p in page_order {
        let mut in_page: Vec<usize> = (p * PAGE_LINES..((p + 1) * PAGE_LINES).min(lines)).collect();
        shuffle(&mut in_page);
        order.extend(in_page);
    }
    for w in 0..lines {
        let next = order[(w + 1) % lines];
        a[order[w] * LINE_WORDS].store((next * LINE_WORDS) as u64, Relaxed);
    }
    let walk = |steps: u64| {
        let mut p = order[0] * LINE_WORDS;
        for _ in 0..steps {
            p = a[p].load(Relaxed) as usize;
        }
        black_box(p);
    };
    walk(lines as u64);
    let t = (0..samples.max(1)).map(|_| timed(|| walk(loads))).fold(f64::INFINITY, f64::min);
    t * 1e9 / loads as f64
}

/// The core clock in MHz: a chain of dependent register-to-register integer adds (one cycle
/// each on every x86-64 core) timed with the monotonic clock; the best of 40 samples of about
/// 1 ms (short, so that most samples run without the OS taking the core away). Register operands, not immediates: recent Intel cores (Golden Cove on) fold chains of
/// add-immediate at register renaming, which would count several adds per cycle. `None` where
/// the architecture has no such measurement here.
pub fn clock_mhz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        fn chain(iters: u64) {
            // SAFETY: only register arithmetic on the three operands; no memory or stack
            // (flags are clobbered by default in Rust asm).
            unsafe {
                std::arch::asm!(
                    "2:",
                    "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                    "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                    "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                    "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                    "sub {n}, 1",
                    "jnz 2b",
                    x = inout(reg) 0u64 => _,
                    one = in(reg) 1u64,
                    n = inout(reg) iters => _,
                    options(nomem, nostack),
                );
            }
        }
        chain(1_000_000);
        let iters = 150_000u64;
        let best = (0..40).map(|_| timed(|| chain(iters))).fold(f64::INFINITY, f64::min);
        Some(16.0 * iters as f64 / best / 1e6)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(a: &[AtomicU64]) -> Vec<u64> {
        a.iter().map(|w| w.load(Relaxed)).collect()
    }

    #[test]
    fn every_word_is_touched_once_per_pass() {
        for n in [1usize, 5, 64, 99] {
            for s in [1usize, 2, 3, 7, 8, 31, 64, 200] {
                let src = buffer(n);
                fill(&src, 1);
                let expect: u64 = (0..n as u64).map(|i| i + 1).sum();
                assert_eq!(load_sum(&src, s), expect, "n {n} s {s}");
                // Gather then scatter with the same stride is the identity.
                let packed = buffer(n);
                copy_gather(&src, &packed, s);
                let mut sorted = values(&packed);
                sorted.sort_unstable();
                assert_eq!(sorted, values(&src), "gather n {n} s {s} is a permutation");
                let back = buffer(n);
                copy_scatter(&packed, &back, s);
                assert_eq!(values(&back), values(&src), "scatter undoes gather, n {n} s {s}");
            }
        }
    }

    #[test]
    fn gather_packs_in_stride_order() {
        let src = buffer(6);
        fill(&src, 0);
        let dst = buffer(6);
        copy_gather(&src, &dst, 4);
        assert_eq!(values(&dst), vec![0, 4, 1, 5, 2, 3]);
    }

    #[test]
    fn chase_and_clock_give_positive_figures() {
        // Each line is visited once per cycle: the chain from any line returns after `lines`.
        assert!(chase_ns(3 * 4096 + 640, 1000, 2) > 0.0);
        assert!(chase_ns(64 * 1024, 10_000, 1) > 0.0);
        if let Some(mhz) = clock_mhz() {
            assert!(mhz > 10.0 && mhz < 20_000.0, "{mhz}");
        }
    }
}
