//! The coherence protocol, as two tables: one for a cache line at a processor's cache and one
//! for a line's directory entry at its home. An MSI invalidation protocol with a blocking
//! directory (the home serializes transactions on a line; requests that find the line busy wait
//! in a queue), dirty data returning through the home (4-hop), and LimitLESS-style software
//! extension of the sharer set beyond the hardware pointers.
//!
//! The memory system (`mem/mod.rs`) looks up every transition here and performs the named
//! actions; it never changes a state on its own. A test walks every (state, event) pair.

use commlab_api::TrafficClass;

/// Protocol messages between caches and homes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtoKind {
    ReadRequest,
    WriteRequest,
    /// A write request from a cache that holds the line Shared: only ownership is needed.
    UpgradeRequest,
    Invalidate,
    InvalidationAck,
    ForwardRead,
    ForwardWrite,
    OwnerData,
    DataShared,
    DataExclusive,
    /// Ownership granted to a requester that already holds the data (an upgrade).
    PermissionExclusive,
    Writeback,
}

impl ProtoKind {
    /// Whether the message carries a cache line of data.
    pub fn carries_line(self) -> bool {
        matches!(self, ProtoKind::OwnerData | ProtoKind::DataShared | ProtoKind::DataExclusive | ProtoKind::Writeback)
    }

    /// Traffic class of a message without data (with data: header + data).
    pub fn class(self) -> TrafficClass {
        match self {
            ProtoKind::ReadRequest
            | ProtoKind::WriteRequest
            | ProtoKind::UpgradeRequest
            | ProtoKind::ForwardRead
            | ProtoKind::ForwardWrite => TrafficClass::Requests,
            ProtoKind::Invalidate | ProtoKind::InvalidationAck => TrafficClass::Invalidates,
            _ => TrafficClass::Headers,
        }
    }
}

/// State of a line in one cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CacheState {
    Invalid,
    Shared,
    Modified,
}

/// What happens to a line at a cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CacheEvent {
    /// The processor reads the line.
    Load,
    /// The processor writes the line (or performs a read-modify-write).
    Store,
    /// The home asks this cache to drop its shared copy.
    Invalidate,
    /// The home asks the owner for its dirty data, keeping a shared copy.
    ForwardRead,
    /// The home asks the owner for its dirty data and ownership.
    ForwardWrite,
    /// Data arrives for an outstanding read miss.
    FillShared,
    /// Data (or permission) arrives for an outstanding write miss.
    FillExclusive,
    /// The line is chosen as a victim for replacement.
    Evict,
}

/// Actions a cache transition asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheAction {
    /// Serve the access from the cache: no event, no traffic.
    HitInCache,
    /// Send a read request to the home and block the processor.
    SendReadRequest,
    /// Send a write (ownership) request to the home and block the processor.
    SendWriteRequest,
    /// Reply to the home that the copy is gone (also when it was already gone).
    SendInvalidationAck,
    /// Send the line's data to the home (answering a forward).
    SendOwnerDataToHome,
    /// Put the arrived data in the cache and let the waiting processor continue.
    InstallAndResume,
    /// Send the dirty data home on replacement.
    SendWritebackToHome,
    /// Drop a clean copy without telling the home (its sharer entry becomes stale).
    DropSilently,
}

use CacheAction::*;
use CacheEvent as CE;
use CacheState as CS;

pub const CACHE_STATES: [CacheState; 3] = [CS::Invalid, CS::Shared, CS::Modified];
pub const CACHE_EVENTS: [CacheEvent; 8] = [
    CE::Load,
    CE::Store,
    CE::Invalidate,
    CE::ForwardRead,
    CE::ForwardWrite,
    CE::FillShared,
    CE::FillExclusive,
    CE::Evict,
];

/// A (state, event) pair the protocol never produces: reaching one is a simulator bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Impossible(pub &'static str);

