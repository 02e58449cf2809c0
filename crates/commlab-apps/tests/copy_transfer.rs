//! `copy-transfer` and the memory hierarchy (issue 15): right answers in every kernel and
//! variant, determinism, time accounting, bad parameters refused, the validation rows that a
//! faithful model meets, and machines without `[hierarchy]` left exactly as they were; the
//! one-sided variants (`get`, `put`) right, deterministic, strided where the kernel says, and
//! refused on machines without one-sided access.

use commlab_api::Backend;
use commlab_apps::validate::validate;
use commlab_apps::{run_app, AppError, AppResult};
use commlab_sim::machine::{preset_names, MachineConfig};
use commlab_sim::Simulator;

use crate::common;

use common::assert_categories_sum;

const KERNELS: [&str; 3] = ["load-sum", "copy-sload", "copy-sstore"];

fn run(s: &Simulator, variant: &str, params: &[&str]) -> AppResult {
    common::run_seeded(s, "copy-transfer", variant, params, 1)
}

#[test]
fn every_kernel_and_variant_is_right_and_accounts_all_time() {
    for machine in ["dec8400", "t3d", "t3e", "alewife"] {
        let s = common::preset(machine, &[], None);
        for variant in ["local", "fetch"] {
            for kernel in KERNELS {
                for (stride, bytes) in [(1, "4096"), (5, "6144"), (16, "32768")] {
                    let (k, st, b) = (format!("kernel={kernel}"), format!("stride={stride}"), format!("bytes={bytes}"));
                    let r = run(&s, variant, &[&k, &st, &b, "passes=2"]);
                    let what = format!("copy-transfer [{variant}] {k} {st} {b} on {machine}");
                    assert!(r.check.ok, "{what}: {}", r.check.detail);
                    assert!(r.counters["mbytes_per_s"] > 0.0, "{what}: no bandwidth");
                    assert_categories_sum(&r.stats, &what);
                }
            }
        }
    }
}

#[test]
fn same_inputs_same_results() {
    // The t3d's put crosses between two nodes whose processor pairs share their routers.
    for (machine, variant) in [("t3e", "local"), ("t3e", "fetch"), ("t3d", "put")] {
        let s = common::preset(machine, &[], None);
        let p = ["kernel=copy-sstore", "stride=3", "bytes=65536"];
        let (a, b) = (run(&s, variant, &p), run(&s, variant, &p));
        assert_eq!(a.stats.procs, b.stats.procs, "{machine} {variant}: per-processor times");
        assert_eq!(a.stats.events, b.stats.events, "{machine} {variant}: events");
        assert_eq!(a.counters, b.counters, "{machine} {variant}: counters");
    }
}

#[test]
fn one_sided_variants_are_right_deterministic_and_account_all_time() {
    for machine in ["t3e", "t3d"] {
        let s = common::preset(machine, &[], None);
        for variant in ["get", "put"] {
            for kernel in KERNELS {
                for (stride, bytes) in [(1, "4096"), (5, "6144"), (16, "32768"), (7, "2048")] {
                    let (k, st, b) = (format!("kernel={kernel}"), format!("stride={stride}"), format!("bytes={bytes}"));
                    let r = run(&s, variant, &[&k, &st, &b, "passes=2"]);
                    let what = format!("copy-transfer [{variant}] {k} {st} {b} on {machine}");
                    assert!(r.check.ok, "{what}: {}", r.check.detail);
                    assert!(r.counters["mbytes_per_s"] > 0.0, "{what}: no bandwidth");
                    assert_categories_sum(&r.stats, &what);
                }
            }
            let p = ["kernel=load-sum", "stride=3", "bytes=16384"];
            let (a, b) = (run(&s, variant, &p), run(&s, variant, &p));
            let what = format!("[{variant}] on {machine}");
            assert_eq!(a.stats.procs, b.stats.procs, "{what}: per-processor times");
            assert_eq!(a.stats.events, b.stats.events, "{what}: events");
            assert_eq!(a.stats.volume_bytes, b.stats.volume_bytes, "{what}: traffic");
            assert_eq!(a.counters, b.counters, "{what}: counters");
        }
    }
}

