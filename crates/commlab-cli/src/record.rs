//! One run as a record: the line `commlab run --json` prints and `commlab sweep` and
//! `commlab experiment` append to `results.jsonl`. Written here ([`ResultRecord::to_json_line`])
//! and read back here ([`read_records`], and [`read_appendable`] for `--resume`).
//!
//! The bytes are those commlab has always written: one JSON object per line, keys in
//! alphabetical order (the order of the `serde_json` map the object used to be built in, kept
//! by declaring the fields alphabetically), numbers as `serde_json` writes an `f64` or a `u64`
//! (shortest form that reads back exactly), and `null` for a NaN or infinite number. A record
//! read back and written again gives the same line: the workspace enables `serde_json`'s
//! `float_roundtrip` feature, without which a float could be read one unit in the last place
//! off (`101.75555999999997` as `101.75555999999996`).
//!
//! Reading is lenient the way `commlab plot` has always been with hand-written lines: only
//! `variant` is required; an absent field reads as empty (`""`, 0, an empty map, `None`) and an
//! absent or `null` number as NaN. [`BadLine::message`] is the one message for a line that is
//! not a record, whichever command reads it.
//!
//! Every Rust reader and writer of a results file goes through here. The Python package reads
//! them with its own reader (`python/commlab/_run.py`'s `read_records`, same torn-last-line
//! rule) and its Dask client appends the lines `run_task` made here.

use commlab_api::{Category, TrafficClass};
use commlab_apps::AppResult;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Run identity that the app result does not carry.
pub struct RunMeta<'a> {
    pub machine: &'a str,
    /// [`commlab_sim::machine::MachineConfig::fingerprint`] of the resolved machine.
    pub fingerprint: &'a str,
    /// The `--set` overrides as given.
    pub overrides: &'a [String],
    pub procs: usize,
    pub seed: u64,
}

/// One run. The fields are in alphabetical order because that is their order in the JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResultRecord {
    pub app: String,
    /// Mean cycles per processor in each time category, keyed by [`Category::name`].
    #[serde(deserialize_with = "numbers_or_null")]
    pub breakdown: BTreeMap<String, f64>,
    pub check: Check,
    /// The commlab version that made the record (absent in records of older versions, as are
    /// the machine fingerprint and the overrides).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commlab_version: Option<String>,
    /// Named figures of the run (app counters merged over the backend's). A whole number is
    /// written as a JSON integer (`"messages":26353`: counts are integers in JSON and in
    /// Python), any other as a float; either reads back as the same value.
    #[serde(serialize_with = "counters_out", deserialize_with = "numbers_or_null")]
    pub counters: BTreeMap<String, f64>,
    /// Cycles of the timed region.
    #[serde(deserialize_with = "number_or_null")]
    pub cycles: f64,
    /// Latency distributions (`--stats latency=FILE` records them; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latencies: Option<Vec<LatencyRecord>>,
    pub machine: String,
    /// Fingerprint of the resolved machine (after overrides, resizing and, in a sweep, the
    /// point's varied keys): a rerun on the same machine has the same one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine_fingerprint: Option<String>,
    /// The `--set` overrides the run was given, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overrides: Option<Vec<String>>,
    /// Every application parameter with its value: written as a JSON number when the value is
    /// one that reads back as the same text (`20`, `0.5`), else as a string (`"store-remote"`);
    /// read from either, so records of older versions (every value a string) still resume.
    #[serde(serialize_with = "params_out", deserialize_with = "params_in")]
    pub params: BTreeMap<String, String>,
    /// Index of the grid point (sweep results only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<usize>,
    pub procs: usize,
    pub seed: u64,
    pub sim: Sim,
    pub variant: String,
    /// The varied keys and their values at this point (sweep results only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vary: Option<Map<String, Value>>,
    /// Bytes injected per traffic class, keyed by [`TrafficClass::name`].
    pub volume_bytes: BTreeMap<String, u64>,
}

/// One latency distribution of a run, in cycles: the JSON form of `commlab_api::LatencyStats`
/// (the API crate has no dependencies, serde included; records are read back, so the form is typed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyRecord {
    pub metric: String,
    pub class: String,
    pub count: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    /// `[lo, hi, count]`: samples with `lo < x <= hi` cycles, log-spaced, empty ones left out.
    pub buckets: Vec<(f64, f64, u64)>,
}

