//! Issue 19, defect 10: `commlab run --stats per-node=FILE --stats per-link=FILE` writes the
//! statistics behind the means, and they agree with them.

use crate::common;

use common::{bad_input, json_lines, ok, TempDir};
use serde_json::Value;

#[test]
fn per_node_and_per_link_statistics_agree_with_the_run() {
    let d = TempDir::new("stats");
    std::fs::create_dir_all(d.path()).unwrap();
    let (nodes, links) = (d.file("nodes.jsonl"), d.file("links.csv"));
    let out = ok(&[
        "run",
        "em3d",
        "--variant",
        "mp-int",
        "--procs",
        "8",
        "--param",
        "nodes=400",
        "--param",
        "iterations=2",
        "--json",
        "--stats",
        &format!("per-node={}", nodes.display()),
        "--stats",
        &format!("per-link={}", links.display()),
    ]);
    let run: Value = serde_json::from_str(out.trim()).unwrap();
    let rows = json_lines(&nodes);
    assert_eq!(rows.len(), 8, "one row per processor");
    for cat in ["compute", "memory_ni_wait", "message_overhead", "synchronization"] {
        let mean = rows.iter().map(|r| r[cat].as_f64().unwrap()).sum::<f64>() / 8.0;
        let want = run["breakdown"][cat].as_f64().unwrap();
        assert!((mean - want).abs() <= 1e-6 * want.max(1.0), "{cat}: rows mean {mean}, run {want}");
    }
    let sent: u64 = rows.iter().map(|r| r["messages_sent"].as_u64().unwrap()).sum();
    let received: u64 = rows.iter().map(|r| r["messages_received"].as_u64().unwrap()).sum();
    assert_eq!(sent as f64, run["counters"]["messages"].as_f64().unwrap());
    assert_eq!(sent, received, "every message sent is received");

    let text = std::fs::read_to_string(&links).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("app,variant,link,kind,from,to,utilization,bytes"));
    let total: u64 = run["volume_bytes"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    let injected: u64 = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c[3] == "injection")
        .map(|c| c[7].parse::<u64>().unwrap())
        .sum();
    assert!(injected > 0 && injected <= total, "{injected} bytes injected after timing began, {total} counted");
}

#[test]
fn a_bad_stats_request_is_one_line() {
    bad_input(
        &["run", "am-latency", "--stats", "per-router=x.jsonl"],
        &["--stats `per-router`", "per-node", "per-link", "latency"],
    );
    bad_input(&["run", "am-latency", "--stats", "nodes.jsonl"], &["per-node=FILE"]);
}

#[test]
fn two_outputs_on_one_file_are_refused_before_the_run() {
    // Regression (issue 36): `--json --out same.jsonl --stats per-node=same.jsonl` exited 0
    // with the per-node rows only; the run records were lost.
    let d = TempDir::new("same-file");
    std::fs::create_dir_all(d.path()).unwrap();
    let same = d.file("same.jsonl");
    let same = same.to_str().unwrap();
    let other = d.file("./sub/../same.jsonl");
    let other = other.to_str().unwrap();
    for args in [
        vec!["run", "am-latency", "--json", "--out", same, "--stats", &format!("per-node={same}")],
        vec!["run", "am-latency", "--csv", "--out", same, "--stats", &format!("per-link={other}")],
        vec!["run", "am-latency", "--stats", &format!("per-node={same}"), "--stats", &format!("per-link={same}")],
    ] {
        bad_input(&args, &["same file", same]);
        assert!(!d.file("same.jsonl").exists(), "nothing written: {args:?}");
    }
}

#[test]
fn an_unwritable_stats_or_out_file_is_found_before_the_run() {
    // Regression (issue 36): an unwritable --stats path was found after the run; `--out
    // /proc/version` said "Input/output error" without naming the file.
    let started = std::time::Instant::now();
    bad_input(
        &["run", "em3d", "--param", "iterations=200", "--stats", "per-node=/proc/version"],
        &["--stats per-node", "/proc/version"],
    );
    bad_input(&["run", "am-latency", "--json", "--out", "/proc/version"], &["--out", "/proc/version"]);
    bad_input(
        &["run", "am-latency", "--stats", "per-link=/proc/no/such.csv"],
        &["--stats per-link", "/proc/no/such.csv"],
    );
    assert!(started.elapsed().as_secs() < 10, "refused before running the 200 iterations");
}

