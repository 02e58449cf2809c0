//! Black-box tests of the `commlab` binary: the bad-input contract (exit status 2, exactly one
//! `commlab: ` line on stderr naming the input and what would be valid, never a panic) and the
//! shape of the normal outputs (listings, `machine show`, JSON Lines, CSV, `--out`, determinism).

use crate::common;
use common::*;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A file under the system temp directory with a name unique to this process and call; removed
/// when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> TempFile {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        TempFile(std::env::temp_dir().join(format!("commlab-cli-test-{}-{n}-{name}", std::process::id())))
    }

    fn with_text(name: &str, text: &str) -> TempFile {
        let f = TempFile::new(name);
        std::fs::write(&f.0, text).expect("write temp file");
        f
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn arg(&self) -> &str {
        self.0.to_str().expect("temp path is UTF-8")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The alewife preset as shipped, for machine files derived from it.
const ALEWIFE: &str = include_str!("../../../machines/alewife.toml");

const APP_NAMES: &[&str] = &["am-latency", "am-throughput", "bulk-bw", "alltoall-stress", "bisection-bw"];

// ---------------------------------------------------------------------------------------------
// Machine files

#[test]
fn malformed_toml_machine_file() {
    let f = TempFile::with_text("malformed.toml", "name = \"x\"\n[network\ntopology = \"mesh\"\n");
    bad_input(&["run", "am-latency", "--machine", f.arg()], &[f.arg(), "malformed TOML", "line 2"]);
}

#[test]
fn missing_machine_file() {
    let f = TempFile::new("does-not-exist.toml");
    assert!(!f.path().exists());
    // The error says what would do instead: a readable file or a preset.
    bad_input(&["run", "am-latency", "--machine", f.arg()], &[f.arg(), "alewife"]);
    bad_input(&["machine", "show", f.arg()], &[f.arg(), "alewife"]);
}

#[test]
fn unknown_key_in_machine_file() {
    let text = ALEWIFE.replace("[network]\n", "[network]\nbogus = 1\n");
    assert_ne!(text, ALEWIFE, "the preset has a [network] table");
    let f = TempFile::with_text("unknown-key.toml", &text);
    bad_input(&["run", "am-latency", "--machine", f.arg()], &[f.arg(), "bogus", "valid keys", "network.dims"]);
}

#[test]
fn wrong_type_in_machine_file_names_the_key() {
    let text = ALEWIFE.replace("max_events = 5000000000", "max_events = \"many\"");
    assert_ne!(text, ALEWIFE);
    let f = TempFile::with_text("wrong-type.toml", &text);
    bad_input(&["run", "am-latency", "--machine", f.arg()], &[f.arg(), "limits.max_events", "many"]);
}

// ---------------------------------------------------------------------------------------------
// --set

#[test]
fn set_unknown_key() {
    bad_input(
        &["run", "am-latency", "--set", "bogus.key=1"],
        &["bogus.key", "valid keys", "network.link_bytes_per_ns"],
    );
}

#[test]
fn set_wrong_type() {
    bad_input(
        &["run", "am-latency", "--set", "network.link_bytes_per_ns=fast"],
        &["network.link_bytes_per_ns", "fast"],
    );
}

#[test]
fn set_out_of_range() {
    bad_input(
        &["run", "am-latency", "--set", "network.link_bytes_per_ns=-1"],
        &["network.link_bytes_per_ns", "-1", "positive"],
    );
}

#[test]
fn set_integer_outside_its_type_names_the_key() {
    bad_input(&["run", "am-latency", "--set", "limits.max_events=-1"], &["limits.max_events", "-1"]);
    bad_input(
        &["run", "am-latency", "--set", "network.ni_input_queue_packets=99999999999"],
        &["network.ni_input_queue_packets", "99999999999"],
    );
}

#[test]
fn set_zero_dimension() {
    bad_input(&["run", "am-latency", "--set", "network.dims=[0,4]"], &["network.dims", "[0, 4]", "positive"]);
}

#[test]
fn set_zero_clock() {
    bad_input(&["run", "am-latency", "--set", "processor.clock_mhz=0"], &["processor.clock_mhz", "0", "positive"]);
}

#[test]
fn set_unknown_topology() {
    bad_input(
        &["run", "am-latency", "--set", "network.topology=blob"],
        &["network.topology", "blob", "mesh", "torus", "fat-tree", "hypercube", "ring", "crossbar"],
    );
}

#[test]
fn set_dma_align_not_a_power_of_two() {
    bad_input(
        &["run", "am-latency", "--set", "messaging.dma_align_bytes=12"],
        &["messaging.dma_align_bytes", "12", "power of two"],
    );
}

#[test]
fn set_without_equals() {
    bad_input(
        &["run", "am-latency", "--set", "network.link_bytes_per_ns"],
        &["network.link_bytes_per_ns", "key=value"],
    );
}

#[test]
fn set_errors_in_machine_show_too() {
    bad_input(&["machine", "show", "alewife", "--set", "network.dims=[0,4]"], &["network.dims"]);
    bad_input(&["machine", "show", "alewife", "--procs", "0"], &["--procs 0"]);
}

#[test]
fn cross_traffic_needs_io_nodes() {
    bad_input(
        &["run", "am-latency", "--set", "network.io_nodes=false", "--set", "cross_traffic.rate_bytes_per_cycle=1"],
        &["cross_traffic.rate_bytes_per_cycle", "network.io_nodes"],
    );
}

// ---------------------------------------------------------------------------------------------
// Applications, variants, parameters, processors

#[test]
fn unknown_app() {
    let mut needles = vec!["nosuch-app"];
    needles.extend_from_slice(APP_NAMES);
    bad_input(&["run", "nosuch-app"], &needles);
}

#[test]
fn unknown_variant() {
    bad_input(&["run", "am-latency", "--variant", "sm"], &["`sm`", "mp-int", "mp-poll", "all"]);
}

#[test]
fn unknown_param() {
    bad_input(&["run", "am-latency", "--param", "bogus=1"], &["bogus", "hops", "rounds"]);
}

#[test]
fn param_hops_zero() {
    // Processor 0 is its own only zero-hop neighbour; the valid range is named.
    bad_input(&["run", "am-latency", "--param", "hops=0"], &["hops=0", "10"]);
}

#[test]
fn param_hops_beyond_the_machine() {
    bad_input(&["run", "am-latency", "--param", "hops=99"], &["hops=99", "99 hops", "10"]);
}

#[test]
fn param_hops_not_a_number() {
    bad_input(&["run", "am-latency", "--param", "hops=abc"], &["hops=abc", "whole number"]);
}

#[test]
fn param_without_equals() {
    bad_input(&["run", "am-latency", "--param", "hops"], &["hops", "key=value", "rounds"]);
}

#[test]
fn zero_procs() {
    bad_input(&["run", "am-latency", "--procs", "0"], &["--procs 0", "at least 1"]);
}

#[test]
fn unknown_machine_preset() {
    bad_input(&["run", "am-latency", "--machine", "nosuch"], &["nosuch", "alewife"]);
    bad_input(&["machine", "show", "nosuch"], &["nosuch", "alewife"]);
}

#[test]
fn out_into_missing_directory_creates_it_as_plot_and_sweep_do() {
    // `run --out` used to refuse a missing directory while `plot --out` and `sweep --out`
    // created theirs; all three create it now.
    let dir = TempDir::new("run-out-missing");
    let file = dir.path().join("a/b/out.json");
    ok(&["run", "am-latency", "--variant", "mp-int", "--json", "--out", file.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
    // A path through a file is still refused, naming the file.
    let blocker = dir.file("plain");
    std::fs::write(&blocker, "x").unwrap();
    let through = blocker.join("out.json");
    let through = through.to_str().unwrap();
    bad_input(&["run", "am-latency", "--variant", "mp-int", "--out", through], &[through, "not a directory"]);
    bad_input(&["run", "am-latency", "--variant", "mp-int", "--out", dir.arg()], &["is a directory"]);
}

#[test]
fn command_line_syntax_errors_are_one_line() {
    bad_input(&["run", "am-latency", "--procs", "abc"], &["abc", "--procs"]);
    bad_input(&["run", "am-latency", "--json", "--csv"], &["--json", "--csv"]);
    bad_input(&["run"], &["<APP>"]);
    bad_input(&["frobnicate"], &["frobnicate", "--help"]);
    bad_input(&["run", "am-latency", "--bogus"], &["--bogus"]);
}

// ---------------------------------------------------------------------------------------------
// Normal output

#[test]
fn machines_lists_alewife() {
    let out = ok(&["machines"]);
    assert!(out.lines().any(|l| l.starts_with("alewife ")), "no alewife row:\n{out}");
}

#[test]
fn machine_show_prints_toml_that_loads_back() {
    let shown = ok(&["machine", "show", "alewife"]);
    // The leading `#` lines are TOML comments, but strip them anyway: the rest must stand alone.
    let text: String = shown.lines().skip_while(|l| l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    assert!(text.contains("[network]") && text.contains("link_bytes_per_ns"), "unexpected output:\n{shown}");
    let f = TempFile::with_text("shown.toml", &text);
    let out = ok(&["run", "am-latency", "--machine", f.arg(), "--variant", "mp-int", "--json"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let j: Value = serde_json::from_str(lines[0]).expect("JSON line");
    assert_eq!(j["machine"], "alewife");
    assert_eq!(j["procs"], 32);
    assert_eq!(j["check"]["ok"], true);
    // The same run on the preset gives the same simulated result.
    let preset = ok(&["run", "am-latency", "--variant", "mp-int", "--json"]);
    let p: Value = serde_json::from_str(preset.trim()).expect("JSON line");
    assert_eq!(j["cycles"], p["cycles"]);
}

#[test]
fn apps_lists_every_app() {
    let out = ok(&["apps"]);
    let names: Vec<&str> = out.lines().filter(|l| !l.is_empty() && !l.starts_with(' ')).collect();
    for a in APP_NAMES {
        assert!(names.contains(a), "`commlab apps` does not list {a}:\n{out}");
    }
}

fn assert_object_with(v: &Value, what: &str, fields: &[&str]) {
    let obj = v.as_object().unwrap_or_else(|| panic!("{what} is not an object: {v}"));
    for f in fields {
        assert!(obj.contains_key(*f), "{what} lacks `{f}`: {v}");
    }
}

#[test]
fn run_json_has_the_documented_fields() {
    let out = ok(&["run", "am-latency", "--json", "--variant", "all"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "one JSON line per variant:\n{out}");
    let mut variants = Vec::new();
    for line in lines {
        let j: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_object_with(
            &j,
            "run",
            &[
                "app",
                "variant",
                "machine",
                "procs",
                "params",
                "cycles",
                "breakdown",
                "volume_bytes",
                "counters",
                "check",
                "sim",
            ],
        );
        assert_object_with(
            &j["breakdown"],
            "breakdown",
            &["compute", "memory_ni_wait", "message_overhead", "synchronization"],
        );
        assert_object_with(
            &j["volume_bytes"],
            "volume_bytes",
            &["invalidates", "requests", "headers", "data", "cross_traffic"],
        );
        assert_object_with(&j["counters"], "counters", &[]);
        assert_object_with(&j["check"], "check", &["ok", "max_error"]);
        assert_object_with(&j["sim"], "sim", &["events", "wall_seconds", "events_per_second"]);
        assert_object_with(&j["params"], "params", &["hops", "rounds"]);
        assert_eq!(j["app"], "am-latency");
        assert_eq!(j["machine"], "alewife");
        assert_eq!(j["procs"], 32);
        assert_eq!(j["check"]["ok"], true);
        assert!(j["cycles"].as_f64().is_some_and(|c| c > 0.0), "cycles: {}", j["cycles"]);
        variants.push(j["variant"].as_str().expect("variant is a string").to_string());
    }
    assert_eq!(variants, ["mp-int", "mp-poll"]);
}

/// Split one CSV line into fields, honouring double quotes.
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().expect("a field").push(c),
        }
    }
    assert!(!quoted, "unbalanced quotes in CSV line: {line}");
    fields
}

#[test]
fn run_csv_is_a_header_and_one_row_per_variant() {
    let out = ok(&["run", "am-latency", "--csv", "--variant", "all"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "header + 2 rows:\n{out}");
    let header = csv_fields(lines[0]);
    for col in ["app", "variant", "machine", "procs", "params", "cycles"] {
        assert!(header.iter().any(|h| h == col), "CSV header lacks `{col}`: {}", lines[0]);
    }
    let params_col = header.iter().position(|h| h == "params").expect("params column");
    for row in &lines[1..] {
        let fields = csv_fields(row);
        assert_eq!(fields.len(), header.len(), "row and header widths differ:\n{}\n{row}", lines[0]);
        assert_eq!(fields[0], "am-latency");
        assert!(fields[params_col].contains("hops=1"), "params field: {}", fields[params_col]);
    }
}

#[test]
fn out_writes_the_file_and_nothing_to_stdout() {
    let f = TempFile::new("out.json");
    let stdout = ok(&["run", "am-latency", "--json", "--out", f.arg()]);
    assert!(stdout.is_empty(), "stdout should be empty with --out:\n{stdout}");
    let text = std::fs::read_to_string(f.path()).expect("--out file written");
    assert_eq!(text.lines().count(), 2, "{text}");
    for line in text.lines() {
        let j: Value = serde_json::from_str(line).expect("JSON line");
        assert_eq!(j["app"], "am-latency");
    }
}

/// JSON lines with the wall-clock dependent fields removed.
fn without_wall_clock(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| {
            let mut j: Value = serde_json::from_str(l).expect("JSON line");
            let sim = j["sim"].as_object_mut().expect("sim object");
            assert!(sim.remove("wall_seconds").is_some());
            assert!(sim.remove("events_per_second").is_some());
            j
        })
        .collect()
}

#[test]
fn runs_are_deterministic() {
    let args = ["run", "alltoall-stress", "--procs", "16", "--json"];
    let a = without_wall_clock(&ok(&args));
    let b = without_wall_clock(&ok(&args));
    assert_eq!(a.len(), 2);
    assert_eq!(a[0]["procs"], 16);
    assert_eq!(a, b);
}

#[test]
fn validate_alewife_passes_every_row() {
    let out =
        Command::cargo_bin("commlab").unwrap().args(["validate", "--machine", "alewife", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 20);
    for r in &rows {
        assert_eq!(r["ok"], true, "{r}");
        assert!(r["error_pct"].as_f64().unwrap().abs() <= 10.0, "{r}");
    }
}

#[test]
fn validate_fails_with_status_1_when_out_of_tolerance() {
    let out = Command::cargo_bin("commlab")
        .unwrap()
        .args(["validate", "--set", "messaging.interrupt_entry_cycles=130"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("null handler via interrupt"), "{err}");
}

#[test]
fn validate_an_uncalibrated_machine_is_bad_input() {
    let dir = std::env::temp_dir().join(format!("commlab-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let show = Command::cargo_bin("commlab").unwrap().args(["machine", "show", "alewife"]).output().unwrap();
    let text: String = String::from_utf8(show.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| if l.starts_with("name = ") { "name = \"mine\"".to_string() } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n");
    let file = dir.join("mine.toml");
    std::fs::write(&file, text).unwrap();
    let out = Command::cargo_bin("commlab")
        .unwrap()
        .args(["validate", "--machine", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no published calibration for machine `mine`") && err.contains("alewife"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn validate_blizzard_presets_exit_zero() {
    for m in ["blizzard-s", "blizzard-e", "blizzard-t"] {
        let out = Command::cargo_bin("commlab").unwrap().args(["validate", "--machine", m, "--json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{m}: {}", String::from_utf8_lossy(&out.stderr));
        let rows = String::from_utf8(out.stdout).unwrap().lines().count();
        assert_eq!(rows, 20, "{m}: 12 miss times and Table 2's 8 round trips");
    }
}

// ---------------------------------------------------------------------------------------------
// Applications: EM3D and ICCG

/// Parse JSON Lines output into objects.
fn json_lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).expect("each line is a JSON object")).collect()
}

#[test]
fn em3d_and_iccg_all_variants_give_one_checked_object_each() {
    for (app, params, variants) in [
        (
            "em3d",
            vec!["--param", "nodes=640", "--param", "iterations=2"],
            vec!["sm", "sm-pf", "mp-int", "mp-poll", "bulk"],
        ),
        (
            "iccg",
            vec!["--param", "fe_elements=12"],
            vec![
                "sm",
                "sm-pf",
                "mp-int",
                "mp-poll",
                "buffer-1",
                "buffer-2",
                "buffer-3",
                "buffer-4",
                "buffer-8",
                "buffer-16",
            ],
        ),
    ] {
        let mut args = vec!["run", app, "--variant", "all", "--json"];
        args.extend(params.iter().copied());
        let rows = json_lines(&ok(&args));
        let got: Vec<&str> = rows.iter().map(|r| r["variant"].as_str().unwrap()).collect();
        assert_eq!(got, variants, "{app}: one object per variant, in order");
        for r in &rows {
            assert_eq!(r["check"]["ok"], Value::Bool(true), "{app}: {r}");
            assert!(r["cycles"].as_f64().unwrap() > 0.0);
            if app == "iccg" {
                for c in [
                    "speedup",
                    "pcg_iterations",
                    "nonlocal_edge_fraction",
                    "app_messages",
                    "edges_per_message",
                    "idle_cycles_per_node",
                ] {
                    assert!(r["counters"][c].is_number(), "iccg counter {c} in {r}");
                }
            }
        }
    }
}

#[test]
fn iccg_malformed_matrix_names_file_and_line() {
    let f = TempFile::with_text(
        "bad.mtx",
        "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n3 3 3\n1 1 2.0\n2 1 -1.0\n3 9 1.0\n",
    );
    let param = format!("matrix={}", f.arg());
    bad_input(&["run", "iccg", "--param", &param], &[f.arg(), ":6:", "9"]);
}

#[test]
fn iccg_non_square_and_non_symmetric_matrices_are_refused() {
    let f = TempFile::with_text("rect.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1.0\n");
    let param = format!("matrix={}", f.arg());
    bad_input(&["run", "iccg", "--param", &param], &[f.arg(), ":2:"]);
    let f = TempFile::with_text(
        "unsym.mtx",
        "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 4.0\n2 1 1.0\n2 2 4.0\n",
    );
    let param = format!("matrix={}", f.arg());
    bad_input(&["run", "iccg", "--param", &param], &[f.arg(), ":4:"]);
}

#[test]
fn iccg_missing_matrix_file() {
    let f = TempFile::new("missing.mtx");
    let param = format!("matrix={}", f.arg());
    bad_input(&["run", "iccg", "--param", &param], &[f.arg()]);
}

#[test]
fn a_bad_results_line_gets_the_same_message_from_plot_experiment_and_sweep() {
    // Line 2 is damaged (not the last line, so a resumed sweep refuses the file too).
    let d = TempDir::new("bad-line");
    std::fs::create_dir_all(d.path()).unwrap();
    let results = d.file("results.jsonl");
    let text = "{\"variant\":\"sm\"}\n{\"variant\":\n{\"variant\":\"sm\"}\n";
    std::fs::write(&results, text).unwrap();
    let r = results.to_str().unwrap();
    let expected = format!(
        "commlab: `{r}` line 2 is not a commlab result: not valid JSON (EOF while parsing a value at column 11) \
(expected one JSON object per line, as `commlab run --json` and `commlab sweep` write them)"
    );
    assert_eq!(bad_input(&["plot", "volume", r], &[]), expected);
    assert_eq!(bad_input(&["experiment", "volume", "em3d", "--out", d.arg()], &[]), expected);
    let resume = ["--procs", "8", "--param", "nodes=320", "--resume", "--out", d.arg()];
    let sweep: Vec<&str> = ["sweep", "em3d", "--vary", "iterations=1,2"].iter().chain(&resume).copied().collect();
    let damaged = format!("{expected}; the file is damaged (repair or move it, or use another --out)");
    assert_eq!(bad_input(&sweep, &[]), damaged);
    let experiment: Vec<&str> =
        ["experiment", "overhead", "em3d", "--no-marks"].iter().chain(&resume).copied().collect();
    assert_eq!(bad_input(&experiment, &[]), damaged);
    assert_eq!(std::fs::read_to_string(&results).unwrap(), text, "the file is left as it was");
}