impl LatencyRecord {
    pub fn of(l: &commlab_api::LatencyStats) -> LatencyRecord {
        LatencyRecord {
            metric: l.metric.to_string(),
            class: l.class.clone(),
            count: l.count,
            sum: l.sum,
            min: l.min,
            max: l.max,
            p50: l.p50,
            p90: l.p90,
            p99: l.p99,
            buckets: l.buckets.iter().map(|b| (b.lo, b.hi, b.count)).collect(),
        }
    }
}

/// The application's answer check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Check {
    pub detail: String,
    #[serde(deserialize_with = "number_or_null")]
    pub max_error: f64,
    pub ok: bool,
}

/// The simulator's own figures (the wall-clock ones differ from run to run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sim {
    pub events: u64,
    #[serde(deserialize_with = "number_or_null")]
    pub events_per_second: f64,
    #[serde(deserialize_with = "number_or_null")]
    pub wall_seconds: f64,
}

impl Default for ResultRecord {
    fn default() -> Self {
        ResultRecord {
            app: String::new(),
            breakdown: BTreeMap::new(),
            check: Check::default(),
            commlab_version: None,
            counters: BTreeMap::new(),
            cycles: f64::NAN,
            latencies: None,
            machine: String::new(),
            machine_fingerprint: None,
            overrides: None,
            params: BTreeMap::new(),
            point: None,
            procs: 0,
            seed: 0,
            sim: Sim::default(),
            variant: String::new(),
            vary: None,
            volume_bytes: BTreeMap::new(),
        }
    }
}

impl Default for Check {
    fn default() -> Self {
        Check { detail: String::new(), max_error: f64::NAN, ok: false }
    }
}

impl Default for Sim {
    fn default() -> Self {
        Sim { events: 0, events_per_second: f64::NAN, wall_seconds: f64::NAN }
    }
}

/// A number, or NaN for `null` (how a NaN or infinity was written).
fn number_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The largest magnitude below which every whole number is an exact `f64` (2^53).
const EXACT_WHOLE: f64 = 9_007_199_254_740_992.0;

/// Counters: a whole number as an integer, anything else as `serde_json` writes an `f64`
/// (`null` for NaN and infinities).
fn counters_out<S: serde::Serializer>(m: &BTreeMap<String, f64>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        if v.fract() == 0.0 && v.abs() <= EXACT_WHOLE {
            // `-0.0` is 0.
            map.serialize_entry(k, &(*v as i64))?;
        } else {
            map.serialize_entry(k, v)?;
        }
    }
    map.end()
}

/// A map of numbers, each `null` read as NaN.
fn numbers_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
    let m = BTreeMap::<String, Option<f64>>::deserialize(d)?;
    Ok(m.into_iter().map(|(k, v)| (k, v.unwrap_or(f64::NAN))).collect())
}

/// A parameter value as JSON: a number when it reads back as the very same text, so that
/// [`params_in`] gives back the string the run was given (`1`, `0.5`, `-3`; not `1e3` or
/// `007`, which stay strings).
pub fn param_value(text: &str) -> Value {
    match serde_json::from_str::<serde_json::Number>(text) {
        Ok(n) if n.to_string() == text => Value::Number(n),
        _ => Value::String(text.to_string()),
    }
}

fn params_out<S: serde::Serializer>(m: &BTreeMap<String, String>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        map.serialize_entry(k, &param_value(v))?;
    }
    map.end()
}

/// Parameter values given as strings or numbers (a number as the text it was written as).
fn params_in<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Text {
        S(String),
        N(serde_json::Number),
    }
    let m = BTreeMap::<String, Text>::deserialize(d)?;
    Ok(m.into_iter()
        .map(|(k, v)| {
            let t = match v {
                Text::S(s) => s,
                Text::N(n) => n.to_string(),
            };
            (k, t)
        })
        .collect())
}

