//! The seam between a trial and the tools that send and count its traffic: [`Sender`] and
//! [`Receiver`]. The trial procedure (`campaign::trial`) drives any of them the same way;
//! benchlab's own generator and receiver (in this process, or as `benchlab gen`/`rx` on a
//! remote host), trafgen and netmap pkt-gen each implement them in a file of their own.
//!
//! Both report [`Tick`]s: one per second of traffic, the packets of that second and the rate
//! the tool printed for it. A receiver's ticks start at the second the senders started, so the
//! procedure pairs the i-th tick of the senders (summed) with the i-th tick of the receiver.
//!
//! [`Sender`]: crate::traffic::endpoint::Sender
//! [`Receiver`]: crate::traffic::endpoint::Receiver
//! [`Tick`]: crate::traffic::endpoint::Tick

use std::time::Duration;

use super::packet::Family;
use super::Rate;
use crate::stats::CounterSample;

/// What a sender sends: a traffic profile's frames, at its rate, for a number of seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    /// Address family.
    pub(crate) af: Family,
    /// Source addresses and ports (`198.18.10.1:2000-198.18.10.20`).
    pub(crate) src: String,
    /// Destination addresses and ports.
    pub(crate) dst: String,
    /// Frame size with FCS (64…1518).
    pub(crate) frame_size: u32,
    /// Offered rate.
    pub(crate) rate: Rate,
    /// Seconds of traffic.
    pub(crate) seconds: f64,
}

impl Load {
    /// The fixed rate, if any.
    pub(crate) fn pps(&self) -> Option<u64> {
        match self.rate {
            Rate::Max => None,
            Rate::Pps(p) => Some(p),
        }
    }

    /// The rate as `benchlab gen -r` takes it.
    pub(crate) fn rate_arg(&self) -> String {
        self.pps().map_or_else(|| "max".into(), |p| p.to_string())
    }
}

/// One second of a sender or a receiver: packets in that second and the rate it reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Tick {
    /// Packets in this second.
    pub(crate) pkts: u64,
    /// Packets per second the tool reported for it.
    pub(crate) pps: f64,
}

/// Where a sender stands, as [`Sender::state`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SenderState {
    /// Still sending.
    Running,
    /// Ended as it should (by itself, or stopped at the end of the trial's time when that is
    /// how the tool ends).
    Ended,
    /// Ended or running in a way that fails the trial; `stopped` when benchlab stopped it
    /// (another sender failed, the trial overran), so a failure of its own names the trial's.
    Failed {
        /// Whether benchlab stopped it.
        stopped: bool,
    },
}

/// Why benchlab stops a sender before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// The trial's time (plus the sender's [`Sender::grace`]) is over.
    TimeUp,
    /// Another sender failed, or the campaign was interrupted.
    Abort,
}

/// What a sender leaves once it ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct SenderRecord {
    /// Its seconds of traffic, from its start.
    pub(crate) ticks: Vec<Tick>,
    /// What sent, in words (`benchlab gen on dut-a, xdp engine`).
    pub(crate) description: String,
    /// Files to keep with the trial: name and content.
    pub(crate) files: Vec<(String, String)>,
    /// Frames its input queue dropped, never sent (`benchlab gen` holding the virtual lab's DUT
    /// input queue, [`crate::traffic::GenConfig::input_queue`]): held beyond its ring when the
    /// traffic stopped, as a NIC's ring would have dropped them (or beyond its buffer, or
    /// still held when the drain ran out: [`crate::traffic::TxSummary::lost_at_stop`]).
    pub(crate) late_pkts: u64,
}

/// What a receiver leaves once stopped.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReceiverRecord {
    /// Its seconds, from the senders' start.
    pub(crate) ticks: Vec<Tick>,
    /// Files to keep with the trial: name and content.
    pub(crate) files: Vec<(String, String)>,
}

/// One sender of a trial's traffic.
pub(crate) trait Sender {
    /// Readies it before the trial clock runs (configuration written, counters started); the
    /// receiver is already counting.
    fn prepare(&mut self) -> anyhow::Result<()>;
    /// Starts sending.
    fn start(&mut self) -> anyhow::Result<()>;
    /// Where it stands, without blocking.
    fn state(&mut self) -> anyhow::Result<SenderState>;
    /// Its complete seconds so far.
    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>>;
    /// Seconds past the trial's duration it may run before benchlab stops it.
    fn grace(&self) -> Duration;
    /// Stops it (it has not ended by itself).
    fn stop(&mut self, why: StopReason) -> anyhow::Result<()>;
    /// The error that failed the trial, once [`Sender::state`] said `Failed`.
    fn failure(&self) -> anyhow::Error;
    /// Its record, once it ended or was stopped (its remote files are removed here).
    fn finish(self: Box<Self>) -> anyhow::Result<SenderRecord>;
}

