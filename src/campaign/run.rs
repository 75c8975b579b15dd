//! Running a campaign: what it still has to measure, each unit with the design that measures it
//! (chosen here, once), and the loop that puts each unit's version and config set on the DUT
//! through the lab and hands the unit to its design, then takes the lab down.
//!
//! The run loop knows nothing of namespaces or SSH: a [`Bench`] is whatever can apply a version
//! and a config set and run one trial. It does not print either: it reports [`Event`]s.
//!
//! [`Bench`]: crate::campaign::bench::Bench
//! [`Event`]: crate::campaign::bench::Event

use std::time::Instant;

use anyhow::Context as _;

use super::alternating::Alternation;
use super::bench::Event;
use super::context::Context;
use super::design::{Design, Unit};
use super::latency;
use super::throughput::Search;
use super::trials::Trials;
use crate::config::{self, config_set_name, Campaign, Measure, Profile};
use crate::store::{plan, FloorRecord, Store, TrialKey};

/// Runs every unit of `todo` (every block, under the alternating design) in `ctx`, until its
/// `cancel` is raised, then takes its lab down, whatever happened; returns the number of trials
/// (blocks) run.
pub(crate) fn run<'c>(mut ctx: Context<'c>, todo: Todo<'c>) -> anyhow::Result<usize> {
    let outcome = measure(&mut ctx, todo);
    ctx.down()?;
    outcome
}

/// What a campaign still has to measure, and the designs that measure it: read from its store
/// once, before any lab is built (an empty one, on `--resume`, builds none).
pub(crate) struct Todo<'c> {
    /// Units in the campaign, those measured before included.
    total: usize,
    /// The units still to measure, in order, each with the index of its design.
    units: Vec<(usize, Unit<'c>)>,
    designs: Vec<Box<dyn Design + 'c>>,
}

impl Todo<'_> {
    /// Whether nothing is left to measure.
    pub(crate) fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// The units still to measure, and the campaign's.
    pub(crate) fn left(&self) -> (usize, usize) {
        (self.units.len(), self.total)
    }
}

/// What `campaign` still has to measure in `store`: the one place a design is chosen, for the
/// campaign (alternating) or for each of its trials (a throughput profile's iterations are
/// searches; its profiling trials, trials).
pub(crate) fn todo<'c>(campaign: &'c Campaign, store: &Store) -> anyhow::Result<Todo<'c>> {
    if campaign.design == config::Design::Alternating {
        let design = Alternation::new(campaign, store)?;
        let units = design.todo(store)?.into_iter().map(|u| (0, u)).collect();
        return Ok(Todo {
            total: design.runs(),
            units,
            designs: vec![Box::new(design)],
        });
    }
    const TRIAL: usize = 0;
    const SEARCH: usize = 1;
    let done = store.finished_trials()?;
    let mut units = Vec::new();
    for key in plan(campaign).into_iter().filter(|k| !done.contains_key(k)) {
        let (version, config, profile) = coordinates(campaign, &key)?;
        let search = profile.measure == Measure::Throughput && !key.is_profiling();
        let unit = Unit {
            key,
            version: Some(version),
            config: Some(config),
            profile,
        };
        units.push((if search { SEARCH } else { TRIAL }, unit));
    }
    Ok(Todo {
        total: done.len() + units.len(),
        units,
        designs: vec![Box::new(Trials::new(campaign, &done)), Box::new(Search)],
    })
}

/// Measures the units still to measure, the lab's version and config set changed only when
/// they change.
fn measure<'c>(ctx: &mut Context<'c>, todo: Todo<'c>) -> anyhow::Result<usize> {
    let store = ctx.store;
    store.write_lab(|| ctx.bench.facts().context("collecting lab facts"))?;
    if ctx.campaign.measures_latency() {
        floor(ctx)?;
    }
    let Todo {
        total,
        units,
        mut designs,
    } = todo;
    for design in &mut designs {
        design.begin(ctx)?;
    }
    ctx.event(&Event::Start {
        total,
        todo: units.len(),
    });
    let (mut version, mut config): (Option<usize>, Option<&String>) = (None, None);
    let mut measured = 0;
    for (design, unit) in &units {
        ctx.cancel.check()?;
        let since = Instant::now();
        if let Some(index) = unit.version.filter(|&v| version != Some(v)) {
            let v = &ctx.campaign.versions[index];
            (ctx.bench.set_version(v, ctx.cancel))
                .with_context(|| format!("applying version `{}`", v.name))?;
            version = Some(index);
            // A new version may reset the DUT: the config set must be applied again.
            config = None;
        }
        if let Some(entry) = unit.config.filter(|&e| config != Some(e)) {
            (ctx.bench.set_config(entry))
                .with_context(|| format!("applying config set `{}`", unit.key.config))?;
            config = Some(entry);
        }
        measured += designs[*design].measure(ctx, unit, since)?;
    }
    Ok(measured)
}

/// Measures the lab's latency floor once per campaign (a resumed one keeps its own) and records
/// it, or why the lab could not, in `lab.json`: every report with latency prints it.
fn floor(ctx: &mut Context<'_>) -> anyhow::Result<()> {
    let known = ctx.store.read_lab()?.and_then(|lab| lab.latency_floor);
    if known.is_some() {
        return Ok(());
    }
    let cfg = ctx.campaign.latency();
    let (record, histogram) = match ctx.bench.floor(cfg.rate, cfg.floor_duration) {
        Ok(probes) => {
            let (record, interval) = latency::floor_record(&probes, cfg.rate, cfg.floor_duration);
            let base = std::time::SystemTime::now() - cfg.floor_duration;
            (record, Some((base, interval)))
        }
        Err(why) => (
            FloorRecord {
                probe_rate_pps: cfg.rate,
                duration_s: cfg.floor_duration.as_secs_f64(),
                measured: None,
                user_to_driver: None,
                not_measured: Some(why),
                clock_tick_ns: None,
            },
            None,
        ),
    };
    ctx.store.record_floor(record.clone(), histogram)?;
    ctx.event(&Event::Floor { floor: &record });
    Ok(())
}

/// The version (its index), config set entry and profile a planned trial names.
fn coordinates<'c>(
    campaign: &'c Campaign,
    key: &TrialKey,
) -> anyhow::Result<(usize, &'c String, &'c Profile)> {
    let v = campaign.versions.iter().position(|v| v.name == key.version);
    let entry = (campaign.config_sets.iter()).find(|c| config_set_name(c) == key.config);
    let profile = campaign.profiles.iter().find(|p| p.name == key.profile);
    match (v, entry, profile) {
        (Some(v), Some(entry), Some(profile)) => Ok((v, entry, profile)),
        _ => anyhow::bail!("trial {key} is not one of the campaign's"),
    }
}

#[cfg(test)]
mod tests;
