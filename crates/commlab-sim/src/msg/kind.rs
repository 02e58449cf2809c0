//! The message-kind table: every rule that depends on what kind of message a record is
//! (`Target`) is a method here, so adding a kind is a change in this file (plus its handler).
//!
//! | kind | NI slot | arrives at | flow control | overflow trap drains | entry / exit | counts (liveness, `sent`/`received`) | traced as |
//! |---|---|---|---|---|---|---|---|
//! | `App` | held until handler ends | inbox | yes (carries credits) | yes | message + argument read | yes | `active` / `bulk` |
//! | `BarrierArrive`, `BarrierRelease` | held | inbox | no | yes | message + argument read | yes | `barrier` |
//! | `FlowAck` | held | inbox | no (carries credits) | yes | message + argument read | yes | `flow_ack` |
//! | `Protocol` | held (or taken off at once by the controller) | memory controller, or inbox (software DSM) | no | no | message (a software handler's own costs) | yes | its protocol kind |
//! | `OneSidedRequest`, `OneSidedReply` | taken off at once | the node's memory | no | no | none (hardware) | yes | `get`, `put`, `get_reply`, `put_ack` |
//! | `Sink` | taken off at once | the I/O node's sink | no | no | none | no (background) | `cross` |
//! | `Trap`, `Fault`, `OverflowTrap` (local: not network messages) | none | inbox, taken at once | no | no | message (`Trap`, `OverflowTrap`), fault trap / resume (`Fault`) | yes | `local` |
//!
//! "message" entry is interrupt entry (exit) or poll dispatch, a polling mechanism's poll and
//! receive path, or the overflow trap's dispatch from memory (`engine/dispatch.rs`).

use commlab_api::HandlerId;

/// What runs when a message arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// An application handler.
    App(HandlerId),
    /// A child reached the barrier.
    BarrierArrive,
    /// The barrier of epoch `args[0]` is complete.
    BarrierRelease,
    /// Cross-traffic: consumed by the I/O node's sink.
    Sink,
    /// A coherence protocol message about `line`, on behalf of `requester`, handled by the
    /// destination's memory controller.
    Protocol { kind: crate::mem::protocol::ProtoKind, line: u64, requester: u32 },
    /// A LimitLESS directory trap on the home processor, with a handler body of `body_ps`
    /// (not a network message: it holds no NI input slot).
    Trap { body_ps: u64 },
    /// A one-sided get or put of `words` words, served by the destination's memory without its
    /// processor. `args`: the remote addresses, then (get) where the values go at the
    /// requester; `payload`: a put's values.
    OneSidedRequest { put: bool, words: u32 },
    /// The answer to a one-sided request. `args`: (get) where the values go; `payload`: the
    /// values (empty for a put's acknowledgement).
    OneSidedReply { put: bool, words: u32 },
    /// A flow-control acknowledgement returning credits (see `flow.rs`): header only, its
    /// handler has no body.
    FlowAck,
    /// A Tempest block-access fault of the node's main thread on `line` (not a network
    /// message): runs the program's fault handler.
    Fault { line: u64, write: bool },
    /// The network overflow trap on the node's processor (not a network message: it holds no
    /// NI input slot): copies the program's messages waiting in the NI input queue into memory
    /// (`engine/overflow.rs`).
    OverflowTrap,
}

/// Where a delivered network message goes (`engine/effects.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// Served by the destination's memory in hardware (one-sided access): taken off the NI at
    /// once.
    Memory,
    /// The destination's memory controller (or protocol processor) takes it off the NI at once,
    /// unless the node's software runs the protocol (then it goes to the inbox).
    Controller,
    /// The destination processor's inbox, for a handler.
    Inbox,
}

/// How a handler of this kind is entered and left (`engine/dispatch.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryExit {
    /// A Tempest block-access fault: entered as the default protocol's miss trap, left by its
    /// resume.
    Fault { line: u64, write: bool },
    /// Any message: interrupt entry and exit, or poll dispatch (or a polling mechanism's poll,
    /// or dispatch from memory after the overflow trap).
    Message,
}

impl Target {
    /// A program message (`Node::send_am`/`send_bulk` or a handler's send): its handler is the
    /// program's, and its length counts in `Node::handler_cycles`.
    #[inline]
    pub(crate) fn is_program(self) -> bool {
        matches!(self, Target::App(_))
    }

    /// Handled by the processor's own message software (program handlers, the message barrier,
    /// flow-control acknowledgements): its handler reads its arguments out of the NI
    /// (`messaging.receive_*`), and the network overflow trap copies it into memory.
    #[inline]
    pub(crate) fn is_software_message(self) -> bool {
        matches!(self, Target::App(_) | Target::BarrierArrive | Target::BarrierRelease | Target::FlowAck)
    }

