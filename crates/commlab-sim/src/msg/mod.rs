//! Active messages and DMA bulk transfer: message records, packetization, the handler context,
//! and the combining tree of the message barrier.
//!
//! *Messages*: the Blizzard study's two classes are keys, not kinds: active messages of up to
//! `messaging.max_arg_words` 32-bit words (8 on blizzard-*, more refused naming the key), bulk of
//! up to `network.max_packet_payload_bytes` per packet (larger ones split); handlers store a
//! payload where it belongs and may send to anyone (`commlab-sim/tests/message_classes.rs`). Flow
//! control: a blocked main-thread send waits in `Wait::Credit` (memory & NI wait, running
//! handlers); counters `flow_*` (whole run, only with a window); no preset opts in (the study's
//! window is unpublished). Barriers: fan-ins `memory.barrier_arity`, `messaging.barrier_arity`,
//! `Program::barrier_arity`; each processor's counter and release flag are lines homed at it, so
//! every spin is local.

pub(crate) mod flow;
mod kind;

pub(crate) use kind::{Arrival, EntryExit, Target};

use crate::machine::MachineConfig;
use crate::mem::Memory;
use commlab_api::{AccessTag, Addr, HandlerCtx, HandlerId, ProcId};
use flow::{Buffered, Decision, Flow};

/// A message in flight or waiting in an NI input queue.
pub(crate) struct MessageRecord {
    pub src: u32,
    pub target: Target,
    pub args: Vec<u64>,
    pub payload: Vec<u64>,
    /// Copied out of the NI input queue into memory by the network overflow trap: it holds no NI
    /// slot any more, and its handler is dispatched from memory
    /// (`messaging.overflow_dispatch_cycles`, no interrupt entry or exit).
    pub in_memory: bool,
    /// When it was launched (for the one-way latency; 0 for messages the network does not
    /// carry).
    pub sent_ps: u64,
    /// `messaging.poll_mechanism` on an SMP node: when the protocol processor's poll can first
    /// see it, and what the poll that sees it costs (0 without a mechanism).
    pub visible_ps: u64,
    pub poll_seen_ps: u64,
    /// Counted in its sender's `sent` since the counts were last reset (a program or runtime
    /// message launched in the timed region): only such a message counts as received, so that
    /// a message in flight when timing begins does not unbalance the timed traffic.
    pub counted: bool,
    /// The message's stable identity (its source and how many records that source had made
    /// before, `queue::identity`), set when its record is stored (`World::alloc_msg`): the tie
    /// key of its events under `simulation.tie_order = "key"`.
    pub serial: u64,
}

impl MessageRecord {
    pub(crate) fn new(src: u32, target: Target, args: Vec<u64>, payload: Vec<u64>) -> MessageRecord {
        MessageRecord {
            src,
            target,
            args,
            payload,
            in_memory: false,
            sent_ps: 0,
            visible_ps: 0,
            poll_seen_ps: 0,
            counted: false,
            serial: 0,
        }
    }
}

/// Sizes of the packets a message of `payload_bytes` (arguments + bulk) is split into.
pub(crate) fn packet_payloads(payload_bytes: u64, max_payload: u64) -> impl Iterator<Item = u64> {
    let n = payload_bytes.div_ceil(max_payload).max(1);
    (0..n).map(move |i| (payload_bytes - i * max_payload).min(max_payload))
}

/// Concatenate DMA regions, padding each to the alignment (in bytes, a multiple of 8).
pub(crate) fn gather_regions(regions: &[&[u64]], align_bytes: u64) -> Vec<u64> {
    let align_words = (align_bytes / 8) as usize;
    let total: usize = regions.iter().map(|r| r.len().div_ceil(align_words) * align_words).sum();
    let mut out = Vec::with_capacity(total);
    for r in regions {
        out.extend_from_slice(r);
        let padded = r.len().div_ceil(align_words) * align_words;
        out.resize(out.len() + padded - r.len(), 0);
    }
    out
}

/// Check the argument cap; `Err` names the limit.
pub(crate) fn check_args(cfg: &MachineConfig, nargs: usize) -> Result<(), String> {
    let words = 2 * nargs as u64;
    if words > cfg.msg.max_arg_words {
        return Err(format!(
            "an active message has {nargs} u64 arguments ({words} 32-bit words) but messaging.max_arg_words is {}",
            cfg.msg.max_arg_words
        ));
    }
    Ok(())
}

/// Parent and children of processor `p` in the barrier's combining tree (rooted at 0).
pub(crate) fn barrier_tree(p: usize, n: usize, arity: usize) -> (Option<usize>, std::ops::Range<usize>) {
    let parent = if p == 0 { None } else { Some((p - 1) / arity) };
    // Saturating: a program may ask for any fan-in (one above n - 1 is a flat tree).
    let first = arity.saturating_mul(p).saturating_add(1).min(n);
    let last = arity.saturating_mul(p).saturating_add(arity).saturating_add(1).min(n);
    (parent, first..last)
}

