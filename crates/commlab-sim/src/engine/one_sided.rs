//! One-sided remote memory access (`Node::get`/`put`, `[remote]`): SHMEM-like transfers served
//! by the memory that holds the data, without its processor and without coherence, as the Cray
//! T3D (remote loads and stores through its prefetch queue and write path) and T3E (E-register
//! gets and puts) did them.
//!
//! A transfer is split into requests of at most `remote.words_per_request` words whose remote
//! addresses share a home. For each, the processor spends `remote.issue_cycles` (message
//! overhead; a get also `remote.get_word_cycles` per word, the T3D's pop of its prefetch queue
//! and local store). With `remote.put_block_bytes` a put is the processor's stores through its
//! write buffer (the T3D): `issue_cycles` per word, and consecutive words of one aligned block
//! leave as one request (a strided put one word each). When a request's words would exceed
//! `remote.max_outstanding_words` in flight, the processor first waits for answers (memory
//! wait). A request crosses the network as one message (header,
//! `remote.request_bytes` of addresses, and a put's data); the target memory serves requests one
//! at a time, then answers: a get's reply carries the values, a put's acknowledgement only a header. The
//! memory is occupied `lines x service_line_cycles + words x service_word_cycles` per request,
//! one request after another (lines: the distinct memory lines of the request's words, so
//! strided requests cost more), and answers `service_cycles` after that occupancy ended (taking
//! a request overlaps the previous one's transfer). With `[hierarchy.dram]` each line also takes
//! its DRAM bank (`bank_busy_cycles`, the banks the node's processor misses in) and waits while
//! the bank is busy, so a stride that returns to one bank in consecutive lines is slower than
//! one that spreads over the banks (with banks interleaved by a word, the T3E's odd/even deposit
//! ripple of study 002 §6).
//! One-sided packets pass the NIs in `remote.ni_latency_cycles` when the machine gives it (their
//! own interface, not the message NI). A
//! request to the processor's own memory is served the same way without the network.
//!
//! Values: a get reads memory when its request is served and writes its destination when the
//! reply arrives; a put reads its source when issued and writes memory when served. Writes
//! invalidate cached copies of the line at once (`Memory::write_one_sided`). `quiet` waits until
//! every request of the processor has been answered.
//!
//! *One-sided*: counters `one_sided_requests`, `one_sided_words`, `one_sided_invalidations`; the
//! local side of a transfer does not pass the hierarchy; a write drops every cached copy (the cache
//! table's `WrittenOneSided`) and resets the directory entry, and a line with a miss in flight is a
//! program error.

use super::error::SimError;
use super::node::SimNode;
use super::state::{Event, MainState, Wait};
use super::world::World;
use crate::msg::{self, MessageRecord, Target};
use crate::net::Packet;
use crate::queue::Priority;
use commlab_api::{Addr, Category, TrafficClass};
use std::sync::Arc;

impl<S> World<S> {
    /// Send one-sided message `target` from `src` to `dst` with `wire_payload` bytes after the
    /// header (split into packets as any message), or, to itself, deliver it without the network.
    fn one_sided_send(&mut self, src: usize, dst: usize, rec: MessageRecord, wire_payload: u64, data_bytes: u64) {
        let msg = self.alloc_msg(rec);
        if src == dst {
            self.push(self.now, Priority::Network, Event::OneSided { msg, node: dst as u32 });
            return;
        }
        let cfg = Arc::clone(&self.cfg);
        let sizes: Vec<u64> = msg::packet_payloads(wire_payload, cfg.max_packet_payload_bytes).collect();
        let n = sizes.len();
        let mut data_left = data_bytes;
        for (i, size) in sizes.into_iter().enumerate() {
            let data = data_left.min(size);
            data_left -= data;
            let descriptor = size - data;
            if data > 0 {
                self.traffic.add(TrafficClass::Headers, cfg.header_bytes + descriptor);
                self.traffic.add(TrafficClass::Data, data);
            } else {
                self.traffic.add(TrafficClass::Requests, cfg.header_bytes + descriptor);
            }
            self.traffic.packets += 1;
            let pkt = Packet {
                msg,
                dst: dst as u32,
                bytes: (cfg.header_bytes + size) as u32,
                last: i + 1 == n,
                background: false,
                ready_ps: self.now,
                link: None,
                vc: 0,
                ni_latency_ps: cfg.remote.and_then(|r| r.ni_latency_ps),
                serial: 0,
            };
            self.label_packet(msg, src, dst);
            self.net.send_packet(&mut self.q, self.now, src, pkt);
        }
    }

