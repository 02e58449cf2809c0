//! Application parameters (`--param key=value`): declared per app with a default and a
//! meaning, checked once, read with typed getters whose errors name the parameter.

use crate::app::{AppError, AppInfo};
use commlab_api::{Backend, ProcId};
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

/// Parameter values of one run: every declared parameter, given or defaulted.
#[derive(Clone, Debug)]
pub struct Params {
    app: &'static str,
    values: BTreeMap<String, String>,
    /// The parameters given (not defaulted).
    given: BTreeSet<String>,
}

impl Params {
    /// Check `key=value` strings against the app's declared parameters.
    pub fn parse(info: &'static AppInfo, given: &[String]) -> Result<Params, AppError> {
        let mut values: BTreeMap<String, String> =
            info.params.iter().map(|p| (p.name.to_string(), p.default.to_string())).collect();
        let mut seen: BTreeMap<String, &str> = BTreeMap::new();
        for g in given {
            let (k, v) = g.split_once('=').ok_or_else(|| {
                AppError::Input(format!(
                    "--param `{g}`: expected key=value (parameters of {}: {})",
                    info.name,
                    names(info)
                ))
            })?;
            let k = k.trim();
            if !values.contains_key(k) {
                return Err(AppError::Input(format!(
                    "--param `{k}`: app `{}` has no such parameter (valid: {})",
                    info.name,
                    names(info)
                )));
            }
            if let Some(first) = seen.insert(k.to_string(), g) {
                return Err(AppError::Input(format!("--param {k} is given twice (`{first}` and `{g}`); give it once")));
            }
            values.insert(k.to_string(), v.trim().to_string());
        }
        Ok(Params { app: info.name, values, given: seen.into_keys().collect() })
    }

    /// The first processor other than 0 that is `hops` network hops from processor 0. When the
    /// `hops` parameter was not given (its default, 1) and no processor is that far, the nearest
    /// processor (fewest hops, then lowest id) instead: on a machine whose processors share one
    /// router, and on the host (no network: every pair of cores is 0 hops apart), the default then
    /// means "another processor" rather than an error. A `hops` given explicitly must exist.
    /// Applications report the distance used in `counters.hops`.
    pub(crate) fn at_hops<B: Backend>(&self, backend: &B, hops: usize) -> Option<ProcId> {
        let n = backend.nprocs();
        (1..n).find(|&p| backend.hops(0, p) == hops).or_else(|| {
            if self.given("hops") {
                None
            } else {
                (1..n).min_by_key(|&p| (backend.hops(0, p), p))
            }
        })
    }

    /// Whether `name` was given (rather than defaulted).
    pub fn given(&self, name: &str) -> bool {
        self.given.contains(name)
    }

    /// The raw value of a parameter, as given or defaulted.
    pub fn raw(&self, name: &str) -> &str {
        self.values.get(name).map_or("", String::as_str)
    }

    /// A parameter parsed as `T`, checked by `valid` (whose text says what is allowed).
    pub fn get<T: FromStr + Copy>(&self, name: &str, valid: (&str, fn(T) -> bool)) -> Result<T, AppError> {
        let raw = self.values.get(name).unwrap_or_else(|| panic!("parameter `{name}` not declared"));
        let v: T = raw.parse().map_err(|_| self.bad(name, raw, valid.0))?;
        if !(valid.1)(v) {
            return Err(self.bad(name, raw, valid.0));
        }
        Ok(v)
    }

    fn bad(&self, name: &str, raw: &str, valid: &str) -> AppError {
        AppError::Input(format!("--param {name}={raw}: {} needs {valid}", self.app))
    }

    /// Every parameter with its value, for output.
    pub fn resolved(&self) -> BTreeMap<String, String> {
        self.values.clone()
    }
}

fn names(info: &AppInfo) -> String {
    if info.params.is_empty() {
        return "none".to_string();
    }
    info.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// Common validity rules.
/// A count of repetitions that keeps a run's memory and set-up bounded: 1 to 100,000.
pub(crate) const COUNT: (&str, fn(usize) -> bool) = ("a whole number from 1 to 100000", |v| (1..=100_000).contains(&v));

/// Iterations of an application kernel: 1 to 1,000,000 (the run itself is bounded by the
/// machine's limits and `--max-wall`).
pub(crate) const ITERATIONS: (&str, fn(usize) -> bool) =
    ("a whole number from 1 to 1000000", |v| (1..=1_000_000).contains(&v));

pub(crate) const POSITIVE: (&str, fn(usize) -> bool) = ("a whole number >= 1", |v| v >= 1);
pub(crate) const NON_NEGATIVE: (&str, fn(u64) -> bool) = ("a whole number >= 0", |_| true);
