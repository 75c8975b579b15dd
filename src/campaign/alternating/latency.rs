//! The alternating design's latency run (issue 35): once a run's throughput blocks are done,
//! each entry's one-way latency at a fixed load (`latency_load`: a fixed-rate profile's own
//! rate, else `[latency] alternating_load` percent of the baseline's saturated rate, the median
//! of its phase values), the entries alternated in the same balanced order and phases as the
//! throughput, for `[latency] blocks` blocks. Probes run throughout; each phase keeps those
//! sent after its settle time, so that the report pairs each set's P50 and P99 with the
//! baseline's block by block, as it pairs the rates.
//!
//! The run is one trial of the ordinary procedure, the `LatencyWatch` switching the DUT at
//! the planned times; its record is written once it ends ([`crate::store::AlternatingLatency`]).

use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::entries::OnDut;
use super::{Alternation, Done};
use crate::campaign::bench::{Event, Switcher};
use crate::campaign::context::Context;
use crate::campaign::design::Unit;
use crate::campaign::trial::{self, Flow, TrialSpec, Watch};
use crate::config::{secs, Profile, Rate, Trial};
use crate::lab::stall::OthersWatch;
use crate::stats::latency::log::Interval;
use crate::stats::latency::Latency;
use crate::stats::PhaseSpan;
use crate::store::{AlternatingLatency, LatencyPhase, SampleRow, TrialKey};
use crate::traffic::endpoint::Receiver;
use crate::traffic::latency::{ProbeKind, Probes};

/// The baseline's median rate over the throughput blocks `done` (the upper of the two middle
/// ones for an even count); `None` when no block gave it.
fn baseline_pps(done: &[Done]) -> Option<f64> {
    let mut baseline: Vec<f64> = (done.iter())
        .filter_map(|d| d.values.as_ref().and_then(|b| b.values().first().copied()))
        .collect();
    baseline.sort_by(f64::total_cmp);
    baseline.get(baseline.len() / 2).copied()
}

/// The share of a fixed rate the baseline must have forwarded for the latency run to use it.
const FORWARDED: f64 = 0.99;

/// The latency run's load, packets/s, and its share of the baseline's rate (`None`: the
/// profile's own rate). A fixed rate the baseline forwarded is the load the user asked to see:
/// a share of it would measure a lighter one. At `max`, or at a fixed rate the baseline did
/// not forward (it saturated), `pct` % of what the baseline forwarded: the latency of a
/// saturated DUT is its queue's.
fn latency_load(rate: Rate, baseline_pps: f64, pct: u32) -> (Option<u32>, f64) {
    match rate {
        Rate::Pps(pps) if baseline_pps >= FORWARDED * pps as f64 => (None, pps as f64),
        _ => (Some(pct), baseline_pps * f64::from(pct) / 100.0),
    }
}

