//! `--vary KEY=SPEC`: whether KEY is an app parameter, the processor count (`procs`) or a
//! machine key, the type of its values, and the values a range or list spells. `procs` resizes
//! each point's machine as `--procs` does, and its records carry their own `procs`.

use super::args::{SweepArgs, MAX_RUNS};
use crate::failure::{input, Failure};
use commlab_apps::AppInfo;
use commlab_sim::machine;
use serde_json::{json, Value};

/// The type of a varied key's values.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Int,
    Float,
    Text,
}

/// One value of a varied key.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Val {
    Int(i64),
    Float(f64),
    Text(String),
}

impl Val {
    /// As given to `--set` / `--param`.
    pub(super) fn arg(&self) -> String {
        match self {
            Val::Int(i) => i.to_string(),
            Val::Float(f) => format!("{f:?}"),
            Val::Text(s) => s.clone(),
        }
    }

    pub(super) fn json(&self) -> Value {
        match self {
            Val::Int(i) => json!(i),
            Val::Float(f) => json!(f),
            Val::Text(s) => json!(s),
        }
    }

    pub(super) fn x(&self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(*i as f64),
            Val::Float(f) => Some(*f),
            Val::Text(_) => None,
        }
    }
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Int(i) => write!(f, "{i}"),
            Val::Float(x) => f.write_str(&num(*x)),
            Val::Text(s) => f.write_str(s),
        }
    }
}

/// A number for people: up to 4 decimals (trailing zeros dropped), or scientific when tiny or huge.
pub(super) fn num(x: f64) -> String {
    if x == 0.0 || (x.abs() >= 1e-3 && x.abs() < 1e12) {
        let s = format!("{x:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" {
            "0".to_string()
        } else {
            s.to_string()
        }
    } else {
        format!("{x:.4e}")
    }
}

/// Where a varied key goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Target {
    Param,
    Machine,
    /// `procs`: the machine resized as `--procs` resizes it.
    Procs,
}

/// One `--vary`.
#[derive(Debug)]
pub(super) struct Axis {
    pub key: String,
    pub target: Target,
    pub values: Vec<Val>,
}

/// Decide whether `key` is an app parameter or a machine key, and the type of its values.
fn resolve(key: &str, info: &AppInfo) -> Result<(Target, Kind), Failure> {
    if let Some(p) = info.params.iter().find(|p| p.name == key) {
        let kind = if p.default.parse::<i64>().is_ok() {
            Kind::Int
        } else if p.default.parse::<f64>().is_ok() {
            Kind::Float
        } else {
            Kind::Text
        };
        return Ok((Target::Param, kind));
    }
    if key == "procs" {
        return Ok((Target::Procs, Kind::Int));
    }
    if key == "costs.*" || machine::key_doc(key).is_none() {
        let params = if info.params.is_empty() {
            "none".to_string()
        } else {
            info.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        };
        return Err(input(format!(
            "--vary `{key}`: unknown key: not a parameter of {} (parameters: {params}), nor `procs` (the processor count), nor a machine key (valid: {}, costs.NAME)",
            info.name,
            machine::key_list().replace(", costs.*", "")
        )));
    }
    // The key's type as the key table declares it (a key the machine leaves at its default has
    // no value to take it from: a whole-cycles key swept as 0.0, 5.0 was refused).
    let kind = match machine::key_doc(key).map(|d| d.kind) {
        Some(machine::Kind::Whole) => Kind::Int,
        Some(machine::Kind::Number) => Kind::Float,
        Some(machine::Kind::Text | machine::Kind::Bool) => Kind::Text,
        _ => {
            return Err(input(format!(
            "--vary `{key}`: a list-valued machine key cannot be swept (set it with --set; the processor count is --vary procs=...)"
        )))
        }
    };
    Ok((Target::Machine, kind))
}

