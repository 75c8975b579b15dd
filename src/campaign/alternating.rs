//! The alternating design (`design = "alternating"`): for each version and profile, traffic runs
//! without a stop while benchlab switches the DUT between the campaign's config sets in a
//! balanced order ([`BalancedOrder`]), until every comparison with the baseline is precise enough
//! or time is up ([`StopRule`]): both as the campaign's [`AlternatingPlan`] says, which the
//! report's reader (`ingest::alternating`) derives alike.
//!
//! One run of continuous traffic is one trial of the ordinary trial procedure
//! ([`trial::run`]) whose [`Watch`] is the `Controller` here: at each phase's planned start it
//! ends the phase in progress (checking that the set in force counted packets), closes the block
//! when its phases are done (phase values from the receiver's 0.05 s windows, one value per set,
//! stored at once), asks the stopping rule, and switches the DUT to the next set (revert the old
//! set, check it is gone, apply and verify the new one), recording when the switch was verified.
//! A switch that fails ends the run with the error; the blocks finished before are kept, and
//! `--resume` continues with the next block in a new segment of traffic.
//!
//! When every version is quick (issue 12: sysctls and commands, no install or reboot), the
//! versions alternate too: the run's entries are the (version, set) pairs ([`entries`]), one
//! run per profile stored under the versions' names joined by `+`, each phase naming its
//! `<version>.<set>` entry; a switch applies the version, then the set, whichever changed.
//!
//! [`BalancedOrder`]: crate::stats::BalancedOrder
//! [`StopRule`]: crate::stats::StopRule
//! [`AlternatingPlan`]: crate::config::AlternatingPlan
//! [`Watch`]: crate::campaign::trial::Watch
//! [`entries`]: crate::campaign::alternating::entries

use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::bench::{Estimates, Event, Switcher};
use super::context::Context;
use super::design::{Design, Unit};
use super::trial::{self, Flow, TrialSpec, Watch};
use crate::clock::unix_now;
use crate::config::{secs, AlternatingPlan, Campaign, Runs, Trial};
use crate::lab::stall::OthersWatch;
use crate::stats::{phase_values, Block, CounterSample, Decision, PhaseSpan};
use crate::store::alternating::{PRECISE, TIME_UP};
use crate::store::{samples_csv, PhaseRow, SampleRow, SegmentMeta, Store, TrialKey};
use crate::traffic::endpoint::Receiver;

/// The alternating design of a campaign: what every run of it shares, the campaign and its
/// plan (entries, order, phase values, stopping rule), in the layout its directory holds.
pub(crate) struct Alternation<'c> {
    campaign: &'c Campaign,
    plan: AlternatingPlan<'c>,
}

impl Design for Alternation<'_> {
    fn begin(&mut self, ctx: &mut Context<'_>) -> anyhow::Result<()> {
        // Alternated versions are applied by the switches, under traffic: `lab.json` says what
        // each one applies.
        match self.plan.runs.alternates {
            true => entries::record_versions(ctx.store, self.campaign),
            false => Ok(()),
        }
    }

    fn measure(
        &mut self,
        ctx: &mut Context<'_>,
        unit: &Unit<'_>,
        _since: Instant,
    ) -> anyhow::Result<usize> {
        let (v, p) = (unit.key.version.as_str(), unit.key.profile.as_str());
        // A resumed run whose throughput is done has only its latency left.
        let measured = match self.blocks_left(ctx.store, v, p)? {
            true => self.segment(ctx, unit)?,
            false => 0,
        };
        if self.latency_todo(ctx.store, unit)? {
            let done = self.stored(ctx.store, v, p)?;
            self.latency(ctx, unit, &done)?;
        }
        Ok(measured)
    }
}

/// A finished block as the run knows it: its values (when it has them) and its duration.
struct Done {
    values: Option<Block>,
    seconds: f64,
}