impl Alternation<'_> {
    /// Whether the run of `unit` still has its latency to measure.
    pub(super) fn latency_todo(
        &self,
        store: &crate::store::Store,
        unit: &Unit<'_>,
    ) -> anyhow::Result<bool> {
        if !unit.profile.latency(&self.campaign.trial) {
            return Ok(false);
        }
        let (v, p) = (unit.key.version.as_str(), unit.key.profile.as_str());
        let done = store.read_alternating_latency(v, p)?;
        Ok(done.is_none_or(|(record, _)| record.failure.is_some()))
    }

    /// Runs the latency run of `unit`, whose throughput blocks are `done`.
    pub(super) fn latency(
        &self,
        ctx: &mut Context<'_>,
        unit: &Unit<'_>,
        done: &[Done],
    ) -> anyhow::Result<()> {
        let (v, p) = (unit.key.version.as_str(), unit.key.profile.as_str());
        let Some(baseline_pps) = baseline_pps(done) else {
            anyhow::bail!("{v}.{p}: no throughput block gave the baseline's rate: its latency load is unknown");
        };
        let cfg = self.campaign.latency();
        let (load_pct, load_pps) =
            latency_load(unit.profile.rate, baseline_pps, cfg.alternating_load);
        let profile = Profile {
            rate: Rate::Pps(load_pps.round().max(1.0) as u64),
            ..unit.profile.clone()
        };
        let blocks = cfg.blocks as usize;
        let trial = self.latency_trial(blocks);
        let warmup = secs(trial.warmup);
        let key = TrialKey {
            iteration: 0,
            ..unit.key.clone()
        };
        let spec = TrialSpec {
            key: &key,
            profile: &profile,
            trial: &trial,
            hooks: &self.campaign.hooks,
            capture: false,
            follow: false,
            watch_cpu: false,
            probes: Some(cfg.rate),
            in_dut: cfg.in_dut,
        };
        let index = unit.version.unwrap_or(0);
        let (mut rig, switcher) = ctx.bench.alternating(&spec)?;
        // Read per phase here; taken from the rig, so that the trial procedure does not read
        // them over the whole run as well, for nothing.
        let others_cpus = std::mem::take(&mut rig.lab_cpus);
        let others = OthersWatch::on(&others_cpus)?;
        let mut watch = LatencyWatch {
            design: self,
            switcher,
            blocks,
            block: 0,
            plan: Vec::new(),
            spans: Vec::new(),
            others: super::PhaseOthers::new(others),
            done: Vec::new(),
            next_at: warmup,
            dut: OnDut::new(
                self.plan.runs.entries(index),
                (!self.plan.runs.alternates).then_some(index),
            ),
            on_event: &mut *ctx.on_event,
        };
        let outcome = trial::run(rig, &spec, ctx.cancel, &mut watch);
        let phases = std::mem::take(&mut watch.done);
        drop(watch);
        let data = outcome?;
        let probes = data
            .probes
            .context("the latency run's probes measured nothing")?;
        let (phases, intervals) = self.phases(&phases, &probes, data.start_unix_s);
        let record = AlternatingLatency {
            load_pct,
            baseline_pps,
            load_pps,
            probe_rate_pps: cfg.rate,
            start_unix_s: data.start_unix_s,
            phases,
            failure: None,
            others_cpus,
        };
        (ctx.store
            .write_alternating_latency((v, p), &record, &intervals))
        .with_context(|| format!("storing the latency run of {v}.{p}"))
    }

    /// The one trial of a latency run of `blocks` blocks.
    fn latency_trial(&self, blocks: usize) -> Trial {
        let warmup = secs(self.campaign.trial.warmup).max(secs(self.plan.settings.settle));
        // Time up comes from the watch; the senders' own limit is a backstop for slow switches.
        let planned = blocks as f64 * secs(self.plan.block_duration());
        Trial {
            duration: crate::clock::saturating_secs(warmup + 2.0 * planned + 10.0),
            warmup: crate::clock::saturating_secs(warmup),
            cooldown: Duration::ZERO,
            latency: true,
        }
    }

    /// Each phase's summary and histograms (with the time in the DUT's, where the DUT recorded
    /// it), its window the probes sent from its switch plus the settle time to its end
    /// (`start_unix_s` the base of their times).
    fn phases(
        &self,
        spans: &[DonePhase],
        probes: &Probes,
        start_unix_s: f64,
    ) -> (Vec<LatencyPhase>, Vec<Interval>) {
        let settle = secs(self.plan.settings.settle);
        let ns = |s: f64| ((start_unix_s + s) * 1e9) as u64;
        let mut phases = Vec::new();
        let mut intervals = Vec::new();
        for &(block, phase, span, others_ms) in spans {
            let (from_s, to_s) = (span.switched_s + settle, span.end_s);
            let (from_ns, to_ns) = (ns(from_s), ns(to_s.max(from_s)));
            // A phase's histogram of one kind, latency or time in the DUT, when it has values.
            let mut keep = |tag: &str, latency: Latency| {
                if !latency.is_empty() {
                    intervals.push(Interval {
                        tag: Some(LatencyPhase::tag(block, phase, tag)),
                        start: Duration::from_secs_f64(from_s.max(0.0)),
                        length: Duration::from_secs_f64((to_s - from_s).max(0.0)),
                        latency,
                    });
                }
            };
            let [established, first_packet] = ProbeKind::ALL.map(|kind| {
                let latency = probes.window(kind, from_ns, to_ns);
                let figures = latency.percentiles();
                keep(kind.name(), latency);
                // The time in the DUT, where it recorded the probes' coming in, beside it.
                keep(
                    kind.in_dut_name(),
                    probes.in_dut_window(kind, from_ns, to_ns),
                );
                figures
            });
            phases.push(LatencyPhase {
                block,
                phase,
                config: self.plan.names[span.set].clone(),
                from_s,
                to_s,
                established,
                first_packet,
                others_ms,
            });
        }
        (phases, intervals)
    }
}

