//! The host's topology: cores, SMT siblings, caches, sockets and NUMA nodes, and the core pairs
//! the remote kernels run on.
//!
//! Sources, and why: the cores this process may run on come from `core_affinity` (the OS
//! affinity mask). Caches and the core/package structure come from the processor itself through
//! `raw-cpuid` (a maintained, dependency-free crate; no C library to install, unlike
//! `hwlocality`, which needs libhwloc): CPUID leaf 4 (0x8000_001D on AMD) gives each cache's
//! level, size, line and how many logical processors share it, and leaf 0xB the x2APIC id
//! layout. A thread pinned to each core reads its x2APIC id; two cores share a cache when their
//! ids agree above the cache's sharing width, are SMT siblings when they agree above the SMT
//! width, and are on one socket when they agree above the core width (Intel SDM vol. 3A,
//! 9.9 "Programming considerations for hardware multi-threading capable processors"). No crate
//! reports NUMA nodes without a C library, so they are read from
//! `/sys/devices/system/node/node*/cpulist` (Linux; elsewhere one node is assumed). On a
//! processor without these leaves, caches are unknown and every pair is of class `unknown`.

use serde::Serialize;

/// One cache level as the processor reports it.
#[derive(Clone, Debug, Serialize)]
pub struct Cache {
    pub level: u8,
    /// `data`, `instruction` or `unified`.
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: u64,
    pub ways: u64,
    /// Logical processors that share one instance (the maximum the processor reports).
    pub shared_by: u64,
    /// Bits of the x2APIC id below the sharing domain's id.
    #[serde(skip)]
    shift: u32,
}

/// One core (logical processor) this process may run on.
#[derive(Clone, Debug, Serialize)]
pub struct Core {
    /// The OS's id (what affinity and `--pair` use).
    pub id: usize,
    pub x2apic_id: Option<u32>,
    pub numa_node: usize,
}

/// The host's topology.
#[derive(Clone, Debug, Serialize)]
pub struct Topology {
    pub cores: Vec<Core>,
    /// Data and unified caches, by level.
    pub caches: Vec<Cache>,
    pub numa_nodes: usize,
    #[serde(skip)]
    smt_shift: Option<u32>,
    #[serde(skip)]
    package_shift: Option<u32>,
    /// Where the figures came from.
    pub source: String,
}

/// How two cores relate, from closest to farthest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairClass {
    SmtSibling,
    SameCache,
    DifferentCache,
    DifferentSocket,
    Unknown,
}

impl PairClass {
    pub fn name(self) -> &'static str {
        match self {
            PairClass::SmtSibling => "smt-sibling",
            PairClass::SameCache => "same-cache",
            PairClass::DifferentCache => "different-cache",
            PairClass::DifferentSocket => "different-socket",
            PairClass::Unknown => "unknown",
        }
    }
}