/// Values of `SPEC` for a key of type `kind`.
fn parse_values(key: &str, kind: Kind, spec: &str) -> Result<Vec<Val>, Failure> {
    let bad = |why: String| input(format!("--vary {key}={spec}: {why}"));
    let number = |s: &str| -> Result<f64, Failure> {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| bad(format!("`{}` is not a number", s.trim())))
    };
    let whole = |x: f64, s: &str| -> Result<i64, Failure> {
        if x.fract() == 0.0 && x.abs() < 9e15 {
            Ok(x as i64)
        } else {
            Err(bad(format!("`{}` is not a whole number (`{key}` takes whole numbers)", s.trim())))
        }
    };
    if spec.contains(':') {
        if kind == Kind::Text {
            return Err(bad(format!("`{key}` takes text values, not a range; list them: v1,v2,...")));
        }
        let parts: Vec<&str> = spec.split(':').collect();
        if !(3..=4).contains(&parts.len()) {
            return Err(bad("a range is a:b:steps or a:b:steps:log".to_string()));
        }
        let (a, b) = (number(parts[0])?, number(parts[1])?);
        let steps: usize =
            parts[2].trim().parse().map_err(|_| bad(format!("steps `{}` is not a whole number", parts[2].trim())))?;
        let log = match parts.get(3).map(|s| s.trim()) {
            None | Some("lin") => false,
            Some("log") => true,
            Some(o) => {
                return Err(bad(format!("unknown spacing `{o}` (write a:b:steps:log, or a:b:steps for linear)")))
            }
        };
        if steps == 0 {
            return Err(bad("empty range (0 steps); give at least 2 steps".to_string()));
        }
        if steps < 2 {
            return Err(bad(format!("a range needs at least 2 steps, got {steps} (for one value write {key}=VALUE)")));
        }
        // Counted before the values are made (1e8 steps used to fill gigabytes first).
        if steps > MAX_RUNS {
            return Err(bad(format!(
                "{steps} steps, more than a sweep's limit of {} runs; give fewer steps",
                MAX_RUNS
            )));
        }
        if a == b {
            return Err(bad("the range's ends are equal (for one value write KEY=VALUE)".to_string()));
        }
        if log && (a <= 0.0 || b <= 0.0) {
            return Err(bad("a log range needs ends greater than 0".to_string()));
        }
        if kind == Kind::Int {
            whole(a, parts[0])?;
            whole(b, parts[1])?;
        }
        let mut out: Vec<Val> = Vec::new();
        for i in 0..steps {
            let t = i as f64 / (steps - 1) as f64;
            let x = if i == 0 {
                a
            } else if i == steps - 1 {
                b
            } else if log {
                a * (b / a).powf(t)
            } else {
                a + (b - a) * t
            };
            let v = match kind {
                Kind::Int => Val::Int(x.round() as i64),
                // 12 significant digits: 0.30000000000000004 becomes 0.3.
                _ => Val::Float(format!("{x:.11e}").parse().expect("a formatted float parses")),
            };
            if !out.contains(&v) {
                out.push(v);
            }
        }
        return Ok(out);
    }
    if spec.trim().is_empty() {
        return Err(bad("empty list of values".to_string()));
    }
    let listed = spec.split(',').count();
    if listed > MAX_RUNS {
        return Err(bad(format!("{listed} values, more than a sweep's limit of {} runs", MAX_RUNS)));
    }
    let mut out: Vec<Val> = Vec::new();
    for item in spec.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(bad("empty value in the list".to_string()));
        }
        let v = match kind {
            Kind::Int => Val::Int(match item.parse::<i64>() {
                Ok(i) => i,
                Err(_) => whole(number(item)?, item)?,
            }),
            Kind::Float => Val::Float(number(item)?),
            Kind::Text => Val::Text(item.to_string()),
        };
        if out.contains(&v) {
            return Err(bad(format!("`{item}` is listed twice")));
        }
        out.push(v);
    }
    Ok(out)
}

