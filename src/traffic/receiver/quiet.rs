//! The end of a trial's drain: the receiving interface's count, read apart from the sampling
//! thread until it stops moving, so that a trial waits for its packets in flight only as long
//! as they take instead of a fixed time.

use std::time::Duration;

use anyhow::Context;

use super::{Probe, RxConfig};

/// The receiving interface's count, read on demand.
pub struct Quiet {
    probe: Probe,
    /// Count what the interface sent ([`RxConfig::sent`]).
    sent: bool,
}

impl Quiet {
    /// Opens the receiving interface of `cfg`, in its namespace (before the traffic: opening
    /// costs a thread).
    pub fn open(cfg: &RxConfig) -> anyhow::Result<Quiet> {
        Ok(Quiet {
            probe: Probe::open(&cfg.iface)?,
            sent: cfg.sent,
        })
    }

    /// The interface's packet count now (since it came up).
    pub fn count(&mut self) -> anyhow::Result<u64> {
        let stats = self
            .probe
            .read()
            .context("reading the receiving interface's counters")?;
        Ok(match self.sent {
            true => stats.tx_packets,
            false => stats.rx_packets,
        })
    }

    /// Reads the count every `step` until two reads in a row agree, for at most `cap`; true
    /// when it stopped moving, false when `cap` ran out first.
    pub fn wait(&mut self, step: Duration, cap: Duration) -> anyhow::Result<bool> {
        settle(|| self.count(), step, cap, std::thread::sleep)
    }
}

/// Reads `read` every `step` (sleeping with `sleep`) until two reads in a row agree, `cap`
/// at most; true when they agreed.
fn settle(
    mut read: impl FnMut() -> anyhow::Result<u64>,
    step: Duration,
    cap: Duration,
    mut sleep: impl FnMut(Duration),
) -> anyhow::Result<bool> {
    let steps = (cap.as_nanos() / step.as_nanos().max(1)).max(1);
    let mut last = read()?;
    for _ in 0..steps {
        sleep(step);
        let now = read()?;
        if now == last {
            return Ok(true);
        }
        last = now;
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `settle` over `counts` (the last one repeats), 20 ms steps, a 200 ms cap; returns
    /// whether it settled and how long it slept.
    fn run(counts: &[u64]) -> (bool, Duration) {
        let mut reads = counts.iter().copied();
        let last = *counts.last().unwrap();
        let mut slept = Duration::ZERO;
        let settled = settle(
            || Ok(reads.next().unwrap_or(last)),
            Duration::from_millis(20),
            Duration::from_millis(200),
            |d| slept += d,
        )
        .unwrap();
        (settled, slept)
    }

    #[test]
    fn a_count_that_stopped_settles_after_one_step() {
        assert_eq!(run(&[500]), (true, Duration::from_millis(20)));
    }

    #[test]
    fn packets_still_arriving_are_waited_for() {
        assert_eq!(
            run(&[100, 400, 500, 500]),
            (true, Duration::from_millis(60))
        );
    }

    #[test]
    fn a_count_that_keeps_moving_waits_the_cap_and_says_so() {
        let moving: Vec<u64> = (0..100).collect();
        assert_eq!(run(&moving), (false, Duration::from_millis(200)));
    }

    #[test]
    fn a_failed_read_is_an_error_not_a_settled_count() {
        let failed = settle(
            || anyhow::bail!("gone"),
            Duration::from_millis(20),
            Duration::from_millis(200),
            |_| {},
        );
        assert!(failed.is_err());
    }
}
