//! The two ways of running the network (`network.model`): every app and microbenchmark in
//! every variant, on a mesh with I/O nodes and cross-traffic, a torus, a fat-tree and software
//! DSM, gives the same result under `fold` as under the per-hop reference `hop`: cycles,
//! per-processor breakdowns, traffic, per-node and per-link statistics, counters and answer
//! checks. Only the number of queued events (and wall time) may differ, and `fold` must queue
//! fewer events over the whole matrix (else it folds nothing and this test proves nothing).

use commlab_api::Backend;
use commlab_apps::{run_app, AppError, AppResult, APPS};
use commlab_sim::machine::{preset_text, MachineConfig, TieOrder};
use commlab_sim::Simulator;

use crate::common;

use common::small_params;

/// `alewife` plus a `[remote]` section (as in micro.rs), so that the one-sided variants run too.
fn alewife(set: &[&str], procs: Option<usize>) -> MachineConfig {
    let text = format!(
        "{}\n[remote]\nissue_cycles = 4\nmax_outstanding_words = 16\nwords_per_request = 4\nrequest_bytes = 16\n\
         service_cycles = 10\nservice_line_cycles = 3\nservice_word_cycles = 2\n",
        preset_text("alewife").expect("preset")
    );
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    MachineConfig::load(&text, "alewife+remote", &set, procs).expect("machine")
}

/// The shapes, each as a function of the simulator settings (`network.model`, `simulation.tie_order`).
type Shape = (&'static str, Box<dyn Fn(&[&str]) -> MachineConfig>);

fn shapes() -> Vec<Shape> {
    vec![
        (
            "mesh 4x4 with I/O nodes and cross-traffic",
            Box::new(|m: &[&str]| {
                alewife(&[&["network.io_nodes=true", "cross_traffic.rate_bytes_per_cycle=4"], m].concat(), Some(16))
            }),
        ),
        (
            "torus 4x2x2",
            Box::new(|m: &[&str]| {
                alewife(
                    &[&["network.topology=torus", "network.dims=[4,2,2]", "network.io_nodes=false"], m].concat(),
                    None,
                )
            }),
        ),
        (
            "fat-tree 16",
            Box::new(|m: &[&str]| alewife(&[&["network.topology=fat-tree", "network.nprocs=16"], m].concat(), None)),
        ),
        (
            "blizzard-e 16 (software DSM)",
            Box::new(|m: &[&str]| {
                let set: Vec<String> = m.iter().map(|s| s.to_string()).collect();
                MachineConfig::preset("blizzard-e", &set, None).expect("preset")
            }),
        ),
    ]
}

/// Everything a run reports except the simulator's own effort (events, wall time), as text so
/// that NaN counters compare equal to themselves.
fn outcome(r: Result<AppResult, AppError>) -> (String, u64) {
    match r {
        Ok(mut r) => {
            let events = r.stats.events;
            let by_kind: u64 = r.stats.events_by_kind.iter().map(|&(_, n)| n).sum();
            assert_eq!(by_kind, events, "events by kind sum to the events: {:?}", r.stats.events_by_kind);
            r.stats.events = 0;
            r.stats.events_by_kind.clear();
            r.stats.wall_seconds = 0.0;
            (format!("{r:?}"), events)
        }
        Err(e) => (format!("{e:?}"), 0),
    }
}

/// The events by kind: the same in two runs, summing to the events, with hops and resuming
/// wake-ups among them; under `fold` fewer hops are queued.
#[test]
fn events_by_kind_sum_to_the_events_and_show_the_hops_fold_saves() {
    let by_kind = |model: &str| {
        let sim = Simulator::new(alewife(&[&format!("network.model={model}")], Some(16)));
        let params = small_params("em3d", &sim);
        let r = run_app(&sim, "em3d", "sm", &params, 7).expect("em3d sm");
        let kinds: std::collections::BTreeMap<&str, u64> = r.stats.events_by_kind.iter().copied().collect();
        assert_eq!(kinds.values().sum::<u64>(), r.stats.events, "{model}: {kinds:?}");
        (kinds, r.stats.events)
    };
    let (hop, hop_events) = by_kind("hop");
    assert_eq!(by_kind("hop").0, hop, "two runs, same events by kind");
    for kind in ["hop", "deliver", "inject", "wake_timed", "wake_blocked"] {
        assert!(hop[kind] > 0, "{kind}: {hop:?}");
    }
    let (fold, fold_events) = by_kind("fold");
    assert!(fold["hop"] < hop["hop"] && fold_events < hop_events, "fold {fold:?} against hop {hop:?}");
}

/// Under `simulation.tie_order = "key"` every app and variant runs and passes its answer check
/// on the four shapes, `fold` gives exactly the per-hop results (the hops it runs ahead:
/// `Network::hop_ahead`'s argument, `net/mod.rs`), a second run gives the same results
/// (determinism), and on the first shape some run differs from the same run under `creation`
/// (so the key order is in effect). (Under `creation` no hop runs ahead: `fold` is `hop`.)
#[test]
fn under_the_key_tie_order_every_app_passes_and_fold_gives_the_per_hop_results() {
    let order = "simulation.tie_order=key";
    let (mut hop_events, mut fold_events, mut runs, mut differ_from_creation) = (0u64, 0u64, 0, 0);
    for (i, (shape, make)) in shapes().into_iter().enumerate() {
        let hop = Simulator::new(make(&["network.model=hop", order]));
        let fold = Simulator::new(make(&["network.model=fold", order]));
        let creation = Simulator::new(make(&["network.model=hop", "simulation.tie_order=creation"]));
        assert!(!hop.config().fold_events && fold.config().fold_events);
        for app in APPS {
            for v in app.variants {
                let params = small_params(app.name, &hop);
                let (a, ea) = outcome(run_app(&hop, app.name, v, &params, 7));
                let (b, eb) = outcome(run_app(&fold, app.name, v, &params, 7));
                let what = format!("{} [{v}] on {shape} ({order})", app.name);
                assert_eq!(a, b, "{what}: hop and fold differ");
                if i == 0 {
                    let (again, e_again) = outcome(run_app(&hop, app.name, v, &params, 7));
                    assert_eq!((&a, ea), (&again, e_again), "{what}: two runs differ");
                    let (c, _) = outcome(run_app(&creation, app.name, v, &params, 7));
                    differ_from_creation += usize::from(c != a);
                }
                if ea > 0 {
                    assert!(a.contains("ok: true"), "{what}: answer check failed: {a}");
                    assert!(eb <= ea, "{what}: fold queued {eb} events, hop {ea}");
                    runs += 1;
                }
                hop_events += ea;
                fold_events += eb;
            }
        }
        // One-sided variants are refused on blizzard-e (no [remote]); the others all ran.
        assert!(hop.one_sided() || shape.contains("DSM"), "{shape} lacks one-sided access");
    }
    assert!(runs > 100, "only {runs} runs completed");
    assert!(
        fold_events < hop_events,
        "fold queued {fold_events} events over the matrix, hop {hop_events}: nothing was folded"
    );
    assert!(differ_from_creation > 0, "no run differs between the creation and key orders");
}

#[test]
fn an_unknown_network_model_is_refused_by_name() {
    let e = MachineConfig::preset("alewife", &["network.model=flit".to_string()], None).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("network.model") && msg.contains("flit"), "{msg}");
}

