//! benchlab's generator and receiver in this process (the virtual lab): a [`LocalSender`] runs
//! the built-in generator on a pinned thread in the sender's namespace, a [`LocalReceiver`]
//! samples the receiving interface's counters (and the DUT's drop counters) once a second.
//!
//! [`LocalSender`]: crate::traffic::local::LocalSender
//! [`LocalReceiver`]: crate::traffic::local::LocalReceiver

use std::time::Duration;

use anyhow::Context;

use super::endpoint::{
    ticks_every, ticks_from_totals, Receiver, ReceiverRecord, Sender, SenderRecord, SenderState,
    StopReason, Tick,
};
use super::receiver::quiet::Quiet;
use super::receiver::{self, RxConfig, Sample};
use super::{GenConfig, Generator, TxSample, TxSummary};
use crate::stats::CounterSample;

/// The in-process generator may overrun its duration this much before it is stopped: it ends
/// by itself, so only a stuck one ever is.
const GRACE: Duration = Duration::from_secs(60);
/// The longest the receiver keeps counting after the generator stops, for packets in flight:
/// the virtual lab's DUT works off what its input queue held at the stop (up to 4,096 frames,
/// `lab::virt::INPUT_QUEUE_FRAMES`), 14 ms at 300 Kpps, within the generator's own drain.
const DRAIN: Duration = Duration::from_secs(1);
/// Time between two reads of the receiving interface's count that must agree for the packets
/// in flight to be in: on the virtual lab the read taken as the generator stopped already
/// agrees with the next (search trials settle in one step), and 20 ms without a packet is far
/// longer than the DUT takes to empty its queues (`tests/drain.rs`: nothing more arrives in the
/// 0.5 s after, from full rate).
const SETTLE_STEP: Duration = Duration::from_millis(20);

/// The built-in generator as a trial's sender.
pub(crate) struct LocalSender {
    /// Its configuration, until [`Sender::prepare`] builds it.
    config: Option<GenConfig>,
    generator: Option<Box<dyn Generator>>,
    samples: Vec<TxSample>,
    summary: Option<TxSummary>,
}

impl LocalSender {
    /// A sender that will run `config`.
    pub(crate) fn new(config: GenConfig) -> Self {
        Self {
            config: Some(config),
            generator: None,
            samples: Vec::new(),
            summary: None,
        }
    }

    fn generator(&mut self) -> anyhow::Result<&mut Box<dyn Generator>> {
        self.generator
            .as_mut()
            .context("the generator was not prepared")
    }

    fn collect(&mut self) -> anyhow::Result<()> {
        let generator = self.generator()?;
        let mut new = Vec::new();
        while let Some(s) = generator.next_sample(Duration::ZERO) {
            new.push(s);
        }
        self.samples.extend(new);
        Ok(())
    }
}

impl Sender for LocalSender {
    fn prepare(&mut self) -> anyhow::Result<()> {
        let config = self
            .config
            .take()
            .context("the generator is prepared once")?;
        self.generator = Some(super::builtin(config).context("starting the generator")?);
        Ok(())
    }

    fn start(&mut self) -> anyhow::Result<()> {
        self.generator()?.start().context("starting the generator")
    }

    fn state(&mut self) -> anyhow::Result<SenderState> {
        Ok(
            match self.summary.is_some() || self.generator()?.is_finished() {
                true => SenderState::Ended,
                false => SenderState::Running,
            },
        )
    }

    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        self.collect()?;
        Ok(ticks_from_totals(
            self.samples.iter().map(|s| (s.tx_pkts, s.tx_pps)),
        ))
    }

    fn grace(&self) -> Duration {
        GRACE
    }

    fn stop(&mut self, _why: StopReason) -> anyhow::Result<()> {
        let summary = self.generator()?.stop().context("stopping the generator")?;
        self.summary = Some(summary);
        Ok(())
    }

    fn failure(&self) -> anyhow::Error {
        anyhow::anyhow!("the generator failed")
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<SenderRecord> {
        let ticks = self.ticks()?;
        let summary = match self.summary.take() {
            Some(s) => s,
            None => self.generator()?.stop().context("stopping the generator")?,
        };
        Ok(SenderRecord {
            ticks,
            description: match summary.follow_margin {
                Some(m) => format!(
                    "benchlab gen, {} engine, at max offering {:.0} % more than the DUT took",
                    summary.engine,
                    m * 100.0
                ),
                None => format!("benchlab gen, {} engine", summary.engine),
            },
            files: vec![(
                "generator.json".to_string(),
                serde_json::to_string_pretty(&summary)? + "\n",
            )],
            late_pkts: summary.lost_at_stop.unwrap_or(0),
        })
    }
}

