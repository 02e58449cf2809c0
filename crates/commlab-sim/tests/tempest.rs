//! Tempest's mechanism on the software-DSM machines: tag changes and faults cost the presets'
//! [dsm] costs as the default protocol pays them, a fault served and then taken away faults
//! again, a handler's misuse is an error that names it, and machines without fine-grain access
//! control refuse user regions; on SMP nodes tag changes pay the node's lock and a fault runs
//! on the processor that took it. The update
//! protocol built on it, with its answers, fault counts and the invariant checker at
//! barriers, is tested with the protocol itself in `commlab-apps` (`runtime/update.rs`).

use commlab_api::{
    AccessTag, Addr, Backend, Fault, FaultHandler, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId,
    Program,
};
use commlab_sim::machine::MachineConfig;
use commlab_sim::{SimError, Simulator};
use std::sync::Arc;

#[derive(Default)]
struct St {
    /// Retag handlers run.
    words_read: u64,
    /// `alloc_user_region`'s refusal, if it refused.
    refused: Option<String>,
    /// Faults taken, data replies installed, and the value the main thread loaded.
    faults: u64,
    installs: u64,
    loaded: u64,
    /// For the fetch handlers (`ask_home`, `serve_get`, `install`): the block's words, and
    /// whether the first install takes the block straight away again.
    block_words: usize,
    take_away_first: bool,
}

/// The preset on one-processor, interrupt-driven nodes (the Blizzard presets' nodes are SMP:
/// `smp` below).
fn sim(machine: &str, procs: usize, checked: bool) -> Simulator {
    let cfg = MachineConfig::preset(machine, &["node.procs_per_node=1".to_string()], Some(procs)).unwrap();
    Simulator::new(cfg).checked(checked)
}

/// Processor 0 asks processor 1 to take its own block away and give it back.
struct Retag;

fn retag(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.words_read += 1;
    ctx.set_tag(Addr(m.args[0]), AccessTag::Invalid);
    ctx.set_tag(Addr(m.args[0]), AccessTag::Writable);
}

impl Program for Retag {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        vec![retag]
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        let base = node.alloc_user_region(64, Placement::OnNode(1), 128).unwrap();
        node.begin_timing();
        if node.id() == 0 {
            node.send_am(1, HandlerId(0), &[base.0]);
        } else {
            node.wait_until("retag", |s| s.words_read == 1);
        }
    }
}

#[test]
fn tag_changes_cost_the_presets_dsm_costs_more_on_blizzard_e_than_on_blizzard_t() {
    // Invalidating a block is a kernel protection change on blizzard-e and a per-granule
    // hardware tag write on blizzard-t (the presets' own [dsm] costs, which the default
    // protocol pays for the same change); the handler is entry + both changes + exit.
    let handler = |m: &str| {
        let s = sim(m, 2, false);
        let out = s.run(Arc::new(Retag)).unwrap();
        let cfg = s.config();
        let sw = cfg.coherence.software().unwrap();
        let c = |ps: u64| cfg.ps_to_cycles(ps);
        let want =
            c(cfg.msg.interrupt_entry_ps + cfg.msg.interrupt_exit_ps) + c(sw.tag_invalidate_ps) + c(sw.tag_valid_ps);
        let got = out.stats.procs[1].get(commlab_api::Category::MessageOverhead);
        assert!((got - want).abs() < 1e-3, "{m}: {got} vs {want}");
        assert_eq!(out.stats.counters["tempest_tag_changes"], 2.0);
        // The one handler is all the handler time, on the compute processor.
        let counters = &out.stats.counters;
        let handlers = counters["handler_cycles_compute"];
        assert!((handlers - want).abs() < 1e-3, "{m}: handler time {handlers} vs {want}");
        assert_eq!(counters["handler_cycles_protocol"], 0.0, "{m}");
        c(sw.tag_invalidate_ps) + c(sw.tag_valid_ps)
    };
    assert!(handler("blizzard-e") > handler("blizzard-t"));
    handler("blizzard-s");
}

/// Every processor asks for a user region and keeps the refusal.
struct Refuse;

