//! trafgen on a remote sender, as a trial's [`Sender`]: its configuration written to a scratch
//! file there, `timeout -s INT` bounding the run, and — trafgen printing nothing per second —
//! `benchlab rx --tx --json` counting what its interface sent, from trafgen's start to its end.
//!
//! [`Sender`]: crate::traffic::endpoint::Sender

use std::time::Duration;

use anyhow::Context;

use super::{TrafgenTx, TIMED_OUT};
use crate::error::InputError;
use crate::traffic::endpoint::{
    file_name, Load, Sender, SenderRecord, SenderState, StopReason, Tick,
};
use crate::traffic::packet::FrameSpec;
use crate::traffic::remote::generator::RemoteGenerator;
use crate::traffic::remote::{json_ticks, read_ready, RemoteFile, RemoteNode, RemoteRun};

/// trafgen is stopped by `timeout` at the end of the trial; benchlab stops it only this late.
const GRACE: Duration = Duration::from_secs(60);

/// trafgen's sender for `node`, sending `load` with frames from `src_mac`.
pub(crate) fn trafgen_tx(
    node: &RemoteNode,
    load: &Load,
    src_mac: &str,
) -> Result<TrafgenTx, InputError> {
    let spec = FrameSpec::new(
        src_mac.parse()?,
        node.dut_mac.parse()?,
        load.src.parse()?,
        load.dst.parse()?,
        load.frame_size as usize,
    )?;
    Ok(TrafgenTx {
        iface: node.iface.clone(),
        spec,
        rate: load.pps(),
        cpu: node.cpu.unwrap_or(0),
    })
}

/// netsniff-ng's trafgen on the senders (Linux), counted by `benchlab rx --tx` there and by
/// `benchlab rx` on the receiver.
pub(crate) struct Trafgen;

impl RemoteGenerator for Trafgen {
    fn name(&self) -> &'static str {
        "trafgen"
    }

    fn label(&self) -> &'static str {
        "trafgen"
    }

    fn sender(&self, node: &RemoteNode, load: &Load, k: usize, of: usize) -> Box<dyn Sender> {
        Box::new(TrafgenSender::new(node, load, k, of))
    }

    fn pins_cpu(&self) -> bool {
        true
    }

    fn check(&self, node: &RemoteNode, load: &Load) -> Result<(), InputError> {
        // Any MAC will do as the source here: the frames' MACs do not change their count.
        trafgen_tx(node, load, &node.dut_mac)?.config().map(drop)
    }
}

/// trafgen on a remote sender, counted by its interface's counters.
#[derive(Debug)]
pub(crate) struct TrafgenSender {
    node: RemoteNode,
    load: Load,
    /// Which of `of` senders it is, for its file names.
    k: usize,
    of: usize,
    /// Its configuration on the sender (removed when dropped) and as text.
    config: Option<(RemoteFile, String)>,
    gen: Option<RemoteRun>,
    counter: Option<RemoteRun>,
    /// The counter's seconds before trafgen started (not the trial's).
    skip: usize,
    /// The counter's seconds up to the one in which trafgen ended.
    end: Option<usize>,
}

impl TrafgenSender {
    /// Sender `k` of `of`, sending `load` from `node`.
    pub(crate) fn new(node: &RemoteNode, load: &Load, k: usize, of: usize) -> Self {
        Self {
            node: node.clone(),
            load: load.clone(),
            k,
            of,
            config: None,
            gen: None,
            counter: None,
            skip: 0,
            end: None,
        }
    }

    fn gen(&mut self) -> anyhow::Result<&mut RemoteRun> {
        self.gen.as_mut().context("trafgen was not prepared")
    }

    /// The counter's seconds so far.
    fn counter_ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        let counter = self.counter.as_mut().context("trafgen was not prepared")?;
        let out = counter.stdout()?;
        json_ticks(counter, &out, true)
    }

    /// Records the second in which trafgen ended: the one in progress holds its last packets.
    fn note_end(&mut self) -> anyhow::Result<()> {
        if self.end.is_none() {
            self.end = Some(self.counter_ticks()?.len() + 1);
        }
        Ok(())
    }

    /// The counter's seconds from trafgen's start to its end.
    fn window(&self, all: Vec<Tick>) -> Vec<Tick> {
        let end = self.end.unwrap_or(all.len()).min(all.len());
        all[self.skip.min(end)..end].to_vec()
    }
}

impl Sender for TrafgenSender {
    fn prepare(&mut self) -> anyhow::Result<()> {
        let host = self.node.host.clone();
        let mac_file = format!("/sys/class/net/{}/address", self.node.iface);
        let src_mac = host.run(&["cat", &mac_file])?;
        let tx = trafgen_tx(&self.node, &self.load, src_mac.trim())?;
        let text = tx.config()?;
        let file = RemoteFile::create(&host, "trafgen", text.as_bytes())
            .context("writing trafgen's configuration")?;
        self.gen = Some(RemoteRun::new(
            host.clone(),
            tx.argv(&file.path, self.load.seconds),
        ));
        self.config = Some((file, text));
        let mut argv = vec![self.node.benchlab.clone()];
        argv.extend(["rx", "--tx", "--json", "-i"].map(String::from));
        argv.push(self.node.iface.clone());
        let mut counter = RemoteRun::new(host, argv);
        counter.spawn().context("starting the sender's counter")?;
        let ready = read_ready(&counter);
        counter
            .wait_ready(&ready)
            .context("starting the sender's counter")?;
        self.counter = Some(counter);
        Ok(())
    }

    fn start(&mut self) -> anyhow::Result<()> {
        self.skip = self.counter_ticks()?.len();
        self.gen()?.spawn()
    }

    fn state(&mut self) -> anyhow::Result<SenderState> {
        let gen = self.gen()?;
        let stopped = gen.stopped.is_some();
        let state = match gen.poll()? {
            None => return Ok(SenderState::Running),
            Some(out) if !stopped && matches!(out.status, Some(0 | TIMED_OUT)) => {
                SenderState::Ended
            }
            Some(_) => SenderState::Failed { stopped },
        };
        self.note_end()?;
        Ok(state)
    }

    fn ticks(&mut self) -> anyhow::Result<Vec<Tick>> {
        let all = self.counter_ticks()?;
        Ok(self.window(all))
    }

    fn grace(&self) -> Duration {
        GRACE
    }

    fn stop(&mut self, why: StopReason) -> anyhow::Result<()> {
        self.gen()?.stop(why)?;
        self.note_end()
    }

    fn failure(&self) -> anyhow::Error {
        match &self.gen {
            Some(gen) => gen.failure(),
            None => anyhow::anyhow!("trafgen was not prepared"),
        }
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<SenderRecord> {
        let mut counter = self.counter.take().context("trafgen was not prepared")?;
        let host = counter.host.host().to_string();
        counter
            .stop(StopReason::TimeUp)
            .with_context(|| format!("stopping the counter on {host}"))?;
        let out = counter.stdout()?;
        let all = json_ticks(&mut counter, &out, true)?;
        let ticks = self.window(all);
        let log = self.gen()?.log();
        let name = |ext| file_name("generator", ext, self.k, self.of);
        let config = self.config.take().map(|(_, text)| text).unwrap_or_default();
        Ok(SenderRecord {
            ticks,
            description: format!("trafgen on {host}"),
            files: vec![
                (name("jsonl"), String::from_utf8_lossy(&out).into_owned()),
                (name("log"), log),
                (name("trafgen"), config),
            ],
            late_pkts: 0,
        })
    }
}
