//! `commlab reproduce STUDY`: run a study's applications on its machine and print each
//! published finding, the figures measured and whether it holds (exit status 0 only if every
//! finding holds). The findings and their tests are in `commlab_apps::study`.

use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use commlab_apps::study::{self, Inputs};
use commlab_apps::AppError;
use commlab_sim::Simulator;
use std::io::{IsTerminal, Write};

/// Where the README's commands find the study's ICCG matrix.
pub const DEFAULT_MATRIX: &str = "../shared/data/matrices/bcsstk32.mtx.gz";

#[derive(clap::Args)]
pub struct ReproduceArgs {
    /// The study: alewife (the Alewife mechanism study, HPCA 1998: EM3D, ICCG, UNSTRUC, MOLDYN).
    study: String,
    /// Preset name or path to a machine TOML file (the study's machine by default).
    #[arg(long, default_value = "alewife")]
    machine: String,
    /// Override a machine key (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// ICCG's matrix (Matrix Market; BCSSTK32 in the study).
    #[arg(long, default_value = DEFAULT_MATRIX)]
    matrix: String,
    /// Small inputs that run in seconds (for trying the command; the findings are about the
    /// study's sizes and may not hold at these).
    #[arg(long)]
    quick: bool,
    /// One JSON object per finding.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ReproduceArgs) -> Result<(), Failure> {
    if !study::STUDIES.contains(&args.study.as_str()) {
        return Err(input(format!("unknown study `{}` (valid: {})", args.study, study::STUDIES.join(", "))));
    }
    let cfg = machine_arg::load(&args.machine, &args.set, None)?;
    let name = cfg.spec.name.clone();
    let inputs = if args.quick {
        Inputs::quick()
    } else {
        if !std::path::Path::new(&args.matrix).is_file() {
            return Err(input(format!(
                "--matrix {}: no such file (the study's ICCG matrix is BCSSTK32; give its path, or use --quick)",
                args.matrix
            )));
        }
        Inputs::full(&args.matrix)
    };
    let sim = Simulator::new(cfg);
    let show = !args.json && std::io::stderr().is_terminal();
    let mut progress = |what: &str| {
        if show {
            eprint!("\rrunning {what:<24}");
            let _ = std::io::stderr().flush();
        }
    };
    let findings = study::reproduce(&sim, &args.study, &inputs, &mut progress).map_err(|e| match e {
        AppError::Input(m) => input(m),
        AppError::Run(m) => failed(format!("reproduce {}: {m}", args.study)),
    })?;
    if show {
        eprint!("\r{:<34}\r", "");
    }
    let mut out = std::io::stdout().lock();
    for f in &findings {
        let line = if args.json {
            serde_json::json!({
                "study": args.study, "machine": name, "quick": args.quick, "app": f.app,
                "claim": f.claim, "test": f.test, "measured": f.measured, "holds": f.holds,
            })
            .to_string()
        } else {
            format!(
                "{} {:<5} {}\n      test: {}\n      measured: {}",
                if f.holds { "holds" } else { "FAILS" },
                f.app,
                f.claim,
                f.test,
                f.measured
            )
        };
        if writeln!(out, "{line}").is_err() {
            return Ok(()); // a closed pipe: the reader has what it wanted
        }
    }
    let failing: Vec<String> =
        findings.iter().filter(|f| !f.holds).map(|f| format!("{}: {}", f.app, f.claim)).collect();
    if failing.is_empty() {
        if !args.json {
            let _ = writeln!(out, "all {} findings of the {} study hold on {name}", findings.len(), args.study);
        }
        Ok(())
    } else {
        Err(failed(format!("{} of {} findings fail: {}", failing.len(), findings.len(), failing.join("; "))))
    }
}