    /// Processor `p` issues a request to `home`: `remote` addresses there and, for a get,
    /// `local` ones for the values (a put's `values` travel with it).
    pub(crate) fn one_sided_request(&mut self, p: usize, home: usize, put: bool, remote: &[u64], local: &[u64]) {
        let rc = self.cfg.remote.expect("checked by the caller");
        let words = remote.len() as u64;
        self.procs[p].one_sided_outstanding += words as u32;
        self.one_sided.requests += 1;
        self.one_sided.words += words;
        let (args, payload, data) = if put {
            let values = local.iter().map(|&a| self.mem.word(a)).collect();
            (remote.to_vec(), values, 8 * words)
        } else {
            ([remote, local].concat(), Vec::new(), 0)
        };
        let rec = MessageRecord::new(p as u32, Target::OneSidedRequest { put, words: words as u32 }, args, payload);
        self.one_sided_send(p, home, rec, rc.request_bytes + data, data);
    }

    /// A one-sided message reached `node` (taken off the NI at once: hardware serves it).
    pub(super) fn one_sided_arrive(&mut self, node: usize, msg: u32) {
        let target = self.msg(msg).target;
        match target {
            Target::OneSidedRequest { words, .. } => {
                let rc = self.cfg.remote.expect("a machine with one-sided access");
                // The memory takes one request after another, and a request's words line by
                // line (the remote addresses come first in its arguments, in order: a strided
                // request opens more lines), each line for the line it opens and the words it
                // moves; a line whose DRAM bank is still busy (with an earlier line or the
                // processor's own miss) waits for it. Taking a request (service_cycles) overlaps
                // the previous one's transfer, as a pipelined controller's does.
                let mut t = self.now.max(self.remote_busy[node]);
                let mut i = 0;
                while i < words as usize {
                    let first = self.msg(msg).args[i];
                    let line = self.mem.line_of(first);
                    let n = self.msg(msg).args[i..words as usize]
                        .iter()
                        .take_while(|&&a| self.mem.line_of(a) == line)
                        .count();
                    t = self.mem.one_sided_bank(node, first, t) + rc.service_line_ps + n as u64 * rc.service_word_ps;
                    i += n;
                }
                self.remote_busy[node] = t;
                let done = t + rc.service_ps;
                self.push(done, Priority::Network, Event::OneSidedServe { msg, node: node as u32 });
            }
            Target::OneSidedReply { put, words } => {
                let rec = self.take_msg(msg);
                if !put {
                    self.one_sided_writes(&rec.args, &rec.payload);
                }
                let p = node;
                self.procs[p].one_sided_outstanding -= words;
                if let MainState::Blocked { wait: Wait::OneSided, .. } = self.procs[p].main {
                    if !self.compute_in_handler(p) {
                        self.wake_at(p, self.now);
                    }
                }
            }
            _ => unreachable!("not a one-sided message"),
        }
    }

    /// `node`'s memory has served request `msg`: read or write it, and answer.
    pub(super) fn one_sided_serve(&mut self, node: usize, msg: u32) {
        let rec = self.take_msg(msg);
        let Target::OneSidedRequest { put, words } = rec.target else { unreachable!("not a one-sided request") };
        let requester = rec.src as usize;
        let (args, payload, data) = if put {
            self.one_sided_writes(&rec.args, &rec.payload);
            (Vec::new(), Vec::new(), 0)
        } else {
            let (remote, local) = rec.args.split_at(words as usize);
            let values: Vec<u64> = remote.iter().map(|&a| self.mem.word(a)).collect();
            (local.to_vec(), values, 8 * words as u64)
        };
        let reply = MessageRecord::new(node as u32, Target::OneSidedReply { put, words }, args, payload);
        self.one_sided_send(node, requester, reply, data, data);
    }