/// The cache table.
pub fn cache_transition(s: CacheState, e: CacheEvent) -> Result<(CacheState, &'static [CacheAction]), Impossible> {
    Ok(match (s, e) {
        (CS::Invalid, CE::Load) => (CS::Invalid, &[SendReadRequest]),
        (CS::Invalid, CE::Store) => (CS::Invalid, &[SendWriteRequest]),
        (CS::Shared, CE::Load) => (CS::Shared, &[HitInCache]),
        (CS::Shared, CE::Store) => (CS::Shared, &[SendWriteRequest]),
        (CS::Modified, CE::Load | CE::Store) => (CS::Modified, &[HitInCache]),

        // A stale sharer entry (silent replacement) still gets an answer.
        (CS::Invalid | CS::Shared, CE::Invalidate) => (CS::Invalid, &[SendInvalidationAck]),
        (CS::Modified, CE::Invalidate) => return Err(Impossible("owners get forwards, not invalidations")),

        (CS::Modified, CE::ForwardRead) => (CS::Shared, &[SendOwnerDataToHome]),
        (CS::Modified, CE::ForwardWrite) => (CS::Invalid, &[SendOwnerDataToHome]),
        // The owner replaced the line while the forward was in flight; memory is current.
        (CS::Invalid, CE::ForwardRead | CE::ForwardWrite) => (CS::Invalid, &[SendOwnerDataToHome]),
        (CS::Shared, CE::ForwardRead | CE::ForwardWrite) => {
            return Err(Impossible("only the exclusive owner is forwarded to, and it never downgrades itself"))
        }

        (CS::Invalid, CE::FillShared) => (CS::Shared, &[InstallAndResume]),
        (CS::Invalid | CS::Shared, CE::FillExclusive) => (CS::Modified, &[InstallAndResume]),
        (CS::Shared | CS::Modified, CE::FillShared) => {
            return Err(Impossible("a read miss is only issued from Invalid, one per line"))
        }
        (CS::Modified, CE::FillExclusive) => return Err(Impossible("a write miss is never issued from Modified")),

        (CS::Shared, CE::Evict) => (CS::Invalid, &[DropSilently]),
        (CS::Modified, CE::Evict) => (CS::Invalid, &[SendWritebackToHome]),
        (CS::Invalid, CE::Evict) => return Err(Impossible("only valid lines are chosen as victims")),
    })
}

/// State of a line's directory entry at its home.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DirState {
    /// No cache holds the line.
    Uncached,
    /// One or more caches hold clean copies (the sharer set).
    Shared,
    /// One cache holds the line dirty (the owner).
    Exclusive,
    /// Waiting for invalidation acks before granting a write.
    BusyInvalidating,
    /// Waiting for the owner's data before answering a request.
    BusyForwarding,
}

/// What arrives at the home for a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DirEvent {
    ReadRequest,
    WriteRequest,
    InvalidationAck,
    OwnerData,
    OwnerWriteback,
}

/// Facts about the entry and request that select among transitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DirGuard {
    /// Sharers other than the requester must be invalidated (write to a Shared line).
    pub others_share: bool,
    /// This ack is the last one outstanding.
    pub last_ack: bool,
    /// The request being served by a forward is a write.
    pub pending_write: bool,
}

/// Actions a directory transition asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DirAction {
    /// Read memory and send the line to the requester as a shared copy.
    ReplySharedData,
    /// Read memory and send the line to the requester with ownership.
    ReplyExclusiveData,
    /// Add the requester to the sharer set (trapping to software beyond the hardware pointers).
    AddRequesterToSharers,
    /// Record the requester as the exclusive owner; clear the sharer set.
    MakeRequesterOwner,
    /// Send an invalidation to every sharer except the requester (software beyond the pointers).
    InvalidateOtherSharers,
    /// Count one invalidation ack.
    CountAck,
    /// Ask the owner for its dirty data (keeping a copy for a read, giving it up for a write).
    ForwardToOwner,
    /// Write the owner's data to memory; the old owner stays a sharer after a read.
    WriteDataToMemory,
    /// Keep the owner as a sharer (after a read forward).
    KeepOwnerAsSharer,
    /// The owner gave the line back: no cache holds it now.
    ClearOwner,
    /// The line is busy: queue the request until the transaction ends.
    QueueUntilIdle,
    /// The transaction ended (the line is idle again): serve the next queued request for the
    /// line, if any. Every transition from a request or reply that leaves the line idle has it.
    ServeNextQueued,
    /// A writeback crossed a forward: the forward's answer will come from memory; nothing to do.
    IgnoreCrossedWriteback,
}

