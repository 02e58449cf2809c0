//! The Blizzard COW study's four polling techniques on SMP nodes (`messaging.poll_mechanism`,
//! issue 34 item 3): Table 2's round trips, the DMA flag's burst rule, the sending thread's
//! cost, and determinism.

use crate::common;

use commlab_apps::validate::{table2_overrides, POLL_TOLERANCE, TABLE2};
use commlab_sim::Simulator;
use common::{preset, run_seeded};

/// Blizzard-S on `procs` SMP nodes whose protocol processors poll with `mechanism` (Table 2's
/// configuration).
fn polled(mechanism: &str, procs: usize) -> Simulator {
    let set = table2_overrides(mechanism);
    let set: Vec<&str> = set.iter().map(String::as_str).collect();
    preset("blizzard-s", &set, Some(procs))
}

/// The round trip (cycles) of a 4-byte ping-pong on Blizzard-S's SMP nodes polling with
/// `mechanism`, `from` the compute or protocol thread.
fn round_trip(mechanism: &str, from: &str) -> f64 {
    let r = run_seeded(&polled(mechanism, 2), "am-latency", "mp-poll", &[format!("from={from}"), "rounds=8".into()], 1);
    r.counters["round_trip_cycles"]
}

#[test]
fn table2_round_trips_within_tolerance() {
    for &(mechanism, from, published) in TABLE2 {
        let us = round_trip(mechanism, from) / 66.0;
        let err = (us - published) / published;
        assert!(
            err.abs() <= POLL_TOLERANCE,
            "{mechanism} {from}: {us:.1} us vs published {published} ({:+.1}%)",
            100.0 * err
        );
    }
}

/// The protocol-thread round trips differ from LANai polling's by each technique's costs, both
/// ways (§6.4): the flag's update (DMA 4 us = 264 cycles, interrupt 14 us = 924 cycles), the poll
/// that sees it (a flag miss, 18 cycles; Typhoon-0's 1.3 us = 86 cycles) instead of LANai's
/// 0.38 us uncached read (25 cycles). LANai's polls come every 25 cycles, so its message waits up
/// to 25 cycles for the next poll, each way.
#[test]
fn round_trips_differ_by_the_techniques_costs() {
    let lanai = round_trip("lanai", "protocol");
    for (mechanism, extra_each_way) in
        [("dma", 264.0 + 18.0 - 25.0), ("interrupt", 924.0 + 18.0 - 25.0), ("typhoon0", 86.0 - 25.0)]
    {
        let diff = round_trip(mechanism, "protocol") - lanai;
        let want = 2.0 * extra_each_way;
        assert!(
            diff <= want + 2.0 && diff >= want - 2.0 * 25.0 - 2.0,
            "{mechanism}: {diff:.1} cycles over lanai, want {want} less up to 2 LANai polls"
        );
    }
}

/// Sending from the compute thread costs more than from the protocol thread by the technique's
/// notification (Table 2: 4-6 us), and the techniques order as the study's: LANai fastest, then
/// Typhoon-0, DMA, interrupts.
#[test]
fn compute_thread_sends_slower_and_techniques_in_the_studys_order() {
    let mut protocol = Vec::new();
    for mechanism in ["lanai", "typhoon0", "dma", "interrupt"] {
        let (c, p) = (round_trip(mechanism, "compute"), round_trip(mechanism, "protocol"));
        let extra_us = (c - p) / 66.0;
        assert!((3.5..=6.5).contains(&extra_us), "{mechanism}: compute thread {extra_us:.2} us slower, want 4-6");
        protocol.push(p);
    }
    assert!(
        protocol.windows(2).all(|w| w[0] < w[1]),
        "protocol round trips lanai < typhoon0 < dma < interrupt: {protocol:?}"
    );
}

