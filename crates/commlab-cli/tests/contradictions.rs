//! Regression (issue 19, defects 6 and 7): inputs that were silently ignored, overridden or
//! contradictory are refused with one line naming both inputs; `--set` and `--procs` resolve
//! together.

mod common;

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
