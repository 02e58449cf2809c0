//! Counter declarations: every named figure a run reports in `RunStats.counters` (the engine's)
//! or `AppResult.counters` (an application's, merged over the engine's) is declared once, as a
//! [`Counter`] with its name, unit and meaning, and inserted through that declaration
//! ([`SetCounter::set`]), never by a string literal. [`counters!`](crate::counters) declares a
//! module's counters and its table; `commlab counters` lists the tables.

use std::collections::BTreeMap;

/// One declared counter: the name it is reported under, its unit, what it measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    pub name: &'static str,
    /// e.g. "messages", "bytes", "cycles", "count", "MB/s", "fraction".
    pub unit: &'static str,
    /// One sentence: what is counted, and when it is reported.
    pub meaning: &'static str,
}

/// Setting a declared counter in a map of counters.
pub trait SetCounter {
    /// Set `c` to `value` (replacing an earlier value of the same name).
    fn set(&mut self, c: &Counter, value: f64);
}

impl SetCounter for BTreeMap<String, f64> {
    #[inline]
    fn set(&mut self, c: &Counter, value: f64) {
        self.insert(c.name.to_string(), value);
    }
}

/// Declare counters as constants and a table of them:
///
/// ```
/// commlab_api::counters! {
///     /// The example's counters.
///     pub TABLE;
///     HOPS = "hops", "hops", "network hops between the two processors";
///     SPEEDUP = "speedup", "ratio", "one processor's time over this run's";
/// }
/// assert_eq!(TABLE.len(), 2);
/// assert_eq!(HOPS.name, "hops");
/// ```
///
/// A table may also list counters declared elsewhere, in brackets after its name:
/// `pub TABLE [OTHER, ...]; NAME = ...;` (they come first in the table).
#[macro_export]
macro_rules! counters {
    (
        $(#[$tm:meta])* $vis:vis $table:ident $([$($shared:path),* $(,)?])?;
        $($(#[$cm:meta])* $id:ident = $name:literal, $unit:literal, $meaning:literal;)*
    ) => {
        $(
            $(#[$cm])*
            $vis const $id: $crate::Counter = $crate::Counter { name: $name, unit: $unit, meaning: $meaning };
        )*
        $(#[$tm])*
        $vis const $table: &[$crate::Counter] = &[$($($shared,)*)? $($id,)*];
    };
}

counters! {
    /// The counters every backend reports.
    pub BACKEND_COUNTERS;
    MESSAGES = "messages", "messages",
        "messages processors and their handlers sent through the messaging layer (active and bulk); coherence-protocol messages, one-sided requests and cross-traffic are counted apart";
}
