//! One-sided remote access (`Node::get`, `put`, their indexed forms and `quiet`): values land
//! where they should (checked against what each processor stored), cached copies of written
//! lines are dropped, requests are split and pipelined as `[remote]` says, the target memory
//! serves one request at a time, and a machine without `[remote]` refuses with its name.

use commlab_api::{Addr, Backend, Category, Node, Placement, ProcId, Program};
use commlab_sim::machine::{preset_text, MachineConfig};
use commlab_sim::{SimError, Simulator};
use std::sync::Arc;

/// The `t3e` preset's text without its `[remote]` section, to give it test values.
fn t3e_without_remote() -> String {
    let text = preset_text("t3e").unwrap();
    match text.find("\n[remote]") {
        None => text.to_string(),
        Some(at) => {
            let rest = &text[at + 1..];
            let end = rest[1..].find("\n[").map_or(rest.len(), |e| e + 2);
            format!("{}{}", &text[..at + 1], &rest[end..])
        }
    }
}

/// `t3e` with a `[remote]` section (its own figures are the preset's business; these are
/// round numbers whose consequences the tests compute).
fn machine(procs: usize, outstanding_words: u64, words_per_request: u64, service: u64) -> Simulator {
    let text = format!(
        "{}\n[remote]\nissue_cycles = 10\nmax_outstanding_words = {outstanding_words}\nwords_per_request = {words_per_request}\n\
         request_bytes = 16\nservice_cycles = {service}\nservice_line_cycles = 0\nservice_word_cycles = 2\n",
        t3e_without_remote()
    );
    Simulator::new(MachineConfig::load(&text, "t3e+remote", &[], Some(procs)).unwrap()).checked(true)
}

/// `machine(4, outstanding, 8, 20)` with its DRAM banks' cycle set to `bank_busy` cycles.
fn machine_with_banks(outstanding: u64, bank_busy: u64) -> Simulator {
    let text = format!(
        "{}\n[remote]\nissue_cycles = 10\nmax_outstanding_words = {outstanding}\nwords_per_request = 8\n\
         request_bytes = 16\nservice_cycles = 20\nservice_line_cycles = 0\nservice_word_cycles = 2\n",
        t3e_without_remote()
    );
    let set = [format!("hierarchy.dram.bank_busy_cycles={bank_busy}")];
    Simulator::new(MachineConfig::load(&text, "t3e+remote", &set, Some(4)).unwrap()).checked(true)
}

const WORDS: usize = 64;

/// Every processor owns a block of `WORDS` words holding `1000 * id + i`; each then gets its
/// right neighbour's block with a stride, puts its own block into its left neighbour's
/// second array, gathers and scatters by index, and records what it finds.
struct Exchange;

#[derive(Default)]
struct Seen {
    got: Vec<u64>,
    got_strided: Vec<u64>,
    gathered: Vec<u64>,
    deposited: Vec<u64>,
    scattered: Vec<u64>,
}

fn value(p: usize, i: usize) -> u64 {
    1000 * p as u64 + i as u64
}

impl Program for Exchange {
    type State = Seen;
    fn init_state(&self, _: ProcId, _: usize) -> Seen {
        Seen::default()
    }
    fn main<N: Node<State = Seen>>(&self, node: &mut N) {
        let (id, n) = (node.id(), node.nprocs());
        let src = node.alloc_shared(n * WORDS, Placement::Block);
        let inbox = node.alloc_shared(n * WORDS, Placement::Block);
        let scatter = node.alloc_shared(n * WORDS, Placement::Block);
        let mine = |base: Addr, p: usize| base.word(p * WORDS);
        let local = node.alloc_shared(n * 4 * WORDS, Placement::Block);
        let buf = local.word(id * 4 * WORDS);
        for i in 0..WORDS {
            node.store(mine(src, id).word(i), value(id, i));
            // The left neighbour will deposit here: have a stale copy in the cache first.
            node.load(mine(inbox, id).word(i));
        }
        node.barrier();
        node.begin_timing();
        let right = (id + 1) % n;
        let left = (id + n - 1) % n;
        // Contiguous get, strided get (every third word), gather by index.
        node.get(buf, 1, mine(src, right), 1, WORDS);
        node.get(buf.word(WORDS), 1, mine(src, right), 3, WORDS / 3);
        let idx: Vec<Addr> = (0..8).map(|k| mine(src, (id + k) % n).word(k)).collect();
        node.get_indexed(buf.word(2 * WORDS), &idx);
        // Deposit my block into the left neighbour's inbox, reversed by a negative-free trick:
        // a strided put of the even words, then of the odd ones.
        node.put(mine(inbox, left), 2, mine(src, id), 2, WORDS / 2);
        node.put(mine(inbox, left).word(1), 2, mine(src, id).word(1), 2, WORDS / 2);
        let targets: Vec<Addr> = (0..n.min(8)).map(|k| mine(scatter, (id + k) % n).word(id % WORDS)).collect();
        node.put_indexed(&targets, mine(src, id));
        node.quiet();
        node.barrier();
        let read = |node: &mut N, a: Addr, k: usize| (0..k).map(|i| node.load(a.word(i))).collect::<Vec<_>>();
        let got = read(node, buf, WORDS);
        let got_strided = read(node, buf.word(WORDS), WORDS / 3);
        let gathered = read(node, buf.word(2 * WORDS), 8);
        let deposited = read(node, mine(inbox, id), WORDS);
        let scattered = read(node, mine(scatter, id), n.clamp(1, 8));
        node.state(|s| *s = Seen { got, got_strided, gathered, deposited, scattered });
    }
}

