//! The measurement plan (the grid) and its execution: every point of every kernel, on pinned
//! threads, with a progress bar.

use super::kernels::{self, best_per_pass, buffer, copy_gather, copy_scatter, fill, load_sum, pin, timed, Rendezvous};
use super::topology::PairClass;
use serde::Serialize;
use std::io::IsTerminal;
use std::sync::Mutex;

/// The bandwidth kernels, in the order they are measured and reported.
pub const LOCAL_KERNELS: [&str; 5] =
    ["load-sum", "copy-strided-load", "copy-strided-store", "local-fetch", "local-deposit"];
pub const REMOTE_KERNELS: [&str; 2] = ["remote-fetch", "remote-deposit"];
/// Dependent-load latency over a working set.
pub const CHASE: &str = "chase";
/// Core-to-core one-way latency.
pub const CORE_TO_CORE: &str = "core-to-core";

/// What to measure.
#[derive(Clone, Debug)]
pub struct Grid {
    /// Strides in 64-bit words.
    pub strides: Vec<usize>,
    /// Working sets in bytes, ascending.
    pub sizes: Vec<u64>,
    /// Timed samples per point (the best is kept).
    pub reps: usize,
    /// Bytes a local sample moves at least (small working sets repeat their pass).
    pub sample_bytes: u64,
    /// Working sets from this size up take at most 2 samples (each pass is long).
    pub big_bytes: u64,
    /// The core local kernels run on.
    pub home: usize,
    /// Core pairs (producer, consumer) for the remote kernels.
    pub pairs: Vec<(usize, usize, PairClass)>,
    /// Pairs for the core-to-core latency matrix.
    pub latency_pairs: Vec<(usize, usize, PairClass)>,
    /// Round trips per latency sample, and samples (the best is kept: short samples, many of
    /// them, so one that the OS interrupts does not count).
    pub latency_rounds: u64,
    pub latency_samples: usize,
    /// Working sets of the dependent-load chase.
    pub chase_sizes: Vec<u64>,
    pub chase_loads: u64,
}

impl Grid {
    /// Number of points, for the progress bar.
    pub fn total(&self) -> usize {
        let per = self.sizes.len() * self.strides.len();
        per * (LOCAL_KERNELS.len() + REMOTE_KERNELS.len() * self.pairs.len())
            + self.chase_sizes.len()
            + self.latency_pairs.len()
    }

    fn samples(&self, ws: u64) -> usize {
        if ws >= self.big_bytes {
            self.reps.min(2)
        } else {
            self.reps
        }
    }

    /// Passes per local sample: enough to move `sample_bytes`.
    fn passes(&self, ws: u64) -> usize {
        self.sample_bytes.div_ceil(ws).max(1) as usize
    }

    /// Samples of a transfer (one pass each, the data regenerated before each): enough to move
    /// `sample_bytes`, at most 256.
    fn transfer_samples(&self, ws: u64) -> usize {
        (self.sample_bytes.div_ceil(ws) as usize).clamp(self.samples(ws), 256)
    }
}

/// One measured point (one JSON line of `points.jsonl`).
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub kernel: String,
    /// Stride in 64-bit words (bandwidth kernels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stride: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_set_bytes: Option<u64>,
    /// Bytes of the working set moved per second / 1e6 (bandwidth kernels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mb_per_s: Option<f64>,
    /// The best time of one pass (bandwidth), one load (chase) or one way (core-to-core), in ns.
    pub ns: f64,
    /// The cores: [home] or [producer, consumer].
    pub cores: Vec<usize>,
    /// How the two cores relate (remote kernels and core-to-core).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair: Option<String>,
    /// Timed samples the best was taken from.
    pub samples: usize,
}

impl Point {
    fn bandwidth(kernel: &str, stride: usize, ws: u64, secs: f64, cores: Vec<usize>, samples: usize) -> Point {
        Point {
            kernel: kernel.to_string(),
            stride: Some(stride),
            working_set_bytes: Some(ws),
            mb_per_s: Some(ws as f64 / secs / 1e6),
            ns: secs * 1e9,
            cores,
            pair: None,
            samples,
        }
    }
}

/// Progress on stderr: a bar with ETA on a terminal, a line every tenth otherwise, nothing
/// when silenced.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    done: Mutex<usize>,
    quiet: bool,
}

