//! The coherence protocol, as three tables: one for the processor's accesses to a line (load,
//! store, prefetch), one for what reaches a line at a processor's cache from the home or the
//! cache itself, and one for a line's directory entry at its home. An MSI invalidation protocol
//! with a blocking directory (the home serializes transactions on a line; requests that find
//! the line busy wait in a queue), dirty data returning through the home (4-hop), and
//! LimitLESS-style software extension of the sharer set beyond the hardware pointers.
//!
//! A line at a cache is in a stable state (`CacheState`) and, while the processor has business
//! with it, a transient one (`Pending`): a request in flight (IS or IM from Invalid, SM from
//! Shared) or a line filled for a demand access the processor has not performed yet (pinned:
//! an invalidation or forward that reaches it is deferred until the access).
//!
//! The memory system (`mem/mod.rs`) and the engine look up every decision here: whether an
//! access hits, which request a miss sends, whether to wait for a request in flight, whether
//! a request from the home is deferred; the memory system performs the named actions and never
//! changes a state on its own. A test walks every (state, transient state, event) triple.
//!
//! The processor table (`CacheState` x `Pending` x `ProcEvent`) carries the home-tag guard of
//! software DSM; the cache table (`CacheState` x `Pending` x `CacheEvent`: the home's requests,
//! fills, eviction, a one-sided write) defers the home's requests on a pinned line; the
//! directory table (`DirState` x `DirEvent`) has guards. Each transition names its actions;
//! serving the next queued request after a transaction (`ServeNextQueued`) is an action too.
//! `ProtoKind` lists the messages between caches and homes. An impossible (state, event) pair
//! is an `Impossible` that stops the run with an internal error rather than guessing.

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

impl CacheState {
    /// Whether the cache holds the line (a copy a load can read).
    #[inline]
    pub fn valid(self) -> bool {
        self != CacheState::Invalid
    }

    /// Whether the cache holds the only, possibly dirty copy.
    #[inline]
    pub fn owned(self) -> bool {
        self == CacheState::Modified
    }
}

/// The transient part of a line's state at a cache: what its processor has outstanding on it.
/// With `CacheState` it names the transient states: (Invalid, Requested) is IS or IM (a read or
/// write request in flight), (Shared, Requested) is SM (an upgrade in flight), (Shared or
/// Modified, Pinned) a line just filled for a demand access the processor has not performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pending {
    /// Nothing outstanding: the stable state alone.
    Idle,
    /// A request (a demand miss or a prefetch) is in flight.
    Requested,
    /// Filled for a demand access not yet performed: held, so that a forward arriving before
    /// the processor resumes cannot take it away again and again (a livelock).
    Pinned,
}

/// What the processor does to a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProcEvent {
    /// A load.
    Load,
    /// A store (or a read-modify-write).
    Store,
    /// A prefetch for reading.
    PrefetchLoad,
    /// A prefetch for writing (ownership).
    PrefetchStore,
}

/// Facts outside the cache that select among processor transitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ProcGuard {
    /// Software DSM: the processor is the line's home and the home's access tag allows this
    /// access (`home_tag_allows`): the block is its memory, not a cached copy.
    pub home_tag_allows: bool,
}

/// What a processor access asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcAction {
    /// The access performs in the cache: no event, no traffic.
    Hit,
    /// Software DSM: the home's access performs on its own memory (no cached copy).
    HitAtHome,
    /// A miss: send a read request to the home (and for a demand access block until the fill).
    SendReadRequest,
    /// A miss: send a write (ownership and data) request.
    SendWriteRequest,
    /// A miss on a Shared copy: send an upgrade (ownership only) request.
    SendUpgradeRequest,
    /// A request for the line is in flight already: the demand access waits for its fill.
    WaitForFill,
    /// A prefetch that is not needed: the line is present enough, or a request is in flight.
    PrefetchNotNeeded,
}

impl ProcAction {
    /// The request a miss action sends.
    pub fn request(self) -> Option<ProtoKind> {
        match self {
            ProcAction::SendReadRequest => Some(ProtoKind::ReadRequest),
            ProcAction::SendWriteRequest => Some(ProtoKind::WriteRequest),
            ProcAction::SendUpgradeRequest => Some(ProtoKind::UpgradeRequest),
            _ => None,
        }
    }
}

use ProcEvent as PE;

pub const PENDINGS: [Pending; 3] = [Pending::Idle, Pending::Requested, Pending::Pinned];
pub const PROC_EVENTS: [ProcEvent; 4] = [PE::Load, PE::Store, PE::PrefetchLoad, PE::PrefetchStore];