#[test]
fn gets_and_puts_move_the_values_and_drop_stale_copies() {
    for (outstanding, per_request) in [(1, 1), (4, 8), (16, 3)] {
        let n = 4;
        let out = machine(n, outstanding, per_request, 20).run(Arc::new(Exchange)).unwrap();
        for (id, s) in out.states.iter().enumerate() {
            let right = (id + 1) % n;
            let left_of_me = (id + 1) % n; // whose block lands in my inbox: my right neighbour's
            assert_eq!(s.got, (0..WORDS).map(|i| value(right, i)).collect::<Vec<_>>(), "proc {id}");
            assert_eq!(s.got_strided, (0..WORDS / 3).map(|i| value(right, 3 * i)).collect::<Vec<_>>());
            assert_eq!(s.gathered, (0..8).map(|k| value((id + k) % n, k)).collect::<Vec<_>>());
            assert_eq!(s.deposited, (0..WORDS).map(|i| value(left_of_me, i)).collect::<Vec<_>>());
            // Processor q wrote word q of my scatter array with its word k where (q + k) % n == id.
            let want: Vec<u64> = (0..n.min(8))
                .map(|q| {
                    let k = (id + n - q) % n;
                    value(q, k)
                })
                .collect();
            assert_eq!(s.scattered, want, "proc {id}");
        }
        let c = &out.stats.counters;
        assert!(c["one_sided_invalidations"] >= WORDS as f64 / 8.0, "the stale inbox copies were dropped: {c:?}");
        let expect_words = (n * (WORDS + WORDS / 3 + 8 + WORDS + n.min(8))) as f64;
        assert_eq!(c["one_sided_words"], expect_words);
        // Requests: never more words than words_per_request, never fewer requests than that allows.
        assert!(c["one_sided_requests"] >= (expect_words / per_request as f64).ceil());
    }
}

/// Processor 0 gets `words` words from processor `from`, twice the same way, and reports the
/// cycles of the second (warm) transfer.
struct Timed {
    from: usize,
    words: usize,
    stride: usize,
    readers: usize,
}

impl Program for Timed {
    /// (start, end) of this processor's transfer, in cycles.
    type State = (f64, f64);
    /// The shared-memory barrier: no barrier messages interrupt the timed transfer.
    fn barrier_kind(&self) -> commlab_api::BarrierKind {
        commlab_api::BarrierKind::SharedMemory
    }
    fn init_state(&self, _: ProcId, _: usize) -> (f64, f64) {
        (0.0, 0.0)
    }
    fn main<N: Node<State = (f64, f64)>>(&self, node: &mut N) {
        let n = node.nprocs();
        let data = node.alloc_shared(self.words * self.stride, Placement::OnNode(self.from));
        let sink = node.alloc_shared(n * self.words, Placement::Block);
        node.barrier();
        node.begin_timing();
        if node.id() < self.readers {
            let dst = sink.word(node.id() * self.words);
            let t0 = node.now_cycles();
            node.get(dst, 1, data, self.stride, self.words);
            node.quiet();
            let t1 = node.now_cycles();
            node.state(|s| *s = (t0, t1));
        }
        node.barrier();
    }
}

fn get_cycles(sim: &Simulator, p: Timed) -> (f64, commlab_api::RunStats) {
    let out = sim.run(Arc::new(p)).unwrap();
    (out.states[0].1 - out.states[0].0, out.stats)
}