impl Progress {
    pub fn new(total: usize, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            let style = indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} points, ETA {eta_precise} {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> ");
            bar.set_style(style);
            bar
        });
        Progress { bar, total, done: Mutex::new(0), quiet }
    }

    fn step(&self, what: &str) {
        let mut done = self.done.lock().expect("progress lock");
        *done += 1;
        match &self.bar {
            Some(b) => {
                b.inc(1);
                b.set_message(what.to_string());
            }
            None if !self.quiet && (*done * 10 / self.total.max(1)) != ((*done - 1) * 10 / self.total.max(1)) => {
                eprintln!("characterize: {done}/{} points ({what})", self.total);
            }
            None => {}
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Collects the points as the threads measure them.
struct Recorder<'a> {
    points: Mutex<Vec<Point>>,
    progress: &'a Progress,
}

impl Recorder<'_> {
    fn record(&self, p: Point) {
        let what = match (p.stride, p.working_set_bytes) {
            (Some(s), Some(ws)) => format!("{} stride {s} at {}", p.kernel, size_text(ws)),
            (None, Some(ws)) => format!("{} at {}", p.kernel, size_text(ws)),
            _ => format!("{} {:?}", p.kernel, p.cores),
        };
        self.points.lock().expect("points lock").push(p);
        self.progress.step(&what);
    }
}

