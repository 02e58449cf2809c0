//! Issue 37, item 3: `commlab run --trace FILE` writes the run as trace-event JSON that
//! validates against the format's schema (docs/trace-event.schema.json), whose processor spans
//! tile each processor's timed region without overlap, whose flows all have both ends, whose
//! packets on each link never overlap and add up to the link's busy time, and which the window
//! and the cap bound; tracing changes nothing the run measures.

use crate::common;

use common::{bad_input, commlab, json_lines, ok, TempDir};
use serde_json::Value;
use std::collections::BTreeMap;

fn schema() -> jsonschema::Validator {
    let text = include_str!("../../../docs/trace-event.schema.json");
    jsonschema::validator_for(&serde_json::from_str(text).unwrap()).expect("the schema compiles")
}

fn read(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn base() -> Vec<String> {
    ["run", "em3d", "--machine", "alewife", "--procs", "8", "--param", "nodes=400", "--param", "iterations=3", "--json"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn run(extra: &[String]) -> String {
    let mut a = base();
    a.extend(extra.iter().cloned());
    ok(&a.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn a_trace_is_valid_tiles_each_processor_and_closes_every_flow() {
    let d = TempDir::new("trace");
    std::fs::create_dir_all(d.path()).unwrap();
    let (file, nodes, links) = (d.file("t.json"), d.file("nodes.jsonl"), d.file("links.jsonl"));
    let out = run(&[
        "--variant".into(),
        "sm,mp-int".into(),
        "--trace".into(),
        file.display().to_string(),
        "--stats".into(),
        format!("per-node={}", nodes.display()),
        "--stats".into(),
        format!("per-link={}", links.display()),
    ]);
    let validator = schema();
    let per_node = json_lines(&nodes);
    let per_link = json_lines(&links);
    let records: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (variant, flow_kind) in [("sm", "miss"), ("mp-int", "message")] {
        let t = read(&d.file(&format!("t.{variant}.json")));
        if let Err(e) = validator.validate(&t) {
            panic!("{variant}: not a valid trace: {e}");
        }
        let clock = t["otherData"]["clock_mhz"].as_f64().unwrap();
        assert!(t["otherData"]["truncated_at_cycle"].is_null());
        let events = t["traceEvents"].as_array().unwrap();
        // Spans per processor: in order, each starting where the one before ended, and summing
        // to the processor's busy time (its timed region).
        let mut by_proc: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
        for e in events.iter().filter(|e| e["ph"] == "X" && e["pid"] == 1) {
            let ts = e["ts"].as_f64().unwrap() * clock;
            by_proc.entry(e["tid"].as_u64().unwrap()).or_default().push((ts, ts + e["dur"].as_f64().unwrap() * clock));
        }
        assert_eq!(by_proc.len(), 8, "{variant}: a track per processor");
        for (p, spans) in &by_proc {
            for w in spans.windows(2) {
                assert!((w[1].0 - w[0].1).abs() < 1e-6, "{variant} processor {p}: a gap or overlap at {w:?}");
            }
            let covered: f64 = spans.iter().map(|(a, b)| b - a).sum();
            let row = per_node.iter().find(|r| r["variant"] == variant && r["proc"].as_u64() == Some(*p)).unwrap();
            let busy = row["busy"].as_f64().unwrap();
            assert!((covered - busy).abs() <= 1e-6 * busy, "{variant} processor {p}: spans {covered} vs busy {busy}");
        }
        // Flows: each id once at each end, the end no earlier than the start.
        let mut ends: BTreeMap<u64, (Option<f64>, Option<f64>)> = BTreeMap::new();
        for e in events.iter().filter(|e| e["ph"] == "s" || e["ph"] == "f") {
            let slot = ends.entry(e["id"].as_u64().unwrap()).or_default();
            let ts = e["ts"].as_f64().unwrap();
            if e["ph"] == "s" {
                assert!(slot.0.replace(ts).is_none(), "two starts");
            } else {
                assert!(slot.1.replace(ts).is_none(), "two ends");
            }
        }
        // Packets: each link (NIs' sides: process 2, router links: 3) serializes one packet at a
        // time, and its packets add up to the busy time `--stats per-link` reports.
        let cycles = records.iter().find(|r| r["variant"] == variant).unwrap()["cycles"].as_f64().unwrap();
        let mut by_link: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
        for e in events.iter().filter(|e| e["cat"] == "packet") {
            assert!(e["pid"] == 2 || e["pid"] == 3, "{e}");
            let ts = e["ts"].as_f64().unwrap() * clock;
            by_link.entry(e["tid"].as_u64().unwrap()).or_default().push((ts, ts + e["dur"].as_f64().unwrap() * clock));
        }
        assert!(!by_link.is_empty(), "{variant}: packets on links");
        for row in per_link.iter().filter(|r| r["variant"] == variant) {
            let link = row["link"].as_u64().unwrap();
            let spans = by_link.remove(&link).unwrap_or_default();
            for w in spans.windows(2) {
                assert!(w[1].0 >= w[0].1 - 1e-6, "{variant} link {link}: packets overlap at {w:?}");
            }
            let carried: f64 = spans.iter().map(|(a, b)| b - a).sum();
            let busy = row["utilization"].as_f64().unwrap() * cycles;
            assert!(
                (carried - busy).abs() <= 1e-6 * busy.max(1.0),
                "{variant} link {link}: packets {carried} vs busy {busy}"
            );
        }
        assert!(by_link.is_empty(), "{variant}: packets on links the run does not have: {by_link:?}");
        assert!(!ends.is_empty(), "{variant}: flows");
        assert!(events.iter().any(|e| e["cat"] == flow_kind), "{variant}: {flow_kind} flows");
        for (id, (s, f)) in &ends {
            let (s, f) = (s.expect("a start"), f.expect("an end"));
            assert!(f >= s, "flow {id} ends before it starts");
        }
    }
    // Tracing changes nothing the run measures. Under the default `network.model = "fold"` a
    // traced run keeps every hop in time, so it queues more events than a plain one; under
    // `hop`, which queues every event, it queues the same.
    let plain = run(&["--variant".into(), "sm,mp-int".into()]);
    for (a, b) in records.iter().zip(plain.lines().map(|l| serde_json::from_str::<Value>(l).unwrap())) {
        for key in ["cycles", "breakdown", "counters", "volume_bytes", "check"] {
            assert_eq!(a[key], b[key], "{key}");
        }
    }
    let hop = |extra: &[&str]| {
        let mut a: Vec<String> = ["--variant", "sm,mp-int", "--set", "network.model=hop"].map(String::from).to_vec();
        a.extend(extra.iter().map(|s| s.to_string()));
        run(&a).lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).collect::<Vec<_>>()
    };
    let traced_file = d.file("hop.json").display().to_string();
    for (a, b) in hop(&["--trace", &traced_file]).iter().zip(hop(&[])) {
        assert_eq!((&a["cycles"], &a["sim"]["events"]), (&b["cycles"], &b["sim"]["events"]));
        assert_eq!(a["cycles"], records.iter().find(|r| r["variant"] == a["variant"]).unwrap()["cycles"]);
    }
}

#[test]
fn the_window_and_the_cap_bound_a_trace() {
    let d = TempDir::new("trace-bounds");
    std::fs::create_dir_all(d.path()).unwrap();
    let (win, cap) = (d.file("w.json"), d.file("c.json"));
    run(&[
        "--variant".into(),
        "sm".into(),
        "--trace".into(),
        win.display().to_string(),
        "--trace-window".into(),
        "10000:20000".into(),
    ]);
    let t = read(&win);
    let clock = t["otherData"]["clock_mhz"].as_f64().unwrap();
    let spans: Vec<&Value> = t["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").collect();
    assert!(!spans.is_empty());
    for e in &spans {
        let (a, b) =
            (e["ts"].as_f64().unwrap() * clock, (e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap()) * clock);
        assert!(a >= 10000.0 - 1e-6 && b <= 20000.0 + 1e-6, "span {a}..{b} outside the window");
    }

    let mut args = base();
    args.extend(["--variant", "sm", "--trace", cap.to_str().unwrap(), "--trace-max-events", "300"].map(String::from));
    let out = commlab().args(&args).output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--trace-max-events 300") && stderr.contains("--trace-window"), "{stderr}");
    let t = read(&cap);
    assert!(t["otherData"]["truncated_at_cycle"].as_f64().is_some());
    let kept = t["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] != "M").count();
    assert!(kept <= 2 * 300, "{kept} events kept under a cap of 300 spans and flows");
}

#[test]
fn bad_trace_options_are_one_line() {
    bad_input(&["run", "am-latency", "--trace", "t.json", "--trace-window", "5:1"], &["--trace-window", "5:1"]);
    bad_input(&["run", "am-latency", "--machine", "host", "--trace", "t.json"], &["--trace", "no timeline"]);
}

/// The same run twice writes byte-identical trace, latency and interval files.
#[test]
fn recorded_statistics_are_deterministic() {
    let d = TempDir::new("trace-twice");
    std::fs::create_dir_all(d.path()).unwrap();
    let files = |k: usize| [format!("t{k}.json"), format!("l{k}.jsonl"), format!("i{k}.jsonl")].map(|f| d.file(&f));
    for k in 0..2 {
        let [t, l, i] = files(k);
        run(&[
            "--variant".into(),
            "sm".into(),
            "--trace".into(),
            t.display().to_string(),
            "--stats".into(),
            format!("latency={}", l.display()),
            "--stats".into(),
            format!("interval=3000,{}", i.display()),
        ]);
    }
    for (a, b) in files(0).iter().zip(files(1).iter()) {
        let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
        assert!(!x.is_empty(), "{}", a.display());
        assert!(x == y, "{} and {} differ", a.display(), b.display());
    }
}