/// The receiver's counter sampler as a trial's receiver.
pub(crate) struct LocalReceiver {
    /// Its configuration, until started.
    config: Option<RxConfig>,
    receiver: Option<receiver::Receiver>,
    /// The receiving interface's count, read while the trial drains.
    quiet: Option<Quiet>,
    samples: Vec<Sample>,
    /// Samples taken before the senders started.
    skip: usize,
    /// Samples per tick: a receiver sampling every 0.05 s still reports whole seconds.
    per_tick: usize,
    /// Seconds from the start of sampling to the senders' start.
    traffic_s: f64,
}

impl LocalReceiver {
    /// A receiver that will count as `config` says; its interval must divide a second.
    pub(crate) fn new(config: RxConfig) -> Self {
        let per_tick = (1.0 / config.interval.as_secs_f64()).round().max(1.0) as usize;
        Self {
            config: Some(config),
            receiver: None,
            quiet: None,
            samples: Vec::new(),
            skip: 0,
            per_tick,
            traffic_s: 0.0,
        }
    }

    fn collect(&mut self) -> anyhow::Result<()> {
        let receiver = self
            .receiver
            .as_mut()
            .context("the receiver is not started")?;
        while let Some(s) = receiver.next_sample(Duration::ZERO) {
            self.samples.push(s);
        }
        Ok(())
    }
}

/// Per-second ticks of receiver samples taken every `1 / per_tick` s, from sample `skip` on.
fn rx_ticks(samples: &[Sample], skip: usize, per_tick: usize) -> Vec<Tick> {
    let counts: Vec<(f64, u64, f64)> = samples
        .iter()
        .map(|s| (s.t_s, s.rx_pkts, s.rx_pps))
        .collect();
    ticks_every(&counts, skip, per_tick)
}

impl Receiver for LocalReceiver {
    fn start(&mut self) -> anyhow::Result<()> {
        let config = self.config.take().context("the receiver is started once")?;
        self.quiet = Some(Quiet::open(&config)?);
        self.receiver = Some(receiver::Receiver::start(config)?);
        Ok(())
    }

    fn traffic_starts(&mut self) -> anyhow::Result<()> {
        self.collect()?;
        self.skip = self.samples.len();
        if let Some(r) = &self.receiver {
            self.traffic_s = r.started().elapsed().as_secs_f64();
        }
        Ok(())
    }

    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        self.collect()?;
        Ok(rx_ticks(&self.samples, self.skip, self.per_tick))
    }

    fn counter_samples(&mut self) -> anyhow::Result<Vec<CounterSample>> {
        self.collect()?;
        let first = self.skip.saturating_sub(1);
        Ok(self.samples[first.min(self.samples.len())..]
            .iter()
            .map(|s| CounterSample {
                t_s: s.t_s - self.traffic_s,
                rx_pkts: s.rx_pkts,
            })
            .collect())
    }

    fn drain(&self) -> Duration {
        DRAIN
    }

    fn settle(&mut self) -> anyhow::Result<()> {
        let quiet = self.quiet.as_mut().context("the receiver is not started")?;
        quiet.wait(SETTLE_STEP, DRAIN).map(drop)
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<ReceiverRecord> {
        let receiver = self
            .receiver
            .take()
            .context("the receiver is not started")?;
        let series = receiver.stop()?;
        Ok(ReceiverRecord {
            ticks: rx_ticks(&series.samples, self.skip, self.per_tick),
            files: vec![(
                "receiver.json".to_string(),
                serde_json::to_string_pretty(&series)? + "\n",
            )],
        })
    }
}
