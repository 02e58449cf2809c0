//! Native `bulk-bw` against memcpy of the same size, in one process: for each size, the best of
//! `REPS` memcpys (`copy_from_slice`) from a source written beforehand into a destination
//! already touched (no page faults: the steady state a copy benchmark reports), then `bulk-bw`
//! (variant `mp-poll`, 2 processors) run `REPS` times, best and median.
//!
//! `cargo run --release -p commlab-native --example bulk [REPS] [BYTES...]`

use commlab_api::Backend;
use commlab_apps::run_app;
use commlab_native::NativeBackend;
use std::time::Instant;

fn memcpy_gbs(bytes: usize, reps: usize) -> f64 {
    let words = bytes / 8;
    let src: Vec<u64> = (0..words as u64).map(|i| i * 2654435761).collect();
    let mut dst = vec![1u64; words];
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        dst.copy_from_slice(&src);
        std::hint::black_box(&mut dst);
        best = best.min(t.elapsed().as_secs_f64());
    }
    bytes as f64 / best / 1e9
}

fn main() {
    let mut args = std::env::args().skip(1);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let mut sizes: Vec<usize> = args.filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![1 << 20, 16 << 20];
    }
    let b = NativeBackend::with_procs(2).unwrap();
    let mhz = b.cycles_per_us();
    for bytes in sizes {
        let m = memcpy_gbs(bytes, reps);
        let mut bw: Vec<f64> = (0..reps)
            .map(|_| {
                let r = run_app(&b, "bulk-bw", "mp-poll", &[format!("bytes={bytes}")], 1).expect("bulk-bw runs");
                assert!(r.check.ok, "{}", r.check.detail);
                r.counters["bytes_per_cycle"] * mhz / 1e3
            })
            .collect();
        bw.sort_by(f64::total_cmp);
        let (best, med) = (bw[reps - 1], bw[reps / 2]);
        println!(
            "{bytes:>10} bytes: memcpy {m:6.2} GB/s; bulk-bw best {best:6.2} GB/s ({:3.0}%), median {med:6.2} GB/s ({:3.0}%)",
            100.0 * best / m,
            100.0 * med / m
        );
    }
}
