//! Output that reads well (issue 19, defect 8): counts as integers, parameters as JSON numbers,
//! CSV without float noise, aligned listings, one mesh description, and JSON listings.

use crate::common;
use common::*;

use serde_json::Value;

#[test]
fn text_counts_print_as_integers() {
    let out = ok(&["run", "am-latency", "--variant", "mp-int"]);
    let counters = out.lines().find(|l| l.trim_start().starts_with("counters:")).expect("a counters line");
    // A whole-number counter has no decimals (it was `messages=162.0000`).
    assert!(counters.contains(" messages=162 ") || counters.ends_with(" messages=162"), "{counters}");
    assert!(!counters.contains(".0000"), "{counters}");
    // A fractional one keeps 6 significant digits.
    let one_way = counters.split(' ').find(|w| w.starts_with("one_way_cycles=")).expect("one_way_cycles");
    let digits = one_way.split('=').nth(1).unwrap().chars().filter(char::is_ascii_digit).count();
    assert!(digits <= 6, "{one_way}");
}

#[test]
fn json_params_are_numbers_where_numeric() {
    let out = ok(&["run", "am-latency", "--variant", "mp-int", "--json", "--param", "hops=2"]);
    let j: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(j["params"]["hops"], Value::from(2), "{}", j["params"]);
    assert_eq!(j["params"]["rounds"], Value::from(20), "{}", j["params"]);
    let out = ok(&["run", "miss-latency", "--variant", "sm", "--json", "--param", "kind=load-local"]);
    let j: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(j["params"]["kind"], Value::from("load-local"), "{}", j["params"]);
}

#[test]
fn csv_has_no_float_noise() {
    let out = ok(&["run", "am-latency", "--csv", "--variant", "all"]);
    for row in out.lines().skip(1) {
        for field in row.split(',') {
            if field.parse::<f64>().is_ok() && field.contains('.') {
                let mantissa = field.split('e').next().unwrap();
                let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
                let significant = digits.trim_start_matches('0').len();
                assert!(significant <= 9, "`{field}` has more than 9 significant digits: {row}");
            }
        }
    }
}

#[test]
fn machines_columns_are_aligned() {
    let out = ok(&["machines"]);
    let lines: Vec<&str> = out.lines().collect();
    let header = lines[0];
    let summary_col = header.find("summary").expect("a summary column");
    for l in &lines[1..] {
        // Every row's summary starts at the header's summary column: the character before it
        // is a space and the text before it holds the three other columns.
        assert!(l.len() > summary_col, "{l}");
        assert_eq!(&l[summary_col - 2..summary_col], "  ", "summary not in its column:\n{header}\n{l}");
        assert_ne!(&l[summary_col..summary_col + 1], " ", "summary not in its column:\n{header}\n{l}");
    }
    assert!(out.contains("cm5"), "{out}");
}

#[test]
fn apps_columns_are_aligned() {
    let out = ok(&["apps"]);
    // The meaning of every parameter of one app starts at one column.
    for block in out.split("\n\n").filter(|b| b.contains("--param")) {
        let cols: Vec<usize> = block
            .lines()
            .filter(|l| l.trim_start().starts_with("--param"))
            .map(|l| {
                let after = l.find("--param ").unwrap() + "--param ".len();
                let gap = l[after..].find("  ").expect("two spaces before the meaning") + after;
                gap + l[gap..].find(|c: char| c != ' ').unwrap()
            })
            .collect();
        assert!(cols.windows(2).all(|w| w[0] == w[1]), "meanings not aligned:\n{block}");
    }
}

#[test]
fn a_mesh_is_described_one_way() {
    let machines = ok(&["machines"]);
    let show = ok(&["machine", "show", "alewife"]);
    let line = machines.lines().find(|l| l.starts_with("alewife")).unwrap();
    // The network column and `machine show` use the one description (the preset's free-text
    // summary is the machine file's own words).
    assert!(line.contains("  mesh 8x4 (+8 I/O nodes)  "), "{line}");
    assert!(show.contains("network: mesh 8x4 (+8 I/O nodes)"), "{show}");
}

