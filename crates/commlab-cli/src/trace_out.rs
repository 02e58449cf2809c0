//! `commlab run --trace FILE`: the run's timeline (`commlab_api::TraceData`) as Chrome
//! trace-event JSON, which Perfetto's UI (ui.perfetto.dev) and chrome://tracing open. One track
//! per processor (process "processors", thread = processor) with a complete event (`ph: X`) per
//! stretch of one time category, and flow events (`ph: s` / `f`) from each message's send to its
//! handler's entry and from each miss's stall to its access. The network's tracks hold a
//! complete event per packet serialized on a link: process "network interfaces" (an NI's
//! output is its injection link, its input its ejection link) and process "links" (router to
//! router), one thread per link that carried a packet. Times in microseconds of simulated
//! time from the start of the timed region (`ts`, `dur`), as the format wants. The format:
//! docs/trace-event.schema.json, which the tests check every trace against.

use crate::failure::{failed, input, Failure};
use commlab_api::{LinkStats, TraceData};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The default `--trace-max-events`: about 100 MB of JSON.
pub const DEFAULT_MAX_EVENTS: usize = 1_000_000;

/// `--trace-window START:END` in cycles from the start of the timed region (END may be empty:
/// to the end).
pub fn parse_window(text: &str) -> Result<(f64, f64), Failure> {
    let bad = || {
        input(format!(
            "--trace-window `{text}`: expected START:END cycles, 0 <= START < END (END may be empty: to the end)"
        ))
    };
    let (a, b) = text.split_once(':').ok_or_else(bad)?;
    let a: f64 = a.trim().parse().map_err(|_| bad())?;
    let b: f64 = if b.trim().is_empty() { f64::INFINITY } else { b.trim().parse().map_err(|_| bad())? };
    if !(a.is_finite() && a >= 0.0 && b > a) {
        return Err(bad());
    }
    Ok((a, b.min(1e18)))
}

/// The file for `variant`'s trace: FILE itself for one variant, `STEM.VARIANT.EXT` for several.
pub fn path_for(file: &Path, variant: &str, several: bool) -> PathBuf {
    if !several {
        return file.to_path_buf();
    }
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match file.extension() {
        Some(e) => format!("{stem}.{variant}.{}", e.to_string_lossy()),
        None => format!("{stem}.{variant}"),
    };
    file.with_file_name(name)
}

/// Trace-event process ids.
const PROCESSORS: u32 = 1;
const NIS: u32 = 2;
const LINKS: u32 = 3;

/// The track of link `l` (described by `links[l]`): its process and name.
fn link_track(l: Option<&LinkStats>, link: u32) -> (u32, String) {
    let Some(l) = l else { return (LINKS, format!("link {link}")) };
    let endpoint = |s: &str| s.strip_prefix("endpoint ").map(str::to_string);
    match l.kind {
        "injection" => (NIS, format!("NI {} out", endpoint(&l.from).unwrap_or_default())),
        "ejection" => (NIS, format!("NI {} in", endpoint(&l.to).unwrap_or_default())),
        _ => (LINKS, format!("link {link}: {} -> {}", l.from, l.to)),
    }
}

/// The trace as trace-event JSON; `clock_mhz` converts cycles to microseconds, `links` (the
/// run's `RunStats::links`) names the network's tracks.
pub fn to_json(t: &TraceData, links: &[LinkStats], clock_mhz: f64, about: Value) -> Value {
    let us = |cycles: f64| cycles / clock_mhz;
    let mut events =
        vec![json!({"name": "process_name", "ph": "M", "pid": PROCESSORS, "args": {"name": "processors"}})];
    let mut procs: Vec<u32> = t.spans.iter().map(|s| s.proc).collect();
    procs.sort_unstable();
    procs.dedup();
    for p in &procs {
        events.push(
            json!({"name": "thread_name", "ph": "M", "pid": PROCESSORS, "tid": p, "args": {"name": format!("processor {p}")}}),
        );
        events.push(
            json!({"name": "thread_sort_index", "ph": "M", "pid": PROCESSORS, "tid": p, "args": {"sort_index": p}}),
        );
    }
    for s in &t.spans {
        events.push(json!({
            "name": s.category.name(), "cat": "time", "ph": "X", "pid": PROCESSORS, "tid": s.proc,
            "ts": us(s.start), "dur": us(s.end - s.start),
        }));
    }
    let mut tracks: Vec<u32> = t.packets.iter().map(|p| p.link).collect();
    tracks.sort_unstable();
    tracks.dedup();
    for (pid, name) in [(NIS, "network interfaces"), (LINKS, "links")] {
        events.push(json!({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}));
        events.push(json!({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}}));
    }
    let track = |link: u32| link_track(links.get(link as usize).filter(|l| l.link == link), link);
    for &link in &tracks {
        let (pid, name) = track(link);
        events.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": link, "args": {"name": name}}));
        events.push(
            json!({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": link, "args": {"sort_index": link}}),
        );
    }
    for p in &t.packets {
        events.push(json!({
            "name": p.name, "cat": "packet", "ph": "X", "pid": track(p.link).0, "tid": p.link,
            "ts": us(p.start), "dur": us(p.end - p.start), "args": {"src": p.src, "dst": p.dst},
        }));
    }
    for (id, f) in t.flows.iter().enumerate() {
        let cat = if f.name == "miss" { "miss" } else { "message" };
        events.push(
            json!({"name": f.name, "cat": cat, "ph": "s", "id": id, "pid": PROCESSORS, "tid": f.from, "ts": us(f.from_cycle)}),
        );
        events.push(json!({"name": f.name, "cat": cat, "ph": "f", "bp": "e", "id": id, "pid": PROCESSORS, "tid": f.to, "ts": us(f.to_cycle)}));
    }
    let mut other = about;
    other["truncated_at_cycle"] = json!(t.truncated_at);
    json!({"displayTimeUnit": "ns", "otherData": other, "traceEvents": events})
}

/// Write `trace` to `path` (created or replaced); a note on stderr when it was cut at the cap.
pub fn write(
    path: &Path,
    trace: &TraceData,
    links: &[LinkStats],
    clock_mhz: f64,
    about: Value,
    max_events: usize,
) -> Result<(), Failure> {
    let doc = to_json(trace, links, clock_mhz, about);
    let err = |e: std::io::Error| failed(format!("writing --trace `{}`: {e}", path.display()));
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(err)?);
    serde_json::to_writer(&mut f, &doc).map_err(|e| failed(format!("writing --trace `{}`: {e}", path.display())))?;
    f.flush().map_err(err)?;
    if let Some(at) = trace.truncated_at {
        eprintln!(
            "commlab run: the trace `{}` reached --trace-max-events {max_events} at cycle {at:.0} and stops there; narrow it with --trace-window START:END or raise --trace-max-events",
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_or_name_the_bad_input() {
        assert_eq!(parse_window("100:2000").ok(), Some((100.0, 2000.0)));
        assert_eq!(parse_window("5:").ok(), Some((5.0, 1e18)));
        for bad in ["", "100", "a:b", "10:5", "-1:5", "5:5", "nan:4"] {
            let Err(e) = parse_window(bad) else { panic!("{bad} accepted") };
            assert_eq!(e.status, 2);
            assert!(e.message.contains("--trace-window"), "{}", e.message);
        }
    }

    #[test]
    fn several_variants_get_a_file_each() {
        let p = Path::new("/tmp/t.json");
        assert_eq!(path_for(p, "sm", false), PathBuf::from("/tmp/t.json"));
        assert_eq!(path_for(p, "mp-int", true), PathBuf::from("/tmp/t.mp-int.json"));
    }
}
