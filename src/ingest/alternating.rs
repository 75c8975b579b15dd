//! Reader for the runs of the alternating design in a benchlab results directory: each set's
//! block values become the iterations of its series (so ministat tables read as the seeds'),
//! and each run keeps its paired estimates, its short-window series for the time chart and
//! its latency run ([`latency`]).
//!
//! [`latency`]: crate::ingest::alternating::latency

use super::{Iteration, Results, Series, Setup};
use crate::config::{secs, AlternatingPlan, Campaign, Entry, Profile, Runs, ALTERNATING_INTERVAL};
use crate::error::InputError;
use crate::stats::{window_rates, Block, PairedEstimate, PhaseOptions, StopRule};
use crate::store::Store;

/// The run's latency at a fixed load, each entry's phases merged per block.
pub(crate) mod latency;

/// One alternating run (a version and a profile) read back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AlternatingRun {
    /// Version.
    pub(crate) version: String,
    /// Traffic profile.
    pub(crate) profile: String,
    /// Config set names, baseline first.
    pub(crate) sets: Vec<String>,
    /// The series of each entry of `sets`, by name (`<version>.<set>.<profile>`), in that
    /// order: what a verdict names in results.json.
    pub(crate) series: Vec<String>,
    /// Blocks with values.
    pub(crate) blocks: usize,
    /// Each set after the baseline with its estimate (95 % over the rule's looks), over the
    /// blocks at the machine's quiet level.
    pub(crate) estimates: Vec<(String, Option<PairedEstimate>)>,
    /// When versions alternate: each later version against the first within each set, as
    /// (version, `<first version> (<set>)`, estimate), from the same blocks.
    pub(crate) versus: Vec<(String, String, Option<PairedEstimate>)>,
    /// The entries each `versus` line compares, (compared, reference) as indexes into `sets`,
    /// in the order of `versus`.
    pub(crate) versus_entries: Vec<(usize, usize)>,
    /// The same comparisons over the blocks left out (at other speed levels), in the same order.
    pub(crate) slowed: Vec<Option<PairedEstimate>>,
    /// How each segment of traffic ended (`precise`, `time up`, an error, or `interrupted`).
    pub(crate) ended: Vec<String>,
    /// Blocks left out, one sentence each.
    pub(crate) discarded: Vec<String>,
    /// Short windows across the run: seconds since its traffic started (segments end to
    /// end), packets per second, and the set in force (`None` inside a settle time).
    pub(crate) windows: Vec<(f64, f64, Option<usize>)>,
    /// Width of a short window, in seconds.
    pub(crate) window_s: f64,
    /// Seconds at which each switch was verified.
    pub(crate) switches: Vec<f64>,
    /// Its latency run, when the campaign measured one and it was stored.
    pub(crate) latency: Option<latency::RunLatency>,
    /// The share of the lab's CPUs' time that other programs took during each block that read
    /// it (the virtual lab), in block order.
    pub(crate) others_shares: Vec<f64>,
}

/// A `versus` line: the compared version or entry, the reference, the estimate.
type Versus = (String, String, Option<PairedEstimate>);

/// Reads every alternating run of `campaign` into `results`: series per set, and the runs.
pub(crate) fn read(
    store: &Store,
    campaign: &Campaign,
    results: &mut Results,
) -> Result<(), InputError> {
    // A directory started before versions alternated is read in its own layout.
    let runs = Runs {
        campaign,
        alternates: store.alternates_versions(campaign)?,
    };
    // The plan the controller measured with: blocks as long as the run's, values alike.
    let plan =
        AlternatingPlan::new(runs).map_err(|e| InputError::new(format!("campaign.toml: {e}")))?;
    let (alt, options, rule) = (&plan.settings, &plan.phase_options, &plan.rule);
    results.method = format!(
        "one block of the alternating design (traffic runs on while the DUT switches config \
         sets every {} s in a balanced order, each set twice per block; {} s after each switch \
         dropped; a phase's value is the {} of its {} s windows, a set's the mean of its phases)",
        secs(alt.phase),
        secs(alt.settle),
        alt.estimator,
        ALTERNATING_INTERVAL.as_secs_f64()
    );
    for index in 0..runs.per_profile() {
        for profile in &campaign.profiles {
            read_run(store, runs, (index, profile), (rule, options), results)?;
        }
    }
    Ok(())
}

