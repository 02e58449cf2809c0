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

use super::{NetEvent, NetNotice, NetQueue, Network};

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

impl Network {
    /// Whether processor `ep`'s NI is blocked: input queue full and a packet waiting to enter.
    fn blocked(&self, ep: usize) -> bool {
        let ni = &self.nis[ep];
        ni.in_used >= ni.in_capacity && !self.links[self.topo.ejection_link(ep) as usize].waiters.is_empty()
    }

    /// Look at `ep`'s NI again after its input queue or its ejection link's waiters changed
    /// (only called when the trap is on).
    pub(super) fn watch(&mut self, q: &mut impl NetQueue, now: u64, ep: usize) {
        if ep >= self.topo.nprocs() {
            return; // I/O nodes never fill
        }
        let blocked = self.blocked(ep);
        let (timeout, check) = (self.overflow_ps, NetEvent::OverflowCheck { ep: ep as u32 });
        let next = match (self.nis[ep].watch, blocked) {
            (Watch::Paused { since, at }, true) if at == now => {
                // Its check may have passed (and been ignored) during the pause.
                if since + timeout <= now {
                    q.push_net(now, check);
                }
                Watch::Blocked { since }
            }
            (Watch::Clear | Watch::Paused { .. }, true) => {
                q.push_net(now + timeout, check);
                Watch::Blocked { since: now }
            }
            (Watch::Blocked { since }, false) => Watch::Paused { since, at: now },
            (unchanged, _) => unchanged,
        };
        self.nis[ep].watch = next;
    }

    /// `NetEvent::OverflowCheck`: report the trap if `ep` has been blocked for the timeout.
    pub(super) fn on_overflow_check(&mut self, now: u64, ep: usize) {
        if let Watch::Blocked { since } = self.nis[ep].watch {
            if since + self.overflow_ps <= now {
                self.nis[ep].watch = Watch::Trapped;
                self.notices.push(NetNotice::Overflow(ep as u32));
            }
        }
    }

    /// The overflow trap of processor `ep` has ended: watch its NI again from now.
    pub fn overflow_rearm(&mut self, q: &mut impl NetQueue, now: u64, ep: usize) {
        self.nis[ep].watch = Watch::Clear;
        self.watch(q, now, ep);
    }
}
