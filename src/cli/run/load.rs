//! The campaign `benchlab run` runs: the file given, the stored one of `--resume DIR` (which
//! the flags may not change), or the built-in one, with `-n`, `--duration`, `--quick` and
//! `--profile` merged into it and the result validated once (`Campaign::prepare`).

use super::Args;
use crate::config::{Campaign, Overrides};
use crate::dut::{known_sets, KNOWN_PRESETS};
use crate::error::InputError;
use crate::store::Store;

/// The command line's overrides; `origin` names the campaign in a refusal of `--duration`.
fn overrides(args: &Args, origin: &str) -> Result<Overrides, InputError> {
    let duration = (args.duration)
        .map(|secs| crate::config::seconds::duration_of(origin, "trial.duration", secs))
        .transpose()
        .map_err(Overrides::blamed)?;
    Ok(Overrides {
        iterations: args.iterations,
        duration,
        quick: args.quick,
        profile: args.profile,
    })
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

/// The campaign to run: read, the command line's overrides merged, validated once.
pub(super) fn campaign(args: &Args) -> anyhow::Result<Campaign> {
    if let (None, Some(dir)) = (&args.campaign, &args.resume) {
        refuse_overrides(args)?;
        let c = Store::stored_campaign(dir, KNOWN_PRESETS)?;
        // Its config set directories must still be there to run (reading needs none), and the
        // FreeBSD presets apply only to a DUT reached over SSH.
        let origin = dir.join("campaign.toml").display().to_string();
        c.check_config_sets(&origin, &known_sets(&c.lab))?;
        return Ok(c);
    }
    let (c, origin) = match &args.campaign {
        Some(path) => (
            Campaign::read(path, KNOWN_PRESETS)?,
            path.display().to_string(),
        ),
        None => (Campaign::builtin(), "command line".to_string()),
    };
    let stored = (args.resume.as_ref())
        .map(|dir| Store::stored_campaign(dir, KNOWN_PRESETS))
        .transpose()?;
    // The FreeBSD presets apply only to a DUT reached over SSH.
    let sets = known_sets(&c.lab);
    let c = c.prepare(&origin, &sets, &overrides(args, &origin)?, stored.as_ref())?;
    if args.campaign.is_some() {
        c.check_cpus(&origin)?;
    }
    Ok(c)
}