impl Alternation<'_> {
    /// The finished blocks of a run, from its results directory.
    fn stored(&self, store: &Store, version: &str, profile: &str) -> anyhow::Result<Vec<Done>> {
        let names: Vec<&str> = self.plan.names.iter().map(String::as_str).collect();
        let blocks = store.read_blocks(version, profile, &names, &self.plan.phase_options)?;
        Ok(blocks
            .into_iter()
            .map(|b| Done {
                seconds: block_seconds(&b.phases.iter().map(|p| p.span).collect::<Vec<_>>()),
                values: b.values.ok(),
            })
            .collect())
    }

    /// What the stopping rule says of these blocks.
    fn decide(&self, done: &[Done]) -> Decision {
        let blocks: Vec<Block> = done.iter().filter_map(|d| d.values.clone()).collect();
        let elapsed: f64 = done.iter().map(|d| d.seconds).sum();
        (self.plan.rule).decide(&blocks, crate::clock::saturating_secs(elapsed))
    }

    /// The comparisons of `blocks`, each set against the baseline.
    fn estimates(&self, blocks: &[Block]) -> Estimates {
        let all = self.plan.rule.estimates(blocks);
        self.plan.names[1..]
            .iter()
            .zip(all)
            .map(|(name, e)| (name.to_string(), e))
            .collect()
    }

    /// The one trial of a segment, after `elapsed` seconds of earlier blocks.
    fn trial(&self, elapsed: f64) -> Trial {
        let settings = &self.plan.settings;
        let warmup = secs(self.campaign.trial.warmup).max(secs(settings.settle));
        let block_s = secs(self.plan.block_duration());
        // Time up comes from the stopping rule; the senders' own limit is a backstop past the
        // wait for traffic, the run's time left and a block of slow switches.
        let duration = warmup
            + NO_TRAFFIC_S
            + (secs(settings.max_duration) - elapsed).max(0.0)
            + 4.0 * block_s
            + 10.0;
        Trial {
            duration: crate::clock::saturating_secs(duration),
            warmup: crate::clock::saturating_secs(warmup),
            cooldown: Duration::ZERO,
            latency: false,
        }
    }

    /// One segment of continuous traffic for the run `unit`, adding blocks until the stopping
    /// rule ends the run; returns the blocks measured.
    fn segment(&self, ctx: &mut Context<'_>, unit: &Unit<'_>) -> anyhow::Result<usize> {
        // Alternated versions make one run per profile, under the first version's index.
        let index = unit.version.unwrap_or(0);
        let (v, p) = (unit.key.version.as_str(), unit.key.profile.as_str());
        let store = ctx.store;
        let rows = store.read_phases(v, p)?;
        let done = self.stored(store, v, p)?;
        let segment = rows.last().map_or(1, |r| r.segment + 1);
        store.begin_segment(v, p, segment)?;
        let elapsed: f64 = done.iter().map(|d| d.seconds).sum();
        let trial = self.trial(elapsed);
        let key = TrialKey {
            iteration: segment,
            ..unit.key.clone()
        };
        let spec = TrialSpec {
            key: &key,
            profile: unit.profile,
            trial: &trial,
            hooks: &self.campaign.hooks,
            capture: false,
            follow: true,
            watch_cpu: false,
            probes: None,
            in_dut: false,
        };
        let ids = (v, p, segment);
        let mut meta = SegmentMeta {
            start_unix_s: unix_now(),
            end_unix_s: None,
            ended: None,
            generator: None,
            others_cpus: Vec::new(),
        };
        store.write_segment_file(ids, "meta.json", &json(&meta)?)?;
        let (mut rig, switcher) = ctx.bench.alternating(&spec)?;
        // Read per phase by the controller; taken from the rig, so that the trial procedure
        // does not read them over the whole segment as well, for nothing.
        let lab_cpus = std::mem::take(&mut rig.lab_cpus);
        let others = watch_others(store, ids, &mut meta, &lab_cpus)?;
        let mut controller = Controller {
            design: self,
            store,
            ids,
            switcher,
            blocks: done.into_iter().filter_map(|d| d.values).collect(),
            elapsed_before: elapsed,
            rows,
            plan: Vec::new(),
            spans: Vec::new(),
            next_at: secs(trial.warmup),
            dut: entries::OnDut::new(
                self.plan.runs.entries(index),
                (!self.plan.runs.alternates).then_some(index),
            ),
            first_switch: None,
            others: PhaseOthers::new(others),
            measured: 0,
            ended: None,
            on_event: &mut *ctx.on_event,
        };
        let outcome = trial::run(rig, &spec, ctx.cancel, &mut controller);
        let (measured, ended) = (controller.measured, controller.ended);
        let estimates = self.estimates(&controller.blocks);
        drop(controller);
        finish_segment(store, ids, meta, &outcome, ended)?;
        outcome?;
        ctx.event(&Event::RunDone {
            version: v,
            profile: p,
            ended: if ended == Some(Decision::Precise) {
                PRECISE
            } else {
                TIME_UP
            },
            estimates: &estimates,
        });
        Ok(measured)
    }
}

