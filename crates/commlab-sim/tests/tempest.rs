//! Tempest's mechanism on the software-DSM machines: tag changes cost the presets' [dsm]
//! costs, and machines without fine-grain access control refuse user regions. The update
//! protocol built on it, with its answers, fault counts and the invariant checker at
//! barriers, is tested with the protocol itself in `commlab-apps` (`runtime/update.rs`).

use commlab_api::{
    AccessTag, Addr, Backend, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program,
};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use std::sync::Arc;

#[derive(Default)]
struct St {
    /// Retag handlers run.
    words_read: u64,
    /// `alloc_user_region`'s refusal, if it refused.
    refused: Option<String>,
}

fn sim(machine: &str, procs: usize, checked: bool) -> Simulator {
    let cfg = MachineConfig::preset(machine, &[], Some(procs)).unwrap();
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
        let base = node.alloc_user_region(64, Placement::OnNode(1)).unwrap();
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
        let c = |ps: u64| cfg.ps_to_cycles(ps).ceil();
        let want = (cfg.msg.interrupt_entry_cycles + cfg.msg.interrupt_exit_cycles) as f64
            + c(sw.tag_invalidate_ps)
            + c(sw.tag_valid_ps);
        let got = out.stats.procs[1].get(commlab_api::Category::MessageOverhead);
        assert!((got - want).abs() < 1e-3, "{m}: {got} vs {want}");
        assert_eq!(out.stats.counters["tempest_tag_changes"], 2.0);
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
        if let Err(e) = node.alloc_user_region(16, Placement::Block) {
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
