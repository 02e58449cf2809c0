//! ARCHITECTURE.md is a map of the source tree, and this test keeps it one: every module of
//! every crate (each `src/**/*.rs` file, directory modules by their `mod.rs`, and the Python
//! package's `python/commlab/*.py`) is named in it as a backticked path from the crate's
//! directory (`commlab-sim/src/mem/protocol.rs`, `python/src/lib.rs`), every such path it names
//! exists, every test it names as `FILE::fn_name` exists, every invariant names the test that
//! checks it, and the simulator's layers are drawn in the order `tests/module_graph.rs` checks.
//!
//! When files are added, moved or removed, the failure lists exactly which paths the map lacks
//! and which it names that are gone.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn map_text() -> String {
    fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md at the workspace root")
}

/// The crate directories, as the map names them, and where each is.
fn crate_dirs() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.push(("python".to_string(), root().join("python")));
    out.sort();
    out
}

/// Every file below `dir` whose name ends in `ext`, as paths relative to `base`.
fn files(dir: &Path, ext: &str, base: &Path, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, ext, base, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path.strip_prefix(base).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Every module in the tree, named as the map names it.
fn modules() -> BTreeSet<String> {
    let mut out = Vec::new();
    for (name, dir) in crate_dirs() {
        let mut rel = Vec::new();
        files(&dir.join("src"), "rs", &dir, &mut rel);
        if name == "python" {
            files(&dir.join("commlab"), "py", &dir, &mut rel);
        }
        out.extend(rel.into_iter().map(|r| format!("{name}/{r}")));
    }
    out.into_iter().collect()
}

/// The text of every backticked span of `text`.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// A backticked span that names a path of a crate (`commlab-sim/src/...`, `python/...`, also
/// with a leading `crates/`), split into the path and, after `::`, the item it names (a test).
fn crate_path<'a>(span: &'a str, crates: &[String]) -> Option<(&'a str, Option<&'a str>)> {
    let span = span.strip_prefix("crates/").unwrap_or(span);
    let first = span.split('/').next()?;
    if !span.contains('/') || !crates.iter().any(|c| c == first) || span.contains(char::is_whitespace) {
        return None;
    }
    match span.split_once("::") {
        Some((path, item)) => Some((path, Some(item))),
        None => Some((span, None)),
    }
}

/// Where a crate path of the map is in the tree.
fn resolve(path: &str) -> PathBuf {
    if path.starts_with("python/") {
        root().join(path)
    } else {
        root().join("crates").join(path)
    }
}

fn crate_names() -> Vec<String> {
    crate_dirs().into_iter().map(|(n, _)| n).collect()
}

/// The part of the map under the heading `## {title}`, up to the next `## ` heading.
fn section<'a>(text: &'a str, title: &str) -> &'a str {
    let head = format!("\n## {title}\n");
    let start = text.find(&head).unwrap_or_else(|| panic!("ARCHITECTURE.md has no `## {title}` section")) + head.len();
    let rest = &text[start..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// One item a line, or `(none)`.
fn listing<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return "(none)".to_string();
    }
    items.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join("\n  ")
}

#[test]
fn the_map_names_every_module_and_every_path_it_names_exists() {
    let text = map_text();
    let crates = crate_names();
    let named: BTreeSet<String> =
        backticked(&text).into_iter().filter_map(|s| crate_path(s, &crates)).map(|(p, _)| p.to_string()).collect();
    let missing: Vec<String> = modules().into_iter().filter(|m| !named.contains(m)).collect();
    let stale: Vec<&String> = named.iter().filter(|p| !resolve(p).exists()).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "ARCHITECTURE.md is out of step with the tree.\n\
         Modules it does not name (add a line for each, as a backticked path):\n  {}\n\
         Paths it names that do not exist (moved or removed: update or drop):\n  {}",
        listing(&missing),
        listing(&stale)
    );
}

