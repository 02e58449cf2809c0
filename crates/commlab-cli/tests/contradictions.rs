//! Regression (issue 19, defects 6 and 7): inputs that were silently ignored, overridden or
//! contradictory are refused with one line naming both inputs; `--set` and `--procs` resolve
//! together.

use crate::common;

use common::{bad_input, ok, TempDir};

#[test]
fn contradictory_parameters_are_refused() {
    bad_input(&["run", "em3d", "--param", "span=0"], &["--param span=0", "--param remote=0.2"]);
    bad_input(&["run", "em3d", "--param", "degree=100000", "--param", "nodes=64"], &["degree=100000", "nodes=64"]);
    bad_input(
        &["run", "am-latency", "--param", "rounds=1", "--param", "rounds=2"],
        &["given twice", "rounds=1", "rounds=2"],
    );
    bad_input(
        &["run", "iccg", "--param", "matrix=../../../shared/data/matrices/1138_bus.mtx", "--param", "fe_elements=10"],
        &["--param fe_elements=10", "matrix=fe"],
    );
    // span 0 is fine when nothing is remote.
    ok(&[
        "run",
        "em3d",
        "--variant",
        "sm",
        "--param",
        "span=0",
        "--param",
        "remote=0",
        "--param",
        "nodes=200",
        "--param",
        "iterations=1",
    ]);
}

#[test]
fn a_sweep_refuses_a_key_both_varied_and_fixed() {
    let d = TempDir::new("both");
    bad_input(
        &["sweep", "am-latency", "--vary", "rounds=1,2", "--param", "rounds=3", "--out", d.arg()],
        &["`rounds` is both varied", "--param rounds=3"],
    );
    bad_input(
        &[
            "sweep",
            "am-latency",
            "--vary",
            "network.router_latency_ns=10,20",
            "--set",
            "network.router_latency_ns=5",
            "--out",
            d.arg(),
        ],
        &["both varied", "--set network.router_latency_ns=5"],
    );
}

#[test]
fn set_and_procs_resolve_together() {
    let out = ok(&["machine", "show", "alewife", "--set", "network.topology=crossbar", "--procs", "6"]);
    assert!(out.contains("6 processors"), "{out}");
    ok(&["run", "barrier", "--set", "network.topology=crossbar", "--procs", "4"]);
}

#[test]
fn contradictions_of_issue_36_are_refused() {
    // Each was accepted with exit 0.
    bad_input(&["run", "iccg", "--param", "values=spd"], &["--param values=spd", "matrix file", "matrix=fe"]);
    bad_input(
        &["run", "lock-latency", "--param", "kind=unshared", "--param", "waiters=5"],
        &["--param waiters=5", "kind=shared", "kind=unshared"],
    );
    bad_input(
        &["run", "am-latency", "--machine", "t3e", "--set", "network.io_nodes=true"],
        &["network.io_nodes=true", "mesh", "`torus`"],
    );
    // Capped without a word while the record said 100.
    bad_input(&["run", "em3d", "--param", "values_per_message=100"], &["values_per_message=100", "at most 6 values"]);
    bad_input(&["run", "moldyn", "--param", "molecules_per_message=9"], &["molecules_per_message=9", "at most 2"]);
    // What is not a contradiction still runs: the cap itself, and a topology change of a
    // preset with I/O nodes.
    ok(&["run", "em3d", "--variant", "mp-int", "--param", "values_per_message=6", "--param", "iterations=1"]);
    ok(&[
        "run",
        "am-latency",
        "--variant",
        "mp-int",
        "--set",
        "network.topology=crossbar",
        "--procs",
        "8",
        "--param",
        "rounds=1",
    ]);
}

#[test]
fn plot_refuses_negative_cycles_and_duplicated_records() {
    let d = TempDir::new("plot-bad");
    let out = d.file("sweep");
    let out = out.to_str().unwrap();
    // One job: the file in grid order (lines are in the order runs finished).
    ok(&["sweep", "am-latency", "--vary", "hops=1,2", "--variant", "mp-int", "--jobs", "1", "--out", out]);
    let results = d.file("sweep/results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let path = results.to_str().unwrap();
    // A duplicated record (a file concatenated twice): two values at one x.
    std::fs::write(&results, format!("{text}{}\n", lines[0])).unwrap();
    bad_input(&["plot", "runtime", path], &["lines 1 and 3", "am-latency [mp-int] at hops=1"]);
    bad_input(&["plot", "breakdown", path], &["lines 1 and 3"]);
    // Negative cycles.
    let cycles = lines[1].split("\"cycles\":").nth(1).unwrap().split(',').next().unwrap();
    let negative = lines[1].replace(&format!("\"cycles\":{cycles},"), "\"cycles\":-5.0,");
    std::fs::write(&results, format!("{}\n{negative}\n", lines[0])).unwrap();
    bad_input(&["plot", "runtime", path], &["line 2", "cycles is -5", "a number >= 0"]);
}

/// A message variant whose messages carry more arguments than the machine's (cm5: 2 u64
/// arguments) is refused before anything runs (exit 2, naming the key), and `--variant all`
/// leaves it out, as it leaves out variants that need one-sided access; a parameter's default is
/// lowered to what a message carries (they used to fail mid-run, exit 1, as program errors).
#[test]
fn message_variants_that_need_more_arguments_than_the_machine_carries_are_refused_up_front() {
    for (app, variant, params) in [
        ("memcpy", "mp", &["bytes=64"][..]),
        ("accum", "mp", &["words=64"][..]),
        ("barnes", "custom", &["bodies=64", "iterations=2"][..]),
    ] {
        let mut args = vec!["run", app, "--machine", "cm5", "--procs", "4", "--variant", variant];
        for p in params {
            args.extend(["--param", p]);
        }
        bad_input(&args, &["3 arguments", "messaging.max_arg_words = 4"]);
        args[7] = "all";
        args.push("--json");
        let out = ok(&args);
        let ran: Vec<String> =
            out.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["variant"].to_string()).collect();
        assert!(!ran.is_empty() && !ran.iter().any(|v| v.contains(variant)), "{app}: all ran {ran:?}");
    }
    let base =
        ["run", "am-throughput", "--machine", "cm5", "--procs", "4", "--param", "messages=5", "--variant", "mp-int"];
    ok(&base);
    let mut too_many = base.to_vec();
    too_many.extend(["--param", "args=3"]);
    bad_input(&too_many, &["--param args=3", "at most 2"]);
}