#[test]
fn requests_are_pipelined_up_to_max_outstanding() {
    let t = |words: usize, outstanding: u64| {
        get_cycles(&machine(4, outstanding, 1, 20), Timed { from: 3, words, stride: 1, readers: 1 }).0
    };
    // One at a time: every word pays the same round trip, so time grows linearly.
    let (t32, t64, t128) = (t(32, 1), t(64, 1), t(128, 1));
    let per_word = (t128 - t64) / 64.0;
    assert!(((t64 - t32) / 32.0 - per_word).abs() < 1.0, "{t32} {t64} {t128}");
    assert!(per_word > (10 + 20 + 2) as f64, "a round trip is more than issue and service: {per_word}");
    // Eight in flight: several times faster (here the ejection link, which holds a packet for
    // its NI latency, becomes the bottleneck), and never faster than issuing allows.
    let eight = t(64, 8);
    assert!(eight * 3.0 < t64, "{eight} vs {t64}");
    assert!(eight >= (64 * 10) as f64);
}

#[test]
fn vector_requests_carry_several_words() {
    let (t1, s1) = get_cycles(&machine(4, 1, 1, 20), Timed { from: 3, words: 64, stride: 1, readers: 1 });
    let (t8, s8) = get_cycles(&machine(4, 1, 8, 20), Timed { from: 3, words: 64, stride: 1, readers: 1 });
    assert_eq!(s1.counters["one_sided_requests"], 64.0);
    assert_eq!(s8.counters["one_sided_requests"], 8.0);
    assert!(t8 * 4.0 < t1, "{t8} vs {t1}");
    // Strided words are served the same way (one home): with no cost per line opened (nor a
    // DRAM bank's cycle), a strided vector get costs as much as a contiguous one; with one, more.
    let no_bank = |stride| get_cycles(&machine_with_banks(1, 0), Timed { from: 3, words: 64, stride, readers: 1 }).0;
    assert_eq!(no_bank(5), no_bank(1));
    let lined = |stride| {
        let text = format!(
            "{}\n[remote]\nissue_cycles = 10\nmax_outstanding_words = 64\nwords_per_request = 8\nrequest_bytes = 16\n\
             service_cycles = 20\nservice_line_cycles = 50\nservice_word_cycles = 2\n",
            t3e_without_remote()
        );
        let sim = Simulator::new(MachineConfig::load(&text, "t3e+remote", &[], Some(4)).unwrap());
        get_cycles(&sim, Timed { from: 3, words: 64, stride, readers: 1 }).0
    };
    // t3e lines are 64 bytes: 8 contiguous words share one, words 8 apart each have their own.
    assert!(lined(8) > lined(1) + 7.0 * 50.0 * 7.0, "{} vs {}", lined(8), lined(1));
}

#[test]
fn the_target_memory_serves_one_request_at_a_time() {
    // Three readers of processor 3's memory, whose words each occupy it 100 cycles: the memory is
    // the bottleneck, so the last reader finishes no sooner than every word's occupancy back to
    // back after the first request arrived.
    let word = 100u64;
    let text = format!(
        "{}\n[remote]\nissue_cycles = 10\nmax_outstanding_words = 16\nwords_per_request = 1\nrequest_bytes = 16\n\
         service_cycles = 20\nservice_line_cycles = 0\nservice_word_cycles = {word}\n",
        t3e_without_remote()
    );
    let sim = Simulator::new(MachineConfig::load(&text, "t3e+remote", &[], Some(4)).unwrap()).checked(true);
    let out = sim.run(Arc::new(Timed { from: 3, words: 16, stride: 1, readers: 3 })).unwrap();
    let first = out.states[..3].iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
    let last = out.states[..3].iter().map(|s| s.1).fold(0.0, f64::max);
    assert!(last - first >= (3 * 16 * word) as f64, "{first} .. {last}");
    // Time adds up per processor, and the waits are memory waits.
    for p in &out.stats.procs {
        let sum: f64 = p.by_category.iter().sum();
        assert!((sum - p.busy).abs() < 1e-6 * p.busy.max(1.0));
    }
    assert!(out.stats.procs[0].by_category[Category::MemoryNiWait as usize] > 0.0);
}

