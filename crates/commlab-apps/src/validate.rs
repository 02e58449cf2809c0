//! `commlab validate`: measure every published primitive cost of a machine with a
//! microbenchmark and compare. A row passes when the measurement is within 10% of the
//! published figure.
//!
//! Published figures: the MIT Alewife primitive costs in DESIGN.md ("Alewife calibration"),
//! and the Blizzard-S/E/T remote miss times (2 nodes, the home services the miss; block sizes
//! 64 to 512 bytes) quoted in the shared-memory issue.

use crate::app::{run_err, AppError};
use crate::registry::run_app;
use commlab_api::{Backend, Category, Handler, HandlerId, Node, ProcId, Program};
use std::sync::Arc;

/// Largest relative error that passes.
pub const TOLERANCE: f64 = 0.10;

/// One calibration row: what was measured, how, and against what.
#[derive(Clone, Debug)]
pub struct Row {
    pub name: String,
    pub unit: &'static str,
    pub published: f64,
    pub measured: f64,
    /// The command (or method) that produced `measured`.
    pub how: String,
}

impl Row {
    pub fn error(&self) -> f64 {
        (self.measured - self.published) / self.published
    }
    pub fn ok(&self) -> bool {
        self.error().abs() <= TOLERANCE && self.measured.is_finite()
    }
}

/// Machines with a published calibration table.
pub const CALIBRATED: &[&str] = &["alewife", "blizzard-s", "blizzard-e", "blizzard-t"];

/// Run every calibration row for `machine`. `make(overrides)` builds the machine with extra
/// `key=value` overrides (the Blizzard rows vary the block size).
pub fn validate<B: Backend>(
    machine: &str,
    make: impl Fn(&[String]) -> Result<B, AppError>,
) -> Result<Vec<Row>, AppError> {
    match machine {
        "alewife" => alewife(&make(&[])?),
        "blizzard-s" | "blizzard-e" | "blizzard-t" => blizzard(machine, make),
        other => Err(AppError::Input(format!(
            "no published calibration for machine `{other}` (calibrated: {})",
            CALIBRATED.join(", ")
        ))),
    }
}

/// Published remote miss times in microseconds for block sizes 64, 128, 256 and 512 bytes:
/// read miss, write miss, read miss then write miss.
fn blizzard_table(machine: &str) -> [[f64; 4]; 3] {
    match machine {
        "blizzard-s" => [[76.7, 85.4, 106.1, 147.4], [77.4, 86.0, 107.2, 149.7], [127.0, 137.2, 157.9, 205.7]],
        "blizzard-e" => [[77.2, 84.4, 101.5, 135.1], [181.6, 196.2, 250.7, 356.3], [702.7, 728.9, 784.3, 881.6]],
        _ => [[76.8, 92.6, 122.7, 184.9], [76.8, 91.2, 120.1, 177.4], [129.6, 144.2, 174.7, 237.4]],
    }
}

fn blizzard<B: Backend>(machine: &str, make: impl Fn(&[String]) -> Result<B, AppError>) -> Result<Vec<Row>, AppError> {
    let table = blizzard_table(machine);
    let kinds =
        [("read miss", "load-remote"), ("write miss", "store-remote"), ("read miss then write miss", "load-store")];
    let mut rows = Vec::new();
    for (i, bytes) in [64u64, 128, 256, 512].into_iter().enumerate() {
        let b = make(&[format!("memory.line_bytes={bytes}")])?;
        // Two nodes: processor 0 misses, the home is the other one (0 hops on a crossbar).
        let home_hops = b.hops(0, 1);
        let hops = format!("hops={home_hops}");
        for (k, (name, kind)) in kinds.iter().enumerate() {
            let kp = format!("kind={kind}");
            let cycles = counter(&b, "miss-latency", "sm", &[&kp, &hops], "miss_cycles")?;
            rows.push(Row {
                name: format!("{name}, {bytes}-byte block"),
                unit: "us",
                published: table[k][i],
                measured: cycles / b.cycles_per_us(),
                how: format!("commlab run miss-latency --machine {machine} --set memory.line_bytes={bytes} --param {kp} --param {hops}"),
            });
        }
    }
    Ok(rows)
}

fn counter<B: Backend>(b: &B, app: &str, variant: &str, params: &[&str], name: &str) -> Result<f64, AppError> {
    let params: Vec<String> = params.iter().map(|s| s.to_string()).collect();
    let r = run_app(b, app, variant, &params, 1)?;
    if !r.check.ok {
        return Err(AppError::Run(format!("{app} {params:?}: answer check failed: {}", r.check.detail)));
    }
    Ok(r.counters[name])
}