/// Parse every `--vary`.
pub(super) fn axes(args: &SweepArgs, info: &AppInfo) -> Result<Vec<Axis>, Failure> {
    let mut out: Vec<Axis> = Vec::new();
    for v in &args.vary {
        let (key, values) = v.split_once('=').ok_or_else(|| {
            input(format!(
                "--vary `{v}`: expected KEY=SPEC, e.g. cross_traffic.rate_bytes_per_cycle=0:8:9 or nodes=320,640"
            ))
        })?;
        let key = key.trim();
        if out.iter().any(|a| a.key == key) {
            return Err(input(format!("--vary `{key}` is given twice (give each key once, with all its values)")));
        }
        let (target, kind) = resolve(key, info)?;
        let values = parse_values(key, kind, values)?;
        if target == Target::Procs {
            if let Some(bad) = values.iter().find(|v| !matches!(v, Val::Int(n) if *n >= 1)) {
                return Err(input(format!(
                    "--vary {key}={}: `{bad}` is not a processor count (whole numbers >= 1)",
                    v.split_once('=').map_or("", |(_, s)| s)
                )));
            }
        }
        out.push(Axis { key: key.to_string(), target, values });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(kind: Kind, spec: &str) -> Result<Vec<Val>, String> {
        parse_values("k", kind, spec).map_err(|f| f.message)
    }

    #[test]
    fn linear_and_log_ranges() {
        assert_eq!(vals(Kind::Float, "0:1:5").unwrap(), [0.0, 0.25, 0.5, 0.75, 1.0].map(Val::Float).to_vec());
        assert_eq!(vals(Kind::Float, "0:1:11").unwrap()[3], Val::Float(0.3));
        assert_eq!(vals(Kind::Float, "1:100:3:log").unwrap(), [1.0, 10.0, 100.0].map(Val::Float).to_vec());
        assert_eq!(vals(Kind::Float, "8:0:3").unwrap(), [8.0, 4.0, 0.0].map(Val::Float).to_vec());
    }

    #[test]
    fn integer_ranges_round_and_dedupe() {
        assert_eq!(vals(Kind::Int, "1:2:4").unwrap(), vec![Val::Int(1), Val::Int(2)]);
        assert_eq!(vals(Kind::Int, "1:16:5:log").unwrap(), [1, 2, 4, 8, 16].map(Val::Int).to_vec());
        assert_eq!(vals(Kind::Int, "10,20,1e2").unwrap(), [10, 20, 100].map(Val::Int).to_vec());
        assert!(vals(Kind::Int, "1,2.5").unwrap_err().contains("whole number"));
        assert!(vals(Kind::Int, "0.5:4:3").unwrap_err().contains("whole number"));
    }

    #[test]
    fn bad_specs() {
        for (spec, needle) in [
            ("1:2:0", "empty range"),
            ("1:2:1", "at least 2 steps"),
            ("", "empty list"),
            ("1,,2", "empty value"),
            ("0:4:3:log", "greater than 0"),
            ("a:2:3", "not a number"),
            ("1:2:x", "not a whole number"),
            ("1:2", "a:b:steps"),
            ("1:2:3:cubic", "unknown spacing"),
            ("3:3:4", "equal"),
            ("1,2,1", "twice"),
        ] {
            let e = vals(Kind::Float, spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
        assert!(vals(Kind::Text, "1:2:3").unwrap_err().contains("text"));
        assert_eq!(vals(Kind::Text, "mesh, torus").unwrap(), vec![Val::Text("mesh".into()), Val::Text("torus".into())]);
    }

    #[test]
    fn procs_is_a_whole_number_axis_of_its_own() {
        let info = commlab_apps::app_info("em3d").unwrap();
        assert!(matches!(resolve("procs", info), Ok((Target::Procs, Kind::Int))));
        // (iccg's `nonlocal` is a fraction: its default must read as one, or it would sweep as
        // whole numbers.)
        let iccg = commlab_apps::app_info("iccg").unwrap();
        assert!(matches!(resolve("nonlocal", iccg), Ok((Target::Param, Kind::Float))));
        let args = |v: &str| SweepArgs {
            app: "em3d".into(),
            vary: vec![v.into()],
            variant: "all".into(),
            param: vec![],
            set: vec![],
            machine: "alewife".into(),
            procs: None,
            seed: 1,
            jobs: Some(1),
            out: None,
            resume: false,
            max_memory: None,
            stats: vec![],
            quiet: true,
            silent: true,
        };
        let a = axes(&args("procs=1:8:4:log"), info).map_err(|f| f.message).unwrap();
        assert_eq!(a[0].values, [1, 2, 4, 8].map(Val::Int).to_vec());
        for (bad, needle) in
            [("procs=0,4", "`0` is not a processor count"), ("procs=-2", "`-2`"), ("procs=2.5", "whole")]
        {
            let Err(e) = axes(&args(bad), info).map_err(|f| f.message) else { panic!("{bad} accepted") };
            assert!(e.contains(needle) && e.starts_with("--vary procs="), "{bad}: {e}");
        }
    }

    #[test]
    fn floats_pass_to_set_and_param_as_toml_numbers() {
        assert_eq!(Val::Float(2.0).arg(), "2.0");
        assert_eq!(Val::Float(1e-7).arg(), "1e-7");
        assert_eq!(Val::Int(62).arg(), "62");
        assert_eq!(num(0.30000000000000004), "0.3");
        assert_eq!(num(12345.0), "12345");
    }
}
