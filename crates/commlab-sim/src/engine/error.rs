//! [`SimError`]: why a run did not complete.

use std::fmt;

/// Why a run did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// Every unfinished processor is blocked and nothing can wake it. The report lists each
    /// processor and what it waits on.
    Deadlock(String),
    /// `limits.max_events` was reached.
    EventLimit { events: u64, cycles: f64 },
    /// `limits.max_sim_time_ms` was reached.
    TimeLimit { cycles: f64 },
    /// The program asked for something the machine cannot do (argument cap, bad processor id,
    /// a missing cost entry).
    Program(String),
    /// An internal consistency check failed (a simulator bug).
    Internal(String),
    /// The caller stopped the run through its [`RunControl`](crate::RunControl) (e.g. a wall-clock limit
    /// the CLI keeps); `cycles` and `events` say how far it got.
    Cancelled { cycles: f64, events: u64 },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Deadlock(r) => write!(f, "deadlock: {r}"),
            SimError::EventLimit { events, cycles } => write!(
                f,
                "run stopped after {events} events at cycle {cycles:.0} (limits.max_events); raise it with --set limits.max_events=N"
            ),
            SimError::TimeLimit { cycles } => write!(
                f,
                "run stopped at cycle {cycles:.0}: simulated time limit reached (limits.max_sim_time_ms); raise it with --set limits.max_sim_time_ms=MS"
            ),
            SimError::Program(m) => write!(f, "program error: {m}"),
            SimError::Internal(m) => write!(f, "internal error: {m}"),
            SimError::Cancelled { cycles, events } => {
                write!(f, "run cancelled at simulated cycle {cycles:.0} after {events} events")
            }
        }
    }
}

impl std::error::Error for SimError {}
