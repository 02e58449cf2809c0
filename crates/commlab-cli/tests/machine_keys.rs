//! Every machine key is declared once, in the key table (`commlab_sim::machine::keys`, issue
//! 30): each appears in `commlab machine show` with its unit and meaning, `--set` accepts
//! exactly the table's keys, and no source file keeps a list of machine keys of its own.

use crate::common;
use common::*;

use commlab_sim::machine::{keys, preset_names, KeyDoc, Kind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The keys `machine show` prints, each with the comment on its line.
fn shown(text: &str) -> BTreeMap<String, String> {
    let mut section = String::new();
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        let (k, rest) = line.split_once(" = ").expect("key = value");
        let key = if section == "costs" {
            "costs.*".to_string()
        } else if section.is_empty() {
            k.to_string()
        } else {
            format!("{section}.{k}")
        };
        out.insert(key, rest.split_once(" # ").map(|(_, c)| c.to_string()).unwrap_or_default());
    }
    out
}

/// A value `--set` may give the key: the first of the words its unit lists, else one of its kind.
fn sample(k: &KeyDoc) -> String {
    match k.kind {
        Kind::Text => k.unit.split('|').next().unwrap_or("x").to_string(),
        Kind::Whole => "2".to_string(),
        Kind::Number => "1.5".to_string(),
        Kind::Bool => "true".to_string(),
        _ => "[2, 2]".to_string(),
    }
}

#[test]
fn every_key_of_the_table_appears_in_machine_show_with_its_unit_and_meaning() {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for p in preset_names() {
        seen.extend(shown(&ok(&["machine", "show", p])));
    }
    // Keys no preset writes (defaults left out of the TOML): shown once `--set` gives them, on
    // some preset, alone or on an SMP node (node.tag_lock_cycles needs one).
    let missing: Vec<&KeyDoc> = keys().iter().filter(|k| !seen.contains_key(k.key)).collect();
    for k in missing {
        let set = format!("{}={}", k.key, sample(k));
        let found = preset_names().iter().find_map(|p| {
            [
                vec!["machine", "show", p, "--set", &set],
                vec!["machine", "show", p, "--set", &set, "--set", "node.procs_per_node=2"],
            ]
            .into_iter()
            .find_map(|args| {
                let out = commlab().args(&args).output().ok()?;
                out.status.success().then(|| shown(&String::from_utf8_lossy(&out.stdout)))
            })
            .and_then(|s| s.get(k.key).cloned())
        });
        let comment = found.unwrap_or_else(|| panic!("`{}` shown by no preset, nor with --set {set}", k.key));
        seen.insert(k.key.to_string(), comment);
    }
    for k in keys() {
        assert_eq!(seen.get(k.key), Some(&format!("[{}] {}", k.unit, k.doc)), "{}", k.key);
    }
    assert_eq!(seen.len(), keys().len(), "machine show prints a key the table lacks: {seen:?}");
}

#[test]
fn set_accepts_exactly_the_keys_of_the_table() {
    let line = bad_input(&["machine", "show", "alewife", "--set", "no.such_key=1"], &["unknown machine key"]);
    let listed = line.split("(valid keys: ").nth(1).expect("a list").trim_end_matches(')');
    let table: Vec<&str> = keys().iter().map(|k| k.key).collect();
    assert_eq!(listed.split(", ").collect::<Vec<_>>(), table);
    // node.procs_per_node is a key like any other: its type comes from the table (a machine
    // without [node] has no value whose type it could borrow).
    bad_input(
        &["machine", "show", "alewife", "--set", "node.procs_per_node=1.5"],
        &["`node.procs_per_node`", "whole number"],
    );
    bad_input(
        &["machine", "show", "alewife", "--set", "memory.snooping=1"],
        &["`memory.snooping`", "expected boolean"],
    );
    assert!(ok(&["machine", "show", "alewife", "--set", "node.procs_per_node=2"]).contains("procs_per_node = 2"));
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs" || e == "py") {
            out.push(p);
        }
    }
}