/// Issue 37, item 1: `--stats latency=FILE` records distributions that agree with the run's
/// totals: as many miss stalls as misses and as many one-way latencies as messages, and on a
/// machine where nothing interrupts a stalled processor (dash: a full-map directory, no
/// software traps) the stalls and NI waits sum to the memory-and-NI wait the breakdown charges.
#[test]
fn latency_distributions_agree_with_the_run() {
    let d = TempDir::new("latency");
    std::fs::create_dir_all(d.path()).unwrap();
    let (lat, nodes, csv) = (d.file("lat.jsonl"), d.file("nodes.jsonl"), d.file("lat.csv"));
    let args = |extra: &[String]| {
        let mut a: Vec<String> = ["run", "em3d", "--machine", "dash", "--variant", "sm,mp-poll", "--procs", "8"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(["--param", "nodes=400", "--param", "iterations=3", "--json"].iter().map(|s| s.to_string()));
        a.extend(extra.iter().cloned());
        a
    };
    let with = args(&[
        "--stats".into(),
        format!("latency={}", lat.display()),
        "--stats".into(),
        format!("latency={}", csv.display()),
        "--stats".into(),
        format!("per-node={}", nodes.display()),
    ]);
    let out = ok(&with.iter().map(String::as_str).collect::<Vec<_>>());
    let runs: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let rows = json_lines(&lat);
    let per_node = json_lines(&nodes);
    assert_eq!(runs.len(), 2);
    for run in &runs {
        let v = run["variant"].as_str().unwrap();
        let mine: Vec<&Value> = rows.iter().filter(|r| r["variant"] == v).collect();
        let total = |metric: &str, skip: &str| -> (u64, f64) {
            mine.iter()
                .filter(|r| r["metric"] == metric && r["class"] != skip)
                .fold((0, 0.0), |(c, s), r| (c + r["count"].as_u64().unwrap(), s + r["sum"].as_f64().unwrap()))
        };
        // Misses inside synchronization are charged to it, not to memory waits.
        let (_, stalled) = total("miss", "sync");
        let (misses, _) = total("miss", "none");
        let (messages, _) = total("message", "none");
        let (_, ni_waited) = total("ni_wait", "none");
        assert_eq!(misses as f64, run["counters"]["cache_misses"].as_f64().unwrap(), "{v}: one stall per miss");
        assert_eq!(messages as f64, run["counters"]["messages"].as_f64().unwrap(), "{v}: one latency per message");
        let charged: f64 =
            per_node.iter().filter(|r| r["variant"] == v).map(|r| r["memory_ni_wait"].as_f64().unwrap()).sum();
        let waited = stalled + ni_waited;
        assert!((waited - charged).abs() <= 1e-9 * charged.max(1.0), "{v}: waits {waited} vs breakdown {charged}");
        for r in &mine {
            let f = |k: &str| r[k].as_f64().unwrap();
            assert!(f("min") <= f("p50") && f("p50") <= f("p90") && f("p90") <= f("p99") && f("p99") <= f("max"));
            let buckets = r["buckets"].as_array().unwrap();
            let in_buckets: u64 = buckets.iter().map(|b| b[2].as_u64().unwrap()).sum();
            assert_eq!(in_buckets, r["count"].as_u64().unwrap(), "buckets hold every sample: {r}");
        }
        // The record carries the same distributions.
        assert_eq!(run["latencies"].as_array().unwrap().len(), mine.len());
    }
    assert!(rows.iter().any(|r| r["metric"] == "miss" && r["class"] == "remote"), "em3d sm misses remotely");
    assert!(rows.iter().any(|r| r["metric"] == "message" && r["class"] == "active"), "em3d mp-poll sends");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().next(), Some("app,variant,metric,class,count,sum,mean,min,p50,p90,p99,max"));
    assert_eq!(text.lines().count(), rows.len() + 1);

    // Recording changes nothing it measures: the same runs without it, the same cycles and
    // events, and no `latencies` in the record.
    let without = args(&[]);
    let plain = ok(&without.iter().map(String::as_str).collect::<Vec<_>>());
    for (a, b) in runs.iter().zip(plain.lines().map(|l| serde_json::from_str::<Value>(l).unwrap())) {
        assert_eq!(a["cycles"], b["cycles"]);
        assert_eq!(a["sim"]["events"], b["sim"]["events"]);
        assert_eq!(a["breakdown"], b["breakdown"]);
        assert!(b.get("latencies").is_none());
    }
}