/// DMA (and interrupt) flags: only the first message of a burst pays the flag's update. Four
/// senders flood one receiver, whose queue stays busy: most messages find the flag set. In a
/// ping-pong every message finds the queue empty and pays it.
#[test]
fn dma_flag_update_only_for_the_first_message_of_a_burst() {
    for mechanism in ["dma", "interrupt"] {
        let r = run_seeded(&polled(mechanism, 5), "am-throughput", "mp-poll", &["senders=4", "messages=20"], 1);
        let (updates, messages) = (r.counters["poll_flag_updates"], r.counters["poll_messages"]);
        assert!(
            updates >= 1.0 && updates < messages / 2.0,
            "{mechanism} burst: {updates} updates for {messages} messages"
        );
        let r = run_seeded(&polled(mechanism, 2), "am-latency", "mp-poll", &["from=protocol", "rounds=8"], 1);
        // 9 pings and 9 pongs, one at a time (the barriers' messages may come in bursts).
        assert!(r.counters["poll_flag_updates"] >= 18.0, "{mechanism} ping-pong: {:?}", r.counters);
    }
    // Typhoon-0 and LANai polls have no flag to update.
    for mechanism in ["typhoon0", "lanai"] {
        let r = run_seeded(&polled(mechanism, 5), "am-throughput", "mp-poll", &["senders=4", "messages=20"], 1);
        assert_eq!(r.counters["poll_flag_updates"], 0.0, "{mechanism}");
    }
}

/// LANai polling shares the I/O bridge with bulk DMA: its large-message round trip grows faster
/// with the size than Typhoon-0's (Fig. 2: "Continuous polling of the LANai slows down the DMA").
#[test]
fn lanai_polls_slow_large_messages() {
    let rt = |m: &str, bytes: u64| {
        run_seeded(
            &polled(m, 2),
            "am-latency",
            "mp-poll",
            &["from=protocol".to_string(), "rounds=4".into(), format!("bytes={bytes}")],
            1,
        )
        .counters["round_trip_cycles"]
    };
    let (l32, l4k, t32, t4k) = (rt("lanai", 32), rt("lanai", 4096), rt("typhoon0", 32), rt("typhoon0", 4096));
    assert!(l32 < t32, "32 bytes: lanai {l32} vs typhoon0 {t32}");
    assert!(l4k > t4k, "4 KB: lanai {l4k} vs typhoon0 {t4k}");
    // 4096 - 32 bytes more is 63 more 64-byte bursts at each end of each way, each 0.19 us.
    let extra = (l4k - l32) - (t4k - t32);
    assert!((extra - 4.0 * 63.0 * 0.19 * 66.0).abs() < 66.0, "lanai's extra growth {extra:.0} cycles");
}

#[test]
fn same_run_twice_gives_the_same_numbers() {
    let run = || {
        let r = run_seeded(&polled("dma", 5), "am-throughput", "mp-poll", &["senders=4", "messages=20"], 3);
        (r.stats.cycles, r.counters)
    };
    assert_eq!(run(), run());
}

/// The mechanism acts only on SMP nodes, and `none` is the generic poll: neither moves a number.
#[test]
fn mechanism_inert_on_one_processor_nodes_and_none_is_todays_poll() {
    let cycles = |set: &[&str]| {
        run_seeded(&preset("blizzard-s", set, Some(2)), "am-latency", "mp-int", &["rounds=4"], 1).stats.cycles
    };
    let one = "node.procs_per_node=1";
    assert_eq!(cycles(&[one]), cycles(&[one, "messaging.poll_mechanism=dma"]));
    // `none` on the preset's SMP nodes is the machine written without a mechanism.
    let mut spec = commlab_sim::machine::MachineConfig::preset("blizzard-s", &[], Some(2)).unwrap().spec;
    spec.messaging.poll_mechanism = None;
    let bare = commlab_sim::Simulator::new(commlab_sim::machine::MachineConfig::from_spec(spec).unwrap());
    let without = run_seeded(&bare, "am-latency", "mp-int", &["rounds=4"], 1).stats.cycles;
    assert_eq!(cycles(&["messaging.poll_mechanism=none"]), without);
}
