//! One-way latency on this host, three ways, as medians and minimums over many round trips:
//! a raw cache-line ping-pong between two pinned threads (one line bounced: one transfer each
//! way, where a message through a polled queue moves its line twice), a null active message
//! through the native backend in polling and in interrupt mode.
//!
//! `cargo run --release -p commlab-native --example pingpong [ROUNDS]`

use commlab_api::{Backend, Handler, HandlerCtx, HandlerId, Message, Node, Program, ReceiveMode};
use commlab_native::{host_clock, NativeBackend};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Median and minimum of one-way times in ns (half of each round trip).
fn summary(mut rtt_ns: Vec<f64>) -> (f64, f64) {
    rtt_ns.sort_by(f64::total_cmp);
    (rtt_ns[rtt_ns.len() / 2] / 2.0, rtt_ns[0] / 2.0)
}

fn raw_pingpong(rounds: usize) -> Vec<f64> {
    let flag = AtomicU64::new(0);
    let cores = core_affinity_ids();
    let pin = |k: usize| {
        if let Some(&c) = cores.get(k) {
            core_affinity::set_for_current(c);
        }
    };
    std::thread::scope(|s| {
        let f = &flag;
        s.spawn(move || {
            pin(1);
            for i in 0..rounds as u64 {
                while f.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                f.store(2 * i + 2, Ordering::Release);
            }
        });
        s.spawn(move || {
            pin(0);
            let mut out = Vec::with_capacity(rounds);
            for i in 0..rounds as u64 {
                let t = Instant::now();
                f.store(2 * i + 1, Ordering::Release);
                while f.load(Ordering::Acquire) != 2 * i + 2 {
                    std::hint::spin_loop();
                }
                out.push(t.elapsed().as_nanos() as f64);
            }
            out
        })
        .join()
        .expect("ping thread")
    })
}

fn core_affinity_ids() -> Vec<core_affinity::CoreId> {
    core_affinity::get_core_ids().unwrap_or_default()
}

struct Ping {
    rounds: usize,
    mode: ReceiveMode,
}

#[derive(Default)]
struct State {
    pongs: usize,
    rtt_ns: Vec<f64>,
}

fn on_ping(_: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.send_am(m.src, HandlerId(1), &[]);
}

fn on_pong(s: &mut State, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.pongs += 1;
}

impl Program for Ping {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_ping, on_pong]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    fn init_state(&self, _: usize, _: usize) -> State {
        State::default()
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        node.barrier();
        if node.id() == 0 {
            for r in 0..self.rounds {
                let t = Instant::now();
                node.send_am(1, HandlerId(0), &[]);
                node.wait_until("pong", |s| s.pongs > r);
                let ns = t.elapsed().as_nanos() as f64;
                node.state(|s| s.rtt_ns.push(ns));
            }
        }
        node.barrier();
    }
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20000);
    let clock = host_clock();
    println!("host clock {:.0} MHz ({}), {rounds} round trips each", clock.mhz, clock.source);
    let (med, min) = summary(raw_pingpong(rounds));
    println!("cache-line ping-pong     one-way: median {med:7.1} ns, min {min:7.1} ns");
    let b = NativeBackend::with_procs(2).unwrap();
    for mode in [ReceiveMode::Polling, ReceiveMode::Interrupt] {
        let out = b.run(Arc::new(Ping { rounds, mode })).unwrap();
        let (med, min) = summary(out.states.into_iter().next().unwrap().rtt_ns);
        println!("null active message ({mode:?}) one-way: median {med:7.1} ns, min {min:7.1} ns");
    }
}
