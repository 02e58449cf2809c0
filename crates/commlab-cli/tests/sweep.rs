//! Black-box tests of `commlab sweep`: results independent of `--jobs`, `--resume` after an
//! interrupted sweep (including a half-written last line), grids, the summary, and the
//! bad-input contract (exit status 2, one `commlab: ` line) for bad specs and output dirs.

use crate::common;
use common::*;

use serde_json::Value;
use std::collections::BTreeMap;

/// A small EM3D on 8 processors, every variant: 5 runs per point, well under a second each.
const EM3D: &[&str] = &["sweep", "em3d", "--procs", "8", "--param", "nodes=320", "--param", "iterations=1"];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// Results keyed by (point, variant), without the wall-clock fields; every pair exactly once.
fn by_point(results: &[Value]) -> BTreeMap<(u64, String), Value> {
    let mut out = BTreeMap::new();
    for r in results {
        let mut r = r.clone();
        let key = (r["point"].as_u64().expect("point index"), r["variant"].as_str().expect("variant").to_string());
        let sim = r["sim"].as_object_mut().expect("sim object");
        sim.remove("wall_seconds");
        sim.remove("events_per_second");
        assert!(out.insert(key.clone(), r).is_none(), "{key:?} appears twice");
    }
    out
}

#[test]
fn jobs_1_and_jobs_2_give_identical_results() {
    let (d1, d2) = (TempDir::new("jobs1"), TempDir::new("jobs2"));
    let vary = ["--vary", "messaging.send_overhead_cycles=10:400:4:log"];
    ok(&with(EM3D, &with(&vary, &["--jobs", "1", "--out", d1.arg()])));
    ok(&with(EM3D, &with(&vary, &["--jobs", "2", "--out", d2.arg()])));
    let (r1, r2) = (by_point(&json_lines(&d1.file("results.jsonl"))), by_point(&json_lines(&d2.file("results.jsonl"))));
    assert_eq!(r1.len(), 4 * 5, "4 points x 5 variants");
    assert_eq!(r1, r2);
    // The varied value reaches the run: points are in spec order and the values are integers.
    let values: Vec<Value> =
        (0..4).map(|p| r1[&(p, "sm".to_string())]["vary"]["messaging.send_overhead_cycles"].clone()).collect();
    assert_eq!(values, [10, 34, 117, 400].map(Value::from).to_vec());
    assert_ne!(r1[&(0, "mp-int".to_string())]["cycles"], r1[&(3, "mp-int".to_string())]["cycles"]);
    // The summary files are the same too.
    let s1: Value = serde_json::from_str(&std::fs::read_to_string(d1.path().join("summary.json")).unwrap()).unwrap();
    let s2: Value = serde_json::from_str(&std::fs::read_to_string(d2.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(s1, s2);
}

#[test]
fn interrupted_sweep_resumes_with_every_point_once() {
    let full = TempDir::new("full");
    let args = with(EM3D, &["--vary", "cross_traffic.rate_bytes_per_cycle=0:6:3", "--jobs", "2"]);
    ok(&with(&args, &["--out", full.arg()]));
    let text = std::fs::read_to_string(full.file("results.jsonl")).unwrap();
    let all: Vec<&str> = text.lines().collect();
    assert_eq!(all.len(), 15);
    let expected = by_point(&json_lines(&full.file("results.jsonl")));

    for k in [0, 1, 7, 14] {
        let part = TempDir::new("part");
        std::fs::create_dir_all(part.path()).unwrap();
        // The first k lines, then half of the next (a sweep killed while writing it).
        let mut cut: String = all[..k].iter().map(|l| format!("{l}\n")).collect();
        cut.push_str(&all[k][..all[k].len() / 2]);
        std::fs::write(part.file("results.jsonl"), &cut).unwrap();
        // Without --resume the existing results are never overwritten.
        bad_input(&with(&args, &["--out", part.arg()]), &["--resume", "results.jsonl"]);
        assert_eq!(std::fs::read_to_string(part.file("results.jsonl")).unwrap(), cut);

        let stdout = ok(&with(&args, &["--out", part.arg(), "--resume"]));
        assert!(stdout.contains(&format!("{} run now, {k} already done", 15 - k)), "k={k}: {stdout}");
        let resumed = json_lines(&part.file("results.jsonl"));
        assert_eq!(resumed.len(), 15, "k={k}");
        assert_eq!(by_point(&resumed), expected, "k={k}");
        // The first k lines are kept as they were.
        let after = std::fs::read_to_string(part.file("results.jsonl")).unwrap();
        assert!(after.starts_with(&cut[..cut.len() - all[k].len() / 2]), "k={k}");
    }

    // Resuming a finished sweep runs nothing and leaves the file as it was.
    let stdout = ok(&with(&args, &["--out", full.arg(), "--resume"]));
    assert!(stdout.contains("0 run now, 15 already done"), "{stdout}");
    assert_eq!(std::fs::read_to_string(full.file("results.jsonl")).unwrap(), text);
}

#[test]
fn resume_accepts_records_whose_params_are_strings() {
    // Records written before parameters became JSON numbers have every value a string; a
    // sweep resumed on such a file finds its points (and does not refuse the file).
    let d = TempDir::new("old-params");
    let args = with(EM3D, &["--vary", "cross_traffic.rate_bytes_per_cycle=0:6:2", "--variant", "mp-int"]);
    ok(&with(&args, &["--out", d.arg()]));
    let lines = json_lines(&d.file("results.jsonl"));
    assert_eq!(lines.len(), 2);
    assert!(lines[0]["params"]["nodes"].is_number(), "{}", lines[0]["params"]);
    let old: String = lines[..1]
        .iter()
        .map(|r| {
            let mut r = r.clone();
            for v in r["params"].as_object_mut().unwrap().values_mut() {
                *v = Value::from(v.to_string().trim_matches('"'));
            }
            format!("{r}\n")
        })
        .collect();
    assert!(old.contains(r#""nodes":"320""#), "{old}");
    std::fs::write(d.file("results.jsonl"), &old).unwrap();
    let stdout = ok(&with(&args, &["--out", d.arg(), "--resume"]));
    assert!(stdout.contains("1 run now, 1 already done"), "{stdout}");
    assert_eq!(json_lines(&d.file("results.jsonl")).len(), 2);
}

#[test]
fn resume_redoes_a_bad_last_line_and_refuses_a_damaged_file() {
    let d = TempDir::new("torn");
    let args = ["sweep", "am-latency", "--vary", "hops=1,2", "--variant", "mp-int", "--out", d.arg()];
    ok(&args);
    let resume = with(&args, &["--resume"]);
    let results = d.file("results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let expected = by_point(&json_lines(&results));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);

    // The last line has its newline (and blank lines after it) but is cut off: it is redone.
    let cut = format!("{}\n{}\n\n", lines[0], &lines[1][..lines[1].len() / 2]);
    std::fs::write(&results, &cut).unwrap();
    let stdout = ok(&resume);
    assert!(stdout.contains("1 run now, 1 already done"), "{stdout}");
    let after = std::fs::read_to_string(&results).unwrap();
    assert!(after.starts_with(&format!("{}\n{{", lines[0])), "{after}");
    assert_eq!(by_point(&json_lines(&results)), expected);

    // A line that is not a result before the last one is damage: an error, the file untouched.
    let damaged = format!("{}\nnot json\n{}\n", lines[0], lines[1]);
    std::fs::write(&results, &damaged).unwrap();
    bad_input(&resume, &["line 2 is not a commlab result: not valid JSON", "damaged"]);
    assert_eq!(std::fs::read_to_string(&results).unwrap(), damaged);
}

#[test]
fn resume_never_drops_a_complete_line_that_is_not_a_result() {
    // Regression (issue 36): a last line `{"a":1}` was taken for a torn write, deleted, and
    // the sweep said "an incomplete last line was dropped".
    let d = TempDir::new("foreign-last");
    let args = ["sweep", "am-latency", "--vary", "hops=1,2", "--variant", "mp-int", "--out", d.arg()];
    ok(&args);
    let results = d.file("results.jsonl");
    let before = format!("{}{{\"a\":1}}\n", std::fs::read_to_string(&results).unwrap());
    std::fs::write(&results, &before).unwrap();
    bad_input(&with(&args, &["--resume"]), &["line 3 is not a commlab result", "damaged"]);
    assert_eq!(std::fs::read_to_string(&results).unwrap(), before, "the file is untouched");
}

#[test]
fn resumed_runs_keep_every_digit_of_their_cycles() {
    // 101.75555999999997 is a float serde_json read as 101.75555999999996 before the
    // workspace enabled its float_roundtrip feature; summary.json took the misread value.
    let d = TempDir::new("digits");
    let args = ["sweep", "am-latency", "--vary", "hops=1,2", "--variant", "mp-int", "--out", d.arg()];
    ok(&args);
    let results = d.file("results.jsonl");
    let first = std::fs::read_to_string(&results).unwrap().lines().next().unwrap().to_string();
    let start = first.find(",\"cycles\":").unwrap() + ",\"cycles\":".len();
    let end = start + first[start..].find(',').unwrap();
    let edited = format!("{}101.75555999999997{}\n", &first[..start], &first[end..]);
    std::fs::write(&results, &edited).unwrap();
    ok(&with(&args, &["--resume"]));
    let summary = std::fs::read_to_string(d.file("summary.json")).unwrap();
    assert!(summary.contains("101.75555999999997"), "{summary}");
    assert!(std::fs::read_to_string(&results).unwrap().starts_with(&edited));
}

#[test]
fn resume_recognises_points_by_their_values_not_their_index() {
    // A sweep over 3 values, then the same key over 5 values that include them (new indices).
    let d = TempDir::new("regrid");
    let base = with(EM3D, &["--variant", "mp-poll", "--out", d.arg()]);
    ok(&with(&base, &["--vary", "messaging.send_overhead_cycles=10,50,90"]));
    let stdout = ok(&with(&base, &["--vary", "messaging.send_overhead_cycles=10:90:5", "--resume"]));
    assert!(stdout.contains("2 run now, 3 already done"), "{stdout}");
    let all = json_lines(&d.file("results.jsonl"));
    assert_eq!(all.len(), 5);
    let mut values: Vec<i64> =
        all.iter().map(|r| r["vary"]["messaging.send_overhead_cycles"].as_i64().unwrap()).collect();
    values.sort();
    assert_eq!(values, vec![10, 30, 50, 70, 90]);
}

#[test]
fn two_key_grid_has_every_combination_first_key_outermost() {
    let d = TempDir::new("grid");
    let stdout = ok(&with(
        EM3D,
        &[
            "--variant",
            "mp-int",
            "--vary",
            "messaging.send_overhead_cycles=20,200",
            "--vary",
            "remote=0.1,0.3,0.5",
            "--jobs",
            "2",
            "--out",
            d.arg(),
        ],
    ));
    assert!(stdout.contains("6 points x 1 variants"), "{stdout}");
    let r = by_point(&json_lines(&d.file("results.jsonl")));
    assert_eq!(r.len(), 6);
    for p in 0..6u64 {
        let v = &r[&(p, "mp-int".to_string())];
        assert_eq!(v["vary"]["messaging.send_overhead_cycles"], Value::from([20, 200][p as usize / 3]));
        assert_eq!(v["vary"]["remote"], Value::from([0.1, 0.3, 0.5][p as usize % 3]));
        // A numeric parameter is a JSON number in the record (it was the string "0.1").
        assert_eq!(v["params"]["remote"], Value::from([0.1, 0.3, 0.5][p as usize % 3]));
        assert!(v["check"]["ok"].as_bool().unwrap());
    }
    // One summary group per value of the second key, curves along the first.
    let s: Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["x"], "messaging.send_overhead_cycles");
    let groups = s["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 3);
    assert_eq!(groups[1]["fixed"]["remote"], Value::from(0.3));
    assert_eq!(groups[1]["curves"]["mp-int"].as_array().unwrap().len(), 2);
}

#[test]
fn summary_reports_fastest_and_crossovers() {
    let d = TempDir::new("summary");
    let stdout = ok(&with(
        EM3D,
        &["--vary", "messaging.send_overhead_cycles=10:1000:4:log", "--variant", "all", "--out", d.arg()],
    ));
    assert!(stdout.contains("fastest at messaging.send_overhead_cycles=10:"), "{stdout}");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("summary.json")).unwrap()).unwrap();
    let g = &s["groups"][0];
    assert_eq!(g["fastest"].as_array().unwrap().len(), 4);
    for c in g["crossovers"].as_array().unwrap() {
        let x = c["x"].as_f64().unwrap();
        assert!((10.0..=1000.0).contains(&x), "{c}");
        assert!(c["a"].is_string() && c["b"].is_string() && c["y"].is_number(), "{c}");
        assert!(stdout.contains(&format!(
            "{} and {} change order",
            c["a"].as_str().unwrap(),
            c["b"].as_str().unwrap()
        )));
    }
}

#[test]
fn help_teaches_with_examples() {
    let out = commlab().args(["sweep", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for needle in ["a:b:steps:log", "--resume", "Examples:", "commlab sweep em3d", "crossover"] {
        assert!(text.contains(needle), "`sweep --help` should mention {needle}:\n{text}");
    }
}

#[test]
fn bad_specs_are_one_line_and_exit_2() {
    let d = TempDir::new("bad");
    let run = |vary: &str, needles: &[&str]| {
        bad_input(&["sweep", "am-latency", "--vary", vary, "--out", d.arg()], needles);
    };
    run("bogus.key=1:2:3", &["bogus.key", "unknown key", "hops", "messaging.send_overhead_cycles"]);
    run("hops=1:4:0", &["empty range"]);
    run("hops=", &["empty list"]);
    run("hops=1,,2", &["empty value"]);
    run("hops=1:4:1", &["at least 2 steps"]);
    run("cross_traffic.rate_bytes_per_cycle=0:4:3:log", &["log", "greater than 0"]);
    run("cross_traffic.rate_bytes_per_cycle=0:x:3", &["`x` is not a number"]);
    run("cross_traffic.rate_bytes_per_cycle=1,two", &["`two` is not a number"]);
    run("hops=1:4:three", &["steps", "three"]);
    run("hops=1,2.5", &["2.5", "whole number"]);
    run("hops", &["KEY=SPEC"]);
    run("network.dims=4,8", &["network.dims", "cannot be swept"]);
    // A value the machine rejects is found before anything runs.
    run("network.link_bytes_per_ns=-1,1", &["network.link_bytes_per_ns", "point 0"]);
    bad_input(&["sweep", "am-latency", "--vary", "hops=1,2", "--vary", "hops=3"], &["hops", "twice"]);
    bad_input(&["sweep", "am-latency", "--vary", "hops=1,2", "--jobs", "0"], &["--jobs"]);
    bad_input(&["sweep", "am-latency"], &["--vary"]);
    assert!(!d.path().exists(), "no output directory is made for a bad spec");
}

#[test]
fn unwritable_output_dir_is_an_error_before_anything_runs() {
    let file = TempDir::new("a-file");
    std::fs::write(file.path(), "not a directory").unwrap();
    let under = file.path().join("sub");
    bad_input(&["sweep", "am-latency", "--vary", "hops=1,2", "--out", file.arg()], &["not a directory"]);
    bad_input(&["sweep", "am-latency", "--vary", "hops=1,2", "--out", under.to_str().unwrap()], &["cannot create"]);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = TempDir::new("read-only");
        std::fs::create_dir_all(ro.path()).unwrap();
        std::fs::set_permissions(ro.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        // Root (e.g. in a container) writes anyway; only check where permissions bind.
        let probe = ro.path().join("probe");
        if std::fs::write(&probe, "").is_err() {
            bad_input(&["sweep", "am-latency", "--vary", "hops=1,2", "--out", ro.arg()], &["not writable"]);
        } else {
            let _ = std::fs::remove_file(&probe);
        }
        std::fs::set_permissions(ro.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn procs_is_an_axis_that_resizes_the_machine() {
    let d = TempDir::new("procs");
    let args = [
        "sweep",
        "iccg",
        "--vary",
        "procs=1,2,4",
        "--variant",
        "sm,mp-int",
        "--param",
        "fe_elements=8",
        "--out",
        d.arg(),
    ];
    let stdout = ok(&args);
    assert!(stdout.contains("3 points x 2 variants"), "{stdout}");
    let runs = by_point(&json_lines(&d.file("results.jsonl")));
    assert_eq!(runs.len(), 6);
    for ((point, variant), r) in &runs {
        let procs = [1, 2, 4][*point as usize];
        assert_eq!(r["procs"], procs, "{point} {variant}: the run's size");
        assert_eq!(r["vary"]["procs"], procs, "{point} {variant}");
        assert_eq!(r["check"]["ok"], true);
    }
    // More processors, fewer cycles; the summary's x axis is the processor count.
    let cycles = |p: u64| runs[&(p, "sm".to_string())]["cycles"].as_f64().unwrap();
    assert!(cycles(2) < cycles(0), "{} vs {}", cycles(2), cycles(0));
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.file("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["x"], "procs");
    assert_eq!(summary["procs"], Value::Null, "each run has its own size");
    let xs: Vec<Value> =
        summary["groups"][0]["curves"]["sm"].as_array().unwrap().iter().map(|p| p[0].clone()).collect();
    assert_eq!(xs, [1, 2, 4].map(Value::from).to_vec());
    // Runs of every size are recognised on resume.
    let again = ok(&[&args[..], &["--resume"]].concat());
    assert!(again.contains("0 run now, 6 already done"), "{again}");

    // Bad sizes: one line each, before anything runs.
    // (A fresh directory: one holding results is refused as such before the grid's points.)
    let fresh = TempDir::new("procs-bad");
    let bad = |extra: &[&str], needles: &[&str]| {
        bad_input(&[&["sweep", "iccg", "--param", "fe_elements=8", "--out", fresh.arg()][..], extra].concat(), needles);
    };
    bad(&["--vary", "procs=0,2"], &["--vary procs=0,2", "`0` is not a processor count"]);
    bad(&["--vary", "procs=2.5"], &["2.5", "whole number"]);
    bad(&["--machine", "origin", "--vary", "procs=2,3"], &["procs=3", "power-of-two"]);
    bad(&["--procs", "4", "--vary", "procs=2,8"], &["both varied", "--procs 4"]);
}

#[test]
fn a_grid_is_counted_before_it_is_built() {
    // Regression (issue 36): this grid of 1e9 points was materialized: "memory allocation of
    // 2136000000000 bytes failed", a backtrace and exit 134.
    let started = std::time::Instant::now();
    let d = TempDir::new("huge-grid");
    bad_input(
        &[
            "sweep",
            "am-latency",
            "--vary",
            "rounds=1:100000:100000",
            "--vary",
            "hops=1:10:10",
            "--vary",
            "network.router_latency_ns=1:100:1000",
            "--out",
            d.arg(),
        ],
        &["100000 x 10 x 1000 = 1000000000 points x 2 variants = 2000000000 runs", "limit of 100000 runs"],
    );
    // 1e8 steps of one key: refused before its values are made (it took a minute and 3 GB).
    bad_input(
        &["sweep", "am-latency", "--vary", "network.router_latency_ns=0:100:100000000", "--out", d.arg()],
        &["network.router_latency_ns=0:100:100000000", "100000000 steps", "limit"],
    );
    bad_input(
        &["sweep", "am-latency", "--vary", "hops=1:4:3", "--vary", "rounds=1:100000:60000", "--out", d.arg()],
        &["3 x 60000 = 180000 points x 2 variants = 360000 runs"],
    );
    assert!(started.elapsed().as_secs() < 20, "refused at once");
}

#[test]
fn a_large_grid_makes_its_directory_and_says_so_at_once() {
    // Regression (issue 36): a large grid printed nothing and created no output directory
    // until every point's machine had been built.
    use std::io::BufRead;
    let d = TempDir::new("large-grid");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("commlab"))
        .args(["sweep", "am-latency", "--variant", "mp-int", "--vary", "network.router_latency_ns=1:5000:5000"])
        .args(["--vary", "hops=1,2,3,4,5,6,7,8,9,10", "--out", d.arg()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("commlab starts");
    let started = std::time::Instant::now();
    let mut first = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap()).read_line(&mut first).unwrap();
    let waited = started.elapsed();
    let dir_made = d.path().is_dir();
    let _ = child.kill();
    let _ = child.wait();
    assert!(first.contains("50000 points x 1 variants = 50000 runs") && first.contains("checking"), "{first}");
    assert!(dir_made, "the output directory exists by the first line");
    assert!(waited.as_secs() < 5, "first line after {waited:?}");
}

#[test]
fn resume_with_another_grid_is_refused_naming_both() {
    // Regression (issue 36): a `10:1000:6:log` sweep resumed as `10:1000:7:log` was accepted,
    // leaving 55 records of two grids; summary.json covered 7 points and `plot runtime` drew 11.
    let d = TempDir::new("two-grids");
    // --jobs 1: the file in grid order, so the first point off the new grid is line 2's (25).
    let base = ["sweep", "am-latency", "--variant", "mp-int", "--jobs", "1", "--out", d.arg()];
    let six = with(&base, &["--vary", "messaging.send_overhead_cycles=10:1000:6:log"]);
    ok(&six);
    let results = d.file("results.jsonl");
    let before = std::fs::read_to_string(&results).unwrap();
    let seven = with(&base, &["--vary", "messaging.send_overhead_cycles=10:1000:7:log", "--resume"]);
    bad_input(
        &seven,
        &["messaging.send_overhead_cycles=10:1000:6:log", "messaging.send_overhead_cycles=10:1000:7:log", "two grids"],
    );
    assert_eq!(std::fs::read_to_string(&results).unwrap(), before, "nothing appended");
    // The same grid spelt as a list resumes.
    let listed = with(&base, &["--vary", "messaging.send_overhead_cycles=10,25,63,158,398,1000", "--resume"]);
    assert!(ok(&listed).contains("0 run now, 6 already done"));
    // A results file without its sweep.json (an older commlab): each point must be on the grid.
    std::fs::remove_file(d.file("sweep.json")).unwrap();
    bad_input(&seven, &["is at {\"messaging.send_overhead_cycles\":25}", "not a point of this sweep's grid"]);
    assert!(ok(&with(&six, &["--resume"])).contains("0 run now, 6 already done"));
}