#[test]
fn a_stride_that_returns_to_one_dram_bank_waits_for_it() {
    // t3e's DRAM: 8 banks interleaved by 64 bytes. A get of words 64 apart (512 bytes, 8 banks'
    // worth) reads one bank every time, 72 apart (9 lines) every bank in turn; with a 200-cycle
    // bank the first waits for its bank at every word, the second seldom.
    let busy = 200;
    let t = |stride, bank_busy| {
        get_cycles(&machine_with_banks(64, bank_busy), Timed { from: 3, words: 64, stride, readers: 1 }).0
    };
    let (same_bank, every_bank) = (t(64, busy), t(72, busy));
    assert!(same_bank >= 63.0 * busy as f64, "64 words from one bank in {same_bank} cycles");
    assert!(every_bank * 4.0 < same_bank, "stride 72 {every_bank} against stride 64 {same_bank}");
    // Without banks in the way (a 0-cycle bank) the two strides cost the same.
    assert_eq!(t(64, 0), t(72, 0));
}

#[test]
fn a_machine_without_remote_access_refuses_naming_it() {
    let sim = Simulator::new(MachineConfig::preset("alewife", &[], Some(4)).unwrap());
    assert!(!sim.one_sided());
    assert!(machine(4, 1, 1, 1).one_sided());
    match sim.run(Arc::new(Timed { from: 3, words: 4, stride: 1, readers: 1 })) {
        Err(SimError::Program(m)) => assert!(m.contains("alewife") && m.contains("[remote]"), "{m}"),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a get ran on a machine without one-sided access"),
    }
}

#[test]
fn one_sided_runs_are_deterministic() {
    let a = machine(8, 4, 8, 20).run(Arc::new(Exchange)).unwrap();
    let b = machine(8, 4, 8, 20).run(Arc::new(Exchange)).unwrap();
    assert_eq!(a.stats.cycles, b.stats.cycles);
    assert_eq!(a.stats.counters, b.stats.counters);
}

/// Processor 0 stores to every line of its own array (a local miss each) while processor 1
/// puts one word into each of those lines: a one-sided write meeting a miss in flight must be
/// refused with the program error, never leave a copy the directory does not know of (found
/// by fft2d's deposit variant: "directory says Uncached but cached at [1]").
struct StoreMeetsPut;

impl Program for StoreMeetsPut {
    type State = ();
    fn barrier_kind(&self) -> commlab_api::BarrierKind {
        commlab_api::BarrierKind::SharedMemory
    }
    fn init_state(&self, _: ProcId, _: usize) {}
    fn main<N: Node<State = ()>>(&self, node: &mut N) {
        let lines = 64;
        let target = node.alloc_shared(lines * 8, Placement::OnNode(0));
        let src = node.alloc_shared(lines, Placement::OnNode(1));
        node.barrier();
        match node.id() {
            0 => (0..lines).for_each(|l| node.store(target.word(8 * l), 1)),
            1 => {
                node.put(target, 8, src, 1, lines);
                node.quiet();
            }
            _ => {}
        }
        node.barrier();
    }
}

#[test]
fn a_one_sided_write_meeting_a_miss_in_flight_is_refused_not_corrupting() {
    for service in [0, 5, 20, 60] {
        let text = format!(
            "{}\n[remote]\nissue_cycles = 1\nmax_outstanding_words = 64\nwords_per_request = 1\nrequest_bytes = 8\n\
             service_cycles = {service}\nservice_line_cycles = 0\nservice_word_cycles = 1\n",
            t3e_without_remote()
        );
        let sim = Simulator::new(MachineConfig::load(&text, "t3e+remote", &[], Some(2)).unwrap()).checked(true);
        match sim.run(Arc::new(StoreMeetsPut)) {
            Ok(_) => {}
            Err(SimError::Program(m)) => assert!(m.contains("one-sided write"), "{m}"),
            Err(e) => panic!("service {service}: {e}"),
        }
    }
}

/// `machine` with the T3D's processor side of one-sided access (issue 33): `get_word_cycles`
/// per word of a get, and puts as stores through a write buffer merging 32-byte blocks.
fn write_buffer_machine(procs: usize, get_word: u64) -> Simulator {
    let text = format!(
        "{}\n[remote]\nissue_cycles = 10\nmax_outstanding_words = 16\nwords_per_request = 1\nrequest_bytes = 16\n\
         service_cycles = 20\nservice_line_cycles = 0\nservice_word_cycles = 2\nget_word_cycles = {get_word}\n\
         put_block_bytes = 32\n",
        t3e_without_remote()
    );
    Simulator::new(MachineConfig::load(&text, "t3e+wb", &[], Some(procs)).unwrap()).checked(true)
}