    /// Whether the network overflow trap copies a message of this kind out of the NI input
    /// queue: the messages the processor's own software handles, not protocol messages, traps
    /// or faults.
    #[inline]
    pub(crate) fn drained_on_overflow(self) -> bool {
        self.is_software_message()
    }

    /// Not a network message (a directory trap, a block-access fault, the overflow trap): it
    /// holds no NI input slot and is taken at once, never at a back-edge.
    #[inline]
    pub(crate) fn is_local(self) -> bool {
        matches!(self, Target::Trap { .. } | Target::Fault { .. } | Target::OverflowTrap)
    }

    /// Taken as an interrupt at once, whatever the receive mode: protocol handlers and traps
    /// (the requester is stalled) and the overflow trap (a system interrupt).
    #[inline]
    pub(crate) fn taken_at_once(self) -> bool {
        matches!(self, Target::Protocol { .. }) || self.is_local()
    }

    /// Whether the record in an inbox holds an NI input slot until its handler ends (unless the
    /// overflow trap copied it into memory).
    #[inline]
    pub(crate) fn holds_ni_slot(self) -> bool {
        !self.is_local()
    }

    /// The network overflow trap itself: started by the trap's own steps, and when it ends the
    /// network's detector is re-armed.
    #[inline]
    pub(crate) fn is_overflow_trap(self) -> bool {
        self == Target::OverflowTrap
    }

    /// Flow-controlled (`msg/flow.rs`): takes a credit of its sender's window to its destination.
    #[inline]
    pub(crate) fn flow_controlled(self) -> bool {
        self.is_program()
    }

    /// Carries back the credits its sender owes its destination (piggy-backed, or an explicit
    /// acknowledgement).
    #[inline]
    pub(crate) fn carries_credits(self) -> bool {
        matches!(self, Target::App(_) | Target::FlowAck)
    }

    /// Cross-traffic: background packets that do not keep a run alive, are counted as
    /// `TrafficClass::CrossTraffic` (not in the processors' `sent`/`received`), and are consumed
    /// by the I/O node's sink.
    #[inline]
    pub(crate) fn is_background(self) -> bool {
        self == Target::Sink
    }

    /// Where a delivered (non-background) message goes.
    #[inline]
    pub(crate) fn arrival(self) -> Arrival {
        match self {
            Target::OneSidedRequest { .. } | Target::OneSidedReply { .. } => Arrival::Memory,
            Target::Protocol { .. } => Arrival::Controller,
            _ => Arrival::Inbox,
        }
    }

    /// How its handler is entered and left.
    #[inline]
    pub(crate) fn entry_exit(self) -> EntryExit {
        match self {
            Target::Fault { line, write } => EntryExit::Fault { line, write },
            _ => EntryExit::Message,
        }
    }

    /// A directory trap's handler body, in picoseconds (0 for other kinds).
    #[inline]
    pub(crate) fn trap_body_ps(self) -> u64 {
        match self {
            Target::Trap { body_ps } => body_ps,
            _ => 0,
        }
    }

    /// The class a program or runtime message's latency and flow are recorded under
    /// (`stats/latency.rs`, `stats/trace.rs`); `None` for protocol messages, traps and faults
    /// (they show in the miss stalls) and for what never reaches an inbox.
    pub(crate) fn message_class(self, bulk: bool) -> Option<&'static str> {
        match self {
            Target::App(_) if bulk => Some("bulk"),
            Target::App(_) => Some("active"),
            Target::BarrierArrive | Target::BarrierRelease => Some("barrier"),
            Target::FlowAck => Some("flow_ack"),
            _ => None,
        }
    }

    /// The name a traced packet of this message carries (`commlab_api::TracePacket::name`).
    pub(crate) fn packet_name(self, bulk: bool) -> &'static str {
        use crate::mem::protocol::ProtoKind as K;
        match self {
            Target::App(_) if bulk => "bulk",
            Target::App(_) => "active",
            Target::BarrierArrive | Target::BarrierRelease => "barrier",
            Target::FlowAck => "flow_ack",
            Target::Sink => "cross",
            Target::OneSidedRequest { put: true, .. } => "put",
            Target::OneSidedRequest { put: false, .. } => "get",
            Target::OneSidedReply { put: true, .. } => "put_ack",
            Target::OneSidedReply { put: false, .. } => "get_reply",
            Target::Protocol { kind, .. } => match kind {
                K::ReadRequest => "read_request",
                K::WriteRequest => "write_request",
                K::UpgradeRequest => "upgrade_request",
                K::Invalidate => "invalidate",
                K::InvalidationAck => "invalidation_ack",
                K::ForwardRead => "forward_read",
                K::ForwardWrite => "forward_write",
                K::OwnerData => "owner_data",
                K::DataShared => "data_shared",
                K::DataExclusive => "data_exclusive",
                K::PermissionExclusive => "permission_exclusive",
                K::Writeback => "writeback",
            },
            Target::Trap { .. } | Target::Fault { .. } | Target::OverflowTrap => "local",
        }
    }
}
