//! Black-box tests of `commlab characterize` on a tiny grid: the points (one per kernel x
//! stride x working set, and per pair for the remote kernels), the plots (PNG that decode, SVG),
//! summary.json (the same as `--json` prints), the emitted machine file (loads, runs am-latency
//! and a small em3d, every key commented with its provenance, every cost of the template), and
//! the bad-input contract. Figures are not checked against expected values: the host is shared
//! and noisy; only their structure and sanity (positive, finite) are.

use crate::common;
use common::*;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

const LOCAL: [&str; 5] = ["load-sum", "copy-strided-load", "copy-strided-store", "local-fetch", "local-deposit"];
const REMOTE: [&str; 2] = ["remote-fetch", "remote-deposit"];

fn check_png(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG frame decodes");
    assert_eq!((info.width, info.height), (1000, 640), "{}", path.display());
    // Not blank: more than two distinct colours (cells, text, background).
    let distinct: BTreeSet<&[u8]> = buf.chunks(3).take(info.width as usize * info.height as usize).collect();
    assert!(distinct.len() > 2, "{}: blank image", path.display());
}

fn costs(machine: &str) -> BTreeSet<String> {
    let v: Value = serde_json::from_str(&ok(&["machine", "show", machine, "--json"])).expect("machine show --json");
    v["spec"]["costs"].as_object().expect("costs table").keys().cloned().collect()
}

#[test]
fn a_tiny_grid_writes_points_plots_summary_and_a_machine_that_runs() {
    let dir = TempDir::new("characterize");
    let machine = dir.file("host.toml");
    let stdout = ok(&[
        "characterize",
        "--strides",
        "2,1",
        "--sizes",
        "4K,64K",
        "--reps",
        "1",
        "--latency-rounds",
        "200",
        "--out",
        dir.arg(),
        "--emit-machine",
        machine.to_str().unwrap(),
        "--json",
    ]);
    let summary: Value = serde_json::from_str(&stdout).expect("--json prints the summary");
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.file("summary.json")).unwrap()).expect("summary.json");
    assert_eq!(summary, on_disk, "--json prints summary.json");
    assert_eq!(summary["strides"], serde_json::json!([1, 2]), "strides sorted");
    assert_eq!(summary["working_sets"], serde_json::json!([4096, 65536]));
    let cores = summary["topology"]["cores"].as_array().unwrap().len();
    assert!(cores >= 1);
    let pairs: Vec<Vec<u64>> = summary["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["cores"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect())
        .collect();
    assert_eq!(pairs.is_empty(), cores < 2, "a pair exactly when there are two cores");

    let points = json_lines(&dir.file("points.jsonl"));
    let count = |kernel: &str| points.iter().filter(|p| p["kernel"] == kernel).count();
    for kernel in LOCAL {
        for stride in [1, 2] {
            for ws in [4096, 65536] {
                let matching: Vec<&Value> = points
                    .iter()
                    .filter(|p| p["kernel"] == kernel && p["stride"] == stride && p["working_set_bytes"] == ws)
                    .collect();
                assert_eq!(matching.len(), 1, "{kernel} stride {stride} at {ws}: one point");
                let p = matching[0];
                let mb = p["mb_per_s"].as_f64().unwrap();
                let ns = p["ns"].as_f64().unwrap();
                assert!(mb.is_finite() && mb > 0.0 && ns > 0.0, "{p}");
                // MB/s is the working set over the pass time.
                assert!((mb - ws as f64 / ns * 1e3).abs() <= 1e-6 * mb, "{p}");
                assert_eq!(p["cores"].as_array().unwrap().len(), 1, "{p}");
            }
        }
    }
    for kernel in REMOTE {
        assert_eq!(count(kernel), 4 * pairs.len(), "{kernel}: 2 strides x 2 working sets per pair");
        for p in points.iter().filter(|p| p["kernel"] == kernel) {
            assert_eq!(p["cores"].as_array().unwrap().len(), 2, "{p}");
            assert!(p["pair"].is_string(), "{p}");
            assert!(p["mb_per_s"].as_f64().unwrap() > 0.0, "{p}");
        }
    }
    assert_eq!(count("chase"), 2, "chase at every other working set and the largest");
    let latency_pairs = cores * (cores - 1) / 2;
    if cores <= 16 {
        assert_eq!(count("core-to-core"), latency_pairs, "every pair");
    }
    assert_eq!(points.len(), summary["points"].as_u64().unwrap() as usize);
    for p in points.iter().filter(|p| p["kernel"] == "core-to-core") {
        assert!(p["ns"].as_f64().unwrap() > 0.0, "{p}");
    }

    for kernel in LOCAL {
        check_png(&dir.file(&format!("heatmap-{kernel}.png")));
        let svg = std::fs::read_to_string(dir.file(&format!("heatmap-{kernel}.svg"))).unwrap();
        assert!(svg.contains(kernel) && svg.contains("MB/s") && svg.contains("stride"), "{kernel} svg");
    }
    for (kernel, pair) in REMOTE.iter().flat_map(|k| pairs.iter().map(move |p| (k, p))) {
        check_png(&dir.file(&format!("heatmap-{kernel}-{}-{}.png", pair[0], pair[1])));
    }
    if cores >= 2 {
        check_png(&dir.file("latency-matrix.png"));
    }
    check_png(&dir.file("load-latency.png"));
    check_emitted_machine(&machine, cores);
}