#[test]
fn one_sided_transfers_are_strided_on_the_side_the_kernel_names() {
    // On the T3E a vector get or put of 8 words opens one remote memory line when they are
    // contiguous and 8 when they are 16 words apart, so a transfer whose remote side is strided
    // (get: copy-sload, the source; put: copy-sstore, the destination) is slower than one whose
    // local side is (and load-sum strides both).
    let s = common::preset("t3e", &[], None);
    let bw = |variant: &str, kernel: &str, stride: &str| {
        run(&s, variant, &[&format!("kernel={kernel}"), &format!("stride={stride}"), "bytes=65536"]).counters
            ["mbytes_per_s"]
    };
    for (variant, remote, local) in [("get", "copy-sload", "copy-sstore"), ("put", "copy-sstore", "copy-sload")] {
        let (r, l) = (bw(variant, remote, "16"), bw(variant, local, "16"));
        assert!(r < l * 0.8, "[{variant}] remote side strided {r} MB/s vs local side strided {l} MB/s");
        let (sum1, sum16) = (bw(variant, "load-sum", "1"), bw(variant, "load-sum", "16"));
        assert!(sum16 < sum1 * 0.8, "[{variant}] load-sum stride 16 {sum16} MB/s vs stride 1 {sum1} MB/s");
    }
}

#[test]
fn one_sided_variants_need_one_sided_access() {
    for machine in ["dec8400", "alewife"] {
        let s = common::preset(machine, &[], None);
        for variant in ["get", "put"] {
            match run_app(&s, "copy-transfer", variant, &[], 1) {
                Err(AppError::Input(m)) => {
                    assert!(
                        m.contains("no one-sided remote access") && m.contains(variant),
                        "{machine} [{variant}]: {m}"
                    )
                }
                other => panic!("{machine} [{variant}]: expected an input error, got {:?}", other.map(|r| r.check)),
            }
        }
    }
    let one = common::preset("t3e", &[], Some(1));
    assert!(
        matches!(run_app(&one, "copy-transfer", "put", &[], 1), Err(AppError::Input(m)) if m.contains("2 processors"))
    );
}

#[test]
fn the_hierarchy_orders_the_levels_and_strides() {
    // On the DEC 8400 a working set in L1 is faster than one in the board cache, which is faster
    // than DRAM; strided is slower than contiguous once the set leaves L1 (mechanisms, not
    // figures: each level's latency and line).
    let s = common::preset("dec8400", &[], None);
    let bw = |bytes: &str, stride: &str| {
        run(&s, "local", &[&format!("bytes={bytes}"), &format!("stride={stride}")]).counters["mbytes_per_s"]
    };
    let (l1, l3, dram) = (bw("4096", "1"), bw("1048576", "1"), bw("8388608", "1"));
    assert!(l1 > l3 && l3 > dram, "contiguous: L1 {l1}, L3 {l3}, DRAM {dram} MB/s");
    assert!(bw("1048576", "16") < l3 / 2.0, "strided board-cache loads are not slower");
    // Strides that hit one bank wait for it: on the T3E (8 banks of 64 bytes, 2 misses in
    // flight) a stride of 8 lines keeps hitting bank 0.
    let t3e = common::preset("t3e", &["hierarchy.dram.bank_busy_cycles=400"], None);
    let one_bank = run(&t3e, "local", &["bytes=1048576", "stride=64"]).counters["mbytes_per_s"];
    let spread = run(&t3e, "local", &["bytes=1048576", "stride=24"]).counters["mbytes_per_s"];
    assert!(one_bank < spread * 0.8, "one bank {one_bank} vs spread {spread} MB/s");
}