#[test]
fn every_test_the_map_names_exists() {
    let text = map_text();
    let crates = crate_names();
    let mut bad = Vec::new();
    let mut checked = 0;
    for (path, item) in backticked(&text).into_iter().filter_map(|s| crate_path(s, &crates)) {
        let Some(item) = item else { continue };
        let name = item.rsplit("::").next().unwrap();
        checked += 1;
        let defines = |src: &str| {
            if path.ends_with(".py") {
                src.contains(&format!("def {name}("))
            } else {
                src.contains(&format!("fn {name}(")) || src.contains(&format!("fn {name}<"))
            }
        };
        match fs::read_to_string(resolve(path)) {
            Err(_) => bad.push(format!("{path}::{item}: no such file")),
            Ok(src) if !defines(&src) => bad.push(format!("{path}::{item}: no `{name}` defined in the file")),
            Ok(_) => {}
        }
    }
    assert!(checked >= 10, "the map names only {checked} tests as FILE::fn");
    assert!(bad.is_empty(), "tests ARCHITECTURE.md names that do not exist:\n  {}", bad.join("\n  "));
}

#[test]
fn every_invariant_names_the_test_that_checks_it() {
    let text = map_text();
    let crates = crate_names();
    let invariants = section(&text, "Invariants");
    let bullets: Vec<&str> = invariants.split("\n- ").skip(1).collect();
    assert!(bullets.len() >= 10, "the Invariants section lists {} invariants", bullets.len());
    let untested: Vec<String> = bullets
        .iter()
        .filter(|b| !backticked(b).into_iter().filter_map(|s| crate_path(s, &crates)).any(|(_, item)| item.is_some()))
        .map(|b| b.lines().next().unwrap_or("").to_string())
        .collect();
    assert!(untested.is_empty(), "invariants that name no test as `FILE::fn_name`:\n  {}", untested.join("\n  "));
}

#[test]
fn the_map_draws_the_simulator_layers_that_module_graph_checks() {
    let graph = fs::read_to_string(root().join("crates/commlab-cli/tests/module_graph.rs")).unwrap();
    let start = graph.find("const SIM_LAYERS").expect("SIM_LAYERS in module_graph.rs");
    let line = &graph[start..start + graph[start..].find(';').unwrap()];
    let layers: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    assert!(layers.len() >= 5, "SIM_LAYERS read as {layers:?}");
    let want = format!("layers, bottom to top: {}", layers.join(" < "));
    assert!(
        map_text().replace('\n', " ").contains(&want),
        "ARCHITECTURE.md must draw commlab-sim's layers as module_graph.rs's SIM_LAYERS has them: `{want}`"
    );
}

/// Each Rust source file of the given crates (as the map names it) with its code outside
/// `#[cfg(test)]` (everything before the first one) and without comment lines.
fn library_code(crates: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, dir) in crate_dirs().into_iter().filter(|(n, _)| crates.contains(&n.as_str())) {
        let mut rel = Vec::new();
        files(&dir.join("src"), "rs", &dir, &mut rel);
        for r in rel {
            let text = fs::read_to_string(dir.join(&r)).unwrap();
            let code = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
            let code: Vec<&str> = code.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            out.push((format!("{name}/{r}"), code.join("\n")));
        }
    }
    out.sort();
    out
}

/// The files of `crates` whose code (not comments, not tests) contains any of `needles`.
fn files_using(crates: &[&str], needles: &[&str]) -> BTreeSet<String> {
    library_code(crates)
        .into_iter()
        .filter(|(_, code)| needles.iter().any(|n| code.contains(n)))
        .map(|(f, _)| f)
        .collect()
}

