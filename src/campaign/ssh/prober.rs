//! The latency probes of a lab over SSH: `benchlab probe --json` on the one host that sends
//! the load and receives it (the 2-node layout), out of the first sender's interface toward the
//! DUT and back in by the receiver's, both stamps on that host's clock. Its last line carries
//! every probe's send time and latency, read back as
//! [`Probes`](crate::traffic::latency::Probes) exactly.

use std::time::Duration;

use anyhow::Context as _;

use crate::campaign::trial::Prober;
use crate::clock::unix_now;
use crate::traffic::endpoint::{Load, StopReason};
use crate::traffic::latency::Probes;
use crate::traffic::remote::{frame_argv, RemoteNode, RemoteRun};
use crate::traffic::wire::{parse_lines, ProbeLine};
use crate::transport::display_argv;

/// How far the probing host's clock may be from this one's, in seconds. The probes are cut
/// into the trial's seconds by their send times, on that host's clock, while the trial's start
/// is this one's: a host a second off (no NTP) would put them in other seconds, or in none.
/// A second is also far beyond what reading its first line takes (a poll and an SSH hop).
const CLOCK_SKEW_S: f64 = 1.0;

/// `benchlab probe` run over SSH for each trial.
pub(crate) struct RemoteProber {
    /// The probing host and its `benchlab`.
    node: RemoteNode,
    /// The frames' arguments: the first sender's interface and DUT MAC, the profile's flows
    /// (the probes take the first, first-packet probes none of them) and frame size.
    frames: Vec<String>,
    /// Where the probes arrive: the receiver's interface, on the same host.
    receive: String,
    /// The probe while it runs.
    run: Option<RemoteRun>,
}

impl RemoteProber {
    /// Probes from `node` among the frames of `load`, read on `receive` of the same host.
    pub(crate) fn new(node: RemoteNode, load: &Load, receive: String) -> Self {
        Self {
            frames: frame_argv(&node, load),
            node,
            receive,
            run: None,
        }
    }
}

/// The `started` line's clock, once the probe (`argv` on `host`) printed it in `out`.
fn started(host: &str, argv: &[String], out: &[u8]) -> anyhow::Result<Option<f64>> {
    let lines: Vec<ProbeLine> = parse_lines(out, host, argv)?;
    Ok(lines.iter().find_map(|l| match l {
        ProbeLine::Started { unix_s } => Some(*unix_s),
        ProbeLine::Probes(_) => None,
    }))
}

impl Prober for RemoteProber {
    fn start(&mut self, rate_pps: u64, limit: Duration) -> anyhow::Result<()> {
        let mut argv = vec![
            self.node.benchlab.clone(),
            "probe".into(),
            "--json".into(),
            "--first-packet".into(),
        ];
        argv.extend(self.frames.iter().cloned());
        argv.extend([
            "-R".into(),
            self.receive.clone(),
            "-r".into(),
            rate_pps.to_string(),
            "-t".into(),
            limit.as_secs_f64().to_string(),
        ]);
        // Unpinned: the sender's `cpu` is its generator's, busy sending the load, behind which
        // the probes would wait.
        let mut run = RemoteRun::new(self.node.host.clone(), argv);
        run.spawn()?;
        let (host, argv) = (run.host.host().to_owned(), run.argv.clone());
        run.wait_ready(&|out| Ok(started(&host, &argv, out)?.is_some()))?;
        let remote =
            started(&host, &argv, &run.stdout()?)?.context("the probe printed no start")?;
        let skew = (unix_now() - remote).abs();
        // Kept before the check: the probe is stopped with the prober, whatever happens.
        self.run = Some(run);
        anyhow::ensure!(
            skew <= CLOCK_SKEW_S,
            "{host}'s clock is {skew:.1} s off this host's: its probes' send times would fall in \
             other seconds of the trial; synchronise the clocks (NTP)"
        );
        Ok(())
    }

    fn finish(&mut self) -> anyhow::Result<Probes> {
        let mut run = self.run.take().context("the probes were not started")?;
        run.stop(StopReason::TimeUp)?;
        let out = run.out.as_ref().context("the probe left no output")?;
        if !out.success() {
            return Err(run.failure());
        }
        let lines: Vec<ProbeLine> = parse_lines(&out.stdout, run.host.host(), &run.argv)?;
        lines
            .into_iter()
            .rev()
            .find_map(|l| match l {
                ProbeLine::Probes(p) => Some(*p),
                ProbeLine::Started { .. } => None,
            })
            .with_context(|| {
                format!(
                    "{}: `{}` printed no results",
                    run.host.host(),
                    display_argv(&run.argv)
                )
            })
    }
}