#[test]
fn bad_parameters_are_refused_by_name() {
    let s = common::preset("dec8400", &[], None);
    let cases: &[(&str, &[&str], &str)] = &[
        ("local", &["kernel=copy"], "kernel=copy"),
        ("local", &["stride=0"], "stride=0"),
        ("local", &["bytes=12"], "bytes=12"),
        ("local", &["bytes=64", "stride=9"], "stride=9"),
        ("local", &["passes=0"], "passes=0"),
        ("local", &["loaders=0"], "loaders=0"),
        ("local", &["loaders=5"], "loaders=5"),
        ("fetch", &["loaders=2"], "loaders=2"),
        ("local", &["stagger=8"], "stagger=8"),
        ("local", &["loaders=2", "stagger=2000000"], "stagger=2000000"),
    ];
    for (variant, params, named) in cases {
        let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
        match run_app(&s, "copy-transfer", variant, &params, 1) {
            Err(AppError::Input(m)) => assert!(m.contains(named), "{params:?}: {m}"),
            other => panic!("{params:?}: expected an input error, got {:?}", other.map(|r| r.check)),
        }
    }
    let one = common::preset("dec8400", &[], Some(1));
    assert!(
        matches!(run_app(&one, "copy-transfer", "fetch", &[], 1), Err(AppError::Input(m)) if m.contains("2 processors"))
    );
}

/// The T3D's local rows follow the loop (issue + `accum_word` a word, the 21064 waiting for
/// each miss: `hierarchy.loads_before_use = 1`) and the memory: contiguous, one line's words
/// plus one read-ahead hit per line (the published 15 clocks), within 10% of the published
/// 195 MB/s; strided (every word its own line), the loop plus the local miss per word, which
/// reads about 16% above the published 43 (a known disagreement: see validate.rs's notes).
#[test]
fn t3d_local_rows_follow_the_read_ahead_and_the_loop() {
    let rows = validate("t3d", |_: &[String]| Ok(common::preset("t3d", &[], None))).expect("t3d rows");
    let row = |name: &str| rows.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no row {name}"));
    let cfg = MachineConfig::preset("t3d", &[], None).expect("t3d");
    let spec = &cfg.spec;
    let words = (spec.memory.line_bytes / 8) as f64;
    let accum = Simulator::new(cfg.clone()).cost_cycles("accum_word").expect("accum_word") as f64;
    let read_ahead = spec.hierarchy.as_ref().and_then(|h| h.stream.as_ref()).expect("read-ahead").hit_cycles as f64;
    let line_cycles = words * (spec.memory.hit_cycles as f64 + accum) + read_ahead;
    let expected = spec.memory.line_bytes as f64 * spec.processor.clock_mhz / line_cycles;
    let contiguous = row("local loads from DRAM, contiguous");
    assert!(
        (contiguous.measured - expected).abs() <= 0.01 * expected,
        "t3d contiguous: measured {:.2} MB/s, expected {expected:.2} ({line_cycles} cycles a line)",
        contiguous.measured
    );
    assert!((contiguous.measured / contiguous.published - 1.0).abs() < 0.10, "{:.1}", contiguous.measured);
    let word_cycles = spec.memory.hit_cycles as f64 + accum + spec.memory.local_miss_cycles as f64;
    let expected = 8.0 * spec.processor.clock_mhz / word_cycles;
    let strided = row("local loads from DRAM, strided");
    assert!(
        (strided.measured - expected).abs() <= 0.01 * expected,
        "t3d strided: measured {:.2} MB/s, expected {expected:.2} ({word_cycles} cycles a word)",
        strided.measured
    );
}