/// Starts reading other programs' time on `lab_cpus`, where the lab names them, and names them
/// in the segment's `meta.json` first.
fn watch_others(
    store: &Store,
    ids: (&str, &str, u32),
    meta: &mut SegmentMeta,
    lab_cpus: &[usize],
) -> anyhow::Result<Option<OthersWatch>> {
    let watch = OthersWatch::on(lab_cpus)?;
    if watch.is_some() {
        meta.others_cpus = lab_cpus.to_vec();
        store.write_segment_file(ids, "meta.json", &json(meta)?)?;
    }
    Ok(watch)
}

/// Keeps what a segment leaves: its seconds and files when the traffic ended as it should, and
/// its `meta.json` with how it ended in every case.
fn finish_segment(
    store: &Store,
    ids: (&str, &str, u32),
    mut meta: SegmentMeta,
    outcome: &anyhow::Result<trial::TrialData>,
    ended: Option<Decision>,
) -> anyhow::Result<()> {
    meta.end_unix_s = Some(unix_now());
    meta.ended = Some(match (outcome, ended) {
        (Err(e), _) => format!("{e:#}"),
        (Ok(_), Some(Decision::Precise)) => PRECISE.into(),
        (Ok(_), _) => TIME_UP.into(),
    });
    if let Ok(data) = outcome {
        meta.generator.clone_from(&data.generator);
        store.write_segment_file(ids, "samples.csv", samples_csv(&data.samples).as_bytes())?;
        for (name, text) in &data.files {
            store.write_segment_file(ids, name, text.as_bytes())?;
        }
    }
    store.write_segment_file(ids, "meta.json", &json(&meta)?)?;
    Ok(())
}

fn json(meta: &SegmentMeta) -> anyhow::Result<Vec<u8>> {
    Ok((serde_json::to_string_pretty(meta)? + "\n").into_bytes())
}

/// Seconds a block took: from its first switch to the end of its last phase.
fn block_seconds(spans: &[PhaseSpan]) -> f64 {
    match (spans.first(), spans.last()) {
        (Some(first), Some(last)) => (last.end_s - first.switched_s).max(0.0),
        _ => 0.0,
    }
}

/// Other programs' time on the lab's CPUs per phase of the block in progress, where the lab
/// reads it: the segment controller's and the alternated latency run's.
struct PhaseOthers {
    watch: Option<OthersWatch>,
    /// Their time during each finished phase of the block in progress, ms.
    laps: Vec<f64>,
}

impl PhaseOthers {
    /// Per phase from `watch` (`None`: the lab does not read them).
    fn new(watch: Option<OthersWatch>) -> PhaseOthers {
        PhaseOthers {
            watch,
            laps: Vec::new(),
        }
    }

