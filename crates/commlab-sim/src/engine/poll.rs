//! `messaging.poll_mechanism` on SMP nodes: when the protocol processor's dispatch loop sees an
//! arrived message, what its poll costs, the DMA and interrupt flags' burst rule, the LANai
//! polls' share of the I/O bridge, and the notification of a waiting compute thread
//! (`machine::PollMechanism` has the costs and their sources).
//!
//! *Polling techniques* (`engine/poll.rs`; costs and sources in `machine/poll.rs`): an arrival
//! (`World::poll_arrive`) is visible after its flag's update (DMA and interrupt only for the first
//! of a burst; the flag is cleared at the protocol processor's cost when a handler ends with the
//! inbox empty, `poll_queue_empty`); the loop polls on a grid from when it was last free
//! (`poll_start`); entry costs the seeing poll plus `messaging.poll_receive_cycles`; a compute
//! thread blocked in a wait or barrier is woken the technique's notification later (`notify_at`),
//! misses at once; LANai polls share the I/O bridge with bulk DMA at both ends. Counters
//! `poll_messages`, `poll_flag_updates`, `poll_bus_wait_cycles`, `poll_notifies`; Table 2 is in
//! `validate` for the blizzard presets (`poll_mechanism.rs` tests in commlab-apps and commlab-cli).

use super::state::Wait;
use super::world::World;

impl<S> World<S> {
    fn poll_timed(&self) -> bool {
        self.timing_start.is_some_and(|t| self.now >= t)
    }

    /// Message `msg` arrives in `dst`'s NI receive queue now: when the protocol processor's poll
    /// can first see it, and what the poll that sees it costs.
    pub(crate) fn poll_arrive(&mut self, dst: usize, msg: u32) {
        let pc = self.cfg.poll.expect("a polling mechanism");
        let now = self.now;
        // LANai polling: the NI's DMA of bulk data into host memory shares the bridge.
        let bus_ps = pc.bus_wait_for(8 * self.msg(msg).payload.len() as u64);
        let arrive = now + bus_ps;
        let node = &mut self.poll_nodes[dst];
        let mut update = false;
        let (visible, seen) = if pc.burst && node.flag_set {
            // A later message of a burst: the host's flag is (or is about to be) set.
            (arrive.max(node.flag_at), pc.seen_in_burst_ps)
        } else {
            if pc.burst {
                node.flag_set = true;
                node.flag_at = arrive + pc.update_ps;
            }
            update = pc.update_ps > 0;
            (arrive + pc.update_ps, pc.seen_ps)
        };
        let rec = self.msg_mut(msg);
        rec.visible_ps = visible;
        rec.poll_seen_ps = seen;
        if self.poll_timed() {
            let s = &mut self.poll_stats;
            s.messages += 1;
            s.flag_updates += update as u64;
            // Both ends' waits (the sender's is charged when it launches, as this one).
            s.bus_wait_ps += 2 * bus_ps;
        }
    }

    /// When `p`'s protocol processor, free from `free` and polling from then on (a poll every
    /// `failed_ps`), starts the poll that sees its inbox's head (`free` without a mechanism).
    pub(crate) fn poll_start(&self, p: usize, free: u64) -> u64 {
        let Some(pc) = self.cfg.poll else { return free };
        let Some(&head) = self.procs[p].inbox.front() else { return free };
        let visible = self.msg(head).visible_ps;
        if visible <= free {
            free
        } else {
            free + (visible - free).div_ceil(pc.failed_ps) * pc.failed_ps
        }
    }

    /// A handler on `p`'s protocol processor ended now: with the burst rule, an empty queue
    /// clears the host's flag and the NI's copy (the protocol processor's time).
    pub(crate) fn poll_queue_empty(&mut self, p: usize) {
        let pc = self.cfg.poll.expect("a polling mechanism");
        if !pc.burst || !self.procs[p].inbox.is_empty() || !self.poll_nodes[p].flag_set {
            return;
        }
        self.poll_nodes[p].flag_set = false;
        self.mem.set_pp_busy(p, self.mem.pp_busy(p).max(self.now) + pc.clear_ps);
    }

    /// When `p`'s compute thread, blocked on `wait`, learns of a protocol handler that ended
    /// now: a program condition or barrier it waits on is notified at the mechanism's cost
    /// (Table 2's compute-thread sending); anything else (a miss) at once.
    pub(crate) fn notify_at(&mut self, p: usize, wait: Wait) -> u64 {
        let now = self.now;
        let Some(pc) = self.cfg.poll else { return now };
        if !matches!(wait, Wait::Cond(_) | Wait::Barrier(_)) {
            return now;
        }
        // A notification already under way is not pushed back by a later handler.
        let pending = self.poll_nodes[p].notify_at;
        if pending > now {
            return pending;
        }
        if self.poll_timed() {
            self.poll_stats.notifies += 1;
        }
        self.poll_nodes[p].notify_at = now + pc.notify_ps;
        now + pc.notify_ps
    }
}
