//! Issue 36, "done when" 1: a property test that drives every command (run, sweep, experiment,
//! plot, reproduce, validate, machine, characterize) with generated extreme and contradictory
//! inputs, under an address-space limit (`ulimit -v`), and finds only
//! - exit 0 (a run's records with passing answer checks), or
//! - exit 1 or 2 with one `commlab: ` line on stderr (exit 2: that line alone; exit 1: the last
//!   line, after any progress lines),
//!
//! never a panic, an abort, a signal or a case still running after [`CASE_BOUND`]. The seed is
//! fixed (the same cases in every CI run); cases stop being started after [`BUDGET`] so the
//! test stays under a minute on a busy 2-core host (`PROPTEST_CASES` and
//! `COMMLAB_PROPERTY_BUDGET_S` give more; `FUZZ_SHOW=1` prints every case).

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The address-space limit every case runs under.
const ADDRESS_LIMIT_BYTES: u64 = 3 << 30;
/// A case running longer than this is a hang.
const CASE_BOUND: Duration = Duration::from_secs(90);
/// No case is started after this much time (the cases already run stand).
const BUDGET: Duration = Duration::from_secs(40);

/// Extreme and nonsensical values for any key or parameter.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "3",
    "0.5",
    "1e300",
    "-1e300",
    "1e-300",
    "18446744073709551616",
    "nan",
    "inf",
    "\"text\"",
    "true",
    "[1,1]",
    "",
];

/// Processor counts, sensible to absurd.
const PROCS: &[&str] = &["1", "2", "4", "3", "0", "100000", "1000000000", "-4", "18446744073709551616", "x"];

/// Machine keys worth probing (clocks, sizes, shapes, queues, overheads).
const KEYS: &[&str] = &[
    "processor.clock_mhz",
    "network.router_latency_ns",
    "network.link_bytes_per_ns",
    "network.io_nodes",
    "network.ni_input_queue_packets",
    "network.max_packet_payload_bytes",
    "cross_traffic.rate_bytes_per_cycle",
    "messaging.send_overhead_cycles",
    "messaging.overhead_scale",
    "messaging.max_arg_words",
    "messaging.dma_bytes_per_cycle",
    "memory.line_bytes",
    "memory.cache_bytes",
    "memory.associativity",
    "memory.hw_pointers",
    "node.procs_per_node",
    "limits.max_sim_time_ms",
    "no.such_key",
];

/// Apps with inputs that keep a successful run short.
const APPS: &[(&str, &[&str])] = &[
    ("am-latency", &["rounds=2"]),
    ("barrier", &["barriers=2"]),
    ("lock-latency", &["rounds=2"]),
    ("bulk-bw", &["bytes=64"]),
    ("em3d", &["nodes=64", "iterations=1"]),
    ("iccg", &["fe_elements=4"]),
    ("unstruc", &["nodes=100", "iterations=1"]),
    ("moldyn", &["molecules=256", "iterations=2", "rebuild=1", "list_radius=2.6"]),
];

/// A results line as `commlab run --json` writes it; `CYCLES` and `VARIANT` are filled in.
const RECORD: &str = r#"{"app":"am-latency","breakdown":{"compute":0.0,"memory_ni_wait":0.0,"message_overhead":467.5,"synchronization":6379.0},"check":{"detail":"ok","max_error":0.0,"ok":true},"counters":{"hops":1,"messages":162,"one_way_cycles":101.756},"cycles":CYCLES,"machine":"alewife","params":{"hops":1,"rounds":20},"point":0,"procs":32,"seed":1,"sim":{"events":1740,"events_per_second":2.0e6,"wall_seconds":0.0007},"variant":"VARIANT","vary":{"network.router_latency_ns":10.0},"volume_bytes":{"cross_traffic":0,"data":464,"headers":1296,"invalidates":0,"requests":0}}"#;

/// One generated case: the arguments (`{DIR}` stands for the case's own directory) and the
/// files written there first.
#[derive(Clone, Debug)]
struct Case {
    args: Vec<String>,
    files: Vec<(&'static str, String)>,
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

fn pick<T: Clone + std::fmt::Debug + 'static>(items: &'static [T]) -> impl Strategy<Value = T> {
    prop::sample::select(items)
}

/// `--set KEY=VALUE` of an extreme value, or (as often) nothing.
fn setting() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![3 => Just(vec![]), 1 => (pick(KEYS), pick(VALUES)).prop_map(|(k, v)| words(&["--set", &format!("{k}={v}")])),]
}