/// The processor table: a load, store or prefetch on a line in state (`s`, `pending`).
#[inline]
pub fn proc_transition(s: CacheState, pending: Pending, e: ProcEvent, g: ProcGuard) -> Result<ProcAction, Impossible> {
    use Pending::*;
    use ProcAction as PA;
    Ok(match (s, pending, e) {
        // Software DSM: the home's tag allows the access; a request of its own may still be on
        // its way to itself (it finds the line as it is then, and the request's fill, when it
        // comes, is installed without holding the line for an access: `ProcMem::outrun`).
        (CS::Invalid, _, PE::Load | PE::Store) if g.home_tag_allows => PA::HitAtHome,
        (CS::Modified, _, PE::Load | PE::Store) | (CS::Shared, _, PE::Load) => PA::Hit,
        (CS::Invalid, Idle, PE::Load) => PA::SendReadRequest,
        (CS::Invalid, Idle, PE::Store) => PA::SendWriteRequest,
        (CS::Shared, Idle, PE::Store) => PA::SendUpgradeRequest,
        // IS, IM, SM: the fill of the request in flight comes first (a store behind a read
        // request then misses again, as an upgrade).
        (CS::Invalid, Requested, PE::Load | PE::Store) | (CS::Shared, Requested, PE::Store) => PA::WaitForFill,
        (CS::Invalid | CS::Shared, Pinned, PE::Store) | (CS::Invalid, Pinned, PE::Load) => {
            return Err(Impossible("a pinned line holds the fill of the very access the processor performs next"))
        }

        // A prefetch never uses the home's own memory: it asks for a cached copy.
        (CS::Modified, _, PE::PrefetchLoad | PE::PrefetchStore) | (CS::Shared, _, PE::PrefetchLoad) => {
            PA::PrefetchNotNeeded
        }
        (CS::Invalid | CS::Shared, Requested, PE::PrefetchLoad | PE::PrefetchStore) => PA::PrefetchNotNeeded,
        (CS::Invalid, Idle, PE::PrefetchLoad) => PA::SendReadRequest,
        (CS::Invalid, Idle, PE::PrefetchStore) => PA::SendWriteRequest,
        (CS::Shared, Idle, PE::PrefetchStore) => PA::SendUpgradeRequest,
        (CS::Invalid | CS::Shared, Pinned, PE::PrefetchLoad | PE::PrefetchStore) => {
            return Err(Impossible("a pinned line is performed on before the processor does anything else"))
        }
    })
}

/// What reaches a line at a cache from the protocol (the home's requests, fills, replacement).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CacheEvent {
    /// The home asks this cache to drop its shared copy.
    Invalidate,
    /// The home asks the owner for its dirty data, keeping a shared copy.
    ForwardRead,
    /// The home asks the owner for its dirty data and ownership.
    ForwardWrite,
    /// Data arrives for an outstanding read miss.
    FillShared,
    /// Data arrives for an outstanding write miss.
    FillExclusive,
    /// Ownership without data arrives for an outstanding upgrade of a Shared copy.
    FillPermission,
    /// The line is chosen as a victim for replacement.
    Evict,
    /// A one-sided write (a put, a get's value) reached the node's memory, which keeps the
    /// node's cache coherent with it by dropping the copy (T3D, T3E).
    WrittenOneSided,
}

/// Actions a cache transition asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheAction {
    /// Reply to the home that the copy is gone (also when it was already gone).
    SendInvalidationAck,
    /// Send the line's data to the home (answering a forward).
    SendOwnerDataToHome,
    /// The processor lost its copy: a processor spinning on it may go on.
    NotifyLineLost,
    /// Put the arrived data in the cache and let the waiting processor continue.
    InstallAndResume,
    /// Send the dirty data home on replacement.
    SendWritebackToHome,
    /// Drop a clean copy without telling the home (its sharer entry becomes stale).
    DropSilently,
    /// The line is pinned: keep the request until the processor has performed its access.
    DeferUntilAccess,
}

use CacheAction::*;
use CacheEvent as CE;
use CacheState as CS;

pub const CACHE_STATES: [CacheState; 3] = [CS::Invalid, CS::Shared, CS::Modified];
pub const CACHE_EVENTS: [CacheEvent; 8] = [
    CE::Invalidate,
    CE::ForwardRead,
    CE::ForwardWrite,
    CE::FillShared,
    CE::FillExclusive,
    CE::FillPermission,
    CE::Evict,
    CE::WrittenOneSided,
];

