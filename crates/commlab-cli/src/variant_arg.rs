//! The `--variant` argument of run, sweep and experiment: `all`, or an app's variant names
//! separated by commas.

use crate::failure::{input, Failure};
use commlab_apps::AppInfo;

/// Check that every name in `spec` (`all`, or variants separated by commas) is one of the
/// app's, before the machine is loaded (errors in the order a run reports them).
pub(crate) fn check_variant_names(info: &'static AppInfo, spec: &str) -> Result<(), Failure> {
    for v in spec.split(',') {
        info.select_variants(v.trim()).map_err(|e| input(e.to_string()))?;
    }
    Ok(())
}

/// The variants `spec` names (`all`: those `backend` has the mechanisms for; or names
/// separated by commas, as sweep and experiment take them), in the app's order, each once.
pub(crate) fn listed_variants<B: commlab_api::Backend>(
    backend: &B,
    info: &'static AppInfo,
    spec: &str,
) -> Result<Vec<&'static str>, Failure> {
    let mut named = Vec::new();
    for v in spec.split(',') {
        named.extend(commlab_apps::variants_on(backend, info, v.trim()).map_err(|e| input(e.to_string()))?);
    }
    Ok(info.variants.iter().copied().filter(|v| named.contains(v)).collect())
}