/// The hierarchy's keys are left out of a machine that does not use them, so its TOML (what
/// the fingerprint hashes) and records are as before the hierarchy existed. (Fixed fingerprints
/// cannot be checked: every new `[costs]` entry, such as fft2d's, moves them.)
#[test]
fn machines_without_a_hierarchy_are_unchanged() {
    for name in ["alewife", "alewife-sim", "blizzard-s", "blizzard-e", "blizzard-t"] {
        let cfg = MachineConfig::preset(name, &[], None).expect("preset");
        assert!(cfg.mem.hierarchy.is_none(), "{name} opted into the hierarchy");
        assert!(!cfg.spec.to_toml().contains("hierarchy"), "{name}'s TOML names the hierarchy");
    }
    let with: Vec<&str> = preset_names()
        .into_iter()
        .filter(|n| MachineConfig::preset(n, &[], None).expect("preset").mem.hierarchy.is_some())
        .collect();
    assert_eq!(with, ["t3d", "t3e", "dec8400"], "only the issue-15 machines opt in");
    // Every preset has every cost entry copy-transfer charges.
    for n in preset_names() {
        let s = Simulator::new(MachineConfig::preset(n, &[], None).expect("preset"));
        for c in ["accum_word", "memcpy_word"] {
            assert!(s.cost_cycles(c).is_ok(), "{n} lacks costs.{c}");
        }
    }
}

/// `memory.snooping` (the DEC 8400's bus): a dirty owner is asked as the memory's read starts,
/// and the data leaves when both are done. So a miss to a dirty line saves the shorter of the
/// two: for a line dirty in the home's own cache, min(dir, home_cache + forward_reply); for a
/// line dirty at a third node, whose answer crosses the bus twice, the whole memory read
/// (dir). Other misses do not change, and a software-DSM machine refuses the key.
#[test]
fn snooping_overlaps_the_owners_supply_with_the_memory_read() {
    let miss = |kind: &str, set: &[&str]| {
        let s = common::preset("dec8400", set, None);
        let hops = format!("hops={}", s.config().topology.hops(0, 1));
        let r = common::run_seeded(&s, "miss-latency", "sm", &[format!("kind={kind}"), hops], 1);
        assert_categories_sum(&r.stats, &format!("miss-latency {kind} {set:?}"));
        r.counters["miss_cycles"]
    };
    for dir in [60u64, 10] {
        let d = format!("memory.dir_cycles={dir}");
        let m = MachineConfig::preset("dec8400", std::slice::from_ref(&d), None).expect("dec8400");
        let (home_cache, forward_reply) = (m.spec.memory.home_cache_cycles, m.spec.memory.forward_reply_cycles);
        for (kind, saved) in [
            ("load-2party", dir.min(home_cache + forward_reply)),
            ("store-2party", dir.min(home_cache + forward_reply)),
            ("load-3party", dir),
            ("store-3party", dir),
            ("load-remote", 0),
            ("store-remote", 0),
        ] {
            let (directory, snooping) =
                (miss(kind, &[&d, "memory.snooping=false"]), miss(kind, &[&d, "memory.snooping=true"]));
            assert!(
                (directory - snooping - saved as f64).abs() < 0.01, // picoseconds per cycle are rounded
                "{kind}, dir_cycles {dir}: directory {directory:.3}, snooping {snooping:.3} cycles; expected {saved} saved"
            );
        }
    }
    assert!(MachineConfig::preset("dec8400", &[], None).expect("dec8400").mem.snooping, "dec8400 opts in");
    for name in preset_names().into_iter().filter(|&n| n != "dec8400") {
        assert!(!MachineConfig::preset(name, &[], None).expect("preset").mem.snooping, "{name} snoops");
    }
    let err = MachineConfig::preset("blizzard-s", &["memory.snooping=true".into()], None).unwrap_err();
    assert!(err.to_string().contains("memory.snooping"), "{err}");
}