    /// At each look that switches (`ended`: one ended a phase, not the first): their time
    /// during the phase that ended, from the look that switched to it.
    fn lap(&mut self, ended: bool) -> anyhow::Result<()> {
        if let Some(watch) = &mut self.watch {
            let lap = watch.lap()?;
            if ended {
                self.laps.push(lap);
            }
        }
        Ok(())
    }

    /// The block's laps, leaving none for the next block.
    fn take(&mut self) -> Vec<f64> {
        std::mem::take(&mut self.laps)
    }
}

/// Seconds past the warm-up the first switch waits for traffic to reach the receiver.
const NO_TRAFFIC_S: f64 = 10.0;

/// Drives one segment: switches at the planned times, closes blocks, asks the stopping rule.
struct Controller<'d, 'b, 'e> {
    design: &'d Alternation<'d>,
    store: &'d Store,
    /// Version, profile and segment.
    ids: (&'d str, &'d str, u32),
    switcher: Box<dyn Switcher + 'b>,
    /// Every block with values so far, earlier segments' first.
    blocks: Vec<Block>,
    /// Seconds of the blocks of earlier segments.
    elapsed_before: f64,
    /// Every stored phase, earlier segments' first.
    rows: Vec<PhaseRow>,
    /// The sets of the block in progress, in order.
    plan: Vec<usize>,
    /// Its phases so far (the last one still running).
    spans: Vec<PhaseSpan>,
    /// When the next phase starts, seconds since the traffic started.
    next_at: f64,
    /// The entries and the one in force.
    dut: entries::OnDut,
    first_switch: Option<f64>,
    /// Other programs' time on the lab's CPUs, a lap per phase.
    others: PhaseOthers,
    measured: usize,
    ended: Option<Decision>,
    on_event: &'e mut dyn FnMut(&Event<'_>),
}

impl Watch for Controller<'_, '_, '_> {
    fn second(&mut self, row: &SampleRow) {
        (self.on_event)(&Event::Second { sample: row });
    }

    fn poll(&mut self, receiver: &mut dyn Receiver, elapsed: Duration) -> anyhow::Result<Flow> {
        let now = elapsed.as_secs_f64();
        if now < self.next_at {
            return Ok(Flow::Continue(crate::clock::saturating_secs(
                self.next_at - now,
            )));
        }
        if self.first_switch.is_none() && !self.traffic_flows(receiver, now)? {
            return Ok(Flow::Continue(Duration::from_millis(50)));
        }
        if let Some(last) = self.spans.last_mut() {
            last.end_s = now;
            self.check_counted()?;
        }
        self.others.lap(!self.spans.is_empty())?;
        if !self.plan.is_empty() && self.spans.len() == self.plan.len() {
            self.close_block(&receiver.counter_samples()?)?;
            let decision = self.decision(now);
            if decision != Decision::Continue {
                self.ended = Some(decision);
                return Ok(Flow::Stop);
            }
        }
        if self.spans.is_empty() {
            self.plan = self.design.plan.order.block(self.blocks_so_far());
        }
        let set = self.plan[self.spans.len()];
        let started = Instant::now();
        (self.dut)
            .switch_to(&mut *self.switcher, self.design.campaign, set)
            .with_context(|| {
                // In the first block there is nothing before it to keep.
                let (block, kept) = match self.blocks_so_far() {
                    0 => (1, ""),
                    n => (n + 1, "; the blocks before it are kept"),
                };
                let name = &self.design.plan.names[set];
                format!("switching the DUT to `{name}` (block {block}){kept}")
            })?;
        let switched_s = now + started.elapsed().as_secs_f64();
        self.first_switch.get_or_insert(switched_s);
        self.spans.push(PhaseSpan {
            set,
            switched_s,
            end_s: f64::NAN,
        });
        let settings = &self.design.plan.settings;
        let (phase, settle) = (secs(settings.phase), secs(settings.settle));
        // Keep to the planned grid unless the switch took longer than a window: every phase
        // then keeps its full length after the settle time.
        let window = crate::config::ALTERNATING_INTERVAL.as_secs_f64();
        self.next_at = if self.next_at + phase - (switched_s + settle) >= phase - settle - window {
            self.next_at + phase
        } else {
            switched_s + phase
        };
        let now = elapsed.as_secs_f64() + started.elapsed().as_secs_f64();
        Ok(Flow::Continue(crate::clock::saturating_secs(
            self.next_at - now,
        )))
    }
}