/// A finished phase of a latency run: block and position (from 1), span, and other programs'
/// time on the lab's CPUs during it (ms, where read).
type DonePhase = (u32, u32, PhaseSpan, Option<f64>);

/// Switches the DUT at the planned phase starts of a latency run, and ends the traffic once
/// its blocks are done.
struct LatencyWatch<'d, 'b, 'e> {
    design: &'d Alternation<'d>,
    switcher: Box<dyn Switcher + 'b>,
    /// Blocks to run.
    blocks: usize,
    /// Blocks finished.
    block: usize,
    /// The entries of the block in progress, in order.
    plan: Vec<usize>,
    /// Its phases so far (the last one still running).
    spans: Vec<PhaseSpan>,
    /// Other programs' time on the lab's CPUs, a lap per phase.
    others: super::PhaseOthers,
    /// Every finished phase.
    done: Vec<DonePhase>,
    /// When the next phase starts, seconds since the traffic started.
    next_at: f64,
    /// The entries and the one in force.
    dut: OnDut,
    on_event: &'e mut dyn FnMut(&Event<'_>),
}

impl Watch for LatencyWatch<'_, '_, '_> {
    fn second(&mut self, row: &SampleRow) {
        (self.on_event)(&Event::Second { sample: row });
    }

    fn poll(&mut self, _receiver: &mut dyn Receiver, elapsed: Duration) -> anyhow::Result<Flow> {
        let now = elapsed.as_secs_f64();
        if now < self.next_at {
            return Ok(Flow::Continue(crate::clock::saturating_secs(
                self.next_at - now,
            )));
        }
        if let Some(last) = self.spans.last_mut() {
            last.end_s = now;
        }
        self.others.lap(!self.spans.is_empty())?;
        if !self.plan.is_empty() && self.spans.len() == self.plan.len() {
            self.block += 1;
            let others = self.others.take();
            for (k, span) in self.spans.drain(..).enumerate() {
                let phase = (
                    self.block as u32,
                    k as u32 + 1,
                    span,
                    others.get(k).copied(),
                );
                self.done.push(phase);
            }
            if self.block >= self.blocks {
                return Ok(Flow::Stop);
            }
        }
        if self.spans.is_empty() {
            self.plan = self.design.plan.order.block(self.block);
        }
        let set = self.plan[self.spans.len()];
        let started = Instant::now();
        (self.dut)
            .switch_to(&mut *self.switcher, self.design.campaign, set)
            .with_context(|| {
                format!(
                    "switching the DUT to `{}` (latency block {})",
                    self.design.plan.names[set],
                    self.block + 1
                )
            })?;
        let switched_s = now + started.elapsed().as_secs_f64();
        self.spans.push(PhaseSpan {
            set,
            switched_s,
            end_s: f64::NAN,
        });
        let phase = secs(self.design.plan.settings.phase);
        self.next_at = (self.next_at + phase).max(switched_s + phase / 2.0);
        let now = elapsed.as_secs_f64() + started.elapsed().as_secs_f64();
        Ok(Flow::Continue(crate::clock::saturating_secs(
            self.next_at - now,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_rate_the_baseline_forwarded_is_the_latency_load() {
        // 200 Kpps asked, forwarded: latency at 200 Kpps, not at a quarter of it.
        assert_eq!(
            latency_load(Rate::Pps(200_000), 199_990.0, 25),
            (None, 200_000.0)
        );
        // 2 Mpps asked, 800 Kpps forwarded: the baseline saturated, so a share of that.
        assert_eq!(
            latency_load(Rate::Pps(2_000_000), 800_000.0, 25),
            (Some(25), 200_000.0)
        );
        assert_eq!(
            latency_load(Rate::Max, 800_000.0, 50),
            (Some(50), 400_000.0)
        );
    }
}