/// The DEC 8400 rows the model meets: both remote rows (the contiguous one by the snooping
/// bus: the directory's order, the owner asked after the memory's read, is at least 10%
/// slower: 121 against 143 MB/s with the loop of issue 33, 115 against 135 before) and the
/// strided local rows. The contiguous L3 and DRAM rows are known disagreements (see
/// validate.rs's notes).
#[test]
fn dec8400_remote_and_strided_rows_pass() {
    let rows = validate("dec8400", |_: &[String]| Ok(common::preset("dec8400", &[], None))).expect("dec8400 rows");
    let meets: Vec<_> = rows.iter().filter(|r| r.name.starts_with("remote") || r.name.contains("strided")).collect();
    assert_eq!(meets.len(), 4, "{:?}", rows.iter().map(|r| &r.name).collect::<Vec<_>>());
    for r in meets {
        assert!(r.ok(), "{}: measured {:.1} vs published {:.1} MB/s", r.name, r.measured, r.published);
    }
    let directory = validate("dec8400", |_: &[String]| Ok(common::preset("dec8400", &["memory.snooping=false"], None)))
        .expect("rows");
    let remote = directory.iter().find(|r| r.name.starts_with("remote loads (producer's cache)")).expect("row");
    let snooping = rows.iter().find(|r| r.name.starts_with("remote loads (producer's cache)")).expect("row");
    assert!(
        remote.measured <= 0.9 * snooping.measured,
        "without snooping the remote contiguous row reads {:.1} MB/s, with it {:.1}",
        remote.measured,
        snooping.measured
    );
}

/// Issue 33, done-when 2 (first half): a contiguous copy is at least as fast as a strided one
/// (stride 2 and 16, either side strided) on the three machines of the copy-transfer study,
/// in a working set that fits the caches and in one from DRAM (8 MB; 002 §6.1, Figs. 9-11,
/// and the surfaces of Figs. 1, 3, 6). Once the source and destination collided in every
/// direct-mapped cache and stores filled the write-through L1: 8 MB contiguous copies read
/// 14.6 (dec8400) and 23.1 MB/s (t3d) against 66 and 59 at stride 2. In cache the study sees
/// no penalty for strides, so there contiguous may be 1% slower (the last store of a pass).
#[test]
fn contiguous_copies_are_at_least_as_fast_as_strided_ones() {
    for (machine, small) in [("dec8400", "32768"), ("t3d", "2048"), ("t3e", "32768")] {
        let s = common::preset(machine, &[], None);
        for (bytes, slack) in [(small, 0.99), ("8388608", 1.0)] {
            for kernel in ["copy-sload", "copy-sstore"] {
                let bw = |stride: usize| {
                    let (k, st, b) = (format!("kernel={kernel}"), format!("stride={stride}"), format!("bytes={bytes}"));
                    let r = run(&s, "local", &[&k, &st, &b]);
                    assert!(r.check.ok, "{machine} {k} {st} {b}: {}", r.check.detail);
                    r.counters["mbytes_per_s"]
                };
                let contiguous = bw(1);
                for stride in [2, 16] {
                    let strided = bw(stride);
                    assert!(
                        contiguous >= slack * strided,
                        "{machine} {kernel} bytes={bytes}: contiguous {contiguous:.1} MB/s < stride {stride} {strided:.1}"
                    );
                }
            }
        }
    }
}