/// A (state, event) pair the protocol never produces: reaching one is a simulator bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Impossible(pub &'static str);

/// The cache table: event `e` reaches a line in state (`s`, `pending`).
pub fn cache_transition(
    s: CacheState,
    pending: Pending,
    e: CacheEvent,
) -> Result<(CacheState, &'static [CacheAction]), Impossible> {
    Ok(match (s, e) {
        // A request from the home waits until the processor has performed the access it was
        // filled for.
        (_, CE::Invalidate | CE::ForwardRead | CE::ForwardWrite) if pending == Pending::Pinned => {
            (s, &[DeferUntilAccess])
        }
        // A stale sharer entry (silent replacement) still gets an answer.
        (CS::Invalid | CS::Shared, CE::Invalidate) => (CS::Invalid, &[SendInvalidationAck, NotifyLineLost]),
        (CS::Modified, CE::Invalidate) => return Err(Impossible("owners get forwards, not invalidations")),

        (CS::Modified, CE::ForwardRead) => (CS::Shared, &[SendOwnerDataToHome]),
        (CS::Modified, CE::ForwardWrite) => (CS::Invalid, &[SendOwnerDataToHome, NotifyLineLost]),
        // The owner replaced the line while the forward was in flight; memory is current.
        (CS::Invalid, CE::ForwardRead | CE::ForwardWrite) => (CS::Invalid, &[SendOwnerDataToHome, NotifyLineLost]),
        (CS::Shared, CE::ForwardRead | CE::ForwardWrite) => {
            return Err(Impossible("only the exclusive owner is forwarded to, and it never downgrades itself"))
        }

        (CS::Invalid, CE::FillShared) => (CS::Shared, &[InstallAndResume]),
        (CS::Invalid | CS::Shared, CE::FillExclusive) => (CS::Modified, &[InstallAndResume]),
        (CS::Shared, CE::FillPermission) => (CS::Modified, &[InstallAndResume]),
        (CS::Shared | CS::Modified, CE::FillShared) => {
            return Err(Impossible("a read miss is only issued from Invalid, one per line"))
        }
        (CS::Modified, CE::FillExclusive) => return Err(Impossible("a write miss is never issued from Modified")),
        (CS::Invalid | CS::Modified, CE::FillPermission) => {
            return Err(Impossible("ownership without data reaches only a cache that holds the line Shared"))
        }

        (CS::Shared, CE::Evict) => (CS::Invalid, &[DropSilently]),
        (CS::Modified, CE::Evict) => (CS::Invalid, &[SendWritebackToHome]),
        (CS::Invalid, CE::Evict) => return Err(Impossible("only valid lines are chosen as victims")),

        // Memory's word is already the new value (functional data): the copy just goes.
        (CS::Shared | CS::Modified, CE::WrittenOneSided) => (CS::Invalid, &[NotifyLineLost]),
        (CS::Invalid, CE::WrittenOneSided) => return Err(Impossible("only held copies are dropped")),
    })
}