impl Program for Refuse {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        Vec::new()
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        if let Err(e) = node.alloc_user_region(16, Placement::Block, 128) {
            node.state(|s| s.refused = Some(e));
        }
    }
}

#[test]
fn machines_with_hardware_coherence_refuse_user_regions() {
    let out = sim("alewife", 2, false).run(Arc::new(Refuse)).unwrap();
    for s in &out.states {
        let e = s.refused.as_deref().expect("refused");
        assert!(e.contains("memory.model = \"software\""), "{e}");
    }
    // The software-DSM machines grant them.
    let out = sim("blizzard-s", 2, false).run(Arc::new(Refuse)).unwrap();
    assert!(out.states.iter().all(|s| s.refused.is_none()));
}

/// A minimal fetch protocol for blocks homed at processor 1: a fault asks the home (`GET`),
/// whose handler sends the block (`DATA`); the reply handler installs it read-only (and, with
/// `take_away_first`, takes it straight away again the first time, as an invalidation queued
/// right behind the data would).
const GET: HandlerId = HandlerId(0);
const DATA: HandlerId = HandlerId(1);

fn fetch_handlers() -> Vec<Handler<St>> {
    vec![serve_get, install]
}

fn ask_home(s: &mut St, ctx: &mut dyn HandlerCtx, f: &Fault) {
    s.faults += 1;
    ctx.send_am(1, GET, &[f.block.0]);
}

fn serve_get(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let mut buf = vec![0; s.block_words];
    ctx.block_read(Addr(m.args[0]), &mut buf);
    ctx.send_bulk(m.src, DATA, &[m.args[0]], &[&buf]);
}

fn install(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.installs += 1;
    ctx.block_write(Addr(m.args[0]), m.payload);
    ctx.set_tag(Addr(m.args[0]), AccessTag::ReadOnly);
    if s.take_away_first && s.installs == 1 {
        ctx.set_tag(Addr(m.args[0]), AccessTag::Invalid);
    }
}

/// Processor 0 loads a word of a one-line block homed at processor 1 (timed from after the
/// home has written it); with `take_away_first`, the first install is taken away again.
struct RemoteLoad {
    take_away_first: bool,
}

impl Program for RemoteLoad {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        fetch_handlers()
    }
    fn fault_handler(&self) -> Option<FaultHandler<St>> {
        Some(ask_home)
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St { block_words: 16, take_away_first: self.take_away_first, ..St::default() }
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        let base = node.alloc_user_region(16, Placement::OnNode(1), 128).unwrap();
        if node.id() == 1 {
            node.store(base.word(3), 42);
        }
        node.barrier();
        node.begin_timing();
        if node.id() == 0 {
            let v = node.load(base.word(3));
            node.state(|s| s.loaded = v);
        }
        node.barrier();
    }
}

/// Regression: a block made accessible and taken away again before the faulting access
/// retried left the fault marked outstanding, so no second fault was raised and the access
/// waited for ever (a deadlock report).
#[test]
fn a_block_taken_away_before_the_access_retries_faults_again() {
    for m in ["blizzard-s", "blizzard-e", "blizzard-t"] {
        let out =
            sim(m, 2, false).run(Arc::new(RemoteLoad { take_away_first: true })).unwrap_or_else(|e| panic!("{m}: {e}"));
        let p0 = &out.states[0];
        assert_eq!((p0.faults, p0.installs, p0.loaded), (2, 2, 42), "{m}");
    }
}

/// Processor 0 stores to a block it homes; with `read_only`, a handler on it has first made
/// the block read-only, so the store takes an upgrade fault whose handler makes it writable.
struct Upgrade {
    read_only: bool,
}

fn make_read_only(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.set_tag(Addr(m.args[0]), AccessTag::ReadOnly);
    s.installs += 1;
}

fn make_writable(s: &mut St, ctx: &mut dyn HandlerCtx, f: &Fault) {
    s.faults += 1;
    ctx.set_tag(f.block, AccessTag::Writable);
}

