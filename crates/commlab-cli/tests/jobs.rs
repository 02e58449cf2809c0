//! `commlab run --jobs N`: variants run on N threads, and the output is the same as with
//! `--jobs 1` in every format, apart from the wall-clock fields.

use crate::common;
use common::*;

use serde_json::Value;

/// JSON lines without the wall-clock fields.
fn without_wall(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("a JSON line");
            let sim = v["sim"].as_object_mut().expect("sim");
            sim.remove("wall_seconds");
            sim.remove("events_per_second");
            v
        })
        .collect()
}

const EM3D: &[&str] =
    &["run", "em3d", "--variant", "all", "--procs", "8", "--param", "nodes=640", "--param", "iterations=2"];

#[test]
fn two_jobs_give_the_output_of_one() {
    let with = |jobs: &str, format: &[&str]| {
        let mut args = EM3D.to_vec();
        args.extend_from_slice(&["--jobs", jobs]);
        args.extend_from_slice(format);
        ok(&args)
    };
    let (one, two) = (without_wall(&with("1", &["--json"])), without_wall(&with("2", &["--json"])));
    assert_eq!(one.len(), 5, "five variants");
    let order: Vec<&str> = two.iter().map(|r| r["variant"].as_str().unwrap()).collect();
    assert_eq!(order, ["sm", "sm-pf", "mp-int", "mp-poll", "bulk"], "variant order");
    assert_eq!(one, two);
    // Text and CSV: the same apart from the simulator's speed line / columns.
    let strip = |t: String| t.lines().filter(|l| !l.contains("events in")).map(String::from).collect::<Vec<_>>();
    assert_eq!(strip(with("1", &[])), strip(with("2", &[])));
    let csv = |t: String| -> Vec<String> {
        let mut lines = t.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let keep: Vec<usize> =
            (0..header.len()).filter(|&i| !header[i].contains("wall") && !header[i].contains("per_second")).collect();
        lines
            .map(|l| keep.iter().map(|&i| l.split(',').nth(i).unwrap().to_string()).collect::<Vec<_>>().join(","))
            .collect()
    };
    assert_eq!(csv(with("1", &["--csv"])), csv(with("2", &["--csv"])));
}

#[test]
fn a_failing_variant_stops_the_output_where_one_job_would() {
    // A limit every variant reaches: the first variant's failure is the error, and nothing
    // after it is printed, with one job or two.
    for jobs in ["1", "2"] {
        let out =
            commlab().args(EM3D).args(["--jobs", jobs, "--json", "--set", "limits.max_events=1000"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "--jobs {jobs}: {stderr}");
        assert!(out.stdout.is_empty(), "--jobs {jobs}: nothing before the failing first variant");
        assert!(stderr.contains("em3d [sm]"), "--jobs {jobs}: the first variant's failure is reported: {stderr}");
    }
}

#[test]
fn jobs_must_be_at_least_one() {
    let out = commlab().args(["run", "am-latency", "--jobs", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
