//! The campaign `benchlab run` runs: the file given, the stored one of `--resume DIR` (which
//! the flags may not change), or the built-in one, with `-n`, `--duration`, `--quick` and
//! `--profile` applied and the result checked again.

use super::Args;
use crate::config::Campaign;
use crate::dut::{known_sets, KNOWN_PRESETS};
use crate::error::InputError;
use crate::store::Store;

/// The `--quick` campaign: the given one, shrunk to about a minute.
fn quicken(c: &mut Campaign) {
    c.iterations = 3;
    c.trial.duration = 5.0;
    c.trial.warmup = 1.0;
    c.trial.cooldown = 1.0;
    if let Some(alt) = &mut c.alternating {
        alt.max_duration = 40.0;
    }
    if c.profiles.len() > 1 {
        c.profiles.truncate(1);
    }
}

/// `--resume DIR` alone goes on with DIR's campaign as stored: a flag that would change it is
/// refused, not ignored (even one equal to the stored value: what it meant is unclear).
fn refuse_overrides(args: &Args) -> Result<(), InputError> {
    let given: Vec<&str> = [
        (args.iterations.is_some(), "-n"),
        (args.duration.is_some(), "--duration"),
        (args.quick, "--quick"),
        (args.profile, "--profile"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect();
    match (given.is_empty(), &args.resume) {
        (false, Some(dir)) => Err(InputError::new(format!(
            "--resume '{}' with {}: a resumed campaign runs as stored, which the flags cannot \
             change; drop them, or give the campaign file too (it must match the stored one)",
            crate::error::shown(&dir.display().to_string()),
            given.join(", ")
        ))),
        _ => Ok(()),
    }
}

/// The campaign to run, with the command line's overrides applied and checked.
pub(super) fn campaign(args: &Args) -> anyhow::Result<Campaign> {
    let mut c = match (&args.campaign, &args.resume) {
        (Some(path), _) => {
            let c = Campaign::load(path, KNOWN_PRESETS)?;
            // The FreeBSD presets apply only to a DUT reached over SSH.
            c.validate(&path.display().to_string(), &known_sets(&c.lab))?;
            c
        }
        (None, Some(dir)) => {
            refuse_overrides(args)?;
            let c = Store::stored_campaign(dir, KNOWN_PRESETS)?;
            // Its config set directories must still be there to run (reading needs none).
            let origin = dir.join("campaign.toml").display().to_string();
            c.validate(&origin, &known_sets(&c.lab))?;
            return Ok(c);
        }
        (None, None) => Campaign::builtin(),
    };
    // Profiling trials belong to the trials design: a design benchlab chose is chosen again.
    c.profile |= args.profile;
    c.settle_design();
    if let Some(dir) = &args.resume {
        c.keep_design_of(&Store::stored_campaign(dir, KNOWN_PRESETS)?);
    }
    if args.quick {
        quicken(&mut c);
    }
    // Under the alternating design blocks are the iterations and the run's length is its
    // duration: -n is the fewest blocks, --duration the longest run.
    if let Some(n) = args.iterations {
        c.iterations = n;
        if let Some(alt) = &mut c.alternating {
            alt.min_blocks = n as usize;
        }
    }
    if let Some(d) = args.duration {
        c.trial.duration = d;
        if let Some(alt) = &mut c.alternating {
            alt.max_duration = d;
        }
    }
    let origin =
        (args.campaign.as_ref()).map_or("command line".to_string(), |p| p.display().to_string());
    c.validate(&origin, &known_sets(&c.lab)).map_err(|e| {
        InputError::new(format!(
            "{e} (with -n/--duration/--quick/--profile applied)"
        ))
    })?;
    Ok(c)
}