impl Program for Upgrade {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        vec![make_read_only]
    }
    fn fault_handler(&self) -> Option<FaultHandler<St>> {
        Some(make_writable)
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        let base = node.alloc_user_region(16, Placement::OnNode(0), 128).unwrap();
        if node.id() == 0 && self.read_only {
            node.send_am(0, HandlerId(0), &[base.0]);
            node.wait_until("read-only", |s| s.installs == 1);
        }
        node.begin_timing();
        if node.id() == 0 {
            node.store(base.word(0), 7);
        }
    }
}

/// Regression: an upgrade fault (a store to a read-only block) entered its handler at
/// `dsm.upgrade_fault_cycles` alone and its handler paid the whole per-granule tag cost to
/// make the block writable; the default protocol charges the miss trap plus the upgrade's
/// extra, and the base tag cost for a permission-only change.
#[test]
fn an_upgrade_fault_costs_what_the_default_protocols_upgrade_does() {
    for m in ["blizzard-s", "blizzard-e", "blizzard-t"] {
        let s = sim(m, 2, false);
        let run = |read_only| s.run(Arc::new(Upgrade { read_only })).unwrap();
        let (fault, plain) = (run(true), run(false));
        assert_eq!((fault.states[0].faults, plain.states[0].faults), (1, 0), "{m}");
        let cfg = s.config();
        let sw = cfg.coherence.software().unwrap();
        let c = |ps: u64| cfg.ps_to_cycles(ps);
        // On blizzard-e the block's page also turns read-write again: its only read-only block
        // is gone (mprotect, as the default protocol's upgrade pays it).
        let page = sw.pages.map_or(0, |p| p.protect_ps);
        let want = c(sw.miss_trap_ps + sw.upgrade_fault_ps) + c(sw.tag_valid_base_ps + page) + c(sw.resume_ps);
        let time = |o: &commlab_api::RunOutput<St>| o.stats.procs[0].busy;
        let got = time(&fault) - time(&plain);
        assert!((got - want).abs() < 1e-3, "{m}: the upgrade fault took {got} cycles, want {want}");
    }
}

/// A handler that misuses the interface: asks the tag of an address outside any allocation,
/// or sends to a handler the program never registered.
struct Misuse {
    tag_of_nothing: bool,
}

fn misuse(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.installs += 1;
    if m.args[0] == 1 {
        let _ = ctx.tag(Addr(1 << 40));
    } else {
        ctx.send_am(0, HandlerId(99), &[]);
    }
}

impl Program for Misuse {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        vec![misuse]
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        node.alloc_user_region(16, Placement::Block, 128).unwrap();
        if node.id() == 0 {
            node.send_am(1, HandlerId(0), &[u64::from(self.tag_of_nothing)]);
        } else {
            node.wait_until("the message", |s| s.installs == 1);
        }
    }
}

/// Regression: both misuses panicked inside the simulator (an index out of bounds) instead of
/// ending the run with an error that names them.
#[test]
fn a_handlers_bad_tag_query_or_handler_number_is_a_program_error() {
    for (tag_of_nothing, want) in [(true, "tag of address 0x10000000000"), (false, "names handler 99")] {
        match sim("blizzard-s", 2, false).run(Arc::new(Misuse { tag_of_nothing })) {
            Err(SimError::Program(e)) => assert!(e.contains(want), "{e}"),
            Err(e) => panic!("expected a program error naming `{want}`, got {e}"),
            Ok(_) => panic!("expected a program error naming `{want}`, the run succeeded"),
        }
    }
}

/// Processor 0 loads two words on different lines of one 512-byte block homed at processor 1
/// (four 128-byte lines): one fault brings the whole block.
struct BigBlock;

impl Program for BigBlock {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        fetch_handlers()
    }
    fn fault_handler(&self) -> Option<FaultHandler<St>> {
        Some(ask_home)
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St { block_words: 64, ..St::default() }
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        let base = node.alloc_user_region(64, Placement::OnNode(1), 512).unwrap();
        if node.id() == 1 {
            node.store(base.word(3), 30);
            node.store(base.word(50), 500);
        }
        node.barrier();
        if node.id() == 0 {
            let v = node.load(base.word(3)) + node.load(base.word(50));
            node.state(|s| s.loaded = v);
        }
        node.barrier();
    }
}

