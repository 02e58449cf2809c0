//! LimitLESS directories as Alewife had them: the home's own copy is a local bit, not one of
//! the hardware pointers; a read that finds the pointers full traps once, and the software
//! empties the pointers into a list in memory, so the following reads are handled in hardware
//! until the pointers fill again; a write to a line whose sharers overflowed traps to software;
//! and every trap takes the home processor's time (interrupt entry, handler body, exit).

use commlab_api::{Backend, BarrierKind, Category, Node, Placement, ProcId, Program, RunStats};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use std::sync::Arc;

const HOME: ProcId = 0;

/// The home reads its own line, then `readers` (other processors) read it one after another,
/// then `writer` (if any) writes it. Shared-memory barriers, so no message handler runs.
struct Sharing {
    readers: Vec<ProcId>,
    writer: Option<ProcId>,
}

impl Program for Sharing {
    type State = ();
    fn barrier_kind(&self) -> BarrierKind {
        BarrierKind::SharedMemory
    }
    fn init_state(&self, _: ProcId, _: usize) {}
    fn main<N: Node<State = ()>>(&self, node: &mut N) {
        let id = node.id();
        let line = node.alloc_shared(2, Placement::OnNode(HOME));
        node.barrier();
        node.begin_timing();
        if id == HOME {
            node.load(line);
        }
        node.barrier();
        for &r in &self.readers {
            if id == r {
                node.load(line);
            }
            node.barrier();
        }
        if self.writer == Some(id) {
            node.store(line, 7);
        }
        node.barrier();
    }
}

fn alewife() -> Simulator {
    Simulator::new(MachineConfig::preset("alewife", &[], None).unwrap()).checked(true)
}

fn run(readers: usize, writer: Option<ProcId>) -> RunStats {
    let p = Sharing { readers: (1..=readers).collect(), writer };
    alewife().run(Arc::new(p)).unwrap().stats
}

fn traps(s: &RunStats) -> f64 {
    s.counters["software_traps"]
}

/// Interrupt entry + handler body + interrupt exit of one trap, in cycles.
fn trap_cycles(body_key: &str) -> f64 {
    let sim = alewife();
    let spec = &sim.config().spec;
    let body = if body_key == "read" { spec.memory.sw_read_cycles } else { spec.memory.sw_write_cycles };
    (spec.messaging.interrupt_entry_cycles + body + spec.messaging.interrupt_exit_cycles) as f64
}

#[test]
fn five_remote_sharers_and_the_home_take_no_trap() {
    let s = run(5, None);
    assert_eq!(traps(&s), 0.0, "the home's copy is a local bit, not a pointer");
    assert_eq!(s.procs[HOME].get(Category::MessageOverhead), 0.0);
    // And a write that invalidates five remote sharers (and the home's copy) is hardware's.
    let s = run(5, Some(31));
    assert_eq!(traps(&s), 0.0);
}

#[test]
fn the_sixth_remote_sharer_traps_once_and_later_reads_use_the_pointers_again() {
    assert_eq!(traps(&run(6, None)), 1.0);
    // The trap emptied the pointers: readers 7 to 11 fit in them again.
    assert_eq!(traps(&run(11, None)), 1.0, "a trap per read past the fifth is not LimitLESS");
    assert_eq!(traps(&run(12, None)), 2.0, "the twelfth finds the pointers full again");
}

#[test]
fn a_trap_takes_the_home_processors_time() {
    let s = run(6, None);
    let home = s.procs[HOME].get(Category::MessageOverhead);
    assert_eq!(home, trap_cycles("read"), "entry + body + exit on the home processor");
    assert_eq!(s.counters["software_traps_max_per_node"], 1.0);
    for (p, t) in s.procs.iter().enumerate().skip(1) {
        assert_eq!(t.get(Category::MessageOverhead), 0.0, "processor {p} took no trap");
    }
    // The categories still sum to the busy time on the interrupted home.
    let h = &s.procs[HOME];
    assert!((h.sum() - h.busy).abs() < 1e-6, "{h:?}");
}

#[test]
fn a_write_to_an_overflowed_line_traps_to_software() {
    let s = run(6, Some(31));
    assert_eq!(traps(&s), 2.0, "one on the sixth read, one on the write");
    let home = s.procs[HOME].get(Category::MessageOverhead);
    assert_eq!(home, trap_cycles("read") + trap_cycles("write"));
    // Ownership resets the entry: the next sharers use the pointers again.
    let s = run(11, Some(31));
    assert_eq!(traps(&s), 2.0);
}