/// Issue 37, item 2: `--stats interval=CYCLES,FILE` cuts the run into stretches whose
/// processor breakdowns sum to each processor's totals and whose traffic sums to the run's
/// volume; `commlab plot timeline` draws them.
#[test]
fn interval_statistics_sum_to_the_run_and_plot() {
    let d = TempDir::new("interval");
    std::fs::create_dir_all(d.path()).unwrap();
    let (iv, csv, nodes) = (d.file("iv.jsonl"), d.file("iv.csv"), d.file("nodes.jsonl"));
    let out = ok(&[
        "run",
        "em3d",
        "--machine",
        "alewife",
        "--variant",
        "sm,mp-int",
        "--procs",
        "8",
        "--param",
        "nodes=400",
        "--param",
        "iterations=3",
        "--json",
        "--stats",
        &format!("interval=2000,{}", iv.display()),
        "--stats",
        &format!("interval=2000,{}", csv.display()),
        "--stats",
        &format!("per-node={}", nodes.display()),
    ]);
    let runs: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let rows = json_lines(&iv);
    let per_node = json_lines(&nodes);
    for run in &runs {
        let v = run["variant"].as_str().unwrap();
        let mine: Vec<&Value> = rows.iter().filter(|r| r["variant"] == v).collect();
        assert!(mine.len() >= 10, "{v}: {} stretches of 2000 cycles", mine.len());
        for (k, r) in mine.iter().enumerate() {
            assert_eq!(r["interval"].as_u64(), Some(k as u64), "in order");
            assert_eq!(r["start"].as_f64(), Some(2000.0 * k as f64));
        }
        for cat in ["compute", "memory_ni_wait", "message_overhead", "synchronization"] {
            for p in 0..8 {
                let summed: f64 = mine.iter().map(|r| r["breakdown"][cat][p].as_f64().unwrap()).sum();
                let row = per_node.iter().find(|r| r["variant"] == v && r["proc"] == p).unwrap();
                let total = row[cat].as_f64().unwrap();
                assert!((summed - total).abs() <= 1e-6 * total.max(1.0), "{v} p{p} {cat}: {summed} vs {total}");
            }
            // No stretch holds more than its length per processor.
            for r in &mine {
                let t: f64 = ["compute", "memory_ni_wait", "message_overhead", "synchronization"]
                    .iter()
                    .map(|c| r["breakdown"][c][0].as_f64().unwrap())
                    .sum();
                assert!(t <= 2000.0 + 1e-6, "{v}: {t} cycles in a 2000-cycle stretch");
            }
        }
        for (class, bytes) in run["volume_bytes"].as_object().unwrap() {
            let summed: u64 = mine.iter().map(|r| r["traffic"][class].as_u64().unwrap()).sum();
            assert_eq!(summed, bytes.as_u64().unwrap(), "{v} {class}: traffic over the stretches");
        }
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("app,variant,interval,start,end,compute,memory_ni_wait,"));
    assert_eq!(text.lines().count(), rows.len() + 1);

    let plots = ok(&["plot", "timeline", iv.to_str().unwrap(), "--out", d.file("plots").to_str().unwrap()]);
    let paths: Vec<&str> = plots.lines().collect();
    assert_eq!(paths.len(), 8, "two charts (PNG and SVG) per run: {plots}");
    for p in &paths {
        let bytes = std::fs::read(p).unwrap();
        if p.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{p}");
            let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("PNG header");
            let mut buf = vec![0; reader.output_buffer_size()];
            let frame = reader.next_frame(&mut buf).expect("the PNG decodes");
            assert!(frame.width > 100 && frame.height > 100);
        }
    }
    let svg = std::fs::read_to_string(paths.iter().find(|p| p.contains("breakdown") && p.ends_with(".svg")).unwrap())
        .unwrap();
    for label in ["compute", "memory & NI wait", "synchronization"] {
        assert!(common::svg_texts(&svg).iter().any(|t| t == label), "legend `{label}` in the timeline");
    }
    bad_input(&["run", "am-latency", "--stats", "interval=0,x.jsonl"], &["interval", "at least 1 cycle"]);
    bad_input(&["run", "am-latency", "--stats", "interval=x.jsonl"], &["interval=CYCLES,FILE"]);
    // One run keeps one set of stretches: two lengths would give one of the files the other's.
    bad_input(
        &["run", "am-latency", "--stats", "interval=100,a.jsonl", "--stats", "interval=200,b.jsonl"],
        &["--stats interval", "100", "200"],
    );
    // Natively there are no latency distributions or stretches to write.
    for kind in ["latency=l.jsonl", "interval=100,i.jsonl"] {
        bad_input(&["run", "am-latency", "--machine", "host", "--stats", kind], &["--machine host", "--stats"]);
    }
}

