//! `commlab reproduce`: every finding of the study is printed with its measured figures, and
//! the exit status says whether all hold. Run here at reduced size (`--quick`), where the
//! findings are not expected to hold; what is tested is that none is hidden and that the
//! status agrees with the lines.

mod common;

use common::{bad_input, commlab};
use serde_json::Value;

#[test]
fn every_finding_is_reported_and_the_status_agrees() {
    let out = commlab().args(["reproduce", "alewife", "--quick", "--json"]).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let findings: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Four EM3D findings, five ICCG findings, two traffic findings for each of the four apps.
    assert_eq!(findings.len(), 17, "{stdout}");
    for f in &findings {
        for key in ["app", "claim", "test", "measured"] {
            assert!(f[key].as_str().is_some_and(|s| !s.is_empty()), "{key} missing in {f}");
        }
        assert_eq!(f["study"], "alewife");
        assert_eq!(f["quick"], true);
    }
    let failing = findings.iter().filter(|f| f["holds"] == false).count();
    let stderr = String::from_utf8(out.stderr).unwrap();
    if failing == 0 {
        assert_eq!(out.status.code(), Some(0), "{stderr}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(&format!("{failing} of 17 findings fail")), "{stderr}");
    }
    // The text form says the same, finding by finding.
    let text = commlab().args(["reproduce", "alewife", "--quick"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let verdicts: Vec<bool> = text
        .lines()
        .filter_map(|l| l.strip_prefix("holds ").map(|_| true).or(l.strip_prefix("FAILS ").map(|_| false)))
        .collect();
    let json_verdicts: Vec<bool> = findings.iter().map(|f| f["holds"] == true).collect();
    assert_eq!(verdicts, json_verdicts);
}

#[test]
fn bad_requests_are_one_line_errors() {
    bad_input(&["reproduce", "nosuchstudy"], &["unknown study `nosuchstudy`", "alewife"]);
    bad_input(&["reproduce", "alewife", "--matrix", "/nonexistent/m.mtx"], &["--matrix /nonexistent/m.mtx", "--quick"]);
}