    fn one_sided_writes(&mut self, addrs: &[u64], values: &[u64]) {
        self.mem.set_now(self.now);
        for (&a, &v) in addrs.iter().zip(values) {
            match self.mem.write_one_sided(a, v) {
                Ok(dropped) => self.one_sided.invalidations += dropped,
                Err(e) => {
                    self.fail(SimError::Program(e));
                    return;
                }
            }
        }
        self.apply_mem_effects();
    }
}

impl<S> SimNode<'_, S> {
    /// A get (`put == false`: `pairs` are (local destination, remote source)) or a put
    /// (`pairs` are (remote destination, local source)): split into requests and issue them.
    pub(super) fn one_sided(&mut self, put: bool, what: &str, pairs: &mut dyn Iterator<Item = (Addr, Addr)>) {
        let Some(rc) = self.w().cfg.remote else {
            let name = self.w().cfg.spec.name.clone();
            self.fail(format!(
                "{what}: machine {name} has no one-sided remote access (its file has no [remote] section)"
            ));
        };
        // A put through the write buffer: consecutive words of one aligned block merge into
        // one request; otherwise requests of up to words_per_request words at one home.
        let block = if put { rc.put_block_words } else { 0 };
        let most = if block > 0 { block } else { rc.words_per_request };
        let mut remote: Vec<u64> = Vec::with_capacity(most);
        let mut local: Vec<u64> = Vec::with_capacity(most);
        let mut home = usize::MAX;
        for (a, b) in pairs {
            let (r, l) = if put { (a, b) } else { (b, a) };
            self.check_addr(r, what);
            self.check_addr(l, what);
            let h = {
                let w = self.w();
                w.mem.home_of(w.mem.line_of(r.0))
            };
            let merges = |first: u64, last: u64| {
                block == 0 || (r.0 == last + 8 && r.0 / (8 * block as u64) == first / (8 * block as u64))
            };
            if !remote.is_empty()
                && (h != home || remote.len() == most || !merges(remote[0], *remote.last().expect("not empty")))
            {
                self.issue_request(put, home, &remote, &local);
                remote.clear();
                local.clear();
            }
            home = h;
            remote.push(r.0);
            local.push(l.0);
        }
        if !remote.is_empty() {
            self.issue_request(put, home, &remote, &local);
        }
    }

    fn issue_request(&mut self, put: bool, home: usize, remote: &[u64], local: &[u64]) {
        let id = self.id;
        let rc = self.w().cfg.remote.expect("checked");
        self.flush();
        // Words in flight (E-registers, prefetch-queue entries); a request larger than the
        // whole limit goes alone.
        let need = remote.len() as u32;
        while self.w().procs[id].one_sided_outstanding > 0
            && self.w().procs[id].one_sided_outstanding + need > rc.max_outstanding_words
        {
            let cat = self.mem_cat(true);
            self.block(Wait::OneSided, cat);
        }
        // The processor's time: one issue per request, or per word for puts that are stores
        // into the write buffer; a get's words each popped and stored locally.
        let words = remote.len() as u64;
        let busy = if put && rc.put_block_words > 0 {
            rc.issue_ps * words
        } else if put {
            rc.issue_ps
        } else {
            rc.issue_ps + rc.get_word_ps * words
        };
        self.timed(busy, Category::MessageOverhead);
        self.w().one_sided_request(id, home, put, remote, local);
    }

    /// Wait until every one-sided request of this processor has been answered.
    pub(super) fn one_sided_quiet(&mut self) {
        let id = self.id;
        self.flush();
        while self.w().procs[id].one_sided_outstanding > 0 {
            let cat = self.mem_cat(true);
            self.block(Wait::OneSided, cat);
        }
    }
}
