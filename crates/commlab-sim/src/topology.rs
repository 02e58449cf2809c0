//! Network topologies: routers, unidirectional links, endpoints and deterministic routing.
//!
//! # Numbering
//!
//! **Endpoints** are processors `0..nprocs` followed by I/O nodes `nprocs..nendpoints`. Only a
//! mesh with `io_nodes` has I/O nodes: with `X = dims[0]`, `Y = dims[1]`, endpoint `nprocs + y`
//! is the I/O node at the left edge of row `y` and `nprocs + Y + y` the one at the right edge.
//!
//! **Routers**
//! - mesh: router `x + y * X` for processor column `x`, row `y`; then the left I/O column
//!   (router `X * Y + y`, x = -1) and the right I/O column (router `X * Y + Y + y`, x = X).
//!   So endpoint `e` sits on router `e`.
//! - torus, ring, hypercube: router `p` for processor `p`; coordinates are mixed radix with
//!   dimension 0 fastest (for the hypercube, dimension `i` is address bit `i`, size 2).
//! - fat-tree: switch `(level l, index w)`, `w` having `levels - 1` base-k digits, leaves at
//!   level 0. Switches whose subtree holds no endpoint are left out; the survivors of each level
//!   are exactly `w in 0..count(l)`, so the id is `offset(l) + w`, levels in order from the
//!   leaves. Leaf switch `w` is router `w` and endpoint `p` sits on leaf `p / arity`.
//! - crossbar: router 0.
//!
//! **Links**: link `e` is endpoint `e`'s injection link, link `nendpoints + e` its ejection
//! link; router-to-router links follow from `2 * nendpoints` on, ordered by source router and
//! then by output port. Ports: mesh `+x, -x, +y, -y`; torus/ring/hypercube `2i` (+ in
//! dimension `i`) and `2i + 1` (-); fat-tree up ports `0..k`, down ports `k..2k`. A table
//! `(router, port) -> link` makes `next_link` O(1) (O(dims) for the torus).

pub type LinkId = u32;
pub type RouterId = u32;

/// Largest number of processors a topology may have.
pub const MAX_PROCS: usize = 1 << 20;
/// Largest number of torus dimensions.
pub const MAX_TORUS_DIMS: usize = 32;

/// Marks a `(router, port)` slot without a link.
const NO_LINK: LinkId = LinkId::MAX;

#[derive(Clone, Debug, PartialEq)]
pub enum TopologyKind {
    /// 2D mesh, `dims = [x, y]`; processor p sits at `x = p % dims[0]`, `y = p / dims[0]`.
    /// With io_nodes = true, one I/O node per row on each of the two x edges (2 * y I/O nodes),
    /// each on its own extra router column (x = -1 and `x = dims[0]`); processor routes never use those columns.
    Mesh { dims: [usize; 2], io_nodes: bool },
    /// k-ary n-cube torus with wraparound, dims = [k0, k1, ...] (any n >= 1) routers, coordinates
    /// x fastest, with `procs_per_router` processors on every router (consecutive ids: processor
    /// p on router p / procs_per_router), each with its own injection and ejection link.
    Torus { dims: Vec<usize>, procs_per_router: usize },
    /// k-ary n-tree fat-tree (arity k), endpoints at the leaves; nprocs endpoints (not necessarily k^n).
    FatTree { arity: usize, nprocs: usize },
    /// Binary hypercube of 2^dim processors.
    Hypercube { dim: usize },
    /// Bidirectional ring.
    Ring { nprocs: usize },
    /// One central switch that every endpoint attaches to.
    Crossbar { nprocs: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    Injection,
    Ejection,
    Router,
}

/// A unidirectional link. Injection: `from_router` None, `to_router` Some; Ejection: from Some,
/// to None; Router: both Some.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub kind: LinkKind,
    pub from_router: Option<RouterId>,
    pub to_router: Option<RouterId>,
}

/// Geometry used for routing; the public `TopologyKind` is kept alongside.
#[derive(Clone, Debug)]
enum Shape {
    Mesh {
        x: usize,
        y: usize,
        io: bool,
    },
    /// Torus, ring (one dimension) and hypercube (all dimensions of size 2): `dims` and
    /// `strides` count routers.
    Grid {
        dims: Vec<usize>,
        strides: Vec<usize>,
        /// Dimension cut by the bisection.
        cut: usize,
        /// Processors on each router (a torus's `procs_per_router`; 1 for ring and hypercube):
        /// processor p sits on router p / per_router.
        per_router: usize,
    },
    FatTree(FatTree),
    Crossbar,
}

#[derive(Clone, Debug)]
struct FatTree {
    k: usize,
    levels: usize,
    /// `pow[i] = k^i` for `i in 0..=levels` (the last may saturate, which is harmless).
    pow: Vec<usize>,
    /// First router id of each level, plus the router count at the end.
    offset: Vec<usize>,
}

impl FatTree {
    fn new(k: usize, nprocs: usize) -> FatTree {
        let mut pow = vec![1usize];
        while pow.len() < 2 || pow[pow.len() - 1] < nprocs {
            let next = pow[pow.len() - 1].saturating_mul(k);
            pow.push(next);
        }
        let levels = pow.len() - 1;
        let mut offset = vec![0];
        for l in 0..levels {
            // Switch (l, w) covers the endpoints p with p / k^(l+1) == w / k^l: it is non-empty
            // iff w / k^l < ceil(nprocs / k^(l+1)), i.e. w < ceil(nprocs / k^(l+1)) * k^l.
            let count = nprocs.div_ceil(pow[l + 1]) * pow[l];
            offset.push(offset[l] + count);
        }
        FatTree { k, levels, pow, offset }
    }

    fn nrouters(&self) -> usize {
        self.offset[self.levels]
    }

    fn count(&self, l: usize) -> usize {
        self.offset[l + 1] - self.offset[l]
    }

    /// (level, index) of a router.
    fn coord(&self, r: usize) -> (usize, usize) {
        let l = self.offset.partition_point(|&o| o <= r) - 1;
        (l, r - self.offset[l])
    }

    /// Whether switch (l, w) has endpoint `e` in its subtree.
    fn covers(&self, l: usize, w: usize, e: usize) -> bool {
        e / self.pow[l + 1] == w / self.pow[l]
    }

    fn neighbor(&self, r: usize, port: usize) -> Option<usize> {
        let (l, w) = self.coord(r);
        let k = self.k;
        // Up and down links join (l, w) and (l + 1, w') where w, w' differ only in digit l.
        let set_digit = |w: usize, i: usize, v: usize| w - (w / self.pow[i] % k) * self.pow[i] + v * self.pow[i];
        if port < k {
            if l + 1 >= self.levels {
                return None;
            }
            // A parent covers a superset of its child's endpoints, so it always exists.
            let up = set_digit(w, l, port);
            debug_assert!(up < self.count(l + 1));
            Some(self.offset[l + 1] + up)
        } else {
            if l == 0 {
                return None;
            }
            let down = set_digit(w, l - 1, port - k);
            (down < self.count(l - 1)).then(|| self.offset[l - 1] + down)
        }
    }

    /// Next port at router `r` toward endpoint `dst`, or None to eject.
    fn port_toward(&self, r: usize, dst: usize) -> Option<usize> {
        let (l, w) = self.coord(r);
        // d-mod-k: both the up port and the (unique) down port are digit l of dst. Going up,
        // any port would do; using the destination's digit spreads flows over the top switches.
        let j = dst / self.pow[l] % self.k;
        if !self.covers(l, w, dst) {
            Some(j)
        } else if l == 0 {
            None
        } else {
            Some(self.k + j)
        }
    }

