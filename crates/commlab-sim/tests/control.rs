//! `RunControl`: a run stopped from outside ends with `SimError::Cancelled` saying how far it
//! got; a run with a control that is never stopped is identical to one without.

use commlab_api::{Backend, Handler, HandlerId, Node, Program};
use commlab_sim::{machine::MachineConfig, RunControl, SimError, Simulator};
use std::sync::Arc;

/// Passes a token around the ring `rounds` times.
struct Ring {
    rounds: u64,
}

impl Program for Ring {
    type State = u64;
    fn handlers(&self) -> Vec<Handler<u64>> {
        vec![|s, _, _| *s += 1]
    }
    fn init_state(&self, _: usize, _: usize) -> u64 {
        0
    }
    fn main<N: Node<State = u64>>(&self, node: &mut N) {
        let (id, n) = (node.id(), node.nprocs());
        for r in 0..self.rounds {
            if id == 0 {
                node.progress(r + 1, self.rounds);
            }
            // Processor 0 starts each round; the others pass on the round's token.
            let need = if id == 0 { r } else { r + 1 };
            node.wait_until("token", move |s| *s >= need);
            node.send_am((id + 1) % n, HandlerId(0), &[r]);
        }
        node.barrier();
    }
}

/// Alewife at 8 processors, with settings `set` (`key=value`).
fn sim(set: &[&str]) -> Simulator {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Simulator::new(MachineConfig::preset("alewife", &set, Some(8)).unwrap())
}

/// Under both network models: under `fold` the ring's events all fold (one is pending at a
/// time), and the loop once looked at its control only every 4,096 queued events, so this run
/// was never stopped.
#[test]
fn a_stopped_control_cancels_the_run_with_what_it_reached() {
    for model in ["fold", "hop"] {
        let control = Arc::new(RunControl::default());
        control.stop();
        let result = sim(&[&format!("network.model={model}")])
            .with_control(Arc::clone(&control))
            .run(Arc::new(Ring { rounds: 100_000 }));
        let Err(err) = result else { panic!("{model}: a stopped run completed") };
        match err {
            SimError::Cancelled { cycles, events } => {
                assert!(cycles > 0.0 && events > 0, "{model}: {cycles} {events}");
                assert!(events <= 1 << 13, "{model}: stopped at the first look: {events}");
                assert_eq!(control.progress().0, events);
            }
            other => panic!("{model}: expected Cancelled, got {other}"),
        }
    }
}

/// Processor 0 computes in short stretches forever, the others finish at once: a run of
/// wake-ups alone, no network, which the loop must still stop when its control asks.
struct ComputeForever;

impl Program for ComputeForever {
    type State = u64;
    fn handlers(&self) -> Vec<Handler<u64>> {
        Vec::new()
    }
    fn init_state(&self, _: usize, _: usize) -> u64 {
        0
    }
    fn main<N: Node<State = u64>>(&self, node: &mut N) {
        while node.id() == 0 {
            node.compute(2);
        }
    }
}

#[test]
fn a_stopped_control_cancels_a_run_of_wake_ups_alone() {
    for model in ["fold", "hop"] {
        let control = Arc::new(RunControl::default());
        control.stop();
        let result =
            sim(&[&format!("network.model={model}")]).with_control(Arc::clone(&control)).run(Arc::new(ComputeForever));
        match result {
            Err(SimError::Cancelled { cycles, .. }) => {
                // 2 cycles a wake-up: the first look is at event 4,096, before cycle 8,192.
                assert!(cycles > 0.0 && cycles <= 8192.0, "{model}: stopped late, at cycle {cycles}");
            }
            Err(other) => panic!("{model}: expected Cancelled, got {other}"),
            Ok(_) => panic!("{model}: a run that never ends completed"),
        }
    }
}

#[test]
fn a_control_never_stopped_changes_nothing() {
    let plain = sim(&[]).run(Arc::new(Ring { rounds: 2000 })).unwrap();
    let control = Arc::new(RunControl::default());
    let watched = sim(&[]).with_control(Arc::clone(&control)).run(Arc::new(Ring { rounds: 2000 })).unwrap();
    assert_eq!(plain.states, watched.states);
    assert_eq!(plain.stats.cycles, watched.stats.cycles);
    assert_eq!(plain.stats.events, watched.stats.events);
    assert_eq!(plain.stats.procs, watched.stats.procs);
    assert_eq!(plain.stats.counters, watched.stats.counters);
    let (events, now_ps) = control.progress();
    assert!(events > 0 && events <= watched.stats.events && now_ps > 0, "progress published: {events} {now_ps}");
}

#[test]
fn machine_memory_estimate_counts_stacks_and_cache_tags() {
    let s = sim(&[]);
    let b = s.machine_bytes_estimate();
    assert_eq!(b.processors, 8 * (32 + 8) * 1024, "the stack in use and the processor's state");
    let lines = s.config().mem.cache_lines;
    assert_eq!(s.config().mem.associativity, 1);
    // Direct-mapped: one word per way (tag, state and prefetch flag), counted at its widest, 8
    // bytes (a run's caches start narrower and widen only for huge memories or long runs).
    assert_eq!(b.caches, 8 * lines * 8, "a direct-mapped way: one word");
    assert_eq!(b.total(), b.processors + b.caches);
    // Set-associative: the way's word and its LRU stamp.
    let four = Simulator::new(MachineConfig::preset("blizzard-s", &[], Some(8)).unwrap());
    assert_eq!(four.config().mem.associativity, 4);
    let lines = four.config().mem.cache_lines;
    assert_eq!(four.machine_bytes_estimate().caches, 8 * lines * 16, "a set-associative way: word and stamp");
    assert_eq!(b.stacks, 8 * (256 + 4) * 1024, "address space: whole stacks and their guard pages");
}

#[test]
fn the_programs_progress_reaches_the_control() {
    let control = Arc::new(RunControl::default());
    assert_eq!(control.work(), (0, 0));
    let watched = sim(&[]).with_control(Arc::clone(&control));
    let with = watched.run(Arc::new(Ring { rounds: 7 })).unwrap();
    assert_eq!(control.work(), (7, 7), "the last step the program reported, and its total");
    // Reporting progress changes nothing simulated.
    let without = sim(&[]).run(Arc::new(Ring { rounds: 7 })).unwrap();
    assert_eq!(with.stats.cycles, without.stats.cycles);
    assert_eq!(with.stats.events, without.stats.events);
}