/// Issue 33, done-when 4: all four processors of the DEC 8400 loading at once (`loaders=4`)
/// share its one memory and bus (`hierarchy.dram.shared`): the L1, L2 and L3 bandwidths stay
/// as with one loader, and contiguous DRAM loads fall by the study's 8% within 10 points
/// (002 §5.1). Strided DRAM loads fall too, but by about 10%, not the study's 25%: with the
/// assumed 100 ns bank cycle the banks are seldom busy; with a 400 ns one (what-if below) both
/// falls are within 10 points of the study's, and one loader's rows do not move.
#[test]
fn concurrent_loaders_share_the_dec8400_memory() {
    let bw_staggered = |sets: &[&str], bytes: &str, stride: &str, loaders: usize, stagger: u64| {
        let s = common::preset("dec8400", sets, None);
        let (b, st, l) = (format!("bytes={bytes}"), format!("stride={stride}"), format!("loaders={loaders}"));
        let mut params = vec!["kernel=load-sum".to_string(), b.clone(), st.clone(), l.clone()];
        if stagger > 0 {
            params.push(format!("stagger={stagger}"));
        }
        let params: Vec<&str> = params.iter().map(String::as_str).collect();
        let r = run(&s, "local", &params);
        assert!(r.check.ok, "{b} {st} {l}: {}", r.check.detail);
        r.counters["mbytes_per_s"]
    };
    let bw = |sets: &[&str], bytes: &str, stride: &str, loaders: usize| bw_staggered(sets, bytes, stride, loaders, 0);
    let fall = |sets: &[&str], stride: &str| {
        let (one, four) = (bw(sets, "8388608", stride, 1), bw(sets, "8388608", stride, 4));
        (one, 1.0 - four / one)
    };
    for (bytes, stride) in [("4096", "1"), ("65536", "1"), ("1048576", "1"), ("1048576", "16")] {
        let (one, four) = (bw(&[], bytes, stride, 1), bw(&[], bytes, stride, 4));
        assert!(
            (four / one - 1.0).abs() < 0.02,
            "bytes={bytes} stride={stride}: {one:.1} alone, {four:.1} with 4 loaders"
        );
    }
    let (one_c0, contiguous) = fall(&[], "1");
    assert!((contiguous - 0.08).abs() <= 0.10, "contiguous DRAM loads fall {:.0}%", contiguous * 100.0);
    let (one_s0, strided) = fall(&[], "16");
    assert!(strided > 0.05, "strided DRAM loads fall {:.0}%", strided * 100.0);
    // Lockstep is the deterministic model's worst phase: started a line's time apart, the
    // loaders' strided misses settle into slots where none waits for another's.
    let out_of_step = bw_staggered(&[], "8388608", "16", 4, 102);
    assert!(
        out_of_step > (1.0 - strided) * one_s0 * 1.05 && out_of_step <= one_s0 * 1.0001,
        "4 loaders out of step {out_of_step:.2} against {one_s0:.2} alone and {:.2} in lockstep",
        (1.0 - strided) * one_s0
    );
    let slow_banks = ["hierarchy.dram.bank_busy_cycles=120"];
    let (one_c, contiguous) = fall(&slow_banks, "1");
    let (one_s, strided) = fall(&slow_banks, "16");
    assert!(
        (contiguous - 0.08).abs() <= 0.10 && (strided - 0.25).abs() <= 0.10,
        "400 ns banks: {contiguous:.2}, {strided:.2}"
    );
    assert_eq!((one_c, one_s), (one_c0, one_s0), "one loader does not see the bank cycle");
}

/// 002 §5.3: on the distributed-memory machines "the per-node performance of the local memory
/// accesses looks exactly the same, whether just one or all 512 processors" run: each node has
/// its own DRAM, so four loaders read what one does.
#[test]
fn concurrent_loaders_on_the_t3d_and_t3e_do_not_interfere() {
    for machine in ["t3d", "t3e"] {
        let s = common::preset(machine, &[], None);
        for stride in ["stride=1", "stride=16"] {
            let bw =
                |l: &str| run(&s, "local", &["kernel=copy-sload", "bytes=1048576", stride, l]).counters["mbytes_per_s"];
            assert_eq!(bw("loaders=1"), bw("loaders=4"), "{machine} {stride}");
        }
    }
}