/// The counter of what reaches the receiving side.
pub(crate) trait Receiver {
    /// Starts counting and returns once it counts (its first sample is in).
    fn start(&mut self) -> anyhow::Result<()>;
    /// The senders start now: the seconds counted before are not the trial's.
    fn traffic_starts(&mut self) -> anyhow::Result<()>;
    /// Its complete seconds since the senders started.
    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>>;
    /// The longest it keeps counting after the senders ended, for packets in flight.
    fn drain(&self) -> Duration;
    /// Waits, once the senders ended, for the packets still in flight: [`Receiver::drain`]'s
    /// time, or less for a receiver that sees its count stop moving sooner.
    fn settle(&mut self) -> anyhow::Result<()> {
        std::thread::sleep(self.drain());
        Ok(())
    }
    /// Its cumulative count at every sample so far, seconds since the senders started (the
    /// first sample is the count at that moment): the short windows of the alternating design.
    /// A receiver that counts whole seconds only says so.
    fn counter_samples(&mut self) -> anyhow::Result<Vec<CounterSample>> {
        anyhow::bail!("this receiver counts whole seconds only; the alternating design needs one that samples every 0.05 s")
    }
    /// Stops it and returns its record.
    fn finish(self: Box<Self>) -> anyhow::Result<ReceiverRecord>;
}

/// Per-second ticks from cumulative counts: each tick's packets are the difference with the
/// count before (`counts`: cumulative packets and the rate printed with them).
pub(crate) fn ticks_from_totals(counts: impl IntoIterator<Item = (u64, f64)>) -> Vec<Tick> {
    let mut last = 0;
    counts
        .into_iter()
        .map(|(total, pps)| {
            let tick = Tick {
                pkts: total.saturating_sub(last),
                pps,
            };
            last = total;
            tick
        })
        .collect()
}

/// Ticks of whole seconds from a counter sampled `per_tick` times a second: `samples` are
/// (seconds, cumulative packets, rate of the interval), and those before index `skip` were
/// taken before the senders started.
pub(crate) fn ticks_every(samples: &[(f64, u64, f64)], skip: usize, per_tick: usize) -> Vec<Tick> {
    if per_tick <= 1 {
        let mut ticks = ticks_from_totals(samples.iter().map(|s| (s.1, s.2)));
        ticks.drain(..skip.min(ticks.len()));
        return ticks;
    }
    let base = skip
        .checked_sub(1)
        .and_then(|i| samples.get(i))
        .map_or((0.0, 0), |s| (s.0, s.1));
    let mut last_t = base.0;
    let ends = samples
        .iter()
        .skip(skip)
        .skip(per_tick - 1)
        .step_by(per_tick);
    ticks_from_totals(ends.map(|&(t, total, _)| {
        let pkts = total.saturating_sub(base.1);
        let pps = pkts as f64 / (t - last_t).max(f64::MIN_POSITIVE);
        last_t = t;
        (pkts, pps)
    }))
}

/// The senders' seconds added up, as far as every sender has that second.
pub(crate) fn sum_ticks(per_sender: &[Vec<Tick>]) -> Vec<Tick> {
    let n = per_sender.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|i| Tick {
            pkts: per_sender.iter().map(|t| t[i].pkts).sum(),
            pps: per_sender.iter().map(|t| t[i].pps).sum(),
        })
        .collect()
}

/// The name of sender `k`'s file `stem.ext` kept with a trial: the plain name with one sender
/// (as before there were several), `stem-K.ext` (1-based) with more.
pub(crate) fn file_name(stem: &str, ext: &str, k: usize, n: usize) -> String {
    if n == 1 {
        format!("{stem}.{ext}")
    } else {
        format!("{stem}-{}.{ext}", k + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_differences_of_totals_and_senders_add_up_as_far_as_all_went() {
        let a = ticks_from_totals([(100, 100.0), (250, 150.0), (300, 50.0)]);
        assert_eq!(a.iter().map(|t| t.pkts).collect::<Vec<_>>(), [100, 150, 50]);
        let b = ticks_from_totals([(10, 10.0), (20, 10.0)]);
        let sum = sum_ticks(&[a, b]);
        assert_eq!(
            sum,
            [
                Tick {
                    pkts: 110,
                    pps: 110.0
                },
                Tick {
                    pkts: 160,
                    pps: 160.0
                }
            ]
        );
        assert_eq!(file_name("generator", "log", 0, 1), "generator.log");
        assert_eq!(file_name("generator", "log", 1, 3), "generator-2.log");
    }
}
