//! Signal/wait on active messages: a producer tells a consumer that something it waits for
//! is ready (Tempest's signal/wait, as the Blizzard applications use it for pipelines).
//!
//! Each processor keeps a [`Signals`] table in its private state: a count per tag.
//! [`signal`]`(node, handler, dest, tag)` sends `dest` one active message whose handler
//! ([`on_signal`], registered by the program) bumps `dest`'s count for `tag`;
//! [`wait`]`(node, tag, n)` waits (polling or taking interrupts, as the node receives
//! messages) until the count for `tag` reaches `n`, and [`Signals::consume`] takes counts
//! back so a tag can be reused. A handler that delivers data (a producer-consumer message)
//! bumps the same table with [`Signals::bump`] after storing its payload, so a consumer
//! waits for data and plain signals alike.

use commlab_api::{HandlerCtx, HandlerId, Message, Node, ProcId};
use std::collections::BTreeMap;

/// The counts of one processor, by tag.
#[derive(Clone, Debug, Default)]
pub struct Signals {
    counts: BTreeMap<u64, u64>,
    /// Bumps over the run (signals and data deliveries).
    pub received: u64,
}

impl Signals {
    /// Count one arrival for `tag`.
    pub fn bump(&mut self, tag: u64) {
        *self.counts.entry(tag).or_default() += 1;
        self.received += 1;
    }
    /// Arrivals for `tag` not yet consumed.
    pub fn count(&self, tag: u64) -> u64 {
        self.counts.get(&tag).copied().unwrap_or(0)
    }
    /// Take `n` arrivals of `tag` back (after a [`wait`] for them).
    pub fn consume(&mut self, tag: u64, n: u64) {
        if n == 0 {
            return; // waiting for no arrivals takes none, whether any came or not
        }
        let c = self.counts.get_mut(&tag).expect("consume of a tag that never arrived");
        assert!(*c >= n, "consume of {n} arrivals of tag {tag}, {c} arrived");
        *c -= n;
        if *c == 0 {
            self.counts.remove(&tag);
        }
    }
    /// Tags with arrivals not yet consumed.
    pub fn pending(&self) -> usize {
        self.counts.len()
    }
}

/// A processor state that holds a [`Signals`] table.
pub trait HasSignals {
    fn signals(&self) -> &Signals;
    fn signals_mut(&mut self) -> &mut Signals;
}

/// The handler of a signal: `args[0]` is the tag. Register it in `Program::handlers`.
pub fn on_signal<S: HasSignals>(s: &mut S, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.signals_mut().bump(m.args[0]);
}

/// Signal `tag` to `dest` (`handler` names [`on_signal`] in the program's handlers).
pub fn signal<N: Node>(node: &mut N, handler: HandlerId, dest: ProcId, tag: u64) {
    node.send_am(dest, handler, &[tag]);
}

/// Wait until `n` arrivals of `tag` have come, then consume them.
pub fn wait<N: Node>(node: &mut N, tag: u64, n: u64)
where
    N::State: HasSignals,
{
    node.wait_until("signal wait", move |s| s.signals().count(tag) >= n);
    node.state(|s| s.signals_mut().consume(tag, n));
}

#[cfg(test)]
mod tests {
    use super::*;
    use commlab_api::{Backend, Program};
    use commlab_sim::machine::MachineConfig;
    use commlab_sim::Simulator;
    use std::sync::Arc;

    #[derive(Default)]
    struct S {
        signals: Signals,
        /// Simulated time at which each round's wait returned.
        passed: Vec<f64>,
    }
    impl HasSignals for S {
        fn signals(&self) -> &Signals {
            &self.signals
        }
        fn signals_mut(&mut self) -> &mut Signals {
            &mut self.signals
        }
    }

    /// A token goes round a ring `ROUNDS` times: processor `p` waits for the signal of round
    /// `k` (tag `k`) from its predecessor, then signals its successor (processor 0 starts
    /// each round after the previous one came back), and finally every processor waits for
    /// a burst of three signals on one tag.
    struct Ring;
    const ROUNDS: u64 = 3;
    const SIG: HandlerId = HandlerId(0);
    const BURST: u64 = 99;

    impl Program for Ring {
        type State = S;
        fn handlers(&self) -> Vec<commlab_api::Handler<S>> {
            vec![on_signal::<S>]
        }
        fn init_state(&self, _: ProcId, _: usize) -> S {
            S::default()
        }
        fn main<N: Node<State = S>>(&self, node: &mut N) {
            let (me, p) = (node.id(), node.nprocs());
            for k in 0..ROUNDS {
                if me != 0 {
                    wait(node, k, 1);
                }
                let t = node.now_cycles();
                node.state(|s| s.passed.push(t));
                signal(node, SIG, (me + 1) % p, k);
                if me == 0 {
                    wait(node, k, 1);
                }
            }
            for _ in 0..3 {
                signal(node, SIG, (me + p - 1) % p, BURST);
            }
            wait(node, BURST, 3);
        }
    }

    #[test]
    fn a_token_goes_round_a_ring_in_order_and_every_signal_is_consumed() {
        let s = Simulator::new(MachineConfig::preset("blizzard-s", &[], Some(4)).unwrap());
        let out = s.run(Arc::new(Ring)).unwrap();
        for k in 0..ROUNDS as usize {
            for p in 1..4 {
                let (before, after) = (out.states[p - 1].passed[k], out.states[p].passed[k]);
                assert!(after > before, "round {k}: processor {p} passed at {after}, its predecessor at {before}");
            }
            if k > 0 {
                assert!(out.states[0].passed[k] > out.states[3].passed[k - 1], "round {k} started early");
            }
        }
        for (p, st) in out.states.iter().enumerate() {
            assert_eq!(st.signals.received, ROUNDS + 3, "processor {p}: signals received");
            assert_eq!(st.signals.pending(), 0, "processor {p}: unconsumed signals");
        }
    }

    #[test]
    fn counts_accumulate_per_tag_and_consume_takes_them_back() {
        let mut s = Signals::default();
        s.bump(1);
        s.bump(1);
        s.bump(7);
        assert_eq!((s.count(1), s.count(7), s.count(3)), (2, 1, 0));
        s.consume(1, 2);
        assert_eq!((s.count(1), s.pending(), s.received), (0, 1, 3));
    }

    /// Regression: a wait for no arrivals of a tag that never came panicked in `consume`.
    #[test]
    fn consuming_nothing_of_a_tag_never_seen_is_a_no_op() {
        let mut t = Signals::default();
        t.consume(7, 0);
        assert_eq!((t.count(7), t.pending()), (0, 0));
        t.bump(7);
        t.consume(7, 0);
        assert_eq!((t.count(7), t.pending()), (1, 1));
    }
}