fn alewife<B: Backend>(b: &B) -> Result<Vec<Row>, AppError> {
    let mut rows = Vec::new();
    let mut row = |name: &str, unit: &'static str, published: f64, measured: f64, how: String| {
        rows.push(Row { name: name.to_string(), unit, published, measured, how });
    };
    let misses: &[(&str, &str, f64)] = &[
        ("load miss, local home", "load-local", 11.0),
        ("load miss, remote home, clean", "load-remote", 38.0),
        ("load miss, remote, dirty at home (2-party)", "load-2party", 42.0),
        ("load miss, remote, dirty at third node (3-party)", "load-3party", 63.0),
        ("load miss, remote, software-handled directory", "load-software", 425.0),
        ("store miss, local home, 0 invalidations", "store-local", 12.0),
        ("store miss, local home, 1 invalidation", "store-local-1inv", 40.0),
        ("store miss, remote home, clean", "store-remote", 38.0),
        ("store miss, remote, 2-party", "store-2party", 43.0),
        ("store miss, remote, 3-party", "store-3party", 66.0),
        ("store miss, remote, 5 invalidations (hardware)", "store-5inv", 84.0),
        ("store miss, remote, 6 invalidations (software)", "store-6inv", 707.0),
    ];
    for (name, kind, published) in misses {
        let k = format!("kind={kind}");
        let m = counter(b, "miss-latency", "sm", &[&k, "hops=1"], "miss_cycles")?;
        row(name, "cycles", *published, m, format!("commlab run miss-latency --param {k} --param hops=1"));
    }
    // Per-hop increments: between 1 hop and the farthest distance available (up to 5 / 10).
    let far = (1..b.nprocs()).map(|p| b.hops(0, p)).max().unwrap_or(1);
    let sm_far = far.min(5);
    if sm_far > 1 {
        let near = counter(b, "miss-latency", "sm", &["kind=load-remote", "hops=1"], "miss_cycles")?;
        let (v, how) = per_hop(b, "miss-latency", "sm", "kind=load-remote", "miss_cycles", near, sm_far)?;
        row("extra per network hop, shared-memory miss", "cycles/hop", 1.6, v, how);
    }
    let near = counter(b, "am-latency", "mp-int", &["hops=1"], "one_way_cycles")?;
    row(
        "null active message, end to end (1 hop)",
        "cycles",
        102.8,
        near,
        "commlab run am-latency --variant mp-int --param hops=1".into(),
    );
    let am_far = far.min(10);
    if am_far > 1 {
        let (v, how) = per_hop(b, "am-latency", "mp-int", "rounds=20", "one_way_cycles", near, am_far)?;
        row("null active message, per hop", "cycles/hop", 0.8, v, how);
    }
    let (send, handler) = message_overheads(b)?;
    row("message send (describe + launch)", "cycles", 31.0, send, "sender's message overhead per null message".into());
    row("null handler via interrupt", "cycles", 95.0, handler, "receiver's message overhead per null message".into());
    let unshared = counter(b, "lock-latency", "sm", &["kind=unshared", "hops=1"], "lock_cycles")?;
    row(
        "remote lock acquire+release, unshared",
        "cycles",
        58.0,
        unshared,
        "commlab run lock-latency --param kind=unshared".into(),
    );
    let shared = counter(b, "lock-latency", "sm", &["kind=shared", "hops=1"], "lock_cycles")?;
    row(
        "remote lock acquire+release, shared",
        "cycles",
        144.0,
        shared,
        "commlab run lock-latency --param kind=shared".into(),
    );
    if sm_far > 1 {
        let (v, how) = per_hop(b, "lock-latency", "sm", "kind=unshared", "lock_cycles", unshared, sm_far)?;
        row("remote lock, extra per hop", "cycles/hop", 1.5, v, how);
    }
    Ok(rows)
}

/// The increase of counter `name` per hop between 1 hop (`near`) and `far` hops, and how it
/// was measured.
fn per_hop<B: Backend>(
    b: &B,
    app: &str,
    variant: &str,
    param: &str,
    name: &str,
    near: f64,
    far: usize,
) -> Result<(f64, String), AppError> {
    let h = format!("hops={far}");
    let at_far = counter(b, app, variant, &[param, &h], name)?;
    let how = format!("({app} --variant {variant} --param {param}: hops={far} minus hops=1) / {}", far - 1);
    Ok(((at_far - near) / (far - 1) as f64, how))
}

/// Processor 0 sends null messages, well apart, to processor 1 while it computes; the send
/// cost is processor 0's message overhead per message, the interrupt cost processor 1's.
fn message_overheads<B: Backend>(b: &B) -> Result<(f64, f64), AppError> {
    const MESSAGES: u64 = 20;
    struct Probe;
    fn null(_: &mut (), _: &mut dyn commlab_api::HandlerCtx, _: &commlab_api::Message<'_>) {}
    impl Program for Probe {
        type State = ();
        fn handlers(&self) -> Vec<Handler<()>> {
            vec![null]
        }
        fn init_state(&self, _: ProcId, _: usize) {}
        fn main<N: Node<State = ()>>(&self, node: &mut N) {
            node.barrier();
            node.compute(1000); // barrier messages are over
            node.begin_timing();
            match node.id() {
                0 => {
                    for _ in 0..MESSAGES {
                        node.compute(2000); // processor 1 is timing by the first arrival
                        node.send_am(1, HandlerId(0), &[]);
                    }
                }
                1 => node.compute(MESSAGES * 2100 + 10_000),
                _ => {}
            }
        }
    }
    if b.nprocs() < 2 {
        return Err(AppError::Input("validation needs at least 2 processors".into()));
    }
    let out = b.run(Arc::new(Probe)).map_err(run_err)?;
    let per = |p: usize| out.stats.procs[p].get(Category::MessageOverhead) / MESSAGES as f64;
    Ok((per(0), per(1)))
}