#[test]
fn apps_json_is_one_object_per_app() {
    let out = ok(&["apps", "--json"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 5, "{out}");
    for l in lines {
        let j: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(j["name"].is_string() && j["summary"].is_string(), "{l}");
        assert!(j["variants"].as_array().is_some_and(|v| !v.is_empty()), "{l}");
        for p in j["params"].as_array().expect("params") {
            assert!(p["name"].is_string() && p["doc"].is_string() && !p["default"].is_null(), "{l}");
        }
    }
    let am: Value = serde_json::from_str(out.lines().find(|l| l.contains("\"am-latency\"")).unwrap()).unwrap();
    let hops = am["params"].as_array().unwrap().iter().find(|p| p["name"] == "hops").unwrap();
    assert!(hops["default"].is_number(), "{hops}");
}

#[test]
fn machine_show_json_is_one_object() {
    let out = ok(&["machine", "show", "alewife", "--json"]);
    let j: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(j["name"], "alewife");
    assert_eq!(j["procs"], 32);
    assert_eq!(j["network"], "mesh 8x4 (+8 I/O nodes)");
    assert!(j["bisection_bytes_per_cycle"].is_number(), "{j}");
    assert!(j["spec"]["processor"]["clock_mhz"].is_number(), "{j}");
    let resized = ok(&["machine", "show", "alewife", "--json", "--procs", "8"]);
    let j: Value = serde_json::from_str(resized.trim()).unwrap();
    assert_eq!(j["procs"], 8);
}

// ---------------------------------------------------------------------------------------------
// Consistency (issue 19, rest of defect 7)

#[test]
fn bad_numbers_for_machine_keys_get_one_message() {
    for v in ["-1", "NaN", "nan", "inf", "-0.5"] {
        let set = format!("network.router_latency_ns={v}");
        bad_input(
            &["run", "am-latency", "--set", &set],
            &["machine key `network.router_latency_ns`", &format!("must be a non-negative number, got `{v}`")],
        );
        let set = format!("messaging.send_overhead_cycles={v}");
        bad_input(
            &["run", "am-latency", "--set", &set],
            &[
                "machine key `messaging.send_overhead_cycles`",
                &format!("must be a non-negative whole number, got `{v}`"),
            ],
        );
    }
    bad_input(&["run", "am-latency", "--set", "costs.extra=-1"], &["machine key `costs.extra`", "non-negative whole"]);
}

#[test]
fn range_errors_from_machine_files_name_the_file_and_key() {
    let dir = TempDir::new("range-errors");
    std::fs::create_dir_all(dir.path()).unwrap();
    let alewife = include_str!("../../../machines/alewife.toml");
    for (from, to, key, says) in [
        ("router_latency_ns = 40.0", "router_latency_ns = -1.0", "network.router_latency_ns", "non-negative number"),
        (
            "send_overhead_cycles = 31",
            "send_overhead_cycles = -1",
            "messaging.send_overhead_cycles",
            "non-negative whole number",
        ),
        ("clock_mhz = 20.0", "clock_mhz = 0.0", "processor.clock_mhz", "positive number"),
    ] {
        assert!(alewife.contains(from), "{from}");
        let file = dir.file(&format!("{}.toml", key.replace('.', "-")));
        std::fs::write(&file, alewife.replacen(from, to, 1)).unwrap();
        let path = file.to_str().unwrap();
        bad_input(&["run", "am-latency", "--machine", path], &[&format!("{path}: machine key `{key}`"), says]);
    }
}

#[test]
fn positive_keys_say_positive_for_every_bad_number() {
    for v in ["-1", "NaN", "nan", "0"] {
        let set = format!("processor.clock_mhz={v}");
        bad_input(
            &["run", "am-latency", "--set", &set],
            &["machine key `processor.clock_mhz`", "must be a positive number, got", v],
        );
    }
}

#[test]
fn machine_table_columns_are_aligned() {
    let out = ok(&["machines", "--table"]);
    // Every row's processor count ends where the header's "procs" ends (cm5's topology used to
    // push its row's columns to the right).
    let lines: Vec<&str> = out.lines().collect();
    let end = lines[1].find("procs").expect("procs in the header") + "procs".len();
    for l in &lines[2..] {
        let before = &l[..end];
        assert!(before.ends_with(|c: char| c.is_ascii_digit()), "procs not in its column:\n{}\n{l}", lines[1]);
        assert_eq!(&l[end..end + 1], " ", "procs not in its column:\n{}\n{l}", lines[1]);
    }
}

/// Regression (issue 36, item 7): counts were JSON floats (`"messages":26353.0`), a spread of
/// identical samples printed as `4.12e-13` and a 9-cycle cost at 33 MHz as `8.99999`.
#[test]
fn json_counts_are_integers_and_whole_results_have_no_residue() {
    let out = ok(&["run", "am-latency", "--variant", "mp-int", "--json"]);
    let j: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let c = &j["counters"];
    for count in ["messages", "packets", "hops"] {
        assert!(c[count].is_u64(), "{count} is not a JSON integer: {c}");
    }
    assert!(c["one_way_cycles"].is_f64(), "{c}");
    assert_eq!(c["one_way_spread_cycles"], Value::from(0), "every sample took the same time: {c}");
    assert!(out.contains(r#""messages":162,"#), "{out}");
    // (The minimal system: the invoker's send alone, 9 cycles; the complete one adds the call
    // and the steal requests that interrupt it.)
    let out = ok(&["run", "rti", "--machine", "alewife-sim", "--variant", "mp", "--param", "system=minimal", "--json"]);
    let j: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(j["counters"]["t_invoker"], Value::from(9), "{}", j["counters"]);
}

/// Regression (issue 36, item 7): `--csv` lacked the overrides, machine fingerprint and
/// version that every JSON record carries.
#[test]
fn csv_carries_the_provenance_of_json() {
    let set = ["--set", "network.router_latency_ns=80", "--set", "messaging.poll_cycles=7"];
    let run = |format: &str| {
        let mut args = vec!["run", "am-latency", "--variant", "mp-int", format];
        args.extend(set);
        ok(&args)
    };
    let json: Value = serde_json::from_str(run("--json").lines().next().unwrap()).unwrap();
    let csv = run("--csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row = lines.next().unwrap();
    // Split outside quotes (params and overrides are quoted).
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for ch in row.chars() {
        match ch {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            _ => fields.last_mut().unwrap().push(ch),
        }
    }
    assert_eq!(fields.len(), header.len(), "{row}");
    let field = |name: &str| {
        let i = header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}: {header:?}"));
        fields[i].clone()
    };
    assert_eq!(field("overrides"), "network.router_latency_ns=80;messaging.poll_cycles=7");
    assert_eq!(field("machine_fingerprint"), json["machine_fingerprint"].as_str().unwrap());
    assert_eq!(field("commlab_version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(field("counter_messages"), "162");
}

#[test]
fn counters_lists_every_table_aligned_and_as_json() {
    let apps: Vec<String> =
        ok(&["apps"]).lines().filter(|l| !l.is_empty() && !l.starts_with(' ')).map(String::from).collect();
    let out = ok(&["counters"]);
    let blocks: Vec<&str> = out.split("\n\n").filter(|b| !b.trim().is_empty()).collect();
    let headings: Vec<&str> = blocks.iter().map(|b| b.lines().next().unwrap().split(':').next().unwrap()).collect();
    let mut want = vec!["engine".to_string()];
    want.extend(apps);
    want.push("host".into());
    assert_eq!(headings, want, "one table each: the engine, every app, the host");
    for block in &blocks {
        // Name, unit and meaning each start at one column within a table.
        let rows: Vec<&str> = block.lines().skip(1).collect();
        assert!(!rows.is_empty(), "{block}");
        let col = |l: &str, k: usize| {
            let mut at = 2;
            for _ in 0..k {
                at += l[at..].find("  ").unwrap();
                at += l[at..].find(|c: char| c != ' ').unwrap();
            }
            at
        };
        for k in 1..=2 {
            let cols: Vec<usize> = rows.iter().map(|l| col(l, k)).collect();
            assert!(cols.windows(2).all(|w| w[0] == w[1]), "column {k} not aligned:\n{block}");
        }
    }
    assert!(out.contains("\n  messages "), "{out}");
    let json = ok(&["counters", "em3d", "--json"]);
    let tables: Vec<Value> = json.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(tables.iter().map(|t| t["table"].as_str().unwrap()).collect::<Vec<_>>(), ["engine", "em3d"]);
    for t in &tables {
        for c in t["counters"].as_array().unwrap() {
            assert!(["name", "unit", "meaning"].iter().all(|k| c[k].as_str().is_some_and(|s| !s.is_empty())), "{c}");
        }
    }
    let em3d: Vec<&str> =
        tables[1]["counters"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(em3d.contains(&"ghost_values_received") && em3d.contains(&"speedup"), "{em3d:?}");
    bad_input(&["counters", "no-such-app"], &["unknown app `no-such-app`", "em3d"]);
}
