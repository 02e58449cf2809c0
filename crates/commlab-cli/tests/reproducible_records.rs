//! Regression (issue 19, defect 2): `--set` overrides and the resolved machine were not in the
//! results, so `sweep --resume` with another `--set` (or an edited machine file) silently
//! combined runs of two machines. Every record now carries its overrides, a fingerprint of the
//! resolved machine and the commlab version; resume refuses a changed machine; and a record
//! re-run with its own overrides gives the same record.

use crate::common;

use common::{bad_input, json_lines, ok, TempDir};
use serde_json::Value;

fn record(args: &[&str]) -> Value {
    serde_json::from_str(ok(args).lines().next().unwrap()).unwrap()
}

/// The record without its wall-clock fields.
fn timeless(mut r: Value) -> Value {
    let sim = r["sim"].as_object_mut().unwrap();
    sim.remove("wall_seconds");
    sim.remove("events_per_second");
    r
}

#[test]
fn a_record_reruns_from_its_own_overrides() {
    let first = record(&[
        "run",
        "am-latency",
        "--variant",
        "mp-int",
        "--json",
        "--set",
        "network.router_latency_ns=80",
        "--set",
        "messaging.poll_cycles=7",
    ]);
    assert_eq!(first["overrides"], serde_json::json!(["network.router_latency_ns=80", "messaging.poll_cycles=7"]));
    assert_eq!(first["commlab_version"], env!("CARGO_PKG_VERSION"));
    let fingerprint = first["machine_fingerprint"].as_str().unwrap().to_string();
    assert_eq!(fingerprint.len(), 16);
    // Re-run from the record's own fields.
    let mut args: Vec<String> =
        ["run", "am-latency", "--variant", "mp-int", "--json", "--machine"].iter().map(|s| s.to_string()).collect();
    args.push(first["machine"].as_str().unwrap().to_string());
    for o in first["overrides"].as_array().unwrap() {
        args.extend(["--set".to_string(), o.as_str().unwrap().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let again = record(&args);
    assert_eq!(timeless(again), timeless(first.clone()));
    // Another machine has another fingerprint; the same machine reached another way the same.
    let other = record(&["run", "am-latency", "--variant", "mp-int", "--json"]);
    assert_ne!(other["machine_fingerprint"], first["machine_fingerprint"]);
    let same_values = record(&[
        "run",
        "am-latency",
        "--variant",
        "mp-int",
        "--json",
        "--set",
        "messaging.poll_cycles=7",
        "--set",
        "network.router_latency_ns=80.0",
    ]);
    assert_eq!(same_values["machine_fingerprint"], first["machine_fingerprint"]);
}

#[test]
fn resume_refuses_a_changed_set() {
    let d = TempDir::new("set");
    let base = ["sweep", "am-latency", "--vary", "hops=1,2", "--variant", "mp-int", "--out", d.arg()];
    ok(&[&base[..], &["--set", "messaging.poll_cycles=7"]].concat());
    let before = std::fs::read_to_string(d.file("results.jsonl")).unwrap();
    bad_input(
        &[&base[..], &["--resume", "--set", "messaging.poll_cycles=9"]].concat(),
        &["--set", "poll_cycles=7", "poll_cycles=9", "another --out"],
    );
    assert_eq!(std::fs::read_to_string(d.file("results.jsonl")).unwrap(), before, "nothing appended");
    // The same overrides resume (nothing left to do).
    ok(&[&base[..], &["--resume", "--set", "messaging.poll_cycles=7"]].concat());
}

#[test]
fn resume_refuses_an_edited_machine_file() {
    let d = TempDir::new("file");
    std::fs::create_dir_all(d.path()).unwrap();
    let machine = d.file("m.toml");
    let text = ok(&["machine", "show", "alewife"]);
    std::fs::write(&machine, &text).unwrap();
    let m = machine.to_str().unwrap();
    let out = d.file("out");
    let o = out.to_str().unwrap();
    let args = ["sweep", "am-latency", "--machine", m, "--vary", "hops=1,2", "--variant", "mp-int", "--out", o];
    ok(&args);
    let runs = json_lines(&out.join("results.jsonl"));
    assert_eq!(runs.len(), 2);
    // Same name, same keys, one value changed in the file.
    std::fs::write(&machine, text.replace("poll_cycles = 5", "poll_cycles = 6")).unwrap();
    bad_input(&[&args[..], &["--resume"]].concat(), &["fingerprint", "mix two machines"]);
}