/// The machine file `--emit-machine` wrote: it loads and runs, comments every key with its
/// provenance, has every cost of the template, and takes its message overheads and em3d's
/// work costs from this host's measurements; with two cores, `--compare` runs on it.
fn check_emitted_machine(machine: &std::path::Path, cores: usize) {
    let text = std::fs::read_to_string(machine).unwrap();
    let mut section = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        if section.is_empty() {
            continue; // name and summary
        }
        let note = line.split_once(" # ").map(|x| x.1).unwrap_or_else(|| panic!("uncommented key: {line}"));
        assert!(
            ["measured", "calibrated", "assumed", "derived", "unused"].iter().any(|w| note.starts_with(w)),
            "key without provenance: {line}"
        );
    }
    let m = machine.to_str().unwrap();
    assert_eq!(costs(m), costs("t1"), "every cost of the template");
    ok(&["machine", "show", m]);
    ok(&["run", "am-latency", "--machine", m]);
    ok(&["run", "em3d", "--machine", m, "--param", "nodes=200", "--param", "iterations=2", "--variant", "all"]);

    // The message overheads and em3d's work costs come from this host, not the template.
    let notes: std::collections::BTreeMap<String, String> = {
        let mut section = String::new();
        let mut notes = std::collections::BTreeMap::new();
        for line in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
            if line.starts_with('[') {
                section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            } else if let (Some((k, _)), Some((_, note))) = (line.split_once(" = "), line.split_once(" # ")) {
                notes.insert(format!("{section}.{}", k.trim()), note.to_string());
            }
        }
        notes
    };
    for key in [
        "messaging.send_overhead_cycles",
        "messaging.send_per_arg_word_cycles",
        "messaging.poll_cycles",
        "messaging.poll_dispatch_cycles",
        "messaging.interrupt_entry_cycles",
        "messaging.interrupt_look_cycles",
        "messaging.dma_setup_cycles",
        "messaging.dma_bytes_per_cycle",
        "memory.hit_cycles",
        "memory.local_miss_cycles",
        "costs.em3d_edge",
        "costs.em3d_node",
        "costs.em3d_ghost_value",
        "costs.bulk_copy_line",
    ] {
        let note = notes.get(key).unwrap_or_else(|| panic!("{key} not in the machine"));
        assert!(note.starts_with("measured"), "{key}: {note}");
    }
    if cores >= 2 {
        let note = &notes["messaging.poll_dispatch_cycles"];
        assert!(note.contains("calibrated") && note.contains("am-latency"), "the one-way latency: {note}");
        compare_structure(m);
    }
}

