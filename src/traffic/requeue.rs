//! The DUT's input queue, held by the generator ([`crate::traffic::GenConfig::input_queue`]):
//! frames the interface refused are sent again once it takes frames, as a NIC's receive ring
//! would have held them.
//!
//! Why: veth's ring holds 256 frames, half a millisecond at 500 Kpps, and on a cloud VM the
//! hypervisor takes the DUT's CPU away for 3–20 ms at a time (`lab::stall`); a NIC's ring holds
//! thousands. The frames still enter the DUT as a NIC's DMA fills its ring: redirected into
//! veth's, the DUT's CPU building the skb and doing nothing else for the sender. (The model
//! before this one, a qdisc in front of the ring, had the DUT's CPU refill the ring from the
//! qdisc: 16–17 % of it while backlogged, so a DUT set back by a stall forwarded less and did
//! not catch up.)
//!
//! How: veth counts the frames its peer's full ring refused as the sender's `tx_dropped`. The
//! monitor reads it every [`POLL`]; refused frames are held (up to [`BUFFER_FRAMES`]) and, after
//! a look with no new refusal, owed back to the XDP program [`RELEASE`] at a time
//! ([`XdpCounter::owe`]), which sends them before any new frame. When the traffic stops (the
//! monitor's [`look`] at its limit) no new frame goes, and what is held beyond the ring it stands for is
//! dropped, as that ring would have dropped it: a backlog the DUT works off before the stop
//! costs nothing. The rest is sent, and the run ends once nothing is held or owed and nothing
//! was refused for [`QUIET`], or after [`DRAIN`].
//!
//! Counts: the frames lost are those refused and never sent again, the interface's refusals
//! minus the program's resent count, read once the sending thread is back: exact.
//!
//! [`XdpCounter::owe`]: crate::traffic::xdp::XdpCounter::owe
//! [`look`]: crate::traffic::requeue::look
//! [`POLL`]: crate::traffic::requeue::POLL
//! [`RELEASE`]: crate::traffic::requeue::RELEASE
//! [`BUFFER_FRAMES`]: crate::traffic::requeue::BUFFER_FRAMES
//! [`QUIET`]: crate::traffic::requeue::QUIET
//! [`DRAIN`]: crate::traffic::requeue::DRAIN

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::netlink::Netlink;
use super::xdp::XdpCounter;

/// How often the monitor reads the refusals while it holds the queue: veth's ring fills in half
/// a millisecond at 500 Kpps, so the queue releases frames no later than a ring's time after.
pub(crate) const POLL: Duration = Duration::from_millis(1);
/// Frames owed back per look: veth's ring, so that a release fits an empty ring.
pub(crate) const RELEASE: u64 = 256;
/// Frames held at most while the traffic runs: 100 ms at 655 Kpps. Deeper than the ring it
/// stands for, so that a backlog the DUT works off within the trial costs nothing; beyond it,
/// refused frames are lost.
pub(crate) const BUFFER_FRAMES: u64 = 65_536;
/// Time without a refusal after which the sent-again frames are in: the kernel hands frames to
/// the interface a batch at a time, and a batch at the limit takes up to a millisecond or two.
pub(crate) const QUIET: Duration = Duration::from_millis(3);
/// Longest the run goes on after the stop to send what is held: 4,096 frames take under 20 ms
/// at the release rate, so only a DUT stalled at the stop still holds frames then.
pub(crate) const DRAIN: Duration = Duration::from_millis(200);

/// The queue: the interface's refusals, the frames held and owed, and the stop.
pub(crate) struct Requeue {
    counter: XdpCounter,
    /// A socket in the sender's namespace, to read the interface's `tx_dropped`.
    netlink: Netlink,
    ifindex: u32,
    /// Frames held beyond this at the stop are dropped.
    ring: u64,
    /// `tx_dropped` when the run started.
    base: u64,
    /// Refusals seen so far.
    refused: u64,
    /// Refused frames not yet owed back.
    held: u64,
    /// When a frame was last refused.
    last_refusal: Instant,
    /// When the traffic stopped and the frames held or owed then.
    closed: Option<(Instant, u64)>,
}

