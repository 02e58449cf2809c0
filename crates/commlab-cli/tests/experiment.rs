//! `commlab experiment`: each experiment writes results, a summary with crossovers and
//! machine marks, and plots; bad requests are one-line errors.

use crate::common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("commlab-experiment-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn assert_plots(dir: &Path, stems: &[&str]) {
    for stem in stems {
        let png = std::fs::read(dir.join(format!("{stem}.png"))).unwrap_or_else(|e| panic!("{stem}.png: {e}"));
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{stem}.png is a PNG");
        let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).unwrap();
        assert!(svg.contains("<svg"), "{stem}.svg is an SVG");
    }
}

const SMALL_EM3D: &[&str] = &["--procs", "8", "--param", "nodes=320", "--param", "iterations=1", "--points", "3"];

#[test]
fn bisection_experiment_writes_results_summary_and_plots() {
    let d = temp_dir("bisection");
    let mut args = vec!["experiment", "bisection", "em3d", "--out", d.to_str().unwrap()];
    args.extend_from_slice(SMALL_EM3D);
    let text = ok(&args);
    assert_eq!(json_lines(&d.join("results.jsonl")).len(), 3 * 5, "3 points x 5 variants");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.join("experiment.json")).unwrap()).unwrap();
    // Plots are named relative to the folder (they were absolute paths naming the directory the
    // experiment was written in), and each exists there.
    let plots: Vec<&str> = summary["plots"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert!(!plots.is_empty());
    for p in &plots {
        assert!(!p.contains('/') && d.join(p).is_file(), "plot {p} is not a file name in the folder");
    }
    let series = summary["series"].as_object().unwrap();
    assert_eq!(series.len(), 5);
    // x = bisection left to the application: the bisection less the cross-traffic each run
    // achieved (counters.cross_traffic_bytes_per_cycle), from the whole bisection (no
    // cross-traffic) down to about 10% of it (FIFO cross-traffic achieves at most its rate).
    let xs: Vec<f64> = series["sm"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert_eq!(xs.len(), 3);
    let bisection = xs[2];
    assert!(xs[0] < xs[1] && xs[1] < xs[2] && xs[0] >= 0.099 * bisection, "x values {xs:?}");
    for r in json_lines(&d.join("results.jsonl")) {
        let rate = r["vary"]["cross_traffic.rate_bytes_per_cycle"].as_f64().unwrap();
        let achieved = r["counters"].get("cross_traffic_bytes_per_cycle").map_or(0.0, |v| v.as_f64().unwrap());
        assert_eq!(r["counters"].get("cross_traffic_bytes_per_cycle").is_some(), rate > 0.0, "{r}");
        let x = bisection - achieved;
        let pts = series[r["variant"].as_str().unwrap()].as_array().unwrap();
        assert!(
            pts.iter().any(|p| p[0].as_f64().unwrap() == x),
            "{} at rate {rate}: no point at x = {x}",
            r["variant"]
        );
    }
    assert!(text.contains("less the cross-traffic each run achieved"), "{text}");
    assert!(summary["crossovers"].is_array());
    // Machines normalised onto this axis: on it or listed beyond it, every preset once.
    let placed =
        summary["machines_on_axis"].as_array().unwrap().len() + summary["machines_off_axis"].as_array().unwrap().len();
    assert!(placed >= 14, "{placed} machines placed");
    // Presets are placed by their figures at the run's size (8 processors), as `--procs`
    // resizes them: the machine run sits on the axis at its whole bisection (at 32 processors
    // alewife was placed beyond this axis).
    let on: Vec<&Value> = summary["machines_on_axis"].as_array().unwrap().iter().collect();
    let alewife =
        on.iter().find(|m| m["machine"] == "alewife").unwrap_or_else(|| panic!("alewife not on the axis: {on:?}"));
    let x = alewife["x"].as_f64().unwrap();
    assert!((x - xs[2]).abs() < 1e-9 * xs[2], "alewife at {x}, the whole bisection is {}", xs[2]);
    assert!(!text.contains("beyond this axis: alewife") && !text.contains(", alewife"), "{text}");
    assert!(text.contains("fastest at"), "{text}");
    assert_plots(&d, &["runtime", "breakdown", "volume"]);
    // Labelled as `commlab plot` labels them.
    for (stem, labels) in [
        (
            "breakdown",
            &["mean time per processor (processor cycles)", "compute", "memory & NI wait", "message overhead"][..],
        ),
        ("volume", &["traffic volume (bytes)", "invalidates", "requests", "headers", "data", "cross-traffic"][..]),
    ] {
        let texts = svg_texts(&std::fs::read_to_string(d.join(format!("{stem}.svg"))).unwrap());
        for l in labels {
            assert!(texts.iter().any(|t| t == l), "{stem}.svg: no `{l}` in {texts:?}");
        }
        // Regression (issue 36, item 8): the bars did not say which point of the sweep they show.
        let what = if stem == "breakdown" { "time breakdown" } else { "traffic volume" };
        let title = format!("{what} at cross_traffic.rate_bytes_per_cycle=0: em3d on alewife (8 processors)");
        assert!(texts.contains(&title), "{stem}.svg: no title `{title}` in {texts:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn latency_experiment_has_both_methods() {
    let d = temp_dir("latency");
    let mut args = vec!["experiment", "latency", "em3d", "--no-marks", "--out", d.to_str().unwrap()];
    args.extend_from_slice(SMALL_EM3D);
    ok(&args);
    for sub in [d.clone(), d.join("delay")] {
        assert_eq!(json_lines(&sub.join("results.jsonl")).len(), 15, "{}", sub.display());
        assert_plots(&sub, &["runtime"]);
    }
    // Slower networks relative to the processor: latency in cycles grows with the clock.
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.join("experiment.json")).unwrap()).unwrap();
    let xs: Vec<f64> = summary["series"]["mp-int"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert!(xs.windows(2).all(|w| w[0] < w[1]) && xs[2] > 10.0 * xs[0], "latencies {xs:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn overhead_aggregation_and_volume_experiments() {
    let d = temp_dir("overhead");
    let mut args =
        vec!["experiment", "overhead", "em3d", "--no-marks", "--variant", "mp-int", "--out", d.to_str().unwrap()];
    args.extend_from_slice(SMALL_EM3D);
    ok(&args);
    let rows = json_lines(&d.join("results.jsonl"));
    let mut by_scale: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r["vary"]["messaging.overhead_scale"].as_f64().unwrap(), r["cycles"].as_f64().unwrap()))
        .collect();
    by_scale.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(by_scale[0].1 < by_scale[2].1, "more overhead, more time: {by_scale:?}");
    std::fs::remove_dir_all(&d).unwrap();

    let d = temp_dir("aggregation");
    let text = ok(&[
        "experiment",
        "aggregation",
        "iccg",
        "--procs",
        "8",
        "--param",
        "fe_elements=12",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(json_lines(&d.join("results.jsonl")).len(), 6, "mp-int and five buffer sizes");
    assert!(text.contains("average edges per message"), "{text}");
    assert_plots(&d, &["speedup", "message-length", "breakdown", "volume"]);
    // Rerunning without --resume refuses to touch the results; with it, nothing is rerun.
    let out = commlab()
        .args([
            "experiment",
            "aggregation",
            "iccg",
            "--procs",
            "8",
            "--param",
            "fe_elements=12",
            "--out",
            d.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    ok(&[
        "experiment",
        "aggregation",
        "iccg",
        "--procs",
        "8",
        "--param",
        "fe_elements=12",
        "--resume",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(json_lines(&d.join("results.jsonl")).len(), 6);
    std::fs::remove_dir_all(&d).unwrap();

    let d = temp_dir("volume");
    ok(&[
        "experiment",
        "volume",
        "em3d",
        "--procs",
        "8",
        "--param",
        "nodes=320",
        "--param",
        "iterations=1",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_plots(&d, &["volume", "breakdown"]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Every file an experiment wrote to `dir` but results.jsonl (its lines are in the order runs
/// finished, with wall-clock figures), by name.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "results.jsonl")
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn experiment_files_do_not_depend_on_jobs_or_the_order_runs_finished() {
    // The breakdown and volume bars used to follow results.jsonl, i.e. the order runs finished
    // in. Each run is in its own working directory with the same relative --out, so the plot
    // paths in experiment.json are the same too.
    let run = |name: &str, extra: &[&[&str]]| {
        let cwd = TempDir::new(name);
        std::fs::create_dir_all(cwd.path()).unwrap();
        for more in extra {
            let mut args = vec!["experiment", "overhead", "em3d", "--no-marks", "--out", "exp"];
            args.extend_from_slice(SMALL_EM3D);
            args.extend_from_slice(more);
            let out = commlab().current_dir(cwd.path()).args(&args).output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        let files = outputs(&cwd.file("exp"));
        let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
        for stem in ["runtime", "breakdown", "volume"] {
            assert!(names.contains(&format!("{stem}.png").as_str()), "{name}: {names:?}");
            assert!(names.contains(&format!("{stem}.svg").as_str()), "{name}: {names:?}");
        }
        assert!(names.contains(&"experiment.json") && names.contains(&"summary.json"), "{name}: {names:?}");
        files
    };
    let one = run("jobs1", &[&["--jobs", "1"]]);
    // The last variant first, then the rest by --resume: results.jsonl holds bulk's runs first.
    let resumed = run("resumed", &[&["--variant", "bulk"], &["--resume", "--jobs", "1"]]);
    let two = run("jobs2", &[&["--jobs", "2"]]);
    let two_again = run("jobs2-again", &[&["--jobs", "2"]]);
    for (what, other) in [("resumed", &resumed), ("--jobs 2", &two), ("--jobs 2 again", &two_again)] {
        assert_eq!(one.len(), other.len(), "{what}");
        for ((name, a), (other_name, b)) in one.iter().zip(other) {
            assert_eq!(name, other_name, "{what}");
            assert!(a == b, "{what}: {name} differs from the --jobs 1 run's");
        }
    }
}

#[test]
fn bad_experiment_requests_are_one_line_errors() {
    for args in [
        vec!["experiment", "aggregation", "em3d"],
        vec!["experiment", "bisection", "no-such-app"],
        vec!["experiment", "warp", "em3d"],
        vec!["experiment", "bisection", "em3d", "--points", "1"],
        vec!["experiment", "bisection", "em3d", "--set", "cross_traffic.rate_bytes_per_cycle=2"],
        vec!["experiment", "bisection"],
        vec!["experiment", "grain", "em3d"],
        vec!["experiment", "grain", "--param", "l=5"],
    ] {
        let out = commlab().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("commlab: "), "{args:?}: {stderr}");
    }
}

/// The runtime study's two curves: grain's speedup against the leaf delay and memcpy's MB/s
/// against the block size, on alewife-sim by default.
#[test]
fn grain_and_memcpy_experiments_draw_their_counter_against_their_parameter() {
    let d = temp_dir("grain");
    let text = ok(&["experiment", "grain", "--procs", "16", "--param", "n=6", "--out", d.to_str().unwrap()]);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.join("experiment.json")).unwrap()).unwrap();
    assert_eq!(summary["machine"], "alewife-sim", "grain's default machine");
    assert_eq!(summary["varied"], "l");
    let series = summary["series"].as_object().unwrap();
    assert_eq!(series.len(), 2, "sm and mp");
    for (v, pts) in series {
        let xs: Vec<f64> = pts.as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
        assert_eq!(xs, [0.0, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0], "{v}: l from 0 to 1000 in log steps");
        // More work per leaf amortises the scheduler: the speedup at l = 1000 beats l = 0.
        let ys: Vec<f64> = pts.as_array().unwrap().iter().map(|p| p[1].as_f64().unwrap()).collect();
        assert!(ys[7] > ys[0], "{v}: speedups {ys:?}");
    }
    assert_eq!(json_lines(&d.join("results.jsonl")).len(), 16);
    assert!(text.contains("highest at l = 1000"), "{text}");
    assert_plots(&d, &["speedup", "breakdown", "volume"]);

    let d = temp_dir("memcpy");
    ok(&["experiment", "memcpy", "--machine", "alewife", "--out", d.to_str().unwrap()]);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.join("experiment.json")).unwrap()).unwrap();
    assert_eq!(summary["machine"], "alewife");
    let series = summary["series"].as_object().unwrap();
    assert_eq!(series.keys().collect::<Vec<_>>(), ["mp", "sm", "sm-pf"]);
    let mp: Vec<(f64, f64)> =
        series["mp"].as_array().unwrap().iter().map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap())).collect();
    assert_eq!(mp.first().unwrap().0, 16.0);
    assert_eq!(mp.last().unwrap().0, 16384.0);
    // One DMA message's fixed costs are amortised over a longer block.
    assert!(mp.windows(2).all(|w| w[1].1 >= w[0].1), "mp MB/s by block size: {mp:?}");
    assert_plots(&d, &["mbytes_per_s"]);
}

/// MB/s of (variant, stride, working set) in a copy-transfer results file; every point's check
/// must have passed.
fn copy_transfer_points(path: &Path) -> Vec<(String, u64, u64, f64)> {
    json_lines(path)
        .iter()
        .map(|l| {
            let what = format!("{} {}", l["variant"], l["vary"]);
            assert_eq!(l["check"]["ok"], true, "{what}: {}", l["check"]["detail"]);
            let mb = l["counters"]["mbytes_per_s"].as_f64().unwrap();
            assert!(mb > 0.0, "{what}: {mb} MB/s");
            let n = |k: &str| l["vary"][k].as_u64().unwrap_or_else(|| panic!("{what}: no vary.{k}"));
            (l["variant"].as_str().unwrap().to_string(), n("stride"), n("bytes"), mb)
        })
        .collect()
}

/// Issue 15: a simulated machine's copy-transfer surfaces, local and each remote variant it
/// has, as heat maps drawn as `commlab characterize` draws the host's.
#[test]
fn copy_transfer_experiment_draws_a_surface_per_variant() {
    let d = TempDir::new("copy-transfer-t3d");
    let text = ok(&["experiment", "copy-transfer", "--quick", "--machine", "t3d", "--out", d.arg()]);
    let points = copy_transfer_points(&d.file("results.jsonl"));
    let (variants, strides, sizes) = (["local", "fetch", "get", "put"], [1, 2, 3, 16], [4096, 16384, 65536]);
    assert_eq!(points.len(), variants.len() * strides.len() * sizes.len(), "every point once");
    let mb = |v: &str, s: u64, w: u64| {
        points
            .iter()
            .find(|p| p.0 == v && p.1 == s && p.2 == w)
            .unwrap_or_else(|| panic!("no point {v} stride {s} at {w} bytes"))
            .3
    };
    for v in variants {
        for s in strides {
            for w in sizes {
                mb(v, s, w);
            }
        }
    }
    // Beyond the T3D's 8 KB cache a strided load misses every time, a contiguous one once per
    // 32-byte line; loads of data another processor just wrote are slower than local ones.
    assert!(mb("local", 1, 65536) > 2.0 * mb("local", 16, 65536), "{text}");
    assert!(mb("fetch", 1, 65536) < mb("local", 1, 65536), "{text}");
    assert_plots(d.path(), &["heatmap-local", "heatmap-fetch", "heatmap-get", "heatmap-put"]);
    let svg = std::fs::read_to_string(d.file("heatmap-get.svg")).unwrap();
    let texts = svg_texts(&svg);
    for needle in ["t3d: copy-transfer load-sum [get]", "stride (64-bit words)", "working set (bytes)", "64K", "16"] {
        assert!(texts.iter().any(|t| t == needle), "heatmap-get.svg lacks {needle:?}: {texts:?}");
    }
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.file("experiment.json")).unwrap()).unwrap();
    assert_eq!(summary["levels"][0]["bytes"], 8192);
    assert_eq!(summary["surfaces_mb_per_s"]["get"].as_array().unwrap().len(), 3, "a row per working set");
    let ratio = summary["remote_over_local"]["fetch"]["stride_1_largest"].as_f64().unwrap();
    assert!((ratio - mb("fetch", 1, 65536) / mb("local", 1, 65536)).abs() < 1e-9, "{ratio}");
    assert!(text.contains("plateaus") && text.contains("memory (beyond the caches; 64K)"), "{text}");
    // The large transfers (seed 002's Figs. 9-14): every variant x stride x copy kernel at 64 KB
    // (--quick), drawn by stride; beyond the T3D's cache a contiguous local copy (read-ahead)
    // beats a strided one.
    let large = json_lines(&d.file("large/results.jsonl"));
    assert_eq!(large.len(), 4 * 6 * 2, "variants x strides x kernels");
    assert!(large
        .iter()
        .all(|l| l["check"]["ok"] == true && l["params"]["bytes"].to_string().trim_matches('"') == "65536"));
    assert_plots(d.path(), &["large-local", "large-remote"]);
    let ways = &summary["large_transfers"]["ways"];
    for w in [
        "local, strided loads",
        "local, strided stores",
        "deposit (put), strided remote stores",
        "coherent fetch, strided remote loads",
    ] {
        assert_eq!(ways[w]["points"].as_array().map(Vec::len), Some(6), "{w}: {ways}");
    }
    assert!(text.contains("large transfers (64K"), "{text}");

    // On the T3E a vector get of 8 contiguous words opens one remote line, of 8 words 16 apart
    // eight: stride 1 beats stride 16. A comma list picks variants.
    let d = TempDir::new("copy-transfer-t3e");
    ok(&["experiment", "copy-transfer", "--quick", "--machine", "t3e", "--variant", "get,local", "--out", d.arg()]);
    let points = copy_transfer_points(&d.file("results.jsonl"));
    assert_eq!(points.len(), 2 * 4 * 3);
    let get = |s: u64| points.iter().find(|p| p.0 == "get" && p.1 == s && p.2 == 65536).unwrap().3;
    assert!(get(1) > 1.5 * get(16), "get at stride 1 {} vs 16 {} MB/s", get(1), get(16));
    assert_plots(d.path(), &["heatmap-local", "heatmap-get"]);

    // Without one-sided access: local and fetch only by default, get refused by name.
    let d = TempDir::new("copy-transfer-dec8400");
    ok(&["experiment", "copy-transfer", "--quick", "--machine", "dec8400", "--out", d.arg()]);
    let points = copy_transfer_points(&d.file("results.jsonl"));
    assert!(points.iter().all(|p| p.0 == "local" || p.0 == "fetch") && points.len() == 24, "{points:?}");
    assert!(!d.file("heatmap-get.png").exists());
    let e = TempDir::new("copy-transfer-refused");
    bad_input(
        &["experiment", "copy-transfer", "--quick", "--machine", "dec8400", "--variant", "get", "--out", e.arg()],
        &["get", "no one-sided remote access"],
    );
    bad_input(&["experiment", "copy-transfer", "--quick", "--param", "stride=2", "--out", e.arg()], &["stride"]);
    bad_input(&["experiment", "bisection", "em3d", "--quick"], &["--quick"]);
}

/// Issue 33: the 2-D FFT's MFlop/s against problem size per transpose variant, split as seed
/// 002's Figs. 15-17: total, local computation, transposes. 1 / total = 1 / local + 1 /
/// transposes up to the barriers between the phases.
#[test]
fn fft2d_experiment_splits_computation_and_transposes() {
    let d = TempDir::new("fft2d-t3d");
    let text = ok(&[
        "experiment",
        "fft2d",
        "--quick",
        "--machine",
        "t3d",
        "--variant",
        "deposit,pack-deposit",
        "--out",
        d.arg(),
    ]);
    let runs = json_lines(&d.file("results.jsonl"));
    assert_eq!(runs.len(), 2 * 2, "two variants x n = 16, 32");
    assert!(runs.iter().all(|l| l["check"]["ok"] == true && l["procs"] == 4), "{runs:?}");
    assert_plots(d.path(), &["total", "local", "transposes"]);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.file("experiment.json")).unwrap()).unwrap();
    for v in ["deposit", "pack-deposit"] {
        let pts = summary["points"][v].as_array().unwrap();
        assert_eq!(pts.iter().map(|p| p["n"].as_u64().unwrap()).collect::<Vec<_>>(), [16, 32]);
        for p in pts {
            let f = |k: &str| p[k].as_f64().unwrap();
            let parts = 1.0 / f("local_mflops") + 1.0 / f("transposes_mflops");
            assert!(1.0 / f("total_mflops") >= parts * 0.999 && 1.0 / f("total_mflops") <= parts * 1.5, "{p}");
        }
    }
    // The summary's text lists every point's three figures.
    for v in ["deposit", "pack-deposit"] {
        let line =
            text.lines().find(|l| l.trim_start().starts_with(&format!("{v}:"))).unwrap_or_else(|| panic!("{text}"));
        assert!(line.contains("16: ") && line.contains("32: "), "{line}");
    }
    bad_input(&["experiment", "fft2d", "--quick", "--param", "n=64", "--out", d.arg()], &["n"]);
}

/// Issue 18: the Blizzard applications on the three Blizzard machines. `--quick`: 5 apps x 2
/// variants x 3 machines x 1, 2, 4 processors; every run checks its answer; the table at 4
/// processors holds exactly the results file's cycles and speedups; a plot per app; `--resume`
/// reruns nothing.
#[test]
fn blizzard_experiment_quick_writes_a_table_of_the_results() {
    let d = TempDir::new("blizzard-quick");
    let text = ok(&["experiment", "blizzard", "--quick", "--out", d.arg()]);
    let records = json_lines(&d.file("results.jsonl"));
    assert_eq!(records.len(), 5 * 2 * 3 * 3, "apps x variants x machines x processor counts");
    for r in &records {
        assert_eq!(r["check"]["ok"], true, "{}", r["check"]["detail"]);
        assert!(r["counters"]["speedup"].as_f64().unwrap() > 0.0);
    }
    for app in ["dsmc", "barnes", "appbt", "moldyn", "em3d"] {
        assert_plots(d.path(), &[&format!("speedup-{app}")]);
    }
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.file("experiment.json")).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(d.file("experiment.txt")).unwrap(), text.split("  plot: ").next().unwrap());
    let table = summary["table"].as_array().unwrap();
    assert_eq!(table.len(), 5 * 2 * 3, "apps x variants x machines at 4 processors");
    for row in table {
        assert_eq!(row["procs"], 4);
        let rec = records
            .iter()
            .find(|r| {
                r["app"] == row["app"]
                    && r["variant"] == row["variant"]
                    && r["machine"] == row["machine"]
                    && r["procs"] == 4
            })
            .unwrap_or_else(|| panic!("no record for {row}"));
        assert_eq!(row["cycles"], rec["cycles"], "{row}");
        assert_eq!(row["speedup"], rec["counters"]["speedup"], "{row}");
        let cycles = format!("{:.0} (", rec["cycles"].as_f64().unwrap());
        assert!(text.contains(&cycles), "{cycles} not in {text}");
    }
    // The speedup curves are the records' too.
    let s = &summary["speedup"]["appbt"]["custom blizzard-e"];
    assert_eq!(s.as_array().unwrap().len(), 3);
    for pt in s.as_array().unwrap() {
        let rec = records
            .iter()
            .find(|r| {
                r["app"] == "appbt"
                    && r["variant"] == "custom"
                    && r["machine"] == "blizzard-e"
                    && r["procs"].as_f64() == pt[0].as_f64()
            })
            .unwrap();
        assert_eq!(pt[1].as_f64(), rec["counters"]["speedup"].as_f64());
    }
    assert!(!text.contains("missing"), "none of the five is missing: {text}");
    // Regression (issue 36, item 8): speedup plots had no ideal line.
    let texts = svg_texts(&std::fs::read_to_string(d.file("speedup-appbt.svg")).unwrap());
    assert!(texts.iter().any(|t| t == "ideal (speedup = processors)"), "{texts:?}");
    bad_input(&["experiment", "blizzard", "--quick", "--out", d.arg()], &["already holds results", "--resume"]);
    ok(&["experiment", "blizzard", "--quick", "--resume", "--out", d.arg()]);
    assert_eq!(json_lines(&d.file("results.jsonl")).len(), records.len(), "--resume ran nothing again");
    bad_input(&["experiment", "blizzard", "dsmc", "--quick"], &["leave the app out"]);
    bad_input(&["experiment", "blizzard", "--quick", "--variant", "sm"], &["stache and custom", "`sm`"]);
}

/// The Blizzard experiment on SMP nodes: `--set` reaches every machine, and the summary says so.
#[test]
fn blizzard_experiment_on_smp_nodes_says_so_and_runs_handlers_on_protocol_processors() {
    let d = TempDir::new("blizzard-smp");
    let set = ["--set", "node.procs_per_node=2", "--set", "node.tag_lock_cycles=20"];
    let text = ok(&[&["experiment", "blizzard", "--quick", "--out", d.arg()][..], &set].concat());
    assert!(text.contains("every machine with --set node.procs_per_node=2 --set node.tag_lock_cycles=20"), "{text}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.file("experiment.json")).unwrap()).unwrap();
    assert_eq!(summary["set"], serde_json::json!(["node.procs_per_node=2", "node.tag_lock_cycles=20"]));
    for r in json_lines(&d.file("results.jsonl")) {
        assert_eq!(r["check"]["ok"], true, "{}", r["check"]["detail"]);
        if r["procs"].as_u64() > Some(1) {
            assert!(r["counters"]["handler_cycles_protocol"].as_f64().unwrap() > 0.0, "{}", r["app"]);
        }
    }
}