/// Issue 33, done-when 2 (second half), 002 §5.4 and §9: on the T3D "pulling data (fetch
/// model) proves to be consistently inferior than pushing data (deposit model)". Large remote
/// copies (256 KB, 32 times the T3D's cache), either kernel, at strides 1, 2 and 16: the better
/// deposit is above the better fetch. The mechanism is the processor's side: a get word costs
/// the prefetch, the pop of the prefetch queue (an off-chip load) and the local store
/// (`remote.get_word_cycles`); a put word is one store into the write buffer, which merges
/// contiguous ones (`remote.put_block_bytes`). Without the get's per-word cost and the merging
/// (the model before: 8-byte blocks are single words) the link decides and fetch wins: a get
/// moves 16 bytes each way per word against a put's 24 one way.
#[test]
fn t3d_deposits_beat_fetches() {
    let best = |sets: &[&str], variant: &str, stride: usize| {
        let s = common::preset("t3d", sets, None);
        ["copy-sload", "copy-sstore"]
            .iter()
            .map(|k| {
                let (k, st) = (format!("kernel={k}"), format!("stride={stride}"));
                run(&s, variant, &[&k, &st, "bytes=262144", "passes=1"]).counters["mbytes_per_s"]
            })
            .fold(0.0, f64::max)
    };
    for stride in [1, 2, 16] {
        let (put, get) = (best(&[], "put", stride), best(&[], "get", stride));
        assert!(put > get, "stride {stride}: deposit {put:.1} MB/s, fetch {get:.1}");
    }
    let before = ["remote.get_word_cycles=0", "remote.put_block_bytes=8"];
    let (put, get) = (best(&before, "put", 16), best(&before, "get", 16));
    assert!(get > put, "without the processor's side: fetch {get:.1}, deposit {put:.1}");
}

/// The study measured the T3D's remote copies between two nodes (002 §8: one of the two
/// processors sharing a network access), so the producer is on another router than the
/// consumer: the copy crosses a router link, and a slower router slows it. (With the producer
/// on the consumer's own router, processor 1 on the t3d, the router's latency never showed.)
#[test]
fn t3d_remote_copies_cross_between_two_nodes() {
    let get = |sets: &[&str]| {
        let s = common::preset("t3d", sets, Some(4));
        run(&s, "get", &["kernel=copy-sstore", "stride=1", "bytes=65536", "passes=1"]).counters["mbytes_per_s"]
    };
    let (preset, slow_router) = (get(&[]), get(&["network.router_latency_ns=1000"]));
    assert!(slow_router < 0.5 * preset, "router latency 1000 ns: {slow_router:.1} MB/s against {preset:.1}");
}

/// Issue 33, the loop once: stall on use (`hierarchy.loads_before_use`). With 1 (the presets:
/// each word's add right after its load) the in-order 21164 of the T3E waits for every miss,
/// so strided DRAM loads (each word its own line) see one miss at a time; with 2 (loads
/// hoisted in pairs) two misses overlap within its two miss slots, about twice as fast; off
/// (0) the reads run ahead until a slot is needed, no slower than that.
#[test]
fn stall_on_use_waits_for_the_misses_the_loop_has_not_hoisted() {
    let bw = |sets: &[&str]| {
        let s = common::preset("t3e", sets, None);
        run(&s, "local", &["kernel=load-sum", "bytes=1048576", "stride=16", "passes=1"]).counters["mbytes_per_s"]
    };
    let (one, two, off) = (bw(&[]), bw(&["hierarchy.loads_before_use=2"]), bw(&["hierarchy.loads_before_use=0"]));
    assert!(two >= 1.8 * one, "one load before use {one:.1} MB/s, two {two:.1}");
    assert!(off >= 0.99 * two, "two {two:.1}, run-ahead {off:.1}");
}

/// Regression: an unbounded `hierarchy.loads_before_use` was accepted and made every private
/// read's pending-use queue grow without end; it is refused naming the key.
#[test]
fn loads_before_use_beyond_a_loops_reach_is_refused_by_name() {
    let set = ["hierarchy.loads_before_use=1000000000000".to_string()];
    let e = commlab_sim::machine::MachineConfig::preset("t3e", &set, None).expect_err("refused").to_string();
    assert!(e.contains("hierarchy.loads_before_use") && e.contains("1000000000000"), "{e}");
    assert!(commlab_sim::machine::MachineConfig::preset("t3e", &["hierarchy.loads_before_use=1024".to_string()], None)
        .is_ok());
}