#[test]
fn unsafe_code_is_only_in_the_files_the_map_lists() {
    let text = map_text();
    let crates = crate_names();
    let invariants = section(&text, "Invariants");
    let bullet = invariants.split("\n- ").find(|b| b.starts_with("**Unsafe")).expect("an **Unsafe** invariant");
    let listed: BTreeSet<String> = backticked(bullet)
        .into_iter()
        .filter_map(|s| crate_path(s, &crates))
        .filter(|(p, item)| item.is_none() && p.contains("/src/"))
        .map(|(p, _)| p.to_string())
        .collect();
    let all: Vec<&str> = crates.iter().map(|s| s.as_str()).collect();
    let found = files_using(&all, &["unsafe "]);
    let unlisted: Vec<&String> = found.difference(&listed).collect();
    let stale: Vec<&String> = listed.difference(&found).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "the **Unsafe** invariant of ARCHITECTURE.md is out of step with the code.\n\
         Files with `unsafe` it does not list:\n  {}\nFiles it lists with no `unsafe`:\n  {}",
        listing(&unlisted),
        listing(&stale)
    );
}

#[test]
fn the_simulator_reads_the_wall_clock_only_for_wall_seconds() {
    let found = files_using(&["commlab-sim"], &["Instant::now", "SystemTime", "std::time::Instant"]);
    let want: BTreeSet<String> = ["commlab-sim/src/engine/run.rs".to_string()].into();
    assert_eq!(found, want, "commlab-sim reads the wall clock outside its one place (RunStats::wall_seconds)");
    let engine = fs::read_to_string(root().join("crates/commlab-sim/src/engine/run.rs")).unwrap();
    assert_eq!(engine.matches("Instant::now").count(), 1, "engine/run.rs reads the wall clock once per run");
}

/// Where the simulator may still turn cycles into picoseconds: quantities the program or the
/// user gives in cycles (a computation, message work, a trace window, a sampling interval).
/// Machine costs arrive in picoseconds from `machine/build.rs`.
const PROGRAM_CYCLES: [(&str, &str); 5] = [
    ("commlab-sim/src/engine/node.rs", "compute"),
    ("commlab-sim/src/engine/node.rs", "message_work"),
    ("commlab-sim/src/msg/mod.rs", "compute"),
    ("commlab-sim/src/engine/world.rs", "trace_window_ps"),
    ("commlab-sim/src/engine/world.rs", "new"),
];

#[test]
fn machine_costs_reach_the_simulator_in_picoseconds() {
    let mut found = BTreeSet::new();
    for (file, code) in library_code(&["commlab-sim"]) {
        let simulating = ["engine/", "msg/", "net/", "mem/"].iter().any(|d| file.contains(&format!("/src/{d}")));
        if !simulating {
            continue;
        }
        let mut function = String::new();
        for line in code.lines() {
            if let Some(rest) = line
                .split("fn ")
                .nth(1)
                .filter(|_| line.trim_start().starts_with("pub") || line.trim_start().starts_with("fn"))
            {
                function = rest.split(['(', '<']).next().unwrap_or("").to_string();
            }
            if line.contains("cycles_to_ps(") {
                found.insert((file.clone(), function.clone()));
            }
        }
    }
    let allowed: BTreeSet<(String, String)> =
        PROGRAM_CYCLES.iter().map(|(f, n)| (f.to_string(), n.to_string())).collect();
    let extra: Vec<String> = found.difference(&allowed).map(|(f, n)| format!("{f}: fn {n}")).collect();
    assert!(
        extra.is_empty(),
        "a machine cost converted from cycles in the simulator; convert it once in machine/build.rs:\n  {}",
        extra.join("\n  ")
    );
    assert!(
        found.contains(&("commlab-sim/src/engine/node.rs".to_string(), "compute".to_string())),
        "the scan finds a known conversion"
    );
}

