//! Sparse symmetric matrices and the sequential numerics behind ICCG.
//!
//! Everything here is plain, deterministic, single-threaded Rust with no simulator code: the
//! ICCG application uses it to build its problem (read a Matrix Market file or generate a
//! finite-element matrix), compress, partition and reorder it, factor it (IC(0)) and check its
//! answer (sequential triangular solves and PCG).
//!
//! - [`SymMatrix`]: symmetric CSR with both triangles stored; [`WGraph`]: a graph with vertex
//!   and edge weights (what colouring and partitioning work on).
//! - [`read_matrix_market`] / [`parse_matrix_market`]: our own reader, for line-numbered errors.
//! - [`fe_stiffness`]: 2-D/3-D finite-element matrices of any size.
//! - [`compress`]: groups of unknowns with identical rows and their quotient graph (BlockSolve95).
//! - [`Partitioner`]: [`partition`]/[`partition_graph`] (METIS k-way), [`rsb`] (multilevel
//!   recursive spectral bisection with KL refinement, as Chaco; built from `coarsen`,
//!   `spectral` and `refine`), [`natural`] (blocks of the numbering), [`linear_kl`] (Chaco's
//!   linear method with KL: blocks of the numbering by recursive bisection, each refined);
//!   [`raise_cut`]: a partition raised by balanced swaps to cut a given fraction of the edges.
//! - [`colour`], [`colour_graph`] (greedy multicolouring), [`colour_ordering`],
//!   [`group_colour_ordering`] (colour by colour, group by group).
//! - [`ichol0`], [`forward_solve`], [`backward_solve`], [`pcg`].

mod coarsen;
mod colour;
mod compress;
mod cut;
mod generate;
mod graph;
mod ichol;
mod linear;
mod matrix;
mod mtx;
mod partition;
mod pcg;
mod refine;
mod rsb;
mod spectral;

pub use colour::{colour, colour_graph, colour_ordering, group_colour_ordering, ColourOrdering};
pub use compress::{compress, Compression};
pub use cut::{raise_cut, CutError, Raised, TOLERANCE as CUT_TOLERANCE};
pub use generate::fe_stiffness;
pub use graph::WGraph;
pub use ichol::{backward_solve, forward_solve, ichol0, LowerFactor};
pub use linear::linear_kl;
pub use matrix::{invert_permutation, SymMatrix, MAX_ORDER};
pub use mtx::{parse_matrix_market, read_matrix_market, MtxError, MtxErrorKind, MtxField, MtxInfo};
pub use partition::{edge_cut, natural, partition, partition_graph, Partitioner};
pub use pcg::{pcg, PcgResult};
pub use rsb::rsb;
pub use spectral::fiedler;