    fn hops(&self, a: usize, b: usize) -> usize {
        // Climb to the lowest level m whose switch above a also covers b, then descend.
        let m = (0..self.levels).find(|&m| a / self.pow[m + 1] == b / self.pow[m + 1]).unwrap_or(self.levels - 1);
        2 * m
    }

    fn router_side(&self, r: usize, nprocs: usize) -> u8 {
        let (l, w) = self.coord(r);
        if l + 1 == self.levels {
            // Top switches each reach both halves; split them by index.
            (w >= self.pow[l] / 2) as u8
        } else {
            // Lower switches go with the first endpoint of their subtree (exact for full trees
            // of even arity, whose subtrees below the top never straddle the cut).
            let first = w / self.pow[l] * self.pow[l + 1];
            (first >= nprocs / 2) as u8
        }
    }
}

fn mesh_coord(x: usize, y: usize, r: usize) -> (isize, isize) {
    let n = x * y;
    if r < n {
        ((r % x) as isize, (r / x) as isize)
    } else if r < n + y {
        (-1, (r - n) as isize)
    } else {
        (x as isize, (r - n - y) as isize)
    }
}

fn mesh_router(x: usize, y: usize, cx: isize, cy: isize) -> usize {
    let cy = cy as usize;
    if cx < 0 {
        x * y + cy
    } else if cx as usize >= x {
        x * y + y + cy
    } else {
        cx as usize + cy * x
    }
}

