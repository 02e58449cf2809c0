//! # commlab-apps: applications and microbenchmarks
//!
//! Every application is written against [`commlab_api::Node`] only, once per communication
//! variant, and checks its own answer. [`APPS`] lists them with their parameters and
//! variants; [`run_app`] runs one variant on any [`Backend`](commlab_api::Backend).

mod app;
pub mod appbt;
pub mod barnes;
pub mod copy_transfer;
pub mod dsmc;
pub mod em3d;
mod estimate;
pub mod fft2d;
pub mod iccg;
pub mod jacobi;
pub mod lazy;
pub mod micro;
pub mod moldyn;
mod params;
mod private;
mod registry;
pub mod runtime;
pub mod sparse;
pub mod unstruc;
pub mod validate;

/// The counters several apps report with one meaning (each app's table, `AppInfo::counters`,
/// lists those it reports).
pub use app::common as shared_counters;
pub use app::{AppError, AppInfo, AppResult, Check, ParamDoc};
pub use estimate::data_bytes_estimate;
pub use params::Params;
pub use registry::{app_info, run_app, unavailable, variants_on, APPS};
/// Signal/wait on active messages, for programs outside this crate.
pub use runtime::signal;
/// Tempest's update protocol over user regions, for programs outside this crate.
pub use runtime::update;