/// Mostly `usual`, sometimes one of `odd`: one extreme ingredient at a time reaches further
/// than a case that the first bad flag refuses.
fn mostly(usual: &'static str, odd: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    prop_oneof![5 => Just(usual), 1 => pick(odd)]
}

fn run_case() -> impl Strategy<Value = Case> {
    let variant = mostly("all", &["sm,sm", ",", "mp-int,all", "nope", ""]);
    let procs = mostly("4", PROCS);
    let output = mostly(
        "--json",
        &[
            "",
            "--csv",
            "--json --out {DIR}/a.jsonl --stats per-node={DIR}/a.jsonl",
            "--out /proc/version",
            "--max-wall 0",
            "--max-wall 1e300",
        ],
    );
    let param = (0usize..16, pick(VALUES));
    (pick(APPS), variant, procs, output, setting(), prop::option::of(param)).prop_map(
        |((app, small), variant, procs, output, set, param)| {
            let mut a = words(&["run", app, "--procs", procs, "--set", "limits.max_events=300000", "--max-wall", "20"]);
            a.extend(["--variant".to_string(), variant.to_string()]);
            // One of the app's own parameters (not a file path) at an extreme value.
            let own: Vec<&str> = commlab_apps::app_info(app)
                .map(|i| i.params.iter().map(|p| p.name).filter(|n| *n != "matrix" && *n != "mesh").collect())
                .unwrap_or_default();
            let given: Option<String> =
                param.filter(|_| !own.is_empty()).map(|(i, v)| format!("{}={v}", own[i % own.len()]));
            for &p in small.iter() {
                let name = p.split('=').next().unwrap();
                if given.as_deref().is_none_or(|g| !g.starts_with(&format!("{name}="))) {
                    a.extend(["--param".to_string(), p.to_string()]);
                }
            }
            if let Some(g) = given {
                a.extend(["--param".to_string(), g]);
            }
            a.extend(set);
            a.extend(output.split_whitespace().map(str::to_string));
            Case { args: a, files: vec![] }
        },
    )
}

fn sweep_case() -> impl Strategy<Value = Case> {
    let vary = pick(&[
        "network.router_latency_ns=10:100:3",
        "network.router_latency_ns=10:100:3",
        "rounds=1,2",
        "cross_traffic.rate_bytes_per_cycle=0:8:3",
        "network.router_latency_ns=1:100:1000000000",
        "rounds=1:100000:100000",
        "rounds=3:1:2",
        "rounds=a,b",
        "network.router_latency_ns=1e300:1e301:2:log",
        "rounds=-1:-10:3:log",
        "rounds=nan:1:2",
        "rounds=",
        "=1,2",
        "processor.clock_mhz=1e-300,20",
        "network.io_nodes=true,false",
        "messaging.poll_cycles=1,1",
    ]);
    let second =
        prop::option::weighted(0.3, pick(&["hops=1,2", "rounds=2", "network.router_latency_ns=10,20", "no.key=1"]));
    let extra = mostly(
        "",
        &["--resume", "--procs 100000", "--jobs 2", "--jobs 0", "--param rounds=2", "--machine host", "--procs 0"],
    );
    (vary, second, extra, setting(), prop::bool::weighted(0.2)).prop_map(|(vary, second, extra, set, resumed)| {
        let mut a = words(&["sweep", "am-latency", "--vary", vary, "--set", "limits.max_events=300000"]);
        if let Some(s) = second {
            a.extend(words(&["--vary", s]));
        }
        a.extend(extra.split_whitespace().map(str::to_string));
        a.extend(set);
        a.extend(words(&["--out", "{DIR}/s"]));
        // A results directory left by another grid, to resume into.
        let files = if resumed {
            vec![(
                "s/results.jsonl",
                format!("{}\n{{\"a\":1}}\n", RECORD.replace("CYCLES", "7329.4").replace("VARIANT", "mp-int")),
            )]
        } else {
            vec![]
        };
        Case { args: a, files }
    })
}