/// What the queue did, once the run is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Held {
    /// When the traffic stopped (the limit or a stop), before the drain.
    pub(crate) stopped: Instant,
    /// Frames held or owed when the traffic stopped: the DUT's backlog beyond veth's ring.
    pub(crate) queued_at_stop: u64,
    /// Frames refused and never sent again.
    pub(crate) lost: u64,
}

/// One look of the generator's monitor, `over` once the traffic is due to stop: whether the
/// run may end. At its limit the traffic stops, and the run goes on until the queue drained.
pub(crate) fn look(queue: &Mutex<Requeue>, over: bool) -> bool {
    let mut queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
    queue.step();
    if over && !queue.drained() {
        queue.close();
        return false;
    }
    over
}

impl Requeue {
    /// A queue for interface `ifindex` in front of `counter`'s program, standing for a ring of
    /// `ring` frames; must run in the interface's namespace (its netlink socket is opened there).
    pub(crate) fn new(counter: XdpCounter, ifindex: u32, ring: u64) -> std::io::Result<Requeue> {
        let mut netlink = Netlink::route()?;
        let base = netlink.link_by_index(ifindex)?.stats.tx_dropped;
        Ok(Requeue {
            counter,
            netlink,
            ifindex,
            ring,
            base,
            refused: 0,
            held: 0,
            last_refusal: Instant::now(),
            closed: None,
        })
    }

    /// One look: holds the new refusals and, when there were none, owes some back. A failed
    /// read skips the look.
    fn step(&mut self) {
        let Ok(refused) = self.read() else {
            return;
        };
        let new = refused.saturating_sub(self.refused);
        self.refused = refused;
        if new > 0 {
            self.held += new;
            self.last_refusal = Instant::now();
        } else if self.held > 0 {
            let release = self.held.min(RELEASE);
            self.counter.owe(release);
            self.held -= release;
        }
        self.trim();
    }

    /// Drops what the queue holds beyond its depth: its buffer while the traffic runs; after
    /// the stop the ring, owed frames included (frames sent just before the stop may be
    /// refused after it: the kernel hands them over a batch at a time). Dropped frames count
    /// lost at the end (refused, never sent again).
    fn trim(&mut self) {
        let depth = match self.closed {
            Some(_) => self.ring.saturating_sub(self.counter.owed()),
            None => BUFFER_FRAMES,
        };
        self.held = self.held.min(depth);
    }

    /// Frames held or owed: the DUT's backlog beyond veth's ring.
    fn backlog(&self) -> u64 {
        self.held + self.counter.owed()
    }

    /// The traffic stops now (once: later calls do nothing): no new frame, and what is held
    /// beyond the ring is dropped.
    fn close(&mut self) {
        if self.closed.is_some() {
            return;
        }
        self.counter.close();
        self.closed = Some((Instant::now(), self.backlog()));
        self.trim();
    }

    /// Whether the traffic was stopped and the run may end: everything held was sent and is in,
    /// or [`DRAIN`] is over.
    fn drained(&self) -> bool {
        self.closed.is_some_and(|(at, _)| {
            let empty = self.held == 0 && self.counter.owed() == 0;
            (empty && self.last_refusal.elapsed() >= QUIET) || at.elapsed() >= DRAIN
        })
    }

    /// The queue's account, once the sending thread is back (a run stopped before its limit
    /// stopped now).
    pub(crate) fn finish(&mut self) -> std::io::Result<Held> {
        let refused = self.read()?;
        let (stopped, queued_at_stop) = self
            .closed
            .unwrap_or_else(|| (Instant::now(), self.backlog()));
        Ok(Held {
            stopped,
            queued_at_stop,
            lost: refused.saturating_sub(self.counter.resent()),
        })
    }

    /// The interface's refusals since the run started.
    fn read(&mut self) -> std::io::Result<u64> {
        let link = self.netlink.link_by_index(self.ifindex)?;
        Ok(link.stats.tx_dropped.saturating_sub(self.base))
    }
}