#[test]
fn a_block_of_several_lines_faults_copies_and_tags_as_one() {
    let out = sim("blizzard-s", 2, true).run(Arc::new(BigBlock)).unwrap();
    let p0 = &out.states[0];
    assert_eq!((p0.faults, p0.installs, p0.loaded), (1, 1, 530), "one fault brings both lines' words");
    let c = &out.stats.counters;
    assert_eq!((c["tempest_faults"], c["tempest_block_copies"], c["tempest_tag_changes"]), (1.0, 2.0, 1.0));
}

/// Every processor asks for a region with the given block size, words and placement, and
/// keeps the refusal.
struct Ask {
    words: usize,
    placement: Placement,
    block_bytes: usize,
}

impl Program for Ask {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        Vec::new()
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        if let Err(e) = node.alloc_user_region(self.words, self.placement.clone(), self.block_bytes) {
            node.state(|s| s.refused = Some(e));
        }
    }
}

#[test]
fn bad_block_sizes_partial_blocks_and_split_blocks_are_refused_by_name() {
    let ask = |words, placement, block_bytes| {
        let out = sim("blizzard-s", 4, false).run(Arc::new(Ask { words, placement, block_bytes })).unwrap();
        out.states[0].refused.clone()
    };
    for bad in [64, 96, 16384] {
        let e = ask(256, Placement::OnNode(0), bad).expect("refused");
        assert!(e.contains(&format!("{bad} bytes")) && e.contains("power of two"), "{e}");
    }
    let e = ask(16, Placement::OnNode(0), 512).expect("refused");
    assert!(e.contains("whole number of blocks"), "{e}");
    // Cyclic placement homes a 512-byte block's four lines on four processors.
    let e = ask(256, Placement::Cyclic, 512).expect("refused");
    assert!(e.contains("two homes"), "{e}");
    assert_eq!(ask(256, Placement::Block, 512), None, "block placement keeps whole blocks");
}

/// Processor 0 reads a shared (default-protocol) word homed at processor 1.
struct RemoteRead;

impl Program for RemoteRead {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        Vec::new()
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        let a = node.alloc_shared(16, Placement::OnNode(1));
        node.barrier();
        node.begin_timing();
        if node.id() == 0 {
            let v = node.load(a);
            node.state(|s| s.loaded = v);
        }
        node.barrier();
    }
}

/// Handler time is reported by the kind of processor that ran it: with `dsm.handlers =
/// "protocol-processor"` the home's protocol handler runs there, the requester's trap and
/// reply handler on its compute processor.
#[test]
fn handler_time_is_counted_on_the_processor_kind_that_ran_it() {
    let run = |handlers: &str| {
        let set = ["node.procs_per_node=1".to_string(), format!("dsm.handlers={handlers}")];
        let cfg = MachineConfig::preset("blizzard-s", &set, Some(2)).unwrap();
        Simulator::new(cfg).run(Arc::new(RemoteRead)).unwrap().stats.counters
    };
    let (compute, pp) = (run("compute"), run("protocol-processor"));
    assert_eq!(compute["handler_cycles_protocol"], 0.0);
    assert!(pp["handler_cycles_protocol"] > 0.0, "the home's handler ran on its protocol processor");
    assert!(compute["handler_cycles_compute"] > pp["handler_cycles_compute"], "{compute:?} vs {pp:?}");
    assert!(pp["handler_cycles_compute"] > 0.0, "the requester's trap and reply handler");
    // Hardware coherence has no such counters.
    let cfg = MachineConfig::preset("alewife", &[], Some(2)).unwrap();
    let hw = Simulator::new(cfg).run(Arc::new(RemoteRead)).unwrap().stats.counters;
    assert!(!hw.contains_key("handler_cycles_compute"));
}

/// Processor 0 reads a user block homed at processor 1 before timing begins, and again after.
struct FaultBeforeTiming;

