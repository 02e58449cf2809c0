//! Every application commlab knows (`APPS`), and running one of them by name (`run_app`).
//!
//! Which variants a machine can run: `unavailable` names the mechanism a variant needs and the
//! backend lacks (from `Backend::one_sided` and `Backend::access_control`); `variants_on` is what
//! `--variant all` runs there, used by every CLI path that expands `all`.

use crate::app::{AppError, AppInfo, AppResult};
use crate::params::Params;
use crate::{appbt, barnes, copy_transfer, dsmc, em3d, fft2d, iccg, jacobi, lazy, micro, moldyn, runtime, unstruc};
use commlab_api::Backend;

/// Every application commlab knows.
pub const APPS: &[AppInfo] = &[
    micro::am_latency::INFO,
    micro::am_throughput::INFO,
    micro::bulk_bw::INFO,
    micro::alltoall_stress::INFO,
    micro::bisection_bw::INFO,
    micro::miss_latency::INFO,
    micro::lock_latency::INFO,
    micro::barrier::INFO,
    micro::mem_refs::INFO,
    micro::remote_bw::INFO,
    em3d::INFO,
    iccg::INFO,
    moldyn::INFO,
    unstruc::INFO,
    runtime::rti::INFO,
    runtime::memcpy::INFO,
    runtime::accum::INFO,
    jacobi::INFO,
    lazy::grain::INFO,
    lazy::aq::INFO,
    copy_transfer::INFO,
    fft2d::INFO,
    dsmc::INFO,
    barnes::INFO,
    appbt::INFO,
];

/// Look an application up by name; the error lists the valid names.
pub fn app_info(name: &str) -> Result<&'static AppInfo, AppError> {
    APPS.iter().find(|a| a.name == name).ok_or_else(|| {
        AppError::Input(format!(
            "unknown app `{name}` (valid: {})",
            APPS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
        ))
    })
}

/// Why `backend` cannot run `variant` of `app` (a mechanism the variant needs and the machine
/// lacks), or `None` when it can. The app itself refuses such a run with the same reason; this
/// lets `--variant all` leave the variant out instead.
pub fn unavailable<B: Backend>(backend: &B, app: &str, variant: &str) -> Option<&'static str> {
    let one_sided = "needs one-sided remote access (a [remote] section in the machine file)";
    match (app, variant) {
        ("copy-transfer", "get" | "put") if !backend.one_sided() => Some(one_sided),
        ("fft2d", "fetch" | "deposit" | "pack-fetch" | "pack-deposit") if !backend.one_sided() => Some(one_sided),
        ("remote-bw", _) if !backend.one_sided() => Some(one_sided),
        ("em3d", "custom") if !backend.access_control() => Some(crate::app::NEEDS_TEMPEST),
        ("memcpy" | "accum", "mp") if backend.max_am_args() < crate::runtime::FETCH_ARGS => {
            Some("needs active messages of 3 arguments (messaging.max_arg_words >= 6)")
        }
        ("barnes", "custom") if backend.nprocs() > 1 && backend.max_am_args() < crate::barnes::BODIES_ARGS => {
            Some("needs active messages of 3 arguments (messaging.max_arg_words >= 6)")
        }
        _ => None,
    }
}

/// The variants `spec` names (`all` = every variant) that `backend` can run: `all` leaves out
/// those [`unavailable`] on it, and the Blizzard study's `stache` where the app also has `sm`
/// and the machine keeps coherence in hardware (there it runs the `sm` program again); a
/// variant named explicitly is kept (its run says why it cannot). An error when nothing is
/// left.
pub fn variants_on<B: Backend>(backend: &B, info: &AppInfo, spec: &str) -> Result<Vec<&'static str>, AppError> {
    let named = info.select_variants(spec)?;
    if spec != "all" {
        return Ok(named);
    }
    let repeats_sm = |v: &str| v == "stache" && info.variants.contains(&"sm") && !backend.access_control();
    let runnable: Vec<&'static str> =
        named.iter().copied().filter(|v| unavailable(backend, info.name, v).is_none() && !repeats_sm(v)).collect();
    if runnable.is_empty() {
        let why = unavailable(backend, info.name, named[0]).unwrap_or("cannot run here");
        return Err(AppError::Input(format!("no variant of {} runs on this machine: it {why}", info.name)));
    }
    Ok(runnable)
}

/// Run one variant of one app on `backend`.
pub fn run_app<B: Backend>(
    backend: &B,
    app: &str,
    variant: &str,
    params: &[String],
    seed: u64,
) -> Result<AppResult, AppError> {
    let info = app_info(app)?;
    let variant = *info.select_variants(variant)?.first().expect("one variant");
    let params = Params::parse(info, params)?;
    let mut r = match info.name {
        "am-latency" => micro::am_latency::run(backend, variant, &params)?,
        "am-throughput" => micro::am_throughput::run(backend, variant, &params)?,
        "bulk-bw" => micro::bulk_bw::run(backend, variant, &params)?,
        "remote-bw" => micro::remote_bw::run(backend, variant, &params)?,
        "alltoall-stress" => micro::alltoall_stress::run(backend, variant, &params, seed)?,
        "bisection-bw" => micro::bisection_bw::run(backend, variant, &params)?,
        "miss-latency" => micro::miss_latency::run(backend, variant, &params)?,
        "lock-latency" => micro::lock_latency::run(backend, variant, &params)?,
        "barrier" => micro::barrier::run(backend, variant, &params)?,
        "mem-refs" => micro::mem_refs::run(backend, variant, &params)?,
        "em3d" => em3d::run(backend, variant, &params, seed)?,
        "iccg" => iccg::run(backend, variant, &params)?,
        "moldyn" => moldyn::run(backend, variant, &params, seed)?,
        "unstruc" => unstruc::run(backend, variant, &params, seed)?,
        "rti" => runtime::rti::run(backend, variant, &params)?,
        "memcpy" => runtime::memcpy::run(backend, variant, &params)?,
        "accum" => runtime::accum::run(backend, variant, &params)?,
        "jacobi" => jacobi::run(backend, variant, &params)?,
        "grain" => lazy::grain::run(backend, variant, &params, seed)?,
        "aq" => lazy::aq::run(backend, variant, &params)?,
        "copy-transfer" => copy_transfer::run(backend, variant, &params)?,
        "fft2d" => fft2d::run(backend, variant, &params, seed)?,
        "dsmc" => dsmc::run(backend, variant, &params, seed)?,
        "barnes" => barnes::run(backend, variant, &params, seed)?,
        "appbt" => appbt::run(backend, variant, &params)?,
        other => unreachable!("app `{other}` is listed but not dispatched"),
    };
    r.app = info.name;
    r.variant = variant;
    r.params = params.resolved();
    let mut merged = r.stats.counters.clone();
    merged.append(&mut r.counters);
    r.counters = merged;
    Ok(r)
}