use DirAction::*;
use DirEvent as DE;
use DirState as DS;

pub const DIR_STATES: [DirState; 5] =
    [DS::Uncached, DS::Shared, DS::Exclusive, DS::BusyInvalidating, DS::BusyForwarding];
pub const DIR_EVENTS: [DirEvent; 5] =
    [DE::ReadRequest, DE::WriteRequest, DE::InvalidationAck, DE::OwnerData, DE::OwnerWriteback];

/// The directory table.
pub fn dir_transition(s: DirState, e: DirEvent, g: DirGuard) -> Result<(DirState, &'static [DirAction]), Impossible> {
    Ok(match (s, e) {
        // A request that completes in one step ends its transaction at once: the line is not
        // left busy, and a request queued behind it is served next.
        (DS::Uncached | DS::Shared, DE::ReadRequest) => {
            (DS::Shared, &[AddRequesterToSharers, ReplySharedData, ServeNextQueued])
        }
        (DS::Uncached, DE::WriteRequest) => (DS::Exclusive, &[MakeRequesterOwner, ReplyExclusiveData, ServeNextQueued]),
        (DS::Shared, DE::WriteRequest) if g.others_share => (DS::BusyInvalidating, &[InvalidateOtherSharers]),
        (DS::Shared, DE::WriteRequest) => (DS::Exclusive, &[MakeRequesterOwner, ReplyExclusiveData, ServeNextQueued]),
        (DS::Exclusive, DE::ReadRequest | DE::WriteRequest) => (DS::BusyForwarding, &[ForwardToOwner]),

        (DS::BusyInvalidating | DS::BusyForwarding, DE::ReadRequest | DE::WriteRequest) => (s, &[QueueUntilIdle]),

        (DS::BusyInvalidating, DE::InvalidationAck) if g.last_ack => {
            (DS::Exclusive, &[CountAck, MakeRequesterOwner, ReplyExclusiveData, ServeNextQueued])
        }
        (DS::BusyInvalidating, DE::InvalidationAck) => (DS::BusyInvalidating, &[CountAck]),

        (DS::BusyForwarding, DE::OwnerData) if g.pending_write => {
            (DS::Exclusive, &[WriteDataToMemory, MakeRequesterOwner, ReplyExclusiveData, ServeNextQueued])
        }
        (DS::BusyForwarding, DE::OwnerData) => (
            DS::Shared,
            &[WriteDataToMemory, KeepOwnerAsSharer, AddRequesterToSharers, ReplySharedData, ServeNextQueued],
        ),

        (DS::Exclusive, DE::OwnerWriteback) => (DS::Uncached, &[WriteDataToMemory, ClearOwner]),
        (DS::BusyForwarding, DE::OwnerWriteback) => (DS::BusyForwarding, &[IgnoreCrossedWriteback]),

        (DS::Uncached | DS::Shared | DS::Exclusive | DS::BusyForwarding, DE::InvalidationAck) => {
            return Err(Impossible("acks only answer invalidations of a write in progress"))
        }
        (DS::Uncached | DS::Shared | DS::Exclusive | DS::BusyInvalidating, DE::OwnerData) => {
            return Err(Impossible("owner data only answers a forward"))
        }
        (DS::Uncached | DS::Shared | DS::BusyInvalidating, DE::OwnerWriteback) => {
            return Err(Impossible("only an exclusive owner writes back"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (state, event) pair is either a transition or a named impossibility, and the
    /// transitions respect the protocol's rules.
    #[test]
    fn every_cache_pair_is_decided() {
        let mut transitions = 0;
        for s in CACHE_STATES {
            for e in CACHE_EVENTS {
                match cache_transition(s, e) {
                    Ok((next, actions)) => {
                        transitions += 1;
                        assert!(!actions.is_empty(), "({s:?}, {e:?}) does nothing");
                        // Hits never change state; fills always install.
                        if actions.contains(&HitInCache) {
                            assert_eq!(next, s);
                            assert!(matches!(e, CE::Load | CE::Store));
                            assert!(e == CE::Load || s == CS::Modified, "a store hits only in Modified");
                        }
                        if matches!(e, CE::FillShared | CE::FillExclusive) {
                            assert_eq!(actions, &[InstallAndResume]);
                        }
                        // Losing the line always tells the home, except dropping a clean copy.
                        if next == CS::Invalid && s != CS::Invalid && e != CE::Evict {
                            assert!(actions.contains(&SendInvalidationAck) || actions.contains(&SendOwnerDataToHome));
                        }
                        if s == CS::Modified && e == CE::Evict {
                            assert_eq!(actions, &[SendWritebackToHome], "dirty data is never dropped");
                        }
                    }
                    Err(Impossible(why)) => assert!(!why.is_empty()),
                }
            }
        }
        assert_eq!(transitions, 17);
    }

    #[test]
    fn every_directory_pair_is_decided() {
        let guards = [false, true];
        let mut transitions = 0;
        let mut rules = std::collections::BTreeSet::new();
        let mut impossible = std::collections::BTreeSet::new();
        for s in DIR_STATES {
            for e in DIR_EVENTS {
                for &others_share in &guards {
                    for &last_ack in &guards {
                        for &pending_write in &guards {
                            let g = DirGuard { others_share, last_ack, pending_write };
                            match dir_transition(s, e, g) {
                                Ok((next, actions)) => {
                                    transitions += 1;
                                    assert!(!actions.is_empty());
                                    let busy = matches!(next, DS::BusyInvalidating | DS::BusyForwarding);
                                    let idle_before = !matches!(s, DS::BusyInvalidating | DS::BusyForwarding);
                                    // A transaction that ends serves the queue; one that starts does not.
                                    // A request to an idle line that leaves it idle is a transaction
                                    // of one step, which ends at once.
                                    let request = matches!(e, DE::ReadRequest | DE::WriteRequest);
                                    if !busy && (!idle_before || request) {
                                        assert!(
                                            actions.contains(&ServeNextQueued),
                                            "({s:?}, {e:?}) ends without serving"
                                        );
                                    }
                                    if actions.contains(&ServeNextQueued) {
                                        assert_eq!(actions.last(), Some(&ServeNextQueued), "serving comes last");
                                    }
                                    if busy && idle_before {
                                        assert!(!actions.contains(&ServeNextQueued));
                                    }
                                    // Exclusive is only reached by making the requester owner.
                                    if next == DS::Exclusive && s != DS::Exclusive {
                                        assert!(actions.contains(&MakeRequesterOwner));
                                        assert!(actions.contains(&ReplyExclusiveData));
                                    }
                                    if actions.contains(&QueueUntilIdle) {
                                        assert_eq!(next, s);
                                        assert!(!idle_before);
                                    }
                                }
                                Err(Impossible(why)) => {
                                    assert!(!why.is_empty());
                                    impossible.insert((s, e));
                                }
                            }
                            if let Ok((next, actions)) = dir_transition(s, e, g) {
                                rules.insert((s, e, next, actions));
                            }
                        }
                    }
                }
            }
        }
        // 14 of the 25 (state, event) pairs happen, in 17 distinct transitions (three pairs
        // are split by a guard); under the 8 guard combinations that is 14 x 8 = 112 lookups.
        assert_eq!(transitions, 112);
        assert_eq!(rules.len(), 17);
        assert_eq!(impossible.len(), 11);
    }
}