impl Program for FaultBeforeTiming {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        fetch_handlers()
    }
    fn fault_handler(&self) -> Option<FaultHandler<St>> {
        Some(ask_home)
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St { block_words: 16, ..St::default() }
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        let base = node.alloc_user_region(16, Placement::OnNode(1), 128).unwrap();
        if node.id() == 0 {
            node.load(base);
        }
        node.barrier();
        node.begin_timing();
        if node.id() == 0 {
            node.load(base);
        }
        node.barrier();
    }
}

/// Regression: the Tempest counts were the whole run's while every memory count is the timed
/// region's; a set-up fault was reported as if timed.
#[test]
fn tempest_counts_are_the_timed_regions() {
    let out = sim("blizzard-s", 2, false).run(Arc::new(FaultBeforeTiming)).unwrap();
    assert_eq!(out.states[0].faults, 1, "the set-up load faulted once");
    let c = &out.stats.counters;
    assert_eq!((c["tempest_faults"], c["tempest_tag_changes"], c["tempest_block_copies"]), (0.0, 0.0, 0.0));
}

/// SMP nodes (`node.procs_per_node = 2`) whose dispatch loop takes a message as soon as it is
/// free (no polling technique's costs), with a tag lock of `lock` cycles.
fn smp(machine: &str, lock: u64) -> Simulator {
    let set = [
        "node.procs_per_node=2".to_string(),
        "messaging.poll_mechanism=none".to_string(),
        format!("node.tag_lock_cycles={lock}"),
    ];
    Simulator::new(MachineConfig::preset(machine, &set, Some(2)).unwrap())
}

#[test]
fn every_tag_change_on_an_smp_node_pays_the_tag_lock() {
    const LOCK: u64 = 20;
    for m in ["blizzard-s", "blizzard-e", "blizzard-t"] {
        let handler = |lock: u64| smp(m, lock).run(Arc::new(Retag)).unwrap().stats.counters["handler_cycles_protocol"];
        let (free, locked) = (handler(0), handler(LOCK));
        assert!((locked - free - 2.0 * LOCK as f64).abs() < 1e-3, "{m}: two tag changes: {locked} vs {free}");
        // Without the lock the handler is what a one-processor node's is, polled, not interrupted.
        let one = sim(m, 2, false);
        let cfg = one.config();
        let sw = cfg.coherence.software().unwrap();
        let c = |ps: u64| cfg.ps_to_cycles(ps);
        let want =
            c(cfg.msg.poll_dispatch_ps + cfg.msg.receive_cost_ps(1)) + c(sw.tag_invalidate_ps) + c(sw.tag_valid_ps);
        assert!((free - want).abs() < 1e-3, "{m}: {free} vs {want}");
    }
}

#[test]
fn on_an_smp_node_a_fault_runs_on_the_processor_that_took_it_and_the_messages_on_the_protocol_processor() {
    for m in ["blizzard-s", "blizzard-e", "blizzard-t"] {
        let s = smp(m, 20);
        let out = s.run(Arc::new(RemoteLoad { take_away_first: false })).unwrap_or_else(|e| panic!("{m}: {e}"));
        let p0 = &out.states[0];
        assert_eq!((p0.faults, p0.installs, p0.loaded), (1, 1, 42), "{m}");
        // The fault handler (trap, one send, resume) is the compute processor's only handler
        // time; it is message overhead in processor 0's accounting.
        let cfg = s.config();
        let sw = cfg.coherence.software().unwrap();
        let c = |ps: u64| cfg.ps_to_cycles(ps);
        let fault = c(sw.miss_trap_ps + cfg.msg.send_cost_ps(1, None) + sw.resume_ps);
        let counters = &out.stats.counters;
        assert!((counters["handler_cycles_compute"] - fault).abs() < 1e-3, "{m}: {counters:?} vs {fault}");
        assert!((out.stats.procs[0].get(commlab_api::Category::MessageOverhead) - fault).abs() < 1e-3, "{m}");
        assert!(counters["handler_cycles_protocol"] > 0.0, "{m}: the home's reply and the install");
        assert_eq!(counters["tempest_faults"], 1.0, "{m}");
    }
}
