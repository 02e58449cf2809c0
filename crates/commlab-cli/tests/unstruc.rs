//! `commlab run unstruc` from the command line: a bad mesh file is refused with exit status 2
//! and one line naming the file and the line; a small run of every variant succeeds.

use crate::common;
use common::*;

use serde_json::Value;

#[test]
fn a_malformed_mesh_file_names_file_and_line() {
    let dir = TempDir::new("unstruc-mesh");
    std::fs::create_dir_all(dir.path()).unwrap();
    let path = dir.file("bad.mesh");
    // Line 7: node 3 does not exist.
    std::fs::write(&path, "# two nodes\nnodes 2\n0 0 0\n1 0 0\nedges 2\n0 1\n0 3\n").unwrap();
    let p = path.to_str().unwrap();
    let param = format!("mesh={p}");
    bad_input(&["run", "unstruc", "--param", &param], &[p, ":7:", "`3` is not a node number"]);
}

#[test]
fn a_missing_mesh_file_is_named() {
    let dir = TempDir::new("unstruc-missing");
    let p = dir.file("none.mesh");
    let param = format!("mesh={}", p.to_str().unwrap());
    bad_input(&["run", "unstruc", "--param", &param], &[p.to_str().unwrap()]);
}

#[test]
fn every_variant_runs_and_checks() {
    let rows = json_lines_of(&ok(&[
        "run",
        "unstruc",
        "--variant",
        "all",
        "--procs",
        "8",
        "--json",
        "--param",
        "nodes=300",
        "--param",
        "iterations=2",
    ]));
    let got: Vec<&str> = rows.iter().map(|r| r["variant"].as_str().unwrap()).collect();
    assert_eq!(got, ["sm", "sm-pf", "mp-int", "mp-poll", "bulk"]);
    for r in &rows {
        assert_eq!(r["check"]["ok"], Value::Bool(true), "{r}");
        for c in ["lock_acquires", "app_messages", "values_sent", "mesh_edges", "edges_per_node"] {
            assert!(r["counters"][c].is_number(), "counter {c} in {r}");
        }
    }
}

fn json_lines_of(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}"))).collect()
}