impl Shape {
    fn neighbor(&self, r: usize, port: usize) -> Option<usize> {
        match self {
            Shape::Mesh { x, y, io } => {
                let (x, y) = (*x, *y);
                let (cx, cy) = mesh_coord(x, y, r);
                let (nx, ny) = match port {
                    0 => (cx + 1, cy),
                    1 => (cx - 1, cy),
                    2 => (cx, cy + 1),
                    _ => (cx, cy - 1),
                };
                let inside = |c: isize| c >= 0 && c < x as isize;
                let exists = ny >= 0 && ny < y as isize && nx >= -1 && nx <= x as isize;
                // Processor routers form the grid; an I/O router only links horizontally to the
                // processor router at the end of its own row.
                let ok = exists && ((inside(cx) && inside(nx)) || (*io && cy == ny && (inside(cx) || inside(nx))));
                ok.then(|| mesh_router(x, y, nx, ny))
            }
            Shape::Grid { dims, strides, .. } => {
                let (k, s) = (dims[port / 2], strides[port / 2]);
                let c = r / s % k;
                // Size 2 has a single neighbour, reached by the + port only; size 1 has none.
                let nc = if port.is_multiple_of(2) && k >= 2 {
                    (c + 1) % k
                } else if !port.is_multiple_of(2) && k >= 3 {
                    (c + k - 1) % k
                } else {
                    return None;
                };
                Some(r - c * s + nc * s)
            }
            Shape::FatTree(ft) => ft.neighbor(r, port),
            Shape::Crossbar => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Topology {
    kind: TopologyKind,
    shape: Shape,
    nprocs: usize,
    nendpoints: usize,
    nrouters: usize,
    router_of: Vec<RouterId>,
    links: Vec<Link>,
    /// Ports per router (stride of `ports`).
    nports: usize,
    /// `ports[r * nports + port]`: the link leaving router r by that port, or NO_LINK.
    ports: Vec<LinkId>,
}

fn check_procs(what: &str, n: Option<usize>) -> Result<usize, String> {
    match n {
        Some(n) if n <= MAX_PROCS => Ok(n),
        Some(n) => Err(format!("{what} has {n} processors: at most {MAX_PROCS} are supported")),
        None => Err(format!("{what} is too large: at most {MAX_PROCS} processors are supported")),
    }
}

fn strides_of(dims: &[usize]) -> Vec<usize> {
    let mut s = 1;
    dims.iter()
        .map(|&k| {
            let here = s;
            s *= k;
            here
        })
        .collect()
}

impl Topology {
    /// Builds a topology; Err with a one-line message naming the bad value and what is valid.
    pub fn new(kind: TopologyKind) -> Result<Topology, String> {
        let (shape, nprocs, nendpoints) = match &kind {
            TopologyKind::Mesh { dims, io_nodes } => {
                let [x, y] = *dims;
                if x == 0 || y == 0 {
                    return Err(format!("mesh dims {dims:?}: both dimensions must be >= 1"));
                }
                let n = check_procs(&format!("mesh {x}x{y}"), x.checked_mul(y))?;
                let io = if *io_nodes { 2 * y } else { 0 };
                (Shape::Mesh { x, y, io: *io_nodes }, n, n + io)
            }
            TopologyKind::Torus { dims, procs_per_router } => {
                if dims.is_empty() || dims.len() > MAX_TORUS_DIMS {
                    return Err(format!("torus dims {dims:?}: need 1 to {MAX_TORUS_DIMS} dimensions"));
                }
                if dims.contains(&0) {
                    return Err(format!("torus dims {dims:?}: every dimension must be >= 1"));
                }
                if *procs_per_router == 0 {
                    return Err("torus procs_per_router 0: every router needs at least 1 processor".to_string());
                }
                let n = dims.iter().try_fold(*procs_per_router, |acc, &k| acc.checked_mul(k));
                let n = check_procs(&format!("torus {dims:?}"), n)?;
                let mut cut = 0;
                for (i, &k) in dims.iter().enumerate() {
                    if k > dims[cut] {
                        cut = i;
                    }
                }
                (
                    Shape::Grid { dims: dims.clone(), strides: strides_of(dims), cut, per_router: *procs_per_router },
                    n,
                    n,
                )
            }
            TopologyKind::FatTree { arity, nprocs } => {
                if *arity < 2 {
                    return Err(format!("fat-tree arity {arity}: arity must be >= 2"));
                }
                if *nprocs == 0 {
                    return Err("fat-tree nprocs 0: need at least 1 processor".to_string());
                }
                let n = check_procs("fat-tree", Some(*nprocs))?;
                (Shape::FatTree(FatTree::new(*arity, n)), n, n)
            }
            TopologyKind::Hypercube { dim } => {
                let max_dim = MAX_PROCS.trailing_zeros() as usize;
                if *dim > max_dim {
                    return Err(format!("hypercube dim {dim}: dim must be at most {max_dim} ({MAX_PROCS} processors)"));
                }
                let n = 1usize << dim;
                // Dimension i is address bit i; dim 0 is a single processor.
                let dims = if *dim == 0 { vec![1] } else { vec![2; *dim] };
                let strides = strides_of(&dims);
                (Shape::Grid { dims, strides, cut: dim.saturating_sub(1), per_router: 1 }, n, n)
            }
            TopologyKind::Ring { nprocs } | TopologyKind::Crossbar { nprocs } => {
                let name = if matches!(kind, TopologyKind::Ring { .. }) { "ring" } else { "crossbar" };
                if *nprocs == 0 {
                    return Err(format!("{name} nprocs 0: need at least 1 processor"));
                }
                let n = check_procs(name, Some(*nprocs))?;
                let shape = if name == "ring" {
                    Shape::Grid { dims: vec![n], strides: vec![1], cut: 0, per_router: 1 }
                } else {
                    Shape::Crossbar
                };
                (shape, n, n)
            }
        };

        let (nrouters, nports, router_of): (usize, usize, Vec<RouterId>) = match &shape {
            Shape::Mesh { .. } => (nendpoints, 4, (0..nendpoints as RouterId).collect()),
            Shape::Grid { dims, per_router, .. } => {
                (nprocs / per_router, 2 * dims.len(), (0..nprocs).map(|p| (p / per_router) as RouterId).collect())
            }
            Shape::FatTree(ft) => {
                let nports = if ft.levels > 1 { 2 * ft.k } else { 0 };
                (ft.nrouters(), nports, (0..nprocs).map(|p| (p / ft.k) as RouterId).collect())
            }
            Shape::Crossbar => (1, 0, vec![0; nprocs]),
        };

        let mut links = Vec::with_capacity(2 * nendpoints + nrouters * nports);
        for &r in &router_of {
            links.push(Link { kind: LinkKind::Injection, from_router: None, to_router: Some(r) });
        }
        for &r in &router_of {
            links.push(Link { kind: LinkKind::Ejection, from_router: Some(r), to_router: None });
        }
        let mut ports = vec![NO_LINK; nrouters * nports];
        for r in 0..nrouters {
            for port in 0..nports {
                if let Some(t) = shape.neighbor(r, port) {
                    ports[r * nports + port] = links.len() as LinkId;
                    links.push(Link {
                        kind: LinkKind::Router,
                        from_router: Some(r as RouterId),
                        to_router: Some(t as RouterId),
                    });
                }
            }
        }
        debug_assert!(links.len() < NO_LINK as usize);
        Ok(Topology { kind, shape, nprocs, nendpoints, nrouters, router_of, links, nports, ports })
    }

    pub fn kind(&self) -> &TopologyKind {
        &self.kind
    }

    pub fn nprocs(&self) -> usize {
        self.nprocs
    }

    /// Processors plus I/O nodes.
    pub fn nendpoints(&self) -> usize {
        self.nendpoints
    }

    /// Number of I/O nodes (`nendpoints - nprocs`).
    pub fn nio(&self) -> usize {
        self.nendpoints - self.nprocs
    }

    pub fn nrouters(&self) -> usize {
        self.nrouters
    }

    pub fn nlinks(&self) -> usize {
        self.links.len()
    }

    pub fn link(&self, l: LinkId) -> Link {
        self.links[l as usize]
    }

    /// The endpoint of an injection or ejection link; None for router links.
    pub fn link_endpoint(&self, l: LinkId) -> Option<usize> {
        let l = l as usize;
        (l < 2 * self.nendpoints).then(|| l % self.nendpoints)
    }

    pub fn router_of(&self, endpoint: usize) -> RouterId {
        self.router_of[endpoint]
    }

    pub fn injection_link(&self, endpoint: usize) -> LinkId {
        debug_assert!(endpoint < self.nendpoints);
        endpoint as LinkId
    }

    pub fn ejection_link(&self, endpoint: usize) -> LinkId {
        debug_assert!(endpoint < self.nendpoints);
        (self.nendpoints + endpoint) as LinkId
    }

    /// Router links leaving router `r`, in port order.
    pub fn router_out_links(&self, r: RouterId) -> impl Iterator<Item = LinkId> + '_ {
        let r = r as usize;
        self.ports[r * self.nports..(r + 1) * self.nports].iter().copied().filter(|&l| l != NO_LINK)
    }

    fn port_link(&self, at: usize, port: usize) -> LinkId {
        let l = self.ports[at * self.nports + port];
        debug_assert!(l != NO_LINK, "routing chose a missing port {port} at router {at}");
        l
    }

    /// The next link a packet at router `at` takes toward endpoint `dst`: a Router link, or dst's
    /// ejection link when `at == router_of(dst)`. O(1) (O(dims) for a torus), no allocation.
    pub fn next_link(&self, at: RouterId, dst: usize) -> LinkId {
        let at = at as usize;
        match &self.shape {
            Shape::Mesh { x, y, .. } => {
                let (ax, ay) = mesh_coord(*x, *y, at);
                let (bx, by) = mesh_coord(*x, *y, dst);
                // Dimension order, X first. When rows differ, X only goes as far as the nearest
                // processor column (I/O columns have no Y links), then Y, then X into the I/O
                // column if dst is an I/O node. Between processors this is plain XY routing.
                let port = if ay != by {
                    let tx = bx.clamp(0, *x as isize - 1);
                    if ax < tx {
                        0
                    } else if ax > tx {
                        1
                    } else if ay < by {
                        2
                    } else {
                        3
                    }
                } else if ax < bx {
                    0
                } else if ax > bx {
                    1
                } else {
                    return self.ejection_link(dst);
                };
                self.port_link(at, port)
            }
            Shape::Grid { dims, strides, per_router, .. } => {
                let to = dst / per_router;
                for (i, (&k, &s)) in dims.iter().zip(strides).enumerate() {
                    let (a, b) = (at / s % k, to / s % k);
                    if a != b {
                        // Shorter way round; ties (and size 2) go in the + direction.
                        let d = (b + k - a) % k;
                        let port = if d <= k - d { 2 * i } else { 2 * i + 1 };
                        return self.port_link(at, port);
                    }
                }
                self.ejection_link(dst)
            }
            Shape::FatTree(ft) => match ft.port_toward(at, dst) {
                Some(port) => self.port_link(at, port),
                None => self.ejection_link(dst),
            },
            Shape::Crossbar => self.ejection_link(dst),
        }
    }

    /// For a router link of a torus, ring or hypercube: its dimension and whether it is the
    /// dimension's wraparound link (from coordinate k-1 to 0 or back, only for k >= 3). The
    /// network uses this to put packets that crossed the wraparound on a second virtual
    /// channel (dateline routing), which breaks the torus's cyclic channel dependencies.
    pub fn grid_link_dim(&self, l: LinkId) -> Option<(usize, bool)> {
        let Shape::Grid { dims, strides, .. } = &self.shape else { return None };
        let from = self.links[l as usize].from_router? as usize;
        let port = (0..self.nports).find(|&p| self.ports[from * self.nports + p] == l)?;
        let dim = port / 2;
        let (k, coord) = (dims[dim], from / strides[dim] % dims[dim]);
        let wrap = k >= 3 && if port % 2 == 0 { coord == k - 1 } else { coord == 0 };
        Some((dim, wrap))
    }

    /// Number of Router links on the route from endpoint a to endpoint b (0 when they share a router).
    pub fn hops(&self, a: usize, b: usize) -> usize {
        match &self.shape {
            Shape::Mesh { x, y, .. } => {
                let (ax, ay) = mesh_coord(*x, *y, a);
                let (bx, by) = mesh_coord(*x, *y, b);
                if ay == by {
                    ax.abs_diff(bx)
                } else {
                    let tx = bx.clamp(0, *x as isize - 1);
                    ax.abs_diff(tx) + ay.abs_diff(by) + tx.abs_diff(bx)
                }
            }
            Shape::Grid { dims, strides, per_router, .. } => {
                let (a, b) = (a / per_router, b / per_router);
                dims.iter()
                    .zip(strides)
                    .map(|(&k, &s)| {
                        let d = (b / s % k + k - a / s % k) % k;
                        d.min(k - d)
                    })
                    .sum()
            }
            Shape::FatTree(ft) => ft.hops(a, b),
            Shape::Crossbar => 0,
        }
    }

    /// Full route as link ids: injection link, router links..., ejection link.
    pub fn route(&self, a: usize, b: usize) -> Vec<LinkId> {
        let mut out = vec![self.injection_link(a)];
        let mut at = self.router_of(a);
        loop {
            let l = self.next_link(at, b);
            out.push(l);
            match self.links[l as usize].to_router {
                Some(r) => at = r,
                None => break,
            }
            assert!(out.len() <= self.nrouters + 2, "routing loop from {a} to {b}");
        }
        debug_assert_eq!(*out.last().unwrap(), self.ejection_link(b));
        out
    }

    /// Largest hop count between processor `p` and any processor.
    pub fn max_hops_from(&self, p: usize) -> usize {
        (0..self.nprocs).map(|q| self.hops(p, q)).max().unwrap_or(0)
    }

    /// First processor (lowest id) exactly `h` hops from processor `p`, if any.
    pub fn proc_at_hops(&self, p: usize, h: usize) -> Option<usize> {
        (0..self.nprocs).find(|&q| self.hops(p, q) == h)
    }

    /// Side of the bisection cut a router is on.
    fn router_side(&self, r: usize) -> u8 {
        match &self.shape {
            Shape::Mesh { x, y, .. } => {
                let (cx, cy) = mesh_coord(*x, *y, r);
                let (c, k) = if x >= y { (cx, *x) } else { (cy, *y) };
                (k >= 2 && c >= (k / 2) as isize) as u8
            }
            Shape::Grid { dims, strides, cut, .. } => {
                let k = dims[*cut];
                (k >= 2 && r / strides[*cut] % k >= k / 2) as u8
            }
            Shape::FatTree(ft) => ft.router_side(r, self.nprocs),
            Shape::Crossbar => 0,
        }
    }

    /// Whether the bisection is made of ejection links (one switch for everything).
    fn single_switch(&self) -> bool {
        match &self.shape {
            Shape::Crossbar => true,
            Shape::FatTree(ft) => ft.levels == 1,
            _ => false,
        }
    }

    /// Which half of the bisection an endpoint is on (0 or 1). Mesh and torus cut the largest
    /// dimension in half (ties: dimension 0): side = coordinate >= dim/2 (mesh I/O nodes go with
    /// their column: left 0, right 1 when X is cut). Hypercube: top address bit. Ring, fat-tree,
    /// crossbar: p >= n/2.
    pub fn bisection_side(&self, p: usize) -> u8 {
        match &self.shape {
            Shape::FatTree(_) | Shape::Crossbar => (self.nprocs >= 2 && p >= self.nprocs / 2) as u8,
            _ => self.router_side(self.router_of(p) as usize),
        }
    }

    /// The links crossing the bisection, both directions.
    ///
    /// Mesh, torus, ring, hypercube, fat-tree: the Router links whose two routers are on
    /// different sides (mesh: only links between processor routers). Fat-tree switches below the
    /// top go with the first endpoint of their subtree and top switches are split by index, so a
    /// full tree of even arity gives `nprocs` links (full bisection). Crossbar (and a fat-tree
    /// that is a single switch): there are no router links, so the cut is the ejection links of
    /// all processors, `nprocs` links: side-0 traffic into side 1 needs the side-1 ejection
    /// links and vice versa. Empty with fewer than 2 processors.
    pub fn bisection_links(&self) -> Vec<LinkId> {
        if self.nprocs < 2 {
            return Vec::new();
        }
        if self.single_switch() {
            return (0..self.nprocs).map(|p| self.ejection_link(p)).collect();
        }
        let nproc_routers = match &self.shape {
            Shape::Mesh { x, y, .. } => x * y,
            _ => self.nrouters,
        };
        let first = 2 * self.nendpoints;
        (first..self.links.len())
            .filter(|&l| {
                let link = self.links[l];
                let (a, b) = (link.from_router.unwrap() as usize, link.to_router.unwrap() as usize);
                a < nproc_routers && b < nproc_routers && self.router_side(a) != self.router_side(b)
            })
            .map(|l| l as LinkId)
            .collect()
    }

    /// A partner on the other side of the bisection whose route from `p` crosses the cut exactly
    /// once and (mesh/torus) only changes the cut coordinate: mesh/torus shift by half the cut
    /// dimension, hypercube flips the top bit, ring/fat-tree/crossbar `(p + n/2) % n`. None when
    /// the cut dimension (or n) is odd, or `p` is not a processor. For a fat-tree that is not a
    /// full tree of even arity the route may cross the cut at an injection or ejection link
    /// instead of a bisection link.
    pub fn bisection_partner(&self, p: usize) -> Option<usize> {
        if p >= self.nprocs {
            return None;
        }
        let shift = |c: usize, k: usize, s: usize| k.is_multiple_of(2).then(|| p - c * s + (c + k / 2) % k * s);
        match &self.shape {
            Shape::Mesh { x, y, .. } => {
                if x >= y {
                    shift(p % x, *x, 1)
                } else {
                    shift(p / x, *y, *x)
                }
            }
            Shape::Grid { dims, strides, cut, per_router } => {
                // The processor in the same place on the partner router.
                let (k, s) = (dims[*cut], per_router * strides[*cut]);
                shift(p / s % k, k, s)
            }
            Shape::FatTree(_) | Shape::Crossbar => {
                let n = self.nprocs;
                n.is_multiple_of(2).then(|| (p + n / 2) % n)
            }
        }
    }

    /// Pairs (src, dst) of I/O endpoints for cross-traffic across the bisection: for a mesh with
    /// I/O nodes, each row's left I/O node sends to the same row's right one and vice versa
    /// (2 * rows pairs, row by row). Empty otherwise.
    pub fn io_pairs(&self) -> Vec<(usize, usize)> {
        match &self.shape {
            Shape::Mesh { y, io: true, .. } => (0..*y)
                .flat_map(|row| {
                    let left = self.nprocs + row;
                    let right = self.nprocs + y + row;
                    [(left, right), (right, left)]
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// One line such as "mesh 8x4 (+8 I/O nodes)", "torus 4x4x2", "fat-tree arity 4, 3 levels"
    /// (", 20 procs" appended when not a full tree), "hypercube dim 5", "ring 32", "crossbar 32".
    pub fn describe(&self) -> String {
        match (&self.kind, &self.shape) {
            (TopologyKind::Mesh { dims, io_nodes }, _) => {
                let io = if *io_nodes { format!(" (+{} I/O nodes)", self.nio()) } else { String::new() };
                format!("mesh {}x{}{io}", dims[0], dims[1])
            }
            (TopologyKind::Torus { dims, procs_per_router }, _) => {
                let d: Vec<String> = dims.iter().map(|k| k.to_string()).collect();
                let shared = match procs_per_router {
                    1 => String::new(),
                    c => format!(", {c} processors per router"),
                };
                format!("torus {}{shared}", d.join("x"))
            }
            (TopologyKind::FatTree { arity, nprocs }, Shape::FatTree(ft)) => {
                let plural = if ft.levels == 1 { "" } else { "s" };
                let full = ft.pow[ft.levels] == *nprocs;
                let size = if full { String::new() } else { format!(", {nprocs} procs") };
                format!("fat-tree arity {arity}, {} level{plural}{size}", ft.levels)
            }
            (TopologyKind::Hypercube { dim }, _) => format!("hypercube dim {dim}"),
            (TopologyKind::Ring { nprocs }, _) => format!("ring {nprocs}"),
            (TopologyKind::Crossbar { nprocs }, _) => format!("crossbar {nprocs}"),
            (TopologyKind::FatTree { .. }, _) => unreachable!("fat-tree kind with another shape"),
        }
    }
}

/// Lexicographically smallest non-increasing `d`-tuple of factors of `n`, each at most `maxf`:
/// the smallest possible largest factor, then the smallest next one, and so on.
fn balanced_factors(n: usize, d: usize, maxf: usize) -> Option<Vec<usize>> {
    if d == 1 {
        return (n <= maxf).then(|| vec![n]);
    }
    for f in 1..=n.min(maxf) {
        // f must divide n, and d factors of at most f must be able to reach n.
        if !n.is_multiple_of(f) || f.saturating_pow(d as u32) < n {
            continue;
        }
        if let Some(mut rest) = balanced_factors(n / f, d - 1, f) {
            rest.insert(0, f);
            return Some(rest);
        }
    }
    None
}

/// Resize a topology to `nprocs` processors keeping its kind and parameters:
/// mesh: as square as possible, dims = [x, y] with x*y = nprocs, x >= y, y the largest divisor
/// <= sqrt(n) (so 32 -> `[8, 4]`, 7 -> `[7, 1]`); io_nodes kept. torus: same number of dimensions,
/// factors of the router count as equal as possible, sorted descending (32 with 3 dims -> `[4, 4, 2]`;
/// with 2 processors per router, `[4, 2, 2]`), nprocs a multiple of the processors per router, or
/// fewer than one router holds (one router with them all). hypercube:
/// nprocs must be a power of two. fat-tree (arity kept), ring, crossbar: nprocs.
/// Err(one-line message) for nprocs == 0 or impossible sizes.
pub fn resize(kind: &TopologyKind, nprocs: usize) -> Result<TopologyKind, String> {
    if nprocs == 0 {
        return Err("cannot resize a topology to 0 processors: need at least 1".to_string());
    }
    if nprocs > MAX_PROCS {
        return Err(format!("cannot resize to {nprocs} processors: at most {MAX_PROCS} are supported"));
    }
    Ok(match kind {
        TopologyKind::Mesh { io_nodes, .. } => {
            let y =
                (1..=nprocs).take_while(|d| d * d <= nprocs).filter(|&d| nprocs.is_multiple_of(d)).last().unwrap_or(1);
            TopologyKind::Mesh { dims: [nprocs / y, y], io_nodes: *io_nodes }
        }
        TopologyKind::Torus { dims, procs_per_router } => {
            if dims.is_empty() || dims.len() > MAX_TORUS_DIMS {
                return Err(format!("torus dims {dims:?}: need 1 to {MAX_TORUS_DIMS} dimensions"));
            }
            let c = (*procs_per_router).max(1);
            if nprocs < c {
                // Fewer processors than one router holds: a single, partly filled router (a
                // T3D node with one processor; apps' one-processor reference runs).
                return Ok(TopologyKind::Torus { dims: vec![1; dims.len()], procs_per_router: nprocs });
            }
            if !nprocs.is_multiple_of(c) {
                let below = nprocs / c * c;
                return Err(format!(
                    "this torus has {c} processors on every router: the processor count must be a multiple of {c}, got {nprocs} (nearest valid: {below} or {})",
                    below + c
                ));
            }
            // Always succeeds: [n, 1, 1, ...] is a candidate.
            let routers = nprocs / c;
            let dims = balanced_factors(routers, dims.len(), routers).expect("[n, 1, ...] always fits");
            TopologyKind::Torus { dims, procs_per_router: c }
        }
        TopologyKind::FatTree { arity, .. } => TopologyKind::FatTree { arity: *arity, nprocs },
        TopologyKind::Hypercube { .. } => {
            if !nprocs.is_power_of_two() {
                let below = 1usize << (usize::BITS - 1 - nprocs.leading_zeros());
                return Err(format!(
                    "hypercube needs a power-of-two processor count, got {nprocs} (nearest valid: {below} or {})",
                    below * 2
                ));
            }
            TopologyKind::Hypercube { dim: nprocs.trailing_zeros() as usize }
        }
        TopologyKind::Ring { .. } => TopologyKind::Ring { nprocs },
        TopologyKind::Crossbar { .. } => TopologyKind::Crossbar { nprocs },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashSet, VecDeque};

    fn topo(kind: TopologyKind) -> Topology {
        Topology::new(kind).unwrap()
    }

    fn mesh(x: usize, y: usize, io: bool) -> Topology {
        topo(TopologyKind::Mesh { dims: [x, y], io_nodes: io })
    }

    fn torus(dims: &[usize]) -> Topology {
        topo(TopologyKind::Torus { dims: dims.to_vec(), procs_per_router: 1 })
    }

    fn fat_tree(arity: usize, nprocs: usize) -> Topology {
        topo(TopologyKind::FatTree { arity, nprocs })
    }

    /// Deterministic pseudo-random sample of endpoint pairs (xorshift).
    fn sample_pairs(n: usize, count: usize) -> Vec<(usize, usize)> {
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % n as u64) as usize
        };
        (0..count).map(|_| (next(), next())).collect()
    }

    fn all_pairs(n: usize) -> Vec<(usize, usize)> {
        (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).collect()
    }

    /// Follows next_link from a's injection link: must reach b's ejection link in exactly
    /// hops + 2 links, through consecutive Router links, without revisiting a router; route()
    /// must return the same links.
    fn check_route(t: &Topology, a: usize, b: usize) {
        let mut walked = vec![t.injection_link(a)];
        let mut at = t.router_of(a);
        let mut seen = HashSet::from([at]);
        loop {
            let l = t.next_link(at, b);
            let link = t.link(l);
            walked.push(l);
            assert_eq!(link.from_router, Some(at), "{}: link {l} does not leave router {at}", t.describe());
            match link.kind {
                LinkKind::Router => {
                    at = link.to_router.unwrap();
                    assert!(seen.insert(at), "{}: {a}->{b} revisits router {at}", t.describe());
                }
                LinkKind::Ejection => break,
                LinkKind::Injection => panic!("next_link returned an injection link"),
            }
        }
        assert_eq!(*walked.last().unwrap(), t.ejection_link(b), "{}: {a}->{b} ends elsewhere", t.describe());
        assert_eq!(walked.len(), t.hops(a, b) + 2, "{}: {a}->{b} length vs hops", t.describe());
        assert_eq!(t.route(a, b), walked, "{}: route() disagrees for {a}->{b}", t.describe());
    }

    fn check_routes(t: &Topology, max_pairs: usize) {
        let n = t.nendpoints();
        let pairs = if n * n <= max_pairs { all_pairs(n) } else { sample_pairs(n, max_pairs) };
        for (a, b) in pairs {
            check_route(t, a, b);
        }
    }

    /// Router-to-router distances by BFS over the router links.
    fn bfs(t: &Topology, from: RouterId) -> Vec<usize> {
        let mut dist = vec![usize::MAX; t.nrouters()];
        dist[from as usize] = 0;
        let mut q = VecDeque::from([from]);
        while let Some(r) = q.pop_front() {
            for l in t.router_out_links(r) {
                let to = t.link(l).to_router.unwrap() as usize;
                if dist[to] == usize::MAX {
                    dist[to] = dist[r as usize] + 1;
                    q.push_back(to as RouterId);
                }
            }
        }
        dist
    }

    /// Routes are minimal: hops equals the BFS distance between the routers.
    fn check_minimal(t: &Topology) {
        for a in 0..t.nendpoints() {
            let dist = bfs(t, t.router_of(a));
            for b in 0..t.nendpoints() {
                assert_eq!(t.hops(a, b), dist[t.router_of(b) as usize], "{}: {a}->{b} not minimal", t.describe());
            }
        }
    }

    /// Dense ids, each link once, no duplicate router links, inj/ej map back to their endpoints.
    fn check_links(t: &Topology) {
        let ne = t.nendpoints();
        let mut from_ports = HashSet::new();
        for r in 0..t.nrouters() as RouterId {
            for l in t.router_out_links(r) {
                assert!(from_ports.insert(l), "link {l} on two ports");
            }
        }
        let mut pairs = HashSet::new();
        for l in 0..t.nlinks() as LinkId {
            let link = t.link(l);
            match link.kind {
                LinkKind::Injection => {
                    let e = t.link_endpoint(l).unwrap();
                    assert_eq!(t.injection_link(e), l);
                    assert_eq!(link.from_router, None);
                    assert_eq!(link.to_router, Some(t.router_of(e)));
                }
                LinkKind::Ejection => {
                    let e = t.link_endpoint(l).unwrap();
                    assert_eq!(t.ejection_link(e), l);
                    assert_eq!(link.from_router, Some(t.router_of(e)));
                    assert_eq!(link.to_router, None);
                }
                LinkKind::Router => {
                    assert_eq!(t.link_endpoint(l), None);
                    let (a, b) = (link.from_router.unwrap(), link.to_router.unwrap());
                    assert!(a != b && (a as usize) < t.nrouters() && (b as usize) < t.nrouters());
                    assert!(pairs.insert((a, b)), "{}: duplicate link {a}->{b}", t.describe());
                    assert!(from_ports.contains(&l), "router link {l} on no port");
                    // Every channel is bidirectional.
                    let back = t.router_out_links(b).any(|m| t.link(m).to_router == Some(a));
                    assert!(back, "{}: no link back from {b} to {a}", t.describe());
                }
            }
        }
        assert_eq!(from_ports.len(), pairs.len());
        for e in 0..ne {
            assert_eq!(t.link(t.injection_link(e)).kind, LinkKind::Injection);
            assert_eq!(t.link(t.ejection_link(e)).kind, LinkKind::Ejection);
        }
    }

    /// Every partner route crosses exactly one bisection link, and partners sit on opposite sides.
    fn check_partners(t: &Topology) {
        let cut: HashSet<LinkId> = t.bisection_links().into_iter().collect();
        for p in 0..t.nprocs() {
            let q = t.bisection_partner(p).unwrap_or_else(|| panic!("{}: no partner for {p}", t.describe()));
            assert_ne!(t.bisection_side(p), t.bisection_side(q), "{}: {p} and {q}", t.describe());
            let crossings = t.route(p, q).iter().filter(|l| cut.contains(l)).count();
            assert_eq!(crossings, 1, "{}: route {p}->{q} crosses {crossings} times", t.describe());
        }
    }

    fn all_kinds() -> Vec<Topology> {
        let mut v = vec![
            mesh(1, 1, false),
            mesh(1, 1, true),
            mesh(8, 4, false),
            mesh(8, 4, true),
            mesh(3, 5, true),
            mesh(7, 1, false),
            mesh(1, 6, true),
            torus(&[1]),
            torus(&[2]),
            torus(&[5]),
            torus(&[4, 4]),
            torus(&[4, 4, 2]),
            torus(&[3, 1, 2, 5]),
            torus(&[6, 3]),
            topo(TopologyKind::Torus { dims: vec![4, 2, 2], procs_per_router: 2 }),
            topo(TopologyKind::Torus { dims: vec![3, 2], procs_per_router: 3 }),
            topo(TopologyKind::Torus { dims: vec![1], procs_per_router: 2 }),
            topo(TopologyKind::Ring { nprocs: 1 }),
            topo(TopologyKind::Ring { nprocs: 2 }),
            topo(TopologyKind::Ring { nprocs: 7 }),
            topo(TopologyKind::Ring { nprocs: 32 }),
            topo(TopologyKind::Crossbar { nprocs: 1 }),
            topo(TopologyKind::Crossbar { nprocs: 9 }),
        ];
        for dim in 0..=6 {
            v.push(topo(TopologyKind::Hypercube { dim }));
        }
        for (k, n) in [(2, 1), (2, 2), (2, 7), (2, 16), (3, 10), (3, 27), (4, 4), (4, 5), (4, 20), (4, 64), (5, 33)] {
            v.push(fat_tree(k, n));
        }
        v
    }

    #[test]
    fn a_torus_with_shared_routers_keeps_its_links_and_pairs_consecutive_processors() {
        // The Cray T3D: a 4x2x2 torus of routers with two processors on each.
        let t = topo(TopologyKind::Torus { dims: vec![4, 2, 2], procs_per_router: 2 });
        let spread = torus(&[8, 2, 2]);
        assert_eq!((t.nprocs(), t.nrouters(), t.nendpoints()), (32, 16, 32));
        for p in 0..32 {
            assert_eq!(t.router_of(p) as usize, p / 2);
            // Each processor keeps its own injection and ejection link.
            assert_ne!(t.injection_link(p), t.injection_link(p ^ 1));
        }
        assert_eq!(t.hops(4, 5), 0, "a node's pair shares its router");
        assert_eq!(t.route(4, 5), vec![t.injection_link(4), t.ejection_link(5)]);
        assert_eq!(t.hops(0, 2), 1);
        assert_eq!(t.hops(0, 4), 2, "x = 0 to x = 2 of a ring of 4 routers");
        // The same 16 one-way links cross the cut as when the pairs were spread along x.
        assert_eq!(t.bisection_links().len(), 16);
        assert_eq!(spread.bisection_links().len(), 16);
        // The mean over ordered pairs of distinct processors (the t3d preset's derivation).
        let total: usize = (0..32).flat_map(|a| (0..32).map(move |b| (a, b))).map(|(a, b)| t.hops(a, b)).sum();
        assert_eq!((total, 32 * 31), (2048, 992), "64/31 = 2.065 mean hops");
        for p in 0..32 {
            assert_eq!(t.bisection_partner(p).unwrap() % 2, p % 2, "the partner keeps its place on the router");
        }
        assert_eq!(t.describe(), "torus 4x2x2, 2 processors per router");
        check_partners(&t);
    }

    #[test]
    fn routes_follow_next_link_for_all_kinds() {
        for t in all_kinds() {
            check_links(&t);
            check_routes(&t, usize::MAX);
            check_minimal(&t);
        }
    }

    #[test]
    fn big_topologies_sampled() {
        for t in [
            fat_tree(4, 1024),
            fat_tree(4, 1000),
            fat_tree(2, 1024),
            mesh(32, 32, true),
            torus(&[16, 8, 8]),
            topo(TopologyKind::Hypercube { dim: 10 }),
            topo(TopologyKind::Ring { nprocs: 1024 }),
            topo(TopologyKind::Crossbar { nprocs: 1024 }),
        ] {
            check_links(&t);
            check_routes(&t, 20_000);
        }
    }

    #[test]
    fn hop_count_formulas() {
        let t = mesh(8, 4, true);
        for a in 0..32 {
            for b in 0..32 {
                let manhattan = (a % 8usize).abs_diff(b % 8) + (a / 8).abs_diff(b / 8);
                assert_eq!(t.hops(a, b), manhattan);
            }
        }
        let dims = [4, 3, 2];
        let t = torus(&dims);
        for a in 0..24 {
            for b in 0..24 {
                let (mut x, mut y, mut d) = (a, b, 0);
                for k in dims {
                    let diff = (x % k).abs_diff(y % k);
                    d += diff.min(k - diff);
                    x /= k;
                    y /= k;
                }
                assert_eq!(t.hops(a, b), d);
            }
        }
        let t = topo(TopologyKind::Hypercube { dim: 6 });
        for a in 0..64 {
            for b in 0..64 {
                assert_eq!(t.hops(a, b), (a ^ b).count_ones() as usize);
            }
        }
        for n in [5, 8] {
            let t = topo(TopologyKind::Ring { nprocs: n });
            for a in 0..n {
                for b in 0..n {
                    let d = a.abs_diff(b);
                    assert_eq!(t.hops(a, b), d.min(n - d));
                }
            }
        }
        let t = fat_tree(4, 64);
        assert_eq!(t.hops(0, 3), 0);
        assert_eq!(t.hops(0, 4), 2);
        assert_eq!(t.hops(0, 16), 4);
        assert_eq!(t.hops(63, 0), 4);
        assert_eq!(topo(TopologyKind::Crossbar { nprocs: 8 }).hops(1, 7), 0);
    }

    #[test]
    fn mesh_8x4() {
        let t = mesh(8, 4, false);
        assert_eq!(t.nprocs(), 32);
        assert_eq!(t.nendpoints(), 32);
        assert_eq!(t.nrouters(), 32);
        assert_eq!(t.nlinks(), 64 + 2 * (7 * 4 + 8 * 3));
        assert_eq!(t.max_hops_from(0), 10);
        for h in [1, 4, 8, 10] {
            let q = t.proc_at_hops(0, h).unwrap();
            assert_eq!(t.hops(0, q), h);
            assert!((0..q).all(|r| t.hops(0, r) != h), "not the lowest id at {h} hops");
        }
        assert_eq!(t.proc_at_hops(0, 11), None);
        assert_eq!(t.bisection_links().len(), 8);
        for l in t.bisection_links() {
            let link = t.link(l);
            let (a, b) = (link.from_router.unwrap() % 8, link.to_router.unwrap() % 8);
            assert!((a, b) == (3, 4) || (a, b) == (4, 3));
        }
        assert_eq!(t.bisection_side(3), 0);
        assert_eq!(t.bisection_side(4), 1);
        assert_eq!(t.bisection_partner(0), Some(4));
        assert_eq!(t.bisection_partner(13), Some(9));
        check_partners(&t);
        assert_eq!(t.describe(), "mesh 8x4");
        assert!(t.io_pairs().is_empty());
    }

    #[test]
    fn mesh_io_nodes() {
        let t = mesh(8, 4, true);
        assert_eq!(t.nendpoints(), 40);
        assert_eq!(t.nio(), 8);
        assert_eq!(t.describe(), "mesh 8x4 (+8 I/O nodes)");
        // Same bisection as without I/O nodes: the I/O columns' links are not part of it.
        assert_eq!(t.bisection_links().len(), 8);
        assert_eq!(t.bisection_side(32), 0);
        assert_eq!(t.bisection_side(36), 1);
        check_partners(&t);
        let io_routers: HashSet<RouterId> = (32..40).collect();
        for a in 0..32 {
            for b in 0..32 {
                for l in t.route(a, b) {
                    let link = t.link(l);
                    for r in [link.from_router, link.to_router].into_iter().flatten() {
                        assert!(!io_routers.contains(&r), "{a}->{b} enters an I/O column");
                    }
                }
            }
        }
        let pairs = t.io_pairs();
        assert_eq!(pairs.len(), 8);
        assert_eq!(pairs[0], (32, 36));
        assert_eq!(pairs[1], (36, 32));
        let cut: HashSet<LinkId> = t.bisection_links().into_iter().collect();
        for (i, &(a, b)) in pairs.iter().enumerate() {
            let row = (i / 2) as u32;
            assert!(a >= 32 && b >= 32);
            let route = t.route(a, b);
            assert_eq!(route.len(), 9 + 2, "8 processor routers + 2 I/O routers");
            for &l in &route {
                let link = t.link(l);
                for r in [link.from_router, link.to_router].into_iter().flatten() {
                    let r_row = if r < 32 { r / 8 } else { (r - 32) % 4 };
                    assert_eq!(r_row, row, "io pair {a}->{b} leaves its row");
                }
            }
            assert_eq!(route.iter().filter(|l| cut.contains(l)).count(), 1);
        }
        // I/O node to another row's I/O node: in to x = 0, along the column, out again.
        assert_eq!(t.hops(32, 35), 2 + 3);
        assert_eq!(t.hops(32, 39), 9 + 3);
        assert_eq!(t.hops(0, 32), 1);
        assert_eq!(t.hops(31, 32), 1 + 7 + 3);
    }

    #[test]
    fn bisections() {
        let cases: Vec<(Topology, usize)> = vec![
            (mesh(8, 4, false), 8),
            (mesh(4, 8, true), 8),
            (mesh(6, 6, false), 12),
            (torus(&[4, 4]), 16),
            (torus(&[4, 8]), 16),
            (torus(&[4, 4, 2]), 32),
            (torus(&[2, 2]), 4),
            (topo(TopologyKind::Hypercube { dim: 5 }), 32),
            (topo(TopologyKind::Hypercube { dim: 1 }), 2),
            (topo(TopologyKind::Ring { nprocs: 32 }), 4),
            (topo(TopologyKind::Ring { nprocs: 2 }), 2),
            (topo(TopologyKind::Crossbar { nprocs: 32 }), 32),
            (fat_tree(4, 64), 64),
            (fat_tree(2, 16), 16),
            (fat_tree(4, 1024), 1024),
            (fat_tree(8, 8), 8),
        ];
        for (t, n) in cases {
            assert_eq!(t.bisection_links().len(), n, "{}", t.describe());
            check_partners(&t);
            // Sides split the processors in half.
            let ones = (0..t.nprocs()).filter(|&p| t.bisection_side(p) == 1).count();
            assert_eq!(ones * 2, t.nprocs(), "{}", t.describe());
        }
        let h = topo(TopologyKind::Hypercube { dim: 5 });
        assert_eq!(h.bisection_partner(3), Some(19));
        assert_eq!(h.bisection_side(16), 1);
        assert_eq!(h.bisection_side(15), 0);
        let r = topo(TopologyKind::Ring { nprocs: 10 });
        assert_eq!(r.bisection_partner(7), Some(2));
        assert_eq!(torus(&[4, 8]).bisection_partner(1), Some(17));
        // Odd cut dimension: no partner.
        assert_eq!(mesh(7, 1, false).bisection_partner(0), None);
        assert_eq!(topo(TopologyKind::Ring { nprocs: 7 }).bisection_partner(0), None);
        assert_eq!(torus(&[5, 5]).bisection_partner(0), None);
        assert_eq!(fat_tree(4, 5).bisection_partner(0), None);
        assert_eq!(mesh(8, 4, true).bisection_partner(32), None);
        // Partial fat-trees still pair processors across the halves.
        let t = fat_tree(4, 20);
        assert_eq!(t.bisection_partner(3), Some(13));
        assert!(!t.bisection_links().is_empty());
        assert!(topo(TopologyKind::Crossbar { nprocs: 1 }).bisection_links().is_empty());
    }

    #[test]
    fn fat_tree_structure() {
        let t = fat_tree(4, 64);
        assert_eq!(t.nrouters(), 3 * 16);
        assert_eq!(t.describe(), "fat-tree arity 4, 3 levels");
        // 2 link levels * 64 up links * 2 directions.
        assert_eq!(t.nlinks(), 2 * 64 + 2 * 2 * 64);
        // Partial tree: 5 leaves, 8 level-1 switches, 16 top switches; empty switches left out.
        let t = fat_tree(4, 20);
        assert_eq!(t.nrouters(), 5 + 8 + 16);
        assert_eq!(t.describe(), "fat-tree arity 4, 3 levels, 20 procs");
        assert_eq!(t.router_of(19), 4);
        assert_eq!(fat_tree(4, 3).describe(), "fat-tree arity 4, 1 level, 3 procs");
        assert_eq!(fat_tree(4, 3).nrouters(), 1);
        // d-mod-k: flows from one source to different destinations leave by different up ports.
        let t = fat_tree(4, 64);
        let firsts: HashSet<LinkId> = (60..64).map(|d| t.next_link(0, d)).collect();
        assert_eq!(firsts.len(), 4);
    }

    #[test]
    fn counts_and_descriptions() {
        let t = torus(&[4, 4, 2]);
        assert_eq!(t.describe(), "torus 4x4x2");
        assert_eq!(t.nlinks(), 64 + 32 * 5);
        let t = topo(TopologyKind::Hypercube { dim: 5 });
        assert_eq!(t.describe(), "hypercube dim 5");
        assert_eq!(t.nlinks(), 64 + 5 * 32);
        let t = topo(TopologyKind::Ring { nprocs: 32 });
        assert_eq!(t.describe(), "ring 32");
        assert_eq!(t.nlinks(), 64 + 64);
        assert_eq!(topo(TopologyKind::Ring { nprocs: 2 }).nlinks(), 4 + 2);
        let t = topo(TopologyKind::Crossbar { nprocs: 32 });
        assert_eq!(t.describe(), "crossbar 32");
        assert_eq!((t.nrouters(), t.nlinks()), (1, 64));
        assert_eq!(t.max_hops_from(5), 0);
        assert_eq!(t.proc_at_hops(5, 0), Some(0));
        assert_eq!(t.proc_at_hops(5, 1), None);
        assert_eq!(*t.kind(), TopologyKind::Crossbar { nprocs: 32 });
    }

    #[test]
    fn resize_examples() {
        let m = TopologyKind::Mesh { dims: [2, 2], io_nodes: true };
        assert_eq!(resize(&m, 32), Ok(TopologyKind::Mesh { dims: [8, 4], io_nodes: true }));
        assert_eq!(resize(&m, 7), Ok(TopologyKind::Mesh { dims: [7, 1], io_nodes: true }));
        assert_eq!(resize(&m, 36), Ok(TopologyKind::Mesh { dims: [6, 6], io_nodes: true }));
        assert_eq!(resize(&m, 1), Ok(TopologyKind::Mesh { dims: [1, 1], io_nodes: true }));
        let t = TopologyKind::Torus { dims: vec![2, 2, 2], procs_per_router: 1 };
        let tor = |d: &[usize]| Ok(TopologyKind::Torus { dims: d.to_vec(), procs_per_router: 1 });
        assert_eq!(resize(&t, 32), tor(&[4, 4, 2]));
        assert_eq!(resize(&t, 64), tor(&[4, 4, 4]));
        assert_eq!(resize(&t, 16), tor(&[4, 2, 2]));
        assert_eq!(resize(&t, 7), tor(&[7, 1, 1]));
        assert_eq!(resize(&t, 36), tor(&[4, 3, 3]));
        assert_eq!(resize(&TopologyKind::Torus { dims: vec![8, 8], procs_per_router: 1 }, 12), tor(&[4, 3]));
        assert_eq!(resize(&TopologyKind::Torus { dims: vec![8], procs_per_router: 1 }, 12), tor(&[12]));
        let pairs = TopologyKind::Torus { dims: vec![4, 2, 2], procs_per_router: 2 };
        let paired = |d: &[usize]| Ok(TopologyKind::Torus { dims: d.to_vec(), procs_per_router: 2 });
        assert_eq!(resize(&pairs, 4), paired(&[2, 1, 1]));
        assert_eq!(resize(&pairs, 512), paired(&[8, 8, 4]));
        let e = resize(&pairs, 3).unwrap_err();
        assert!(e.contains("multiple of 2, got 3 (nearest valid: 2 or 4)"), "{e}");
        assert_eq!(resize(&pairs, 1), Ok(TopologyKind::Torus { dims: vec![1, 1, 1], procs_per_router: 1 }));
        let triples = TopologyKind::Torus { dims: vec![2, 2], procs_per_router: 3 };
        assert_eq!(resize(&triples, 2), Ok(TopologyKind::Torus { dims: vec![1, 1], procs_per_router: 2 }));
        assert!(resize(&triples, 4).unwrap_err().contains("multiple of 3, got 4 (nearest valid: 3 or 6)"));
        let h = TopologyKind::Hypercube { dim: 3 };
        assert_eq!(resize(&h, 64), Ok(TopologyKind::Hypercube { dim: 6 }));
        assert_eq!(resize(&h, 1), Ok(TopologyKind::Hypercube { dim: 0 }));
        let err = resize(&h, 12).unwrap_err();
        assert!(err.contains("12") && err.contains("8 or 16") && !err.contains('\n'), "{err}");
        let f = TopologyKind::FatTree { arity: 4, nprocs: 64 };
        assert_eq!(resize(&f, 20), Ok(TopologyKind::FatTree { arity: 4, nprocs: 20 }));
        assert_eq!(resize(&TopologyKind::Ring { nprocs: 3 }, 9), Ok(TopologyKind::Ring { nprocs: 9 }));
        assert_eq!(resize(&TopologyKind::Crossbar { nprocs: 3 }, 9), Ok(TopologyKind::Crossbar { nprocs: 9 }));
        for k in [m, t, h, f, TopologyKind::Ring { nprocs: 3 }, TopologyKind::Crossbar { nprocs: 3 }] {
            let err = resize(&k, 0).unwrap_err();
            assert!(err.contains('0') && !err.contains('\n'), "{err}");
            assert!(resize(&k, MAX_PROCS + 1).is_err());
            // Every successful resize builds.
            for n in [1, 2, 8, 20, 32, 1024] {
                if let Ok(kind) = resize(&k, n) {
                    assert_eq!(Topology::new(kind).unwrap().nprocs(), n);
                }
            }
        }
    }

    #[test]
    fn invalid_kinds() {
        let bad = [
            (TopologyKind::Mesh { dims: [0, 4], io_nodes: false }, "[0, 4]"),
            (TopologyKind::Mesh { dims: [4096, 4096], io_nodes: false }, "4096x4096"),
            (TopologyKind::Torus { dims: vec![], procs_per_router: 1 }, "[]"),
            (TopologyKind::Torus { dims: vec![4, 0], procs_per_router: 1 }, "[4, 0]"),
            (TopologyKind::Torus { dims: vec![usize::MAX, 4], procs_per_router: 1 }, "torus"),
            (TopologyKind::Torus { dims: vec![4], procs_per_router: 0 }, "procs_per_router 0"),
            (TopologyKind::FatTree { arity: 1, nprocs: 8 }, "arity 1"),
            (TopologyKind::FatTree { arity: 4, nprocs: 0 }, "nprocs 0"),
            (TopologyKind::Hypercube { dim: 40 }, "dim 40"),
            (TopologyKind::Ring { nprocs: 0 }, "nprocs 0"),
            (TopologyKind::Crossbar { nprocs: 0 }, "nprocs 0"),
        ];
        for (kind, needle) in bad {
            let err = Topology::new(kind.clone()).unwrap_err();
            assert!(err.contains(needle) && !err.contains('\n'), "{kind:?}: {err}");
        }
    }

    #[test]
    fn torus_wrap_links_are_the_ones_leaving_the_edges() {
        let t = Topology::new(TopologyKind::Torus { dims: vec![4, 3], procs_per_router: 1 }).unwrap();
        let mut wraps = 0;
        for l in 0..t.nlinks() as LinkId {
            if let Some((dim, wrap)) = t.grid_link_dim(l) {
                let link = t.link(l);
                let (a, b) = (link.from_router.unwrap() as usize, link.to_router.unwrap() as usize);
                let (k, s) = if dim == 0 { (4, 1) } else { (3, 4) };
                let (ca, cb) = (a / s % k, b / s % k);
                assert_eq!(
                    wrap,
                    (ca == k - 1 && cb == 0) || (ca == 0 && cb == k - 1),
                    "link {l}: {ca}->{cb} in dim {dim}"
                );
                wraps += usize::from(wrap);
            }
        }
        // Each ring of each dimension has one wraparound link per direction.
        assert_eq!(wraps, 2 * 3 + 2 * 4);
        let m = Topology::new(TopologyKind::Mesh { dims: [4, 2], io_nodes: false }).unwrap();
        assert!((0..m.nlinks() as LinkId).all(|l| m.grid_link_dim(l).is_none()));
    }

    #[test]
    fn next_link_from_any_router() {
        // Routing is total: from any router (not only those on a route) it reaches dst.
        for t in all_kinds() {
            for r in 0..t.nrouters() as RouterId {
                for dst in 0..t.nendpoints() {
                    let mut at = r;
                    let mut steps = 0;
                    let mut seen = HashSet::new();
                    loop {
                        let link = t.link(t.next_link(at, dst));
                        match link.to_router {
                            Some(next) => at = next,
                            None => break,
                        }
                        assert!(seen.insert(at), "{}: loop toward {dst}", t.describe());
                        steps += 1;
                    }
                    assert_eq!(at, t.router_of(dst));
                    assert!(steps <= t.nrouters());
                }
            }
        }
    }
}