impl Controller<'_, '_, '_> {
    /// Blocks finished, stored ones included (the balanced order goes on across segments).
    fn blocks_so_far(&self) -> usize {
        self.rows.last().map_or(0, |r| r.block as usize)
    }

    /// Whether the receiver counts traffic yet: a remote sender may take longer than the
    /// warm-up to start, and a phase without traffic would fail its set's check.
    fn traffic_flows(&self, receiver: &mut dyn Receiver, now: f64) -> anyhow::Result<bool> {
        let samples = receiver.counter_samples()?;
        let recent = samples.iter().rev().take(3).collect::<Vec<_>>();
        let flowing = recent.len() == 3 && recent.windows(2).all(|w| w[0].rx_pkts > w[1].rx_pkts);
        if !flowing && now > self.next_at + NO_TRAFFIC_S {
            anyhow::bail!(
                "no traffic reached the receiver {NO_TRAFFIC_S} s after the warm-up: check the \
                 senders and the DUT's routes"
            );
        }
        Ok(flowing)
    }

    /// The set that just ran must have seen the traffic: a set whose pass rules counted
    /// nothing is not in the packets' path, and its values would be another set's.
    fn check_counted(&mut self) -> anyhow::Result<()> {
        let set = self.spans.last().map_or(0, |s| s.set);
        if self.switcher.counters()? == Some(0) {
            anyhow::bail!(
                "config set `{}`: its pass rules counted no packet during its phase (block {}): \
                 they are not in the traffic's path; check the set",
                self.design.plan.names[set],
                self.blocks_so_far() + 1
            );
        }
        Ok(())
    }

    /// Reduces the block just finished to one value per set and stores it with its series.
    fn close_block(&mut self, series: &[CounterSample]) -> anyhow::Result<()> {
        let (v, p, segment) = self.ids;
        let block = self.blocks_so_far() as u32 + 1;
        let phases = phase_values(series, &self.spans, &self.design.plan.phase_options)?;
        let others = self.others.take();
        for (k, span) in self.spans.iter().enumerate() {
            self.rows.push(PhaseRow {
                segment,
                block,
                phase: k as u32 + 1,
                config: self.design.plan.names[span.set].to_string(),
                switched_s: span.switched_s,
                end_s: span.end_s,
                others_ms: others.get(k).copied(),
            });
        }
        self.store
            .write_blocks(self.ids, series, &self.rows)
            .with_context(|| format!("storing block {block} of {v}.{p}"))?;
        self.spans.clear();
        self.measured += 1;
        let values = Block::from_phases(&phases, self.design.plan.names.len());
        if let Ok(values) = &values {
            self.blocks.push(values.clone());
        }
        let estimates = self.design.estimates(&self.blocks);
        (self.on_event)(&Event::Block {
            version: v,
            profile: p,
            block,
            problem: values.err().map(|e| e.to_string()),
            estimates: &estimates,
        });
        Ok(())
    }

    /// The stopping rule's word on the blocks so far, `now` seconds into the segment.
    fn decision(&self, now: f64) -> Decision {
        let segment = now - self.first_switch.unwrap_or(now);
        let elapsed = self.elapsed_before + segment;
        (self.design.plan.rule).decide(&self.blocks, crate::clock::saturating_secs(elapsed))
    }
}

/// The entries an alternating run switches between: config sets, or (version, set) pairs.
pub(crate) mod entries;
/// Each entry's latency at a fixed load, alternated after the run's throughput blocks.
mod latency;
/// What a run of the design is (the campaign's plan, in its directory's layout), and the runs
/// still to measure.
mod todo;

#[cfg(test)]
mod tests;
