//! The memory estimate that refuses runs before they are built errs high: for em3d, iccg,
//! moldyn and barrier, the estimate `run --max-memory 1` reports is at least the peak resident
//! size of the same run (every variant, one after another), at small sizes here; the table
//! from 64 to 16384 processors is in ARCHITECTURE.md. Linux only (peak RSS from `wait4`).

#![cfg(target_os = "linux")]

mod common;
use common::*;

/// The estimate in bytes from a refusal's "needs an estimated 35.5 MiB of memory", less the
/// rounding of its one decimal.
fn estimate(args: &[&str]) -> f64 {
    let mut all = args.to_vec();
    all.extend(["--max-memory", "1"]);
    let line = bad_input(&all, &["needs an estimated"]);
    let rest = &line[line.find("needs an estimated ").unwrap() + "needs an estimated ".len()..];
    let mut words = rest.split_whitespace();
    let value: f64 = words.next().unwrap().parse().unwrap();
    let unit = match words.next().unwrap() {
        "bytes" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        u => panic!("unit {u} in {line}"),
    };
    (value - 0.05) * unit
}

/// Peak resident bytes of `commlab args` (which must succeed).
#[allow(clippy::zombie_processes)] // reaped by `wait4`, which also gives its peak RSS
fn peak_rss(args: &[&str]) -> f64 {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("commlab"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("commlab starts");
    let mut status = 0;
    // SAFETY: zeroed rusage is valid; wait4 fills it and the status for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "commlab {args:?}: status {status}");
    usage.ru_maxrss as f64 * 1024.0
}

#[test]
fn the_estimate_is_at_least_the_peak_resident_size() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("barrier", "64", &["--param", "barriers=1"]),
        ("barrier", "256", &["--param", "barriers=1"]),
        ("em3d", "64", &["--param", "iterations=1"]),
        ("em3d", "256", &["--param", "iterations=1"]),
        // A procs x procs table made em3d's peak 883 MB here against an estimate of 465 MiB.
        ("em3d", "4096", &["--param", "iterations=1", "--param", "nodes=16384"]),
        ("iccg", "64", &[]),
        ("iccg", "256", &["--param", "fe_elements=48"]),
        // The generated matrix's size used to count nothing.
        ("iccg", "32", &["--param", "fe_elements=200", "--variant", "sm"]),
        ("moldyn", "64", &["--param", "iterations=1"]),
        ("moldyn", "256", &["--param", "iterations=1"]),
    ];
    let mut table = String::new();
    for (app, procs, extra) in cases {
        let mut args = vec!["run", app, "--procs", procs, "--jobs", "1"];
        args.extend(extra.iter());
        if !extra.contains(&"--variant") {
            args.extend(["--variant", "all"]);
        }
        let (est, peak) = (estimate(&args), peak_rss(&args));
        table.push_str(&format!(
            "{app} {procs}: estimate {:.1} MiB, peak {:.1} MiB\n",
            est / 1048576.0,
            peak / 1048576.0
        ));
        assert!(est >= peak, "{app} on {procs} processors: the estimate is below the peak RSS\n{table}");
    }
    eprintln!("{table}");
}