fn experiment_case() -> impl Strategy<Value = Case> {
    let name =
        pick(&["bisection", "latency", "overhead", "aggregation", "volume", "grain", "memcpy", "blizzard", "warp"]);
    let app = pick(&["am-latency", "em3d", "iccg", "", "nope"]);
    let points = mostly("2", &["0", "1", "1000000000", "-1"]);
    let procs = mostly("4", &["1", "0", "100000"]);
    let extra = mostly("", &["--quick", "--param rounds=0", "--jobs 2"]);
    (name, app, points, procs, extra, setting()).prop_map(|(name, app, points, procs, extra, set)| {
        let mut a = words(&["experiment", name]);
        // The blizzard study takes minutes even with --quick: given an app, it is refused.
        let app = if name == "blizzard" { "em3d" } else { app };
        if !app.is_empty() {
            a.push(app.to_string());
        }
        for (_, small) in APPS.iter().filter(|(n, _)| *n == app) {
            for p in small.iter() {
                a.extend(["--param".to_string(), p.to_string()]);
            }
        }
        a.extend(words(&[
            "--points",
            points,
            "--procs",
            procs,
            "--set",
            "limits.max_events=200000",
            "--out",
            "{DIR}/e",
        ]));
        a.extend(extra.split_whitespace().map(str::to_string));
        a.extend(set);
        Case { args: a, files: vec![] }
    })
}

fn plot_case() -> impl Strategy<Value = Case> {
    let kind = pick(&["runtime", "breakdown", "volume", "warp"]);
    let cycles = mostly("7329.4", &["-5", "0", "1e308", "null", "\"x\""]);
    let line = prop_oneof![
        6 => (cycles, mostly("mp-int", &["mp-poll", ""])).prop_map(|(c, v)| RECORD.replace("CYCLES", c).replace("VARIANT", v)),
        1 => Just("{\"a\":1}".to_string()),
        1 => Just("garbage".to_string()),
        1 => Just(String::new()),
        1 => Just(RECORD[..100].to_string()),
    ];
    let lines = prop::collection::vec(line, 1..5);
    let extra = mostly(
        "",
        &[
            "--x network.router_latency_ns",
            "--x nope",
            "--at nan",
            "--at -1e300",
            "--x-scale log",
            "--mark a=1",
            "--mark =",
            "--mark a=1e300",
        ],
    );
    (kind, lines, extra).prop_map(|(kind, lines, extra)| {
        let mut a = words(&["plot", kind, "{DIR}/r.jsonl", "--out", "{DIR}/p"]);
        a.extend(extra.split_whitespace().map(str::to_string));
        let mut text = lines.join("\n");
        text.push('\n');
        Case { args: a, files: vec![("r.jsonl", text)] }
    })
}

/// Reproductions take minutes at full size; every generated one has something to refuse.
fn reproduce_case() -> impl Strategy<Value = Case> {
    let study = pick(&["alewife", "iccg", "all", "nope", ""]);
    let bad = pick(&[
        "--matrices {DIR}/missing",
        "--jobs 0",
        "--set no.key=1",
        "--set processor.clock_mhz=-1",
        "--set processor.clock_mhz=nan",
        "--out /proc/x",
        "--resume --quick --set processor.clock_mhz=0",
    ]);
    (study, bad).prop_map(|(study, bad)| {
        let mut a = words(&["reproduce", study, "--quick", "--out", "{DIR}/r"]);
        a.extend(bad.split_whitespace().map(str::to_string));
        Case { args: a, files: vec![] }
    })
}

fn validate_case() -> impl Strategy<Value = Case> {
    (pick(&["alewife", "t3e", "host", "nope", "{DIR}/m.toml"]), setting(), pick(VALUES)).prop_map(|(m, set, v)| {
        let mut a = words(&["validate", "--machine", m, "--json"]);
        a.extend(set);
        Case { args: a, files: vec![("m.toml", format!("base = \"alewife\"\n[processor]\nclock_mhz = {v}\n"))] }
    })
}

fn machine_case() -> impl Strategy<Value = Case> {
    const MACHINES: &[&str] = &["alewife", "t3e", "host", "nope", "{DIR}/m.toml", "{DIR}/missing.toml"];
    let base = pick(&["alewife", "nope", "{DIR}/m.toml", "1", ""]);
    (any::<bool>(), pick(MACHINES), pick(MACHINES), pick(PROCS), setting(), pick(KEYS), pick(VALUES), base).prop_map(
        |(diff, a1, a2, procs, set, key, value, base)| {
            let mut a = if diff { words(&["machine", "diff", a1, a2]) } else { words(&["machine", "show", a1]) };
            a.extend(words(&["--procs", procs]));
            a.extend(set);
            let (section, leaf) = key.rsplit_once('.').unwrap_or(("x", key));
            let text = format!("base = \"{base}\"\n[{section}]\n{leaf} = {value}\n");
            Case { args: a, files: vec![("m.toml", text)] }
        },
    )
}