impl Topology {
    /// Read the host's topology (pins a short-lived thread to each core).
    pub fn detect() -> Topology {
        let ids: Vec<usize> = core_affinity::get_core_ids()
            .map(|v| v.into_iter().map(|c| c.id).collect())
            .filter(|v: &Vec<usize>| !v.is_empty())
            .unwrap_or_else(|| (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect());
        let numa = numa_nodes();
        let node_of = |id: usize| numa.iter().position(|cpus| cpus.contains(&id)).unwrap_or(0);
        let cores = ids
            .iter()
            .map(|&id| Core {
                id,
                x2apic_id: std::thread::scope(|s| {
                    s.spawn(|| if super::kernels::pin(id) { cpuid::x2apic_id() } else { None }).join().ok().flatten()
                }),
                numa_node: node_of(id),
            })
            .collect();
        let (caches, smt_shift, package_shift) = cpuid::caches_and_shifts();
        let source = if caches.is_empty() {
            "cores: OS affinity mask (core_affinity); caches: not reported by this processor".to_string()
        } else {
            "cores: OS affinity mask (core_affinity); caches and x2APIC ids: CPUID (raw-cpuid); \
             NUMA nodes: /sys/devices/system/node"
                .to_string()
        };
        Topology { cores, caches, numa_nodes: numa.len().max(1), smt_shift, package_shift, source }
    }

    /// The OS ids of the cores.
    pub fn core_ids(&self) -> Vec<usize> {
        self.cores.iter().map(|c| c.id).collect()
    }

    /// The largest data or unified cache: the last level.
    pub fn last_level(&self) -> Option<&Cache> {
        self.caches.iter().max_by_key(|c| (c.level, c.size_bytes))
    }

    /// The largest cache private to one core (shared by one core's SMT threads at most).
    pub fn largest_private(&self) -> Option<&Cache> {
        let smt = 1u64 << self.smt_shift.unwrap_or(0);
        self.caches.iter().filter(|c| c.shared_by <= smt).max_by_key(|c| (c.level, c.size_bytes))
    }

    /// The line size: the first level's (64 bytes if unknown).
    pub fn line_bytes(&self) -> u64 {
        self.caches.iter().min_by_key(|c| c.level).map(|c| c.line_bytes).unwrap_or(64)
    }

    fn apic(&self, id: usize) -> Option<u32> {
        self.cores.iter().find(|c| c.id == id).and_then(|c| c.x2apic_id)
    }

    /// How cores `a` and `b` relate.
    pub fn classify(&self, a: usize, b: usize) -> PairClass {
        let (Some(x), Some(y)) = (self.apic(a), self.apic(b)) else { return PairClass::Unknown };
        let same = |shift: u32| x.checked_shr(shift).unwrap_or(0) == y.checked_shr(shift).unwrap_or(0);
        if let Some(s) = self.smt_shift {
            if s > 0 && same(s) {
                return PairClass::SmtSibling;
            }
        }
        if let Some(p) = self.package_shift {
            if !same(p) {
                return PairClass::DifferentSocket;
            }
        }
        match self.last_level() {
            Some(llc) if same(llc.shift) => PairClass::SameCache,
            Some(_) => PairClass::DifferentCache,
            None => PairClass::Unknown,
        }
    }

    /// One pair per class the host has, closest class first, each the first such pair in core
    /// order (so it includes the first core where it can).
    pub fn representative_pairs(&self) -> Vec<(usize, usize, PairClass)> {
        let ids = self.core_ids();
        let mut found: Vec<(usize, usize, PairClass)> = Vec::new();
        for (i, &a) in ids.iter().enumerate() {
            for &b in &ids[i + 1..] {
                let c = self.classify(a, b);
                if !found.iter().any(|f| f.2 == c) {
                    found.push((a, b, c));
                }
            }
        }
        found.sort_by_key(|f| f.2);
        found
    }

    /// Pairs for the latency matrix: every pair when there are at most `limit_cores` cores,
    /// else the first core with every other, and the representative pairs.
    pub fn latency_pairs(&self, limit_cores: usize) -> Vec<(usize, usize)> {
        let ids = self.core_ids();
        let mut pairs = Vec::new();
        if ids.len() <= limit_cores {
            for (i, &a) in ids.iter().enumerate() {
                for &b in &ids[i + 1..] {
                    pairs.push((a, b));
                }
            }
        } else {
            for &b in &ids[1..] {
                pairs.push((ids[0], b));
            }
            for (a, b, _) in self.representative_pairs() {
                if !pairs.contains(&(a, b)) {
                    pairs.push((a, b));
                }
            }
        }
        pairs
    }
}

/// The CPU lists of the NUMA nodes (Linux sysfs); empty when not available.
fn numa_nodes() -> Vec<Vec<usize>> {
    let mut nodes = Vec::new();
    for n in 0..1024 {
        let path = format!("/sys/devices/system/node/node{n}/cpulist");
        match std::fs::read_to_string(&path) {
            Ok(text) => nodes.push(parse_cpu_list(&text)),
            Err(_) if n == 0 => return nodes,
            Err(_) => break,
        }
    }
    nodes
}

/// A kernel CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.trim().parse::<usize>().ok()),
        }
    }
    out
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod cpuid {
    use super::Cache;
    use raw_cpuid::{CacheType, CpuId, TopologyType};

    /// This core's x2APIC id (leaf 0xB), or its initial APIC id (leaf 1).
    pub fn x2apic_id() -> Option<u32> {
        let id = CpuId::new();
        if let Some(mut levels) = id.get_extended_topology_info() {
            if let Some(l) = levels.next() {
                return Some(l.x2apic_id());
            }
        }
        id.get_feature_info().map(|f| f.initial_local_apic_id() as u32)
    }

    /// Bits to shift an APIC id right to get the id of a domain shared by `n` logical
    /// processors.
    fn width(n: usize) -> u32 {
        n.max(1).next_power_of_two().trailing_zeros()
    }

    /// The data and unified caches, the SMT width and the package (socket) width.
    pub fn caches_and_shifts() -> (Vec<Cache>, Option<u32>, Option<u32>) {
        let id = CpuId::new();
        let mut caches = Vec::new();
        if let Some(params) = id.get_cache_parameters() {
            for c in params {
                let kind = match c.cache_type() {
                    CacheType::Data => "data",
                    CacheType::Unified => "unified",
                    _ => continue,
                };
                let size =
                    (c.associativity() * c.physical_line_partitions() * c.coherency_line_size() * c.sets()) as u64;
                caches.push(Cache {
                    level: c.level(),
                    kind: kind.to_string(),
                    size_bytes: size,
                    line_bytes: c.coherency_line_size() as u64,
                    ways: c.associativity() as u64,
                    shared_by: c.max_cores_for_cache() as u64,
                    shift: width(c.max_cores_for_cache()),
                });
            }
        }
        caches.sort_by_key(|c| c.level);
        let (mut smt, mut package) = (None, None);
        // Leaf 0xB levels: SMT then core; the last level's shift is the package's.
        if let Some(levels) = id.get_extended_topology_info() {
            for l in levels {
                // raw-cpuid 11 panics on level types it does not know (above 5); leaf 0xB only
                // reports SMT (1) and core (2).
                if l.level_type() == TopologyType::SMT {
                    smt = Some(l.shift_right_for_next_apic_id());
                }
                package = Some(l.shift_right_for_next_apic_id());
            }
        }
        (caches, smt, package)
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
mod cpuid {
    use super::Cache;

    pub fn x2apic_id() -> Option<u32> {
        None
    }

    pub fn caches_and_shifts() -> (Vec<Cache>, Option<u32>, Option<u32>) {
        (Vec::new(), None, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
    }

    fn cache(level: u8, shared_by: u64) -> Cache {
        Cache {
            level,
            kind: "unified".into(),
            size_bytes: 1 << 20,
            line_bytes: 64,
            ways: 8,
            shared_by,
            shift: shared_by.next_power_of_two().trailing_zeros(),
        }
    }

    #[test]
    fn pairs_are_classified_by_apic_id() {
        // Two sockets of 2 cores x 2 threads; L2 per core, L3 per socket.
        let cores = [0u32, 1, 2, 3, 8, 9, 10, 11]
            .iter()
            .enumerate()
            .map(|(i, &x)| Core { id: i, x2apic_id: Some(x), numa_node: (x >> 3) as usize })
            .collect();
        let t = Topology {
            cores,
            caches: vec![cache(1, 2), cache(2, 2), cache(3, 8)],
            numa_nodes: 2,
            smt_shift: Some(1),
            package_shift: Some(3),
            source: String::new(),
        };
        assert_eq!(t.classify(0, 1), PairClass::SmtSibling);
        assert_eq!(t.classify(0, 2), PairClass::SameCache);
        assert_eq!(t.classify(0, 4), PairClass::DifferentSocket);
        assert_eq!(t.largest_private().unwrap().level, 2);
        let classes: Vec<_> = t.representative_pairs().into_iter().map(|p| (p.0, p.1, p.2)).collect();
        assert_eq!(
            classes,
            vec![(0, 1, PairClass::SmtSibling), (0, 2, PairClass::SameCache), (0, 4, PairClass::DifferentSocket)]
        );
        assert_eq!(t.latency_pairs(16).len(), 28);
        assert_eq!(t.latency_pairs(4).len(), 7);
        // L3 per core (2 threads): cores 0 and 1 of a socket are in different cache domains.
        let t2 = Topology { caches: vec![cache(1, 2), cache(3, 2)], ..t };
        assert_eq!(t2.classify(0, 2), PairClass::DifferentCache);
    }
}