/// Software DSM (Blizzard): whether a block's home may access it on its own memory, with no
/// fault, given its directory state: its tag is read-write while no remote node holds the
/// block, read-only while remote nodes read it, invalid while one owns it (or a transaction on
/// it is in progress).
#[inline]
pub fn home_tag_allows(s: DirState, write: bool) -> bool {
    match s {
        DirState::Uncached => true,
        DirState::Shared => !write,
        DirState::Exclusive | DirState::BusyInvalidating | DirState::BusyForwarding => false,
    }
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

impl DirState {
    /// Every state, indexed by its discriminant (how a packed directory entry stores it).
    pub(crate) const ALL: [DirState; 5] = [
        DirState::Uncached,
        DirState::Shared,
        DirState::Exclusive,
        DirState::BusyInvalidating,
        DirState::BusyForwarding,
    ];
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

    /// Every (state, transient state, event) triple is either a transition or a named
    /// impossibility, and the transitions respect the protocol's rules.
    #[test]
    fn every_cache_triple_is_decided() {
        let mut transitions = 0;
        for s in CACHE_STATES {
            for pending in PENDINGS {
                for e in CACHE_EVENTS {
                    match cache_transition(s, pending, e) {
                        Ok((next, actions)) => {
                            transitions += 1;
                            assert!(!actions.is_empty(), "({s:?}, {pending:?}, {e:?}) does nothing");
                            // A pinned line answers the home only after the access; nothing
                            // else waits.
                            let request = matches!(e, CE::Invalidate | CE::ForwardRead | CE::ForwardWrite);
                            assert_eq!(actions.contains(&DeferUntilAccess), pending == Pending::Pinned && request);
                            if actions.contains(&DeferUntilAccess) {
                                assert_eq!((next, actions.len()), (s, 1), "a deferred request changes nothing");
                            }
                            if matches!(e, CE::FillShared | CE::FillExclusive | CE::FillPermission) {
                                assert_eq!(actions, &[InstallAndResume]);
                            }
                            // Losing the line always tells the home and the processor, except
                            // dropping a clean copy (which is replacement: the cache chose it).
                            if next == CS::Invalid
                                && !matches!(e, CE::Evict | CE::WrittenOneSided)
                                && !actions.contains(&DeferUntilAccess)
                            {
                                assert!(
                                    actions.contains(&SendInvalidationAck) || actions.contains(&SendOwnerDataToHome)
                                );
                                assert!(actions.contains(&NotifyLineLost));
                            }
                            if actions.contains(&NotifyLineLost) {
                                assert_eq!(next, CS::Invalid);
                            }
                            if s == CS::Modified && e == CE::Evict {
                                assert_eq!(actions, &[SendWritebackToHome], "dirty data is never dropped");
                            }
                        }
                        Err(Impossible(why)) => assert!(!why.is_empty()),
                    }
                }
            }
        }
        // 14 (state, event) pairs are transitions; pinned, all 9 (state, request) pairs defer,
        // 6 of them transitions otherwise. (A one-sided write never meets a line with a request
        // in flight or pinned: it is refused then, `Memory::write_one_sided`.)
        assert_eq!(transitions, 14 + 14 + (14 - 6 + 9));
    }

    /// Every processor access in every (state, transient state) is decided, under both values
    /// of the home's tag guard: hits only where the copy allows the access, a miss sends the
    /// request that the state needs, a request in flight is waited for, never sent twice.
    #[test]
    fn every_processor_access_is_decided() {
        let mut transitions = 0;
        let mut impossible = 0;
        for s in CACHE_STATES {
            for pending in PENDINGS {
                for e in PROC_EVENTS {
                    for home_tag_allows in [false, true] {
                        let g = ProcGuard { home_tag_allows };
                        let Ok(a) = proc_transition(s, pending, e, g) else {
                            impossible += 1;
                            assert!(pending == Pending::Pinned && s != CS::Modified);
                            continue;
                        };
                        transitions += 1;
                        let store = matches!(e, PE::Store | PE::PrefetchStore);
                        let prefetch = matches!(e, PE::PrefetchLoad | PE::PrefetchStore);
                        let enough = s.owned() || (s.valid() && !store);
                        match a {
                            ProcAction::Hit => assert!(enough && !prefetch, "({s:?}, {e:?}) hits without the copy"),
                            ProcAction::HitAtHome => {
                                assert!(home_tag_allows && s == CS::Invalid && !prefetch)
                            }
                            ProcAction::WaitForFill => {
                                assert!(!enough && !prefetch && pending == Pending::Requested)
                            }
                            ProcAction::PrefetchNotNeeded => {
                                assert!(prefetch && (enough || pending == Pending::Requested))
                            }
                            miss => {
                                assert!(!enough && pending == Pending::Idle, "({s:?}, {pending:?}, {e:?}) misses");
                                let kind = match (store, s) {
                                    (false, _) => ProtoKind::ReadRequest,
                                    (true, CS::Shared) => ProtoKind::UpgradeRequest,
                                    (true, _) => ProtoKind::WriteRequest,
                                };
                                assert_eq!(miss.request(), Some(kind));
                            }
                        }
                    }
                }
            }
        }
        // Pinned, the processor's next access is the one the line was filled for: a store to
        // a Shared copy and any prefetch not already satisfied are impossible under both guards
        // (3 x 2), a load or store of an Invalid line without the home's tag (2).
        assert_eq!(impossible, 10);
        assert_eq!(transitions, 3 * 3 * 4 * 2 - 10);
    }

    /// The home's tag follows the directory: read-write while no remote node has the block,
    /// read-only while remote nodes read it, invalid while one owns it or it is busy.
    #[test]
    fn the_homes_tag_follows_the_directory() {
        for s in DIR_STATES {
            for write in [false, true] {
                let want = s == DS::Uncached || (s == DS::Shared && !write);
                assert_eq!(home_tag_allows(s, write), want, "{s:?}, write {write}");
            }
        }
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