/// `characterize --compare` on an emitted machine, small: every variant the host runs, each
/// ratio the measured median over the prediction, inside its range, positive; the fastest
/// and the target verdicts consistent with the rows; the table names every variant.
fn compare_structure(machine: &str) {
    let params = ["--param", "nodes=400", "--param", "iterations=2", "--runs", "3"];
    let mut args = vec!["characterize", "--compare", machine, "--json"];
    args.extend(params);
    let c: Value = serde_json::from_str(&ok(&args)).expect("--compare --json prints one object");
    let rows = c["variants"].as_array().expect("variants");
    let names: Vec<&str> = rows.iter().map(|r| r["variant"].as_str().unwrap()).collect();
    assert_eq!(names, ["sm", "sm-pf", "mp-int", "mp-poll", "bulk"], "every variant the host has");
    assert_eq!(c["runs"], 3);
    let f = |r: &Value, k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k} in {r}"));
    for r in rows {
        let runs: Vec<f64> = r["measured_ns"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(runs.len(), 3, "{r}");
        assert!(runs.iter().all(|&v| v > 0.0), "{r}");
        let mut sorted = runs.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(f(r, "measured_median_ns"), sorted[1], "{r}");
        assert_eq!((f(r, "measured_min_ns"), f(r, "measured_max_ns")), (sorted[0], sorted[2]), "{r}");
        let pred = f(r, "predicted_ns");
        assert!(pred > 0.0, "{r}");
        let ratio = f(r, "ratio");
        assert!((ratio - sorted[1] / pred).abs() <= 1e-9 * ratio, "{r}");
        assert!(ratio > 0.0 && f(r, "ratio_min") <= ratio && ratio <= f(r, "ratio_max"), "{r}");
        assert!((f(r, "ratio_min") - sorted[0] / pred).abs() <= 1e-9 * ratio, "{r}");
        for side in ["measured_breakdown_ns", "predicted_breakdown_ns"] {
            assert!(r[side]["compute"].as_f64().unwrap() >= 0.0, "{side} in {r}");
        }
    }
    let argmin = |k: &str| rows.iter().min_by(|a, b| f(a, k).total_cmp(&f(b, k))).unwrap()["variant"].clone();
    assert_eq!(c["fastest_measured"], argmin("measured_median_ns"));
    assert_eq!(c["fastest_predicted"], argmin("predicted_ns"));
    assert_eq!(c["fastest_agrees"], Value::Bool(c["fastest_measured"] == c["fastest_predicted"]));
    let within = rows.iter().all(|r| f(r, "ratio") <= 1.5 && f(r, "ratio") >= 1.0 / 1.5);
    assert_eq!(c["within_target"], Value::Bool(within));

    let mut args = vec!["characterize", "--compare", machine];
    args.extend(params);
    let table = ok(&args);
    for v in names {
        assert!(table.lines().any(|l| l.starts_with(v)), "{v} in the table:\n{table}");
    }
    assert!(table.contains("measured/predicted") && table.contains("fastest"), "{table}");
}

#[test]
fn bad_input_names_it() {
    let dir = TempDir::new("characterize-bad");
    let out = dir.arg();
    bad_input(&["characterize", "--out", out, "--strides", "1,0"], &["--strides", "`0`", "stride"]);
    bad_input(&["characterize", "--out", out, "--sizes", "4K,lots"], &["--sizes", "`lots`", "size"]);
    bad_input(&["characterize", "--out", out, "--sizes", "12"], &["--sizes", "`12`", "range"]);
    bad_input(&["characterize", "--out", out, "--pair", "0,4096"], &["--pair", "core 4096"]);
    bad_input(&["characterize", "--out", out, "--pair", "0,x"], &["--pair", "`x`"]);
    bad_input(&["characterize", "--out", out, "--reps", "0"], &["--reps", "`0`"]);
    bad_input(&["characterize", "--out", out, "--emit-machine", "host.txt"], &["--emit-machine", "host.txt"]);
    bad_input(
        &["characterize", "--out", out, "--emit-machine", "/no/such/dir/h.toml"],
        &["--emit-machine", "directory"],
    );
    bad_input(&["characterize", "--compare", "t1", "--quick"], &["--compare", "--quick"]);
    bad_input(&["characterize", "--compare", "t1", "--runs", "0"], &["--runs", "`0`"]);
    bad_input(&["characterize", "--compare", "no-such-machine"], &["no-such-machine"]);
    bad_input(&["characterize", "--out", out, "--param", "nodes=400"], &["--param", "--compare"]);
    bad_input(&["characterize", "--compare", "t1", "--param", "nodes=x"], &["nodes"]);
}