impl ResultRecord {
    /// The record of a finished run.
    pub fn of_run(r: &AppResult, meta: &RunMeta) -> ResultRecord {
        let s = &r.stats;
        let eps = if s.wall_seconds > 0.0 { s.events as f64 / s.wall_seconds } else { 0.0 };
        ResultRecord {
            app: r.app.to_string(),
            breakdown: Category::ALL.iter().map(|c| (c.name().to_string(), s.mean(*c))).collect(),
            check: Check { detail: r.check.detail.clone(), max_error: r.check.max_error, ok: r.check.ok },
            commlab_version: Some(env!("CARGO_PKG_VERSION").to_string()),
            counters: r.counters.clone(),
            cycles: s.cycles,
            latencies: (!s.latencies.is_empty()).then(|| s.latencies.iter().map(LatencyRecord::of).collect()),
            machine: meta.machine.to_string(),
            machine_fingerprint: Some(meta.fingerprint.to_string()),
            overrides: Some(meta.overrides.to_vec()),
            params: r.params.clone(),
            point: None,
            procs: meta.procs,
            seed: meta.seed,
            sim: Sim { events: s.events, events_per_second: eps, wall_seconds: s.wall_seconds },
            variant: r.variant.to_string(),
            vary: None,
            volume_bytes: TrafficClass::ALL
                .iter()
                .map(|c| (c.name().to_string(), s.volume_bytes[*c as usize]))
                .collect(),
        }
    }

    /// The record as one line of JSON, newline included.
    pub fn to_json_line(&self) -> String {
        let mut line = serde_json::to_string(self).expect("a result record serializes");
        line.push('\n');
        line
    }

    /// Mean cycles per processor in category `c` (NaN when the record lacks it).
    pub fn time(&self, c: Category) -> f64 {
        self.breakdown.get(c.name()).copied().unwrap_or(f64::NAN)
    }

    /// Bytes of traffic class `c` (`None` when the record lacks it).
    pub fn bytes(&self, c: TrafficClass) -> Option<u64> {
        self.volume_bytes.get(c.name()).copied()
    }

    /// A counter (NaN when the record lacks it).
    pub fn counter(&self, name: &str) -> f64 {
        self.counters.get(name).copied().unwrap_or(f64::NAN)
    }

    /// The value of varied key `key` as a number (NaN when it is not varied or not a number).
    pub fn vary_number(&self, key: &str) -> f64 {
        self.vary.as_ref().and_then(|v| v.get(key)).and_then(Value::as_f64).unwrap_or(f64::NAN)
    }
}

/// Why a line of a results file is not a record.
#[derive(Debug)]
pub enum LineError {
    /// Not JSON at all.
    NotJson(serde_json::Error),
    /// JSON without a string "variant".
    NoVariant,
    /// A field of the wrong type.
    NotRecord(serde_json::Error),
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::NotJson(e) => {
                // serde_json says "at line 1 column C" of the one line it was given; the caller
                // names the line of the file.
                let text = e.to_string();
                match text.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())) {
                    Some(what) => write!(f, "not valid JSON ({what} at column {})", e.column()),
                    None => write!(f, "not valid JSON ({text})"),
                }
            }
            LineError::NoVariant => f.write_str("not a JSON object with a \"variant\""),
            LineError::NotRecord(e) => write!(f, "{e}"),
        }
    }
}

/// Read one line (without its newline).
pub fn parse_line(line: &[u8]) -> Result<ResultRecord, LineError> {
    let v: Value = serde_json::from_slice(line).map_err(LineError::NotJson)?;
    if !v.get("variant").is_some_and(Value::is_string) {
        return Err(LineError::NoVariant);
    }
    ResultRecord::deserialize(v).map_err(LineError::NotRecord)
}

/// A record and the number (from 1) of its line.
#[derive(Debug)]
pub struct Numbered {
    pub line: usize,
    pub record: ResultRecord,
}

/// A line that is not a record: its number (from 1) and why.
#[derive(Debug)]
pub struct BadLine {
    pub line: usize,
    pub error: LineError,
}

impl BadLine {
    /// The one message for a bad line of the results file `path`, whichever command read it.
    pub fn message(&self, path: &Path) -> String {
        format!(
            "`{}` line {} is not a commlab result: {} (expected one JSON object per line, as `commlab run --json` and `commlab sweep` write them)",
            path.display(),
            self.line,
            self.error
        )
    }
}

/// Every record of a results file, in file order; blank lines are skipped and any other line
/// must be a record.
pub fn read_records(text: &str) -> Result<Vec<Numbered>, BadLine> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record = parse_line(line.as_bytes()).map_err(|error| BadLine { line: i + 1, error })?;
        out.push(Numbered { line: i + 1, record });
    }
    Ok(out)
}

/// A results file that runs are appended to (`--resume`).
#[derive(Debug)]
pub struct Appendable {
    pub records: Vec<Numbered>,
    /// Bytes of the file up to the end of its last complete line.
    pub complete_len: u64,
    /// The file ended with an incomplete line (dropped, to be redone).
    pub torn: bool,
}