/// A list of machine keys kept by hand outside the table (as `POSITIVE_KEYS`, the scaled
/// overheads of the time check, or `--set`'s special case for `node.procs_per_node` were):
/// two or more string literals that are machine keys (dotted, or a key's own name in cycles)
/// on consecutive lines or one line. Tests may pick keys to probe; the sources may not.
#[test]
fn no_source_keeps_its_own_list_of_machine_keys() {
    // Top-level keys (`name`, `summary`) are ordinary words: only dotted keys count.
    let dotted: Vec<&str> = keys().iter().map(|k| k.key).filter(|k| k.contains('.') && !k.ends_with('*')).collect();
    let names: Vec<&str> =
        dotted.iter().filter_map(|k| k.rsplit('.').next()).filter(|n| n.ends_with("_cycles")).collect();
    let is_key = |lit: &str| dotted.contains(&lit) || names.contains(&lit);
    let mut files = Vec::new();
    for crate_dir in ["commlab-sim", "commlab-apps", "commlab-cli", "commlab-api"] {
        let src = repo().join("crates").join(crate_dir).join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    sources(&repo().join("python/commlab"), &mut files);
    let mut found = Vec::new();
    // Lists that choose keys rather than copy a property of every key.
    const CHOSEN: &[(&str, &str)] =
        &[("characterize/machine.rs", "the keys `characterize machine` measured on the host")];
    let chosen = |f: &Path| CHOSEN.iter().any(|(c, _)| f.ends_with(c));
    for f in files.iter().filter(|f| !f.ends_with("machine/spec.rs") && !chosen(f)) {
        let text = std::fs::read_to_string(f).unwrap();
        let mut run = 0;
        for (i, line) in text.lines().enumerate() {
            let lits: Vec<&str> = line.split('"').skip(1).step_by(2).filter(|l| is_key(l)).collect();
            let bare = line.trim().trim_end_matches(',').trim_matches('"');
            run = if lits.len() == 1 && is_key(bare) { run + 1 } else { 0 };
            if lits.len() >= 2 && line.contains("\", \"") || run >= 2 {
                found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "machine keys listed by hand (derive them from machine::keys()):\n{}", found.join("\n"));
}

/// Regression: `sweep --vary` took a key's type from the machine's value, so a whole-cycles key
/// the machine leaves at its default (absent from its TOML) was swept as 0.0, 5.0 and refused.
#[test]
fn sweep_varies_a_key_the_machine_leaves_at_its_default_with_the_tables_type() {
    let dir = TempDir::new("sweep-absent-key");
    let out = ok(&[
        "sweep",
        "am-latency",
        "--vary",
        "messaging.flow_buffer_cycles=0,5",
        "--variant",
        "mp-int",
        "--procs",
        "2",
        "--param",
        "rounds=2",
        "--out",
        dir.arg(),
    ]);
    assert!(out.contains("2 runs"), "{out}");
    let rows = json_lines(&dir.file("results.jsonl"));
    let mut varied: Vec<String> = rows.iter().map(|r| r["vary"]["messaging.flow_buffer_cycles"].to_string()).collect();
    varied.sort();
    assert_eq!(varied, ["0", "5"], "whole numbers, as the key table declares");
}

#[test]
fn processors_sharing_routers_are_refused_where_they_cannot_be() {
    // The t3d's torus has two processors on every router: an odd count has no place.
    bad_input(
        &["run", "em3d", "--machine", "t3d", "--procs", "3"],
        &["--procs 3", "multiple of 2, got 3 (nearest valid: 2 or 4)"],
    );
    bad_input(
        &["run", "em3d", "--machine", "alewife", "--set", "network.procs_per_router=2"],
        &["network.procs_per_router", "only a torus"],
    );
    bad_input(&["run", "em3d", "--machine", "t3e", "--set", "network.procs_per_router=0"], &["at least 1, got 0"]);
}