/// Reads one run: the version at `index` (every version, when they alternate) and `profile`.
fn read_run(
    store: &Store,
    runs: Runs<'_>,
    (index, profile): (usize, &Profile),
    (rule, options): (&StopRule, &PhaseOptions),
    results: &mut Results,
) -> Result<(), InputError> {
    let entries = runs.entries(index);
    let names: Vec<String> = entries.iter().map(|&e| runs.entry_name(e)).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let key = runs.run_version(index);
    let (v, p) = (key.as_str(), profile.name.as_str());
    let stored = store.read_blocks(v, p, &names, options)?;
    let mut run = AlternatingRun {
        version: v.into(),
        profile: p.into(),
        sets: names.iter().map(|s| s.to_string()).collect(),
        series: Vec::new(),
        blocks: 0,
        estimates: Vec::new(),
        versus: Vec::new(),
        versus_entries: Vec::new(),
        slowed: Vec::new(),
        ended: Vec::new(),
        discarded: Vec::new(),
        windows: Vec::new(),
        window_s: ALTERNATING_INTERVAL.as_secs_f64(),
        switches: Vec::new(),
        latency: None,
        others_shares: stored.iter().filter_map(|b| b.others_share).collect(),
    };
    let mut blocks: Vec<Block> = Vec::new();
    let mut series = empty_series(runs.campaign, &entries, profile);
    run.series = series.iter().map(|s| s.name.clone()).collect();
    read_windows(store, (v, p), &stored, options, &mut run, results)?;
    for block in &stored {
        match &block.values {
            Ok(values) => {
                for (set, s) in series.iter_mut().enumerate() {
                    s.iterations.push(Iteration {
                        index: block.block,
                        median_pps: values.values()[set],
                        samples: (block.phases.iter())
                            .filter(|ph| ph.span.set == set)
                            .map(|ph| ph.windows)
                            .sum(),
                        offered_pps: None,
                        source: format!("alternating/{v}.{p}/phases.csv"),
                        troubles: Vec::new(),
                    });
                }
                blocks.push(values.clone());
            }
            Err(why) => run
                .discarded
                .push(format!("{v}.{p}: block {} left out: {why}", block.block)),
        }
    }
    run.blocks = blocks.len();
    run.estimates = names[1..]
        .iter()
        .map(|n| n.to_string())
        .zip(rule.estimates(&blocks))
        .collect();
    run.slowed = rule.slowed_estimates(&blocks);
    if runs.alternates {
        (run.versus, run.versus_entries) =
            versus(runs, &entries, &blocks, rule).into_iter().unzip();
    }
    run.latency = latency::read(store, &run, &series, &mut results.warnings)?;
    results.series.extend(series);
    results.alternating.push(run);
    Ok(())
}

/// When versions alternate, from the same blocks: each later version against the first within
/// each config set but the first (`acct-on` vs `acct-off (nft-stateful)`), and each later
/// version's sets against its first set (`acct-on.nft-stateful` vs `acct-on.forwarding`); the
/// comparisons with the baseline, (first version, first set), are the run's `estimates`. Each
/// line comes with the entries it compares, (compared, reference).
fn versus(
    runs: Runs<'_>,
    entries: &[Entry],
    blocks: &[Block],
    rule: &StopRule,
) -> Vec<(Versus, (usize, usize))> {
    let at = |version: usize, set: usize| {
        entries
            .iter()
            .position(|e| e.version == version && e.set == set)
    };
    let estimate = |base: usize, k: usize| {
        let pairs: Vec<Block> = (blocks.iter())
            .filter_map(|b| Block::new(vec![b.values()[base], b.values()[k]]).ok())
            .collect();
        rule.estimates(&pairs).into_iter().next().flatten()
    };
    let (campaign, name) = (runs.campaign, |e: Entry| runs.entry_name(e));
    let mut lines = Vec::new();
    for (k, &entry) in entries.iter().enumerate().filter(|(_, e)| e.version > 0) {
        // Against the run's baseline, (first version, first set), it is one of the run's
        // estimates already.
        if let Some(base) = at(0, entry.set).filter(|&base| base > 0) {
            let set = crate::config::config_set_name(&campaign.config_sets[entry.set]);
            let line = (
                campaign.versions[entry.version].name.clone(),
                format!("{} ({set})", campaign.versions[0].name),
                estimate(base, k),
            );
            lines.push((line, (k, base)));
        }
        if let Some(base) = at(entry.version, 0).filter(|_| entry.set > 0) {
            let line = (name(entry), name(entries[base]), estimate(base, k));
            lines.push((line, (k, base)));
        }
    }
    lines
}

/// One series per entry of a run (`<version>.<set>.<profile>`, as the seeds' files).
fn empty_series(campaign: &Campaign, entries: &[Entry], profile: &Profile) -> Vec<Series> {
    entries
        .iter()
        .map(|e| {
            let v = &campaign.versions[e.version].name;
            let c = crate::config::config_set_name(&campaign.config_sets[e.set]);
            Series {
                name: format!("{v}.{c}.{}", profile.name),
                version: v.clone(),
                config: c.to_string(),
                profile: profile.name.clone(),
                setup: Setup {
                    uname: None,
                    traffic: Some(super::Traffic::of_profile(profile)),
                },
                ..Series::default()
            }
        })
        .collect()
}

/// The short windows and switch times of a run's segments, laid end to end, and how each
/// segment ended.
fn read_windows(
    store: &Store,
    (v, p): (&str, &str),
    stored: &[crate::store::StoredBlock],
    options: &PhaseOptions,
    run: &mut AlternatingRun,
    results: &mut Results,
) -> Result<(), InputError> {
    let mut offset = 0.0;
    let mut segments: Vec<u32> = stored.iter().map(|b| b.segment).collect();
    segments.dedup();
    for segment in segments {
        let samples = store.read_series(v, p, segment)?;
        let phases: Vec<_> = (stored.iter().filter(|b| b.segment == segment))
            .flat_map(|b| b.phases.iter().map(|ph| ph.span))
            .collect();
        // A phase of the set already in force started without a switch.
        let mut before = None;
        for span in &phases {
            if before != Some(span.set) {
                run.switches.push(offset + span.switched_s);
            }
            before = Some(span.set);
        }
        let last = samples.last().map_or(0.0, |s| s.t_s);
        let (windows, _) = window_rates(&samples, (0.0, last), options.min_window_s);
        for (t, rate) in windows {
            let set = phases
                .iter()
                .find(|s| t > s.switched_s + options.settle_s && t <= s.end_s)
                .map(|s| s.set);
            run.windows.push((offset + t, rate, set));
        }
        let meta = store.read_segment_meta(v, p, segment);
        if let Some(generator) = meta.as_ref().and_then(|m| m.generator.clone()) {
            results.generators.entry(p.to_string()).or_insert(generator);
        }
        run.ended.push(
            meta.and_then(|m| m.ended)
                .unwrap_or_else(|| "interrupted".into()),
        );
        offset += last;
    }
    Ok(())
}