/// Read a results file to append to. As [`read_records`], except that the last line is left
/// out (`torn`: dropped and redone) when an interrupted write may have left it: it lacks its
/// newline, or it is JSON cut short (what a write cut off leaves; blank lines may follow).
/// Any other line that is not a record is an error (the file is damaged, or not commlab's):
/// a complete line, such as someone else's `{"a":1}`, is never dropped.
pub fn read_appendable(text: &[u8]) -> Result<Appendable, BadLine> {
    let mut records = Vec::new();
    let mut pos = 0usize;
    let mut line_no = 0usize;
    let mut torn = false;
    while pos < text.len() {
        line_no += 1;
        let end = text[pos..].iter().position(|&b| b == b'\n').map(|i| pos + i);
        let line = &text[pos..end.unwrap_or(text.len())];
        let is_last = end.is_none_or(|e| text[e + 1..].iter().all(|b| b.is_ascii_whitespace()));
        if !line.iter().all(|b| b.is_ascii_whitespace()) {
            match parse_line(line) {
                // A whole record whose newline is missing is redone too.
                Ok(_) if end.is_none() => {
                    torn = true;
                    break;
                }
                Ok(record) => records.push(Numbered { line: line_no, record }),
                Err(LineError::NotJson(e)) if is_last && e.is_eof() => {
                    torn = true;
                    break;
                }
                Err(error) => return Err(BadLine { line: line_no, error }),
            }
        }
        pos = end.map_or(text.len(), |e| e + 1);
    }
    Ok(Appendable { records, complete_len: pos as u64, torn })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of `commlab sweep am-latency --vary network.router_latency_ns=10:100:3` results.jsonl,
    /// as the binary wrote it before the record type existed, except that numeric parameters
    /// are now JSON numbers (they were strings).
    const SWEEP_LINE: &str = r#"{"app":"am-latency","breakdown":{"compute":0.0,"memory_ni_wait":0.0,"message_overhead":467.5625,"synchronization":6379.040482500001},"check":{"detail":"21 pings sent (1 warm-up), 21 arrived, 21 pongs","max_error":0.0,"ok":true},"counters":{"bisection_utilization":0.005518117946305521,"cross_traffic_messages":0,"hops":1,"link_utilization_max":0.028621446930287984,"link_utilization_mean":0.003213848913782334,"messages":162,"one_way_cycles":101.75555999999997,"one_way_spread_cycles":5.400124791776761e-13,"packets":162,"partner":1},"cycles":7329.40024,"machine":"alewife","params":{"hops":1,"rounds":20},"point":0,"procs":32,"seed":1,"sim":{"events":1740,"events_per_second":2268818.4801784805,"wall_seconds":0.000766919},"variant":"mp-int","vary":{"network.router_latency_ns":10.0},"volume_bytes":{"cross_traffic":0,"data":464,"headers":1296,"invalidates":0,"requests":0}}"#;

    /// A line of `commlab run em3d --json` as it was written before the record type existed,
    /// then edited: the cycle count and max_error are null (how NaN is written), a counter
    /// is null and the maps are short.
    const RUN_LINE: &str = r#"{"app":"em3d","breakdown":{"compute":8880.0,"memory_ni_wait":4864.358315,"message_overhead":0.0,"synchronization":2306.9611575},"check":{"detail":"160 E and 160 H values after 1 iterations vs sequential: max relative difference 0.00e0 (limit 1e-12)","max_error":null,"ok":false},"counters":{"bisection_utilization":0.08343553367734452,"zero":null},"cycles":null,"machine":"alewife","params":{"degree":10},"procs":8,"seed":1,"sim":{"events":13241,"events_per_second":10982658.000643648,"wall_seconds":0.001205628},"variant":"sm","volume_bytes":{"cross_traffic":0,"data":7456,"headers":3856,"invalidates":3776,"requests":3840}}"#;

    #[test]
    fn records_round_trip_byte_identically() {
        for line in [SWEEP_LINE, RUN_LINE] {
            // Written back exactly as in the file (and as the untyped reader writes it back).
            let r = parse_line(line.as_bytes()).unwrap();
            assert_eq!(r.to_json_line(), format!("{line}\n"));
            let untyped: Value = serde_json::from_str(line).unwrap();
            assert_eq!(r.to_json_line(), format!("{untyped}\n"));
        }
        // The float that read one unit off before `float_roundtrip` (see the module doc).
        let r = parse_line(SWEEP_LINE.as_bytes()).unwrap();
        assert_eq!(r.counter("one_way_cycles").to_bits(), 101.75555999999997f64.to_bits());
        let r = parse_line(SWEEP_LINE.as_bytes()).unwrap();
        assert_eq!(r.point, Some(0));
        assert_eq!(r.vary_number("network.router_latency_ns"), 10.0);
        assert!(r.vary_number("hops").is_nan() && r.counter("absent").is_nan());
        assert_eq!(r.time(Category::MessageOverhead), 467.5625);
        assert_eq!(r.bytes(TrafficClass::Headers), Some(1296));
        let r = parse_line(RUN_LINE.as_bytes()).unwrap();
        assert!(r.cycles.is_nan() && r.check.max_error.is_nan() && r.counter("zero").is_nan());
        assert_eq!((r.point, &r.vary), (None, &None));
    }

    #[test]
    fn whole_counters_are_json_integers_and_old_float_counts_still_read() {
        // Regression (issue 36): `"messages":26353.0`.
        let r = parse_line(SWEEP_LINE.as_bytes()).unwrap();
        let line = r.to_json_line();
        assert!(
            line.contains(r#""messages":162,"#) && line.contains(r#""one_way_cycles":101.75555999999997"#),
            "{line}"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        assert!(v["counters"]["messages"].is_u64() && v["counters"]["one_way_cycles"].is_f64());
        // A record written before (counts as floats) reads as the same record.
        let old = SWEEP_LINE.replace(r#""messages":162,"#, r#""messages":162.0,"#);
        assert_eq!(parse_line(old.as_bytes()).unwrap(), r);
        let mut r = r;
        r.counters.insert("negative".into(), -0.0);
        r.counters.insert("huge".into(), 1e300);
        let line = r.to_json_line();
        assert!(line.contains(r#""negative":0,"#) && line.contains(r#""huge":1e+300"#), "{line}");
    }

    #[test]
    fn numeric_params_are_numbers_and_old_string_params_still_read() {
        let r = parse_line(SWEEP_LINE.as_bytes()).unwrap();
        assert_eq!(r.params["hops"], "1");
        // A record of an older version (every value a string) reads as the same record, so
        // `--resume` finds its points.
        let old = SWEEP_LINE.replace(r#""params":{"hops":1,"rounds":20}"#, r#""params":{"hops":"1","rounds":"20"}"#);
        assert_ne!(old, SWEEP_LINE);
        assert_eq!(parse_line(old.as_bytes()).unwrap(), r);
        // Text stays text; a number keeps the exact text it was given.
        for (text, json) in [
            ("store-remote", r#""store-remote""#),
            ("0.5", "0.5"),
            ("-3", "-3"),
            ("1e3", r#""1e3""#),
            ("007", r#""007""#),
            ("", r#""""#),
        ] {
            assert_eq!(param_value(text).to_string(), json, "{text}");
            let mut r = r.clone();
            r.params.insert("k".into(), text.into());
            assert_eq!(parse_line(r.to_json_line().trim_end().as_bytes()).unwrap().params["k"], text);
        }
    }

    #[test]
    fn fields_are_written_in_the_order_of_a_json_map() {
        // The writer used to build a `serde_json::Value` (keys sorted); the struct's field
        // order must give the same bytes.
        let r = parse_line(SWEEP_LINE.as_bytes()).unwrap();
        let via_map = serde_json::to_value(&r).unwrap().to_string();
        assert_eq!(serde_json::to_string(&r).unwrap(), via_map);
        let mut r = r;
        r.cycles = f64::INFINITY;
        r.breakdown.insert("compute".into(), f64::NAN);
        let line = r.to_json_line();
        assert!(line.contains(r#""cycles":null"#) && line.contains(r#""compute":null"#), "{line}");
        assert_eq!(line, format!("{}\n", serde_json::to_value(&r).unwrap()));
    }

    #[test]
    fn lenient_reading_and_its_errors() {
        let r = parse_line(br#"{"variant":"sm","cycles":10,"vary":{"k":1}}"#).unwrap();
        assert_eq!((r.app.as_str(), r.procs, r.cycles, r.vary_number("k")), ("", 0, 10.0, 1.0));
        assert!(r.time(Category::Compute).is_nan() && r.bytes(TrafficClass::Data).is_none());
        assert!(matches!(parse_line(b"{\"variant\": "), Err(LineError::NotJson(_))));
        assert!(matches!(parse_line(b"[1, 2]"), Err(LineError::NoVariant)));
        assert!(matches!(parse_line(br#"{"variant":"sm","procs":"x"}"#), Err(LineError::NotRecord(_))));
    }

    #[test]
    fn a_bad_line_has_one_message() {
        let path = Path::new("d/results.jsonl");
        let bad = |text: &str| read_records(text).err().unwrap().message(path);
        let why = "(expected one JSON object per line, as `commlab run --json` and `commlab sweep` write them)";
        assert_eq!(
            bad(&format!("{RUN_LINE}\n{{\"variant\": ")),
            format!("`d/results.jsonl` line 2 is not a commlab result: not valid JSON (EOF while parsing a value at column 12) {why}")
        );
        assert_eq!(
            bad("[1, 2]"),
            format!("`d/results.jsonl` line 1 is not a commlab result: not a JSON object with a \"variant\" {why}")
        );
        assert_eq!(
            bad(r#"{"variant":"sm","procs":"x"}"#),
            format!(
                "`d/results.jsonl` line 1 is not a commlab result: invalid type: string \"x\", expected usize {why}"
            )
        );
        // The same words when a file to append to is damaged.
        let damaged = read_appendable(format!("{RUN_LINE}\n[1, 2]\n{RUN_LINE}\n").as_bytes()).err().unwrap();
        assert_eq!(damaged.message(path), bad(&format!("{RUN_LINE}\n[1, 2]\n")));
    }

    #[test]
    fn read_records_numbers_lines_and_skips_blank_ones() {
        let text = format!("\n{RUN_LINE}\n  \n{SWEEP_LINE}");
        let recs = read_records(&text).unwrap();
        assert_eq!(recs.iter().map(|r| r.line).collect::<Vec<_>>(), [2, 4]);
        let e = read_records(&format!("{RUN_LINE}\n\n{{\"variant\": \"sm\", \n")).err().unwrap();
        assert_eq!(e.line, 3);
        assert!(matches!(e.error, LineError::NotJson(_)));
    }

    #[test]
    fn appendable_drops_a_torn_last_line_only() {
        let whole = format!("{RUN_LINE}\n{SWEEP_LINE}\n");
        let a = read_appendable(whole.as_bytes()).unwrap();
        assert_eq!((a.records.len(), a.complete_len, a.torn), (2, whole.len() as u64, false));

        // Cut off inside the last line: no newline.
        let cut = &whole[..RUN_LINE.len() + 1 + 40];
        let a = read_appendable(cut.as_bytes()).unwrap();
        assert_eq!((a.records.len(), a.complete_len, a.torn), (1, RUN_LINE.len() as u64 + 1, true));

        // A complete last object without its newline is redone too.
        let no_newline = &whole[..whole.len() - 1];
        let a = read_appendable(no_newline.as_bytes()).unwrap();
        assert_eq!((a.records.len(), a.complete_len, a.torn), (1, RUN_LINE.len() as u64 + 1, true));

        // A complete line that is not a record is never dropped, last or not (regression: a
        // last line `{"a":1}` was taken for a torn write and deleted by `sweep --resume`).
        for last in ["{\"a\":1}\n", "{\"a\":1}", "not json\n", "[1, 2]\n\n"] {
            let bad_last = format!("{RUN_LINE}\n{last}");
            assert_eq!(read_appendable(bad_last.as_bytes()).err().map(|b| b.line), Some(2), "{last:?}");
        }
        // JSON cut short is a torn write, even with blank lines after it.
        let bad_last = format!("{RUN_LINE}\n{{\"app\":\"am-lat\n\n \n");
        let a = read_appendable(bad_last.as_bytes()).unwrap();
        assert_eq!((a.records.len(), a.complete_len, a.torn), (1, RUN_LINE.len() as u64 + 1, true));
        // Trailing blank lines are not a line to drop.
        let blank_end = format!("{RUN_LINE}\n\n  ");
        let a = read_appendable(blank_end.as_bytes()).unwrap();
        assert_eq!((a.records.len(), a.complete_len, a.torn), (1, blank_end.len() as u64, false));
        let damaged = format!("{RUN_LINE}\ngarbage\n{SWEEP_LINE}\n");
        assert_eq!(read_appendable(damaged.as_bytes()).err().map(|b| b.line), Some(2));

        let blank = read_appendable(b"\n\n").unwrap();
        assert_eq!((blank.records.len(), blank.complete_len, blank.torn), (0, 2, false));
    }
}