/// A send requested by a running handler, `at_ps` after the handler started.
pub(crate) struct HandlerSend {
    pub dest: ProcId,
    pub target: Target,
    pub args: Vec<u64>,
    /// The DMA payload (empty for a plain active message).
    pub payload: Vec<u64>,
    pub at_ps: u64,
}

/// The context a handler runs in. Handler time is counted from the handler's start (which
/// already includes interrupt entry or poll dispatch).
pub(crate) struct Ctx<'a> {
    pub id: ProcId,
    pub nprocs: usize,
    /// How many handlers the program registered (a send naming another is an error).
    pub handlers: usize,
    pub cfg: &'a MachineConfig,
    pub start_ps: u64,
    /// The handler's time so far, from its start.
    pub offset_ps: u64,
    pub sends: Vec<HandlerSend>,
    pub error: Option<String>,
    /// The message layer's flow control (its sends on a full window are buffered).
    pub flow: &'a mut Flow,
    /// The memory, for Tempest's block copies and tags.
    pub mem: &'a mut Memory,
}

impl HandlerCtx for Ctx<'_> {
    fn id(&self) -> ProcId {
        self.id
    }
    fn nprocs(&self) -> usize {
        self.nprocs
    }
    fn now_cycles(&self) -> f64 {
        self.cfg.ps_to_cycles(self.start_ps + self.offset_ps)
    }
    fn compute(&mut self, cycles: u64) {
        // The program's own unit: its computation is given in cycles.
        self.offset_ps += self.cfg.cycles_to_ps(cycles as f64);
    }
    fn private_hits(&mut self, words: u64) {
        self.offset_ps += words.saturating_mul(self.cfg.first_hit_ps());
    }
    fn send_am(&mut self, dest: ProcId, handler: HandlerId, args: &[u64]) {
        self.push_send(dest, handler, args, Vec::new(), None);
    }
    fn send_bulk(&mut self, dest: ProcId, handler: HandlerId, args: &[u64], regions: &[&[u64]]) {
        let payload = gather_regions(regions, self.cfg.msg.dma_align_bytes);
        self.push_send(dest, handler, args, payload, Some(regions.len()));
    }
    fn block_read(&mut self, block: Addr, out: &mut [u64]) {
        let Some((line, home, lines)) = self.user_block(block, "block_read") else { return };
        let words = lines as usize * self.mem.line_words();
        for (w, o) in out.iter_mut().enumerate().take(words) {
            *o = self.mem.user_read(self.id, line, home, w);
        }
        self.copy_cost(lines);
    }
    fn block_write(&mut self, block: Addr, data: &[u64]) {
        let Some((line, home, lines)) = self.user_block(block, "block_write") else { return };
        let words = lines as usize * self.mem.line_words();
        for (w, &v) in data.iter().enumerate().take(words) {
            self.mem.user_write(self.id, line, home, w, v);
        }
        self.copy_cost(lines);
    }
    fn set_tag(&mut self, block: Addr, tag: AccessTag) {
        let Some((line, home, lines)) = self.user_block(block, "set_tag") else { return };
        let old = self.mem.tempest().tag(self.id, line, home);
        self.mem.set_user_tag(self.id, line, tag);
        let sw = self.mem.software().expect("user regions exist only under software DSM");
        // As the default protocol prices them, for each line's granules: opening a block opens
        // every granule's tag, a read-only block made writable changes its permission only.
        let per_block = |base: u64, one_line: u64| base + (one_line - base) * lines;
        let invalidate = per_block(sw.tag_invalidate_base_ps, sw.tag_invalidate_ps);
        let ps = match (old, tag) {
            // Blizzard-E: bad ECC only where the block was accessible, mprotect only when its
            // page's protection flips (`mem/dsm.rs`).
            _ if self.mem.pages().is_some() => {
                let open = match (old, tag) {
                    (_, AccessTag::Invalid) => 0,
                    (AccessTag::ReadOnly, AccessTag::Writable) => sw.tag_valid_base_ps,
                    _ => per_block(sw.tag_valid_base_ps, sw.tag_valid_ps),
                };
                open + self.mem.user_retag(self.id, line, old, tag, invalidate)
            }
            (_, AccessTag::Invalid) => invalidate,
            (AccessTag::ReadOnly, AccessTag::Writable) => sw.tag_valid_base_ps,
            _ => per_block(sw.tag_valid_base_ps, sw.tag_valid_ps),
        };
        self.offset_ps += ps;
    }
    fn tag(&mut self, block: Addr) -> AccessTag {
        match self.user_block(block, "tag") {
            Some((line, home, _)) => self.mem.tempest().tag(self.id, line, home),
            // The handler's error ends the run; the answer is never used.
            None => AccessTag::Invalid,
        }
    }
}