/// A size as 4K, 64K, 1M, 1G (powers of 1024; bytes when not a whole K).
pub fn size_text(b: u64) -> String {
    for (unit, name) in [(1u64 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")] {
        if b >= unit && b.is_multiple_of(unit) {
            return format!("{}{name}", b / unit);
        }
    }
    if b >= 1 << 10 {
        return format!("{:.1}K", b as f64 / 1024.0);
    }
    format!("{b}")
}

/// Measure everything in the grid.
pub fn run(grid: &Grid, progress: &Progress) -> Vec<Point> {
    let rec = Recorder { points: Mutex::new(Vec::new()), progress };
    for &ws in &grid.sizes {
        local(grid, ws, &rec);
        for &(p, c, class) in &grid.pairs {
            remote(grid, ws, p, c, class, &rec);
        }
    }
    for &ws in &grid.chase_sizes {
        let ns = std::thread::scope(|s| {
            s.spawn(|| {
                pin(grid.home);
                kernels::chase_ns(ws as usize, grid.chase_loads.max(ws / 64), grid.samples(ws))
            })
            .join()
            .expect("chase thread")
        });
        rec.record(Point {
            kernel: CHASE.to_string(),
            stride: None,
            working_set_bytes: Some(ws),
            mb_per_s: None,
            ns,
            cores: vec![grid.home],
            pair: None,
            samples: grid.samples(ws),
        });
    }
    for &(a, b, class) in &grid.latency_pairs {
        let ns = kernels::ping_pong_ns(a, b, grid.latency_rounds, grid.latency_samples);
        rec.record(Point {
            kernel: CORE_TO_CORE.to_string(),
            stride: None,
            working_set_bytes: None,
            mb_per_s: None,
            ns,
            cores: vec![a, b],
            pair: Some(class.name().to_string()),
            samples: grid.latency_samples,
        });
    }
    rec.points.into_inner().expect("points lock")
}

fn words(ws: u64) -> usize {
    (ws / 8).max(1) as usize
}

/// The one-core kernels at working set `ws`, every stride, on the home core (buffers
/// first-touched there).
fn local(grid: &Grid, ws: u64, rec: &Recorder) {
    std::thread::scope(|s| {
        s.spawn(|| {
            pin(grid.home);
            let (src, dst) = (buffer(words(ws)), buffer(words(ws)));
            fill(&src, 1);
            fill(&dst, 2);
            let cores = vec![grid.home];
            let (samples, passes) = (grid.samples(ws), grid.passes(ws));
            for &st in &grid.strides {
                let t = best_per_pass(samples, passes, || {
                    load_sum(&src, st);
                });
                rec.record(Point::bandwidth("load-sum", st, ws, t, cores.clone(), samples));
                let t = best_per_pass(samples, passes, || copy_gather(&src, &dst, st));
                rec.record(Point::bandwidth("copy-strided-load", st, ws, t, cores.clone(), samples));
                let t = best_per_pass(samples, passes, || copy_scatter(&src, &dst, st));
                rec.record(Point::bandwidth("copy-strided-store", st, ws, t, cores.clone(), samples));
                let n = grid.transfer_samples(ws);
                // Local fetch: the data was just written by this core, then copied.
                let mut best = f64::INFINITY;
                for k in 0..=n {
                    fill(&src, k as u64);
                    let t = timed(|| copy_gather(&src, &dst, st));
                    if k > 0 {
                        best = best.min(t);
                    }
                }
                rec.record(Point::bandwidth("local-fetch", st, ws, best, cores.clone(), n));
                // Local deposit: this core touches the destination, writes its data, copies it
                // into the destination and reads it back; the copy and the read are timed.
                let mut best = f64::INFINITY;
                for k in 0..=n {
                    fill(&dst, k as u64);
                    fill(&src, k as u64 + 1);
                    let t = timed(|| copy_gather(&src, &dst, st))
                        + timed(|| {
                            load_sum(&dst, 1);
                        });
                    if k > 0 {
                        best = best.min(t);
                    }
                }
                rec.record(Point::bandwidth("local-deposit", st, ws, best, cores.clone(), n));
            }
        });
    });
}

/// The two-core transfers at working set `ws`, every stride, from producer `p` to consumer
/// `c`. Each sample regenerates the data, and the rendezvous between phases are outside the
/// timed parts.
///
/// - fetch: `p` writes its buffer; `c` copies it (strided loads of `p`'s data, contiguous
///   stores into its own buffer). Timed: `c`'s copy.
/// - deposit: `c` writes (first-touches) its buffer; `p` writes its data, then copies it
///   (strided loads of its own data, contiguous stores into `c`'s buffer); `c` reads its buffer.
///   Timed: `p`'s copy plus `c`'s read.
fn remote(grid: &Grid, ws: u64, p: usize, c: usize, class: PairClass, rec: &Recorder) {
    // Each buffer is allocated and first written by the thread that owns it, so its pages are
    // placed at that core's memory (first touch), then both threads borrow both.
    let owned = |core: usize, seed: u64| {
        std::thread::scope(|s| {
            s.spawn(move || {
                pin(core);
                let b = buffer(words(ws));
                fill(&b, seed);
                b
            })
            .join()
            .expect("allocating thread")
        })
    };
    let (src, dst) = (owned(p, 0), owned(c, 1));
    let (src, dst) = (&src[..], &dst[..]);
    let meet = Rendezvous::default();
    let n = grid.transfer_samples(ws);
    let record = |kernel: &str, st: usize, t: f64| {
        let mut pt = Point::bandwidth(kernel, st, ws, t, vec![p, c], n);
        pt.pair = Some(class.name().to_string());
        rec.record(pt);
    };
    std::thread::scope(|s| {
        let producer = s.spawn(|| {
            pin(p);
            let mut calls = 0;
            let mut deposits = Vec::new();
            for (si, &st) in grid.strides.iter().enumerate() {
                for k in 0..=n {
                    fill(src, (si * 1000 + k) as u64);
                    meet.wait(&mut calls); // data written
                    meet.wait(&mut calls); // the consumer has copied it
                }
                let mut times = Vec::with_capacity(n + 1);
                for k in 0..=n {
                    fill(src, (si * 1000 + k) as u64);
                    meet.wait(&mut calls); // the consumer has touched its buffer
                    times.push(timed(|| copy_gather(src, dst, st)));
                    meet.wait(&mut calls); // deposited
                    meet.wait(&mut calls); // the consumer has read it
                }
                deposits.push(times);
            }
            deposits
        });
        let consumer = s.spawn(|| {
            pin(c);
            let mut calls = 0;
            let mut fetches = Vec::new();
            let mut reads = Vec::new();
            for (si, &st) in grid.strides.iter().enumerate() {
                let mut times = Vec::with_capacity(n + 1);
                for _ in 0..=n {
                    meet.wait(&mut calls);
                    times.push(timed(|| copy_gather(src, dst, st)));
                    meet.wait(&mut calls);
                }
                fetches.push(times);
                let mut times = Vec::with_capacity(n + 1);
                for k in 0..=n {
                    fill(dst, (si * 1000 + k + 7) as u64);
                    meet.wait(&mut calls);
                    meet.wait(&mut calls);
                    times.push(timed(|| {
                        load_sum(dst, 1);
                    }));
                    meet.wait(&mut calls);
                }
                reads.push(times);
            }
            (fetches, reads)
        });
        let deposits = producer.join().expect("producer thread");
        let (fetches, reads) = consumer.join().expect("consumer thread");
        for (si, &st) in grid.strides.iter().enumerate() {
            // The first sample of each kind primes (untimed).
            let fetch = fetches[si][1..].iter().copied().fold(f64::INFINITY, f64::min);
            record("remote-fetch", st, fetch);
            let deposit =
                deposits[si][1..].iter().zip(&reads[si][1..]).map(|(a, b)| a + b).fold(f64::INFINITY, f64::min);
            record("remote-deposit", st, deposit);
        }
    });
}