#[test]
fn only_the_cli_writes_files_and_prints() {
    let libs = ["commlab-api", "commlab-sim", "commlab-apps", "commlab-native"];
    let writers = files_using(
        &libs,
        &[
            "println!",
            "eprintln!",
            "print!(",
            "eprint!(",
            "File::create",
            "OpenOptions",
            "fs::write",
            "create_dir",
            "stdout()",
            "stderr()",
        ],
    );
    assert!(writers.is_empty(), "library crates that write files or to the terminal: {writers:?}");
    let readers = files_using(&libs, &["File::open", "fs::read", "read_dir"]);
    let want: BTreeSet<String> = ["commlab-apps/src/sparse/mtx.rs", "commlab-apps/src/unstruc/meshfile.rs"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(readers, want, "library crates read only an application's input file named by a parameter");
}

#[test]
fn the_native_backend_takes_no_cost_from_a_machine() {
    use commlab_api::Backend;
    let native = commlab_native::NativeBackend::with_procs(2).unwrap();
    for name in ["em3d_edge", "iccg_node", "bulk_copy_line", "no_such_cost"] {
        assert_eq!(native.cost_cycles(name).ok(), Some(0), "{name}");
    }
}

#[test]
fn the_checker_reads_paths_and_tests_out_of_the_text() {
    let crates: Vec<String> = ["commlab-sim", "python"].iter().map(|s| s.to_string()).collect();
    let text = "a `commlab-sim/src/mem/cache.rs` b `Memory::access` c `crates/commlab-sim/tests/x.rs::t` \
                d `python/commlab/_run.py` e `commlab-sim` f `other/src/a.rs`";
    let got: Vec<_> = backticked(text).into_iter().filter_map(|s| crate_path(s, &crates)).collect();
    assert_eq!(
        got,
        vec![
            ("commlab-sim/src/mem/cache.rs", None),
            ("commlab-sim/tests/x.rs", Some("t")),
            ("python/commlab/_run.py", None)
        ]
    );
    let all = modules();
    assert!(all.contains("commlab-sim/src/mem/protocol.rs") && all.contains("python/src/lib.rs"), "{all:?}");
    assert!(all.contains("python/commlab/_run.py"), "{all:?}");
    assert!(!all.iter().any(|m| m.contains("/tests/")), "tests are not modules: {all:?}");
}

/// With `autotests = false` a file added to `tests/` compiles only if a test root declares it;
/// otherwise its tests would silently never run. Every `tests/*.rs` file (and `tests/*/` module
/// directory) of every crate is a `[[test]]` root of its Cargo.toml or a `mod` of one.
#[test]
fn every_test_file_is_compiled_into_a_test_binary() {
    let mut missing = Vec::new();
    let mut roots_seen = 0;
    for (name, dir) in crate_dirs() {
        let manifest: toml::Table = fs::read_to_string(dir.join("Cargo.toml")).unwrap().parse().unwrap();
        let Some(tests) = manifest["package"]
            .get("autotests")
            .filter(|v| v.as_bool() == Some(false))
            .and(manifest.get("test").and_then(|t| t.as_array()))
        else {
            continue;
        };
        let roots: Vec<String> = tests.iter().map(|t| t["path"].as_str().unwrap().to_string()).collect();
        let mut declared: BTreeSet<String> = roots.iter().cloned().collect();
        for root in &roots {
            roots_seen += 1;
            let text = fs::read_to_string(dir.join(root)).unwrap_or_else(|e| panic!("{name}/{root}: {e}"));
            for m in text.lines().filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';')) {
                declared.insert(format!("tests/{m}.rs"));
                declared.insert(format!("tests/{m}"));
            }
        }
        for entry in fs::read_dir(dir.join("tests")).unwrap() {
            let path = entry.unwrap().path();
            let rel = format!("tests/{}", path.file_name().unwrap().to_string_lossy());
            let is_source = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
            if is_source && !declared.contains(&rel) {
                missing.push(format!("{name}/{rel}"));
            }
        }
    }
    assert!(roots_seen >= 3, "only {roots_seen} crates declare their test binaries");
    assert!(missing.is_empty(), "test files no test binary compiles (add `mod NAME;` to tests/suite.rs): {missing:?}");
}