/// Issue 37, item 4: `sweep --stats KIND` keeps every run's rows in a file named by its point,
/// and they agree with the run's record; a resumed sweep writes the files of the runs it redoes;
/// an experiment passes `--stats` through.
#[test]
fn sweep_statistics_are_kept_per_point_and_agree_with_each_record() {
    let d = TempDir::new("sweep-stats");
    std::fs::create_dir_all(d.path()).unwrap();
    let out = d.file("sw");
    let sweep = |extra: &[&str]| {
        let mut a = vec![
            "sweep",
            "em3d",
            "--procs",
            "4",
            "--param",
            "nodes=200",
            "--param",
            "iterations=2",
            "--vary",
            "remote=0.1,0.5",
            "--variant",
            "sm,mp-int",
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--stats",
            "latency",
            "--stats",
            "per-node",
            "--stats",
            "interval=1500",
        ];
        a.extend_from_slice(extra);
        ok(&a)
    };
    sweep(&[]);
    let check = |out: &std::path::Path| {
        let records = json_lines(&out.join("results.jsonl"));
        assert_eq!(records.len(), 4);
        for r in &records {
            let (p, v) = (r["point"].as_u64().unwrap(), r["variant"].as_str().unwrap());
            let file = |kind: &str| out.join(format!("stats/{kind}/p{p:05}.{v}.jsonl"));
            // Latency rows: the record's distributions, with the point and its values.
            let lat = json_lines(&file("latency"));
            assert!(!lat.is_empty(), "{p} {v}: latency rows");
            assert_eq!(lat.len(), r["latencies"].as_array().unwrap().len());
            for row in &lat {
                assert_eq!((row["point"].as_u64(), &row["vary"]), (Some(p), &r["vary"]));
                let rec = r["latencies"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|l| l["metric"] == row["metric"] && l["class"] == row["class"])
                    .unwrap();
                assert_eq!(rec["count"], row["count"]);
            }
            // Per-node rows: one per processor, their mean the record's breakdown.
            let nodes = json_lines(&file("per-node"));
            assert_eq!(nodes.len(), 4);
            // Intervals: each category summed over the stretches is the processors' total.
            let iv = json_lines(&file("interval"));
            assert!(iv.len() >= 2, "{p} {v}: stretches of 1500 cycles");
            for cat in ["compute", "memory_ni_wait", "message_overhead", "synchronization"] {
                let over_time: f64 = iv.iter().map(|row| row["total"][cat].as_f64().unwrap()).sum();
                let over_procs: f64 = nodes.iter().map(|n| n[cat].as_f64().unwrap()).sum();
                let want = r["breakdown"][cat].as_f64().unwrap() * 4.0;
                assert!(
                    (over_time - over_procs).abs() <= 1e-6 * want.max(1.0),
                    "{p} {v} {cat}: {over_time} vs {over_procs}"
                );
                assert!((over_procs - want).abs() <= 1e-6 * want.max(1.0), "{p} {v} {cat}: {over_procs} vs {want}");
            }
        }
    };
    check(&out);
    // Resume after losing one run (its record and its files): it is redone, files and all.
    let results = out.join("results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let kept: Vec<&str> = text.lines().collect();
    let last: Value = serde_json::from_str(kept[3]).unwrap();
    let (p, v) = (last["point"].as_u64().unwrap(), last["variant"].as_str().unwrap().to_string());
    std::fs::write(&results, kept[..3].join("\n") + "\n").unwrap();
    for kind in ["latency", "per-node", "interval"] {
        std::fs::remove_file(out.join(format!("stats/{kind}/p{p:05}.{v}.jsonl"))).unwrap();
    }
    sweep(&["--resume"]);
    check(&out);
}

/// `--stats` on a sweep: bad input names itself before anything runs, and an experiment passes
/// it through to each of its sweeps.
#[test]
fn sweep_statistics_refuse_bad_input_and_pass_through_experiments() {
    let d = TempDir::new("sweep-stats-exp");
    std::fs::create_dir_all(d.path()).unwrap();
    // Bad input names itself before anything runs.
    bad_input(
        &[
            "sweep",
            "em3d",
            "--vary",
            "remote=0.1,0.5",
            "--stats",
            "latency=l.jsonl",
            "--out",
            d.file("bad").to_str().unwrap(),
        ],
        &["latency=l.jsonl", "names its statistics files itself"],
    );
    assert!(!d.file("bad").join("results.jsonl").exists());
    bad_input(&["sweep", "em3d", "--vary", "remote=0.1,0.5", "--stats", "interval=0"], &["at least 1 cycle"]);
    // An experiment passes it through to its sweep.
    let exp = d.file("exp");
    ok(&[
        "experiment",
        "latency",
        "em3d",
        "--procs",
        "4",
        "--param",
        "nodes=200",
        "--param",
        "iterations=2",
        "--points",
        "2",
        "--variant",
        "mp-int",
        "--stats",
        "per-link",
        "--out",
        exp.to_str().unwrap(),
        "--no-marks",
    ]);
    // Its two sweeps (the clock scaled, DIR/delay/ a delay added) each keep their own.
    for dir in [exp.clone(), exp.join("delay")] {
        let files: Vec<_> =
            walk(&dir.join("stats")).into_iter().filter(|f| f.to_string_lossy().contains("per-link/p")).collect();
        assert_eq!(files.len(), 2, "one per-link file per point: {files:?}");
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