fn characterize_case() -> impl Strategy<Value = Case> {
    let strides = mostly("1", &["1,2", "0", "-1", "1000000000", "a"]);
    let sizes = mostly("4K", &["4K,8K", "0", "1T", "16E", "x", "4K,4K"]);
    let reps = mostly("1", &["2", "0", "-1", "x"]);
    let pair = mostly("", &["--pair 0,1", "--pair 0,0", "--pair 0,99999", "--pair x"]);
    (strides, sizes, reps, pair).prop_map(|(strides, sizes, reps, pair)| {
        let mut a = words(&[
            "characterize",
            "--strides",
            strides,
            "--sizes",
            sizes,
            "--reps",
            reps,
            "--json",
            "--out",
            "{DIR}/c",
        ]);
        a.extend(pair.split_whitespace().map(str::to_string));
        Case { args: a, files: vec![] }
    })
}

fn any_case() -> impl Strategy<Value = Case> {
    prop_oneof![
        3 => run_case(),
        3 => sweep_case(),
        2 => experiment_case(),
        2 => plot_case(),
        1 => reproduce_case(),
        1 => validate_case(),
        2 => machine_case(),
        1 => characterize_case(),
    ]
}

fn started() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

fn budget() -> Duration {
    std::env::var("COMMLAB_PROPERTY_BUDGET_S").ok().and_then(|s| s.parse().ok()).map_or(BUDGET, Duration::from_secs)
}

fn case_dir() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("commlab-every-command-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `args` under the address-space limit, output to files (a full pipe cannot stall it);
/// `None` if it was still running after [`CASE_BOUND`] (then killed).
fn run_limited(args: &[String], dir: &Path) -> Option<(Option<i32>, String, String)> {
    use std::os::unix::process::CommandExt;
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_commlab"));
    cmd.args(args)
        .current_dir(dir)
        .env("COMMLAB_PROGRESS_EVERY_S", "100000")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap());
    // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::rlimit { rlim_cur: ADDRESS_LIMIT_BYTES, rlim_max: ADDRESS_LIMIT_BYTES };
            if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("commlab starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > CASE_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    Some((status.code(), read(&out_path), read(&err_path)))
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    if started().elapsed() > budget() {
        return Ok(());
    }
    let dir = case_dir();
    let d = dir.to_string_lossy().to_string();
    for (name, text) in &case.files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let args: Vec<String> = case.args.iter().map(|a| a.replace("{DIR}", &d)).collect();
    let t = Instant::now();
    let outcome = run_limited(&args, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let Some((code, stdout, stderr)) = outcome else {
        return Err(TestCaseError::fail(format!("{args:?}: still running after {CASE_BOUND:?}")));
    };
    if std::env::var("FUZZ_SHOW").is_ok() {
        let last = stderr.lines().last().unwrap_or_default();
        eprintln!("{:5.1}s {args:?} -> {code:?} {last}", t.elapsed().as_secs_f64());
    }
    prop_assert!(!stderr.contains("panicked") && !stderr.contains("stack backtrace"), "{args:?} panicked: {stderr}");
    prop_assert!(matches!(code, Some(0..=2)), "{args:?}: exit {code:?} (a signal or an abort): {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let errors: Vec<&&str> =
        lines.iter().filter(|l| l.starts_with("commlab: ") && !l.starts_with("commlab: warning")).collect();
    match code {
        Some(0) => {
            prop_assert!(errors.is_empty(), "{args:?}: exit 0 with an error line: {stderr}");
            if args[0] == "run" && args.iter().any(|a| a == "--json") && !args.iter().any(|a| a == "--out") {
                for line in stdout.lines() {
                    let v: serde_json::Value = serde_json::from_str(line)
                        .map_err(|e| TestCaseError::fail(format!("{args:?}: {e}: {line}")))?;
                    prop_assert_eq!(&v["check"]["ok"], &serde_json::Value::Bool(true), "{:?}: {}", args, line);
                }
            }
        }
        Some(2) => prop_assert!(
            lines.len() == 1 && errors.len() == 1,
            "{args:?}: exit 2 needs exactly one `commlab: ` line, got: {stderr}"
        ),
        _ => prop_assert!(
            errors.len() == 1 && lines.last() == errors.first().copied(),
            "{args:?}: exit 1 needs one `commlab: ` line, the last, got: {stderr}"
        ),
    }
    Ok(())
}

proptest! {
    // A fixed seed: the same cases in every CI run.
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(36),
        max_shrink_iters: 16,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_command_gives_a_result_or_one_clear_line(case in any_case()) {
        check(&case)?;
    }
}