impl Ctx<'_> {
    /// The first line, home and length in lines of a user-region block named by its first
    /// word; `None` (and the handler's error) otherwise.
    fn user_block(&mut self, block: Addr, what: &str) -> Option<(u64, usize, u64)> {
        let line = self.mem.line_of(block.0);
        let lb = 8 * self.mem.line_words() as u64;
        let lines = (self.mem.valid(block.0) && block.0.is_multiple_of(lb) && self.mem.tempest().is_user(line))
            .then(|| self.mem.tempest().block_of(line))
            .and_then(|(first, lines)| (first == line).then_some(lines));
        let Some(lines) = lines else {
            self.error.get_or_insert(format!(
                "{what} of address {:#x}, which is not the start of a block of a Tempest user region",
                block.0
            ));
            return None;
        };
        Some((line, self.mem.home_of(line), lines))
    }

    /// One block of `lines` lines copied between a node's copy and a handler's buffer
    /// (`dsm.copy_bytes_per_cycle`).
    fn copy_cost(&mut self, lines: u64) {
        self.mem.count_block_copy();
        let sw = self.mem.software().expect("user regions exist only under software DSM");
        self.offset_ps += sw.copy_block_ps * lines;
    }

    /// Check a handler's send, charge its cost to the handler and queue it.
    fn push_send(&mut self, dest: ProcId, handler: HandlerId, args: &[u64], payload: Vec<u64>, regions: Option<usize>) {
        if let Err(e) = check_args(self.cfg, args.len()) {
            self.error.get_or_insert(e);
            return;
        }
        if dest >= self.nprocs {
            self.error.get_or_insert(format!("a handler's send to processor {dest}, but there are {}", self.nprocs));
            return;
        }
        if handler.0 as usize >= self.handlers {
            self.error.get_or_insert(format!(
                "a handler's send names handler {} but the program registered {}",
                handler.0, self.handlers
            ));
            return;
        }
        self.offset_ps += self.cfg.msg.send_cost_ps(args.len(), regions);
        let target = Target::App(handler);
        if self.flow.applies(self.id, dest, target) && self.flow.decide(self.id, dest, false) == Decision::Buffer {
            self.offset_ps += self.cfg.msg.flow_buffer_ps;
            self.flow.buffer(self.id, dest, Buffered { target, args: args.to_vec(), payload, regions });
            return;
        }
        self.sends.push(HandlerSend { dest, target, args: args.to_vec(), payload, at_ps: self.offset_ps });
    }

    /// Credits from `src` came back to this processor: inject what its queue to `src` now has
    /// room for, paying each message's send cost.
    pub(crate) fn drain_to(&mut self, src: ProcId) {
        while let Some(b) = self.flow.drain_one(self.id, src) {
            self.offset_ps += self.cfg.msg.send_cost_ps(b.args.len(), b.regions);
            self.sends.push(HandlerSend {
                dest: src,
                target: b.target,
                args: b.args,
                payload: b.payload,
                at_ps: self.offset_ps,
            });
        }
    }

    /// The handler of a message from `src` ends: send an explicit acknowledgement if this
    /// processor owes `src` a batch of credits and none of the handler's sends to `src`
    /// carries them.
    pub(crate) fn acknowledge(&mut self, src: ProcId) {
        if self.flow.ack_due(self.id, src)
            && !self.sends.iter().any(|s| s.dest == src && self.flow.applies(self.id, src, s.target))
        {
            self.offset_ps += self.cfg.msg.send_cost_ps(0, None);
            self.flow.stats.acks += 1;
            self.sends.push(HandlerSend {
                dest: src,
                target: Target::FlowAck,
                args: Vec::new(),
                payload: Vec::new(),
                at_ps: self.offset_ps,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_cover_the_payload() {
        assert_eq!(packet_payloads(0, 512).collect::<Vec<_>>(), [0]);
        assert_eq!(packet_payloads(512, 512).collect::<Vec<_>>(), [512]);
        assert_eq!(packet_payloads(1100, 512).collect::<Vec<_>>(), [512, 512, 76]);
    }

    #[test]
    fn regions_are_padded_to_alignment() {
        let a = [1u64, 2, 3];
        let b = [4u64];
        let g = gather_regions(&[&a, &b], 16);
        assert_eq!(g, [1, 2, 3, 0, 4, 0]);
    }

    #[test]
    fn barrier_tree_covers_every_node_once() {
        for n in [1, 2, 5, 32, 33, 100] {
            for arity in [2, 3, 4, 8] {
                let mut seen = vec![0; n];
                for p in 0..n {
                    let (parent, kids) = barrier_tree(p, n, arity);
                    assert_eq!(parent.is_none(), p == 0);
                    for c in kids {
                        assert_eq!(barrier_tree(c, n, arity).0, Some(p));
                        seen[c] += 1;
                    }
                }
                assert!(seen[1..].iter().all(|&s| s == 1));
            }
        }
    }
}