/// Processor 0 moves `words` words to or from processor 3 (`put`: deposits its array there
/// with the remote side strided; else gets them), then `quiet`.
struct Moves {
    put: bool,
    words: usize,
    stride: usize,
}

impl Program for Moves {
    type State = ();
    fn barrier_kind(&self) -> commlab_api::BarrierKind {
        commlab_api::BarrierKind::SharedMemory
    }
    fn init_state(&self, _: ProcId, _: usize) {}
    fn main<N: Node<State = ()>>(&self, node: &mut N) {
        let remote = node.alloc_shared(self.words * self.stride, Placement::OnNode(3));
        let local = node.alloc_shared(self.words, Placement::OnNode(0));
        node.barrier();
        node.begin_timing();
        if node.id() == 0 {
            if self.put {
                node.put(remote, self.stride, local, 1, self.words);
            } else {
                node.get(local, 1, remote, self.stride, self.words);
            }
            node.quiet();
        }
        node.barrier();
    }
}

/// Issue 33 (T3D deposit ahead of fetch): with `put_block_bytes` a put's contiguous words leave
/// in one request per aligned 32-byte block (4 words) and strided ones one request each, while
/// the processor pays `issue_cycles` per word either way (each is a store); with
/// `get_word_cycles` the processor pays it per word of a get on top of the issue. Values still
/// land where they should (the exchange), whatever the merging.
#[test]
fn write_buffer_puts_merge_blocks_and_gets_cost_the_processor_per_word() {
    let run = |sim: &Simulator, p: Moves| sim.run(Arc::new(p)).unwrap().stats;
    let words = 64;
    let overhead = |s: &commlab_api::RunStats| s.procs[0].by_category[Category::MessageOverhead as usize];
    // Cycles are whole picoseconds: 1e-3 of a cycle per word of rounding.
    let near = |a: f64, b: usize| (a - b as f64).abs() < 1e-3 * words as f64;
    let sim = write_buffer_machine(4, 30);
    let contiguous = run(&sim, Moves { put: true, words, stride: 1 });
    assert_eq!(contiguous.counters["one_sided_requests"], (words / 4) as f64);
    assert_eq!(contiguous.counters["one_sided_words"], words as f64);
    let strided = run(&sim, Moves { put: true, words, stride: 2 });
    assert_eq!(strided.counters["one_sided_requests"], words as f64);
    for s in [&contiguous, &strided] {
        assert!(near(overhead(s), words * 10), "a store per word: {}", overhead(s));
    }
    // A get: issue plus the pop and local store per word; without get_word_cycles, issue only.
    let get = run(&sim, Moves { put: false, words, stride: 1 });
    assert_eq!(get.counters["one_sided_requests"], words as f64);
    assert!(near(overhead(&get), words * (10 + 30)), "{}", overhead(&get));
    let free = run(&write_buffer_machine(4, 0), Moves { put: false, words, stride: 1 });
    assert!(near(overhead(&free), words * 10), "{}", overhead(&free));
    assert!(get.cycles >= (words * (10 + 30)) as f64, "{}", get.cycles);
    // Right values with the merging (contiguous puts merge, strided ones do not).
    let n = 4;
    let out = write_buffer_machine(n, 30).run(Arc::new(Exchange)).unwrap();
    for (id, s) in out.states.iter().enumerate() {
        let right = (id + 1) % n;
        assert_eq!(s.got, (0..WORDS).map(|i| value(right, i)).collect::<Vec<_>>(), "proc {id}");
        assert_eq!(s.deposited, (0..WORDS).map(|i| value(right, i)).collect::<Vec<_>>(), "proc {id}");
    }
}

/// A put block that is not a whole number of words is refused naming the key.
#[test]
fn a_put_block_not_a_multiple_of_a_word_is_refused() {
    let text = format!(
        "{}\n[remote]\nissue_cycles = 10\nmax_outstanding_words = 16\nwords_per_request = 1\nrequest_bytes = 16\n\
         service_cycles = 20\nservice_line_cycles = 0\nservice_word_cycles = 2\nput_block_bytes = 12\n",
        t3e_without_remote()
    );
    match MachineConfig::load(&text, "t3e+wb", &[], Some(4)) {
        Err(e) => assert!(e.to_string().contains("remote.put_block_bytes"), "{e}"),
        Ok(_) => panic!("a 12-byte put block was accepted"),
    }
}
