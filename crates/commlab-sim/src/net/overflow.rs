//! The network overflow trap's detector (`messaging.overflow_timeout_cycles`; 0: nothing here
//! runs and no event is scheduled).
//!
//! A processor's NI is *blocked* while its input queue is full and at least one packet waits
//! for its ejection link. When it becomes blocked an `OverflowCheck` is scheduled a timeout
//! later; the check reports `NetNotice::Overflow` only if the NI has been blocked ever since.
//! "Ever since" is in simulated time: a slot freed by a handler and taken by the next waiting
//! packet in the same picosecond does not end the episode (a receiver that keeps up with a
//! backlog never empties it), while any positive time unblocked does. After a report nothing is
//! watched until the engine, at the end of the trap, re-arms the NI (`overflow_rearm`), so a
//! backlog that outlasts the trap starts a new timeout from its end.

/// The overflow detector's state of one NI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Watch {
    /// Not blocked.
    Clear,
    /// Blocked continuously since `since`.
    Blocked { since: u64 },
    /// Blocked from `since` until `at`, not blocked since `at`: blocked again at `at` itself,
    /// the episode goes on from `since`.
    Paused { since: u64, at: u64 },
    /// Reported; not watched until re-armed.
    Trapped,
}

impl Watch {
    /// The state after the NI was looked at again at `now` and found `blocked` or not, and when
    /// to check it for the trap if a check is due (`timeout`: the trap's timeout in
    /// picoseconds).
    pub(super) fn look(self, blocked: bool, now: u64, timeout: u64) -> (Watch, Option<u64>) {
        match (self, blocked) {
            (Watch::Paused { since, at }, true) if at == now => {
                // Its check may have passed (and been ignored) during the pause.
                let check = (since + timeout <= now).then_some(now);
                (Watch::Blocked { since }, check)
            }
            (Watch::Clear | Watch::Paused { .. }, true) => (Watch::Blocked { since: now }, Some(now + timeout)),
            (Watch::Blocked { since }, false) => (Watch::Paused { since, at: now }, None),
            (unchanged, _) => (unchanged, None),
        }
    }

    /// A check at `now`: whether the NI has been blocked for the whole timeout, in which case
    /// the trap is reported and the state becomes `Trapped`.
    pub(super) fn check(self, now: u64, timeout: u64) -> Option<Watch> {
        match self {
            Watch::Blocked { since } if since + timeout <= now => Some(Watch::Trapped),
            _ => None,
        }
    }
}