#[test]
fn an_unknown_tie_order_is_refused_by_name() {
    let e = MachineConfig::preset("alewife", &["simulation.tie_order=random".to_string()], None).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("simulation.tie_order") && msg.contains("random"), "{msg}");
    for (value, order) in [("creation", TieOrder::Creation), ("key", TieOrder::Key)] {
        let cfg = MachineConfig::preset("alewife", &[format!("simulation.tie_order={value}")], None).unwrap();
        assert_eq!(cfg.tie_order, order);
    }
    assert_eq!(MachineConfig::preset("alewife", &[], None).unwrap().tie_order, TieOrder::Key);
}

/// On a busy mesh `fold` runs hops ahead of their time (`net/mod.rs`, `hop_ahead`): on em3d it
/// queues every other kind of event exactly as `hop` does and at most four fifths of its
/// hops, with the same results; and a run stopped by its time limit stops at the same cycle
/// under both (no hop runs ahead past the limit).
#[test]
fn fold_runs_hops_ahead_and_stops_at_the_time_limit_where_hop_does() {
    let sim = |set: &[&str]| Simulator::new(alewife(&[&["simulation.tie_order=key"], set].concat(), Some(16)));
    let (hop, fold) = (sim(&["network.model=hop"]), sim(&["network.model=fold"]));
    let params = small_params("em3d", &hop);
    let (a, ea) = outcome(run_app(&hop, "em3d", "sm", &params, 7));
    let (b, eb) = outcome(run_app(&fold, "em3d", "sm", &params, 7));
    assert_eq!(a, b, "em3d [sm]: hop and fold differ");
    assert!(a.contains("ok: true"), "{a}");
    assert!(eb < ea, "fold queued {eb} events, hop {ea}");
    let kinds = |s: &Simulator| -> std::collections::BTreeMap<&str, u64> {
        run_app(s, "em3d", "sm", &params, 7).expect("em3d sm").stats.events_by_kind.iter().copied().collect()
    };
    let (by_hop, by_fold) = (kinds(&hop), kinds(&fold));
    for (kind, &n) in by_hop.iter().filter(|(k, _)| **k != "hop") {
        assert_eq!(by_fold[kind], n, "{kind}: fold queued {}, hop {n}", by_fold[kind]);
    }
    let (h, f) = (by_hop["hop"], by_fold["hop"]);
    assert!(f * 5 <= h * 4, "fold queued {f} hops, hop {h}: too few ran ahead");

    let limited = |model: &str| sim(&[model, "limits.max_sim_time_ms=0.1"]);
    let (c, _) = outcome(run_app(&limited("network.model=hop"), "em3d", "sm", &params, 7));
    let (d, _) = outcome(run_app(&limited("network.model=fold"), "em3d", "sm", &params, 7));
    assert!(c.contains("simulated time limit"), "the limit did not stop the run: {c}");
    assert_eq!(c, d, "stopped by the time limit: hop and fold differ");
}
