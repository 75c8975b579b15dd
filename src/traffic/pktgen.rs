//! netmap pkt-gen as a generator and receiver: its command lines built from a traffic profile
//! (as argv, so IPv6 ranges need none of the old harness's `"\"[…]\""` quoting), and its output
//! read by [`log`], which archived netbenches logs are read with too.
//!
//! The shape is the seeds' labs' (notes §2.3): `pkt-gen -f tx -N -i IF -n COUNT -l SIZE-4 -4|-6
//! -d RANGE -D DUTMAC -s RANGE [-S SRCMAC] -w 2`. pkt-gen's `-l` excludes the 4-byte FCS, so a
//! profile's 64-byte frame is `-l 60`. pkt-gen stops after a packet count, not a duration: the
//! count is the trial's duration times the rate (line rate when the profile says `max`).
//!
//! [`log`]: crate::traffic::pktgen::log

use super::endpoint::Load;
use super::packet::Family;
use log::Second;

/// pkt-gen as a trial's sender and receiver on remote hosts.
pub(crate) mod endpoint;
/// pkt-gen's output read: per-second lines, packets sent, the closing speed.
pub(crate) mod log;

/// The Ethernet FCS, counted in a profile's frame size but not in pkt-gen's `-l`.
const FCS: u32 = 4;

/// A pkt-gen sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PktgenTx {
    /// The netmap interface.
    pub(crate) iface: String,
    /// Packets to send (`-n`).
    pub(crate) count: u64,
    /// Frame size with FCS, as in the profile (64…1518).
    pub(crate) frame_size: u32,
    /// `-4`/`-6`; `None` leaves it to pkt-gen (older labs did).
    pub af: Option<Family>,
    /// Source range, pkt-gen syntax.
    pub(crate) src: String,
    /// Destination range, pkt-gen syntax.
    pub(crate) dst: String,
    /// The DUT's MAC (`-D`).
    pub(crate) dut_mac: String,
    /// The sender's MAC (`-S`), when pkt-gen should not use 00:00:00:00:00:00.
    pub(crate) src_mac: Option<String>,
    /// A fixed rate in packets per second (`-R`); `None` sends as fast as it can.
    pub(crate) rate: Option<u64>,
    /// Seconds pkt-gen waits for the link after opening it in netmap mode (`-w`).
    pub wait_s: u32,
    /// `-N`: raw figures (`1488125 pps`, not `1.49 Mpps`) in its output, as the seeds' igb labs.
    pub no_normalize: bool,
    /// Further options, after the others (the seeds' labs passed `-U`).
    pub extra: Vec<String>,
}

impl PktgenTx {
    /// A sender of `load` out of `iface` towards `dut_mac`, sending `count` packets.
    pub fn from_load(load: &Load, iface: &str, dut_mac: &str, count: u64) -> Self {
        Self {
            iface: iface.to_string(),
            count,
            frame_size: load.frame_size,
            af: Some(load.af),
            src: load.src.clone(),
            dst: load.dst.clone(),
            dut_mac: dut_mac.to_string(),
            src_mac: None,
            rate: load.pps(),
            wait_s: 2,
            no_normalize: true,
            extra: Vec::new(),
        }
    }

    /// The command line.
    pub fn argv(&self) -> Vec<String> {
        let mut argv: Vec<String> = vec!["pkt-gen".into(), "-f".into(), "tx".into()];
        if self.no_normalize {
            argv.push("-N".into());
        }
        argv.extend([
            "-i".into(),
            self.iface.clone(),
            "-n".into(),
            self.count.to_string(),
            "-l".into(),
            self.frame_size.saturating_sub(FCS).to_string(),
        ]);
        match self.af {
            Some(Family::Inet4) => argv.push("-4".into()),
            Some(Family::Inet6) => argv.push("-6".into()),
            None => {}
        }
        argv.extend([
            "-d".into(),
            self.dst.clone(),
            "-D".into(),
            self.dut_mac.clone(),
            "-s".into(),
            self.src.clone(),
        ]);
        if let Some(mac) = &self.src_mac {
            argv.extend(["-S".into(), mac.clone()]);
        }
        if let Some(rate) = self.rate {
            argv.extend(["-R".into(), rate.to_string()]);
        }
        argv.extend(["-w".into(), self.wait_s.to_string()]);
        argv.extend(self.extra.iter().cloned());
        argv
    }
}

/// A pkt-gen receiver: `pkt-gen [-N] -f rx -i IF -w W`, stopped with SIGTERM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PktgenRx {
    /// The netmap interface.
    pub iface: String,
    /// Seconds to wait for the link (`-w`).
    pub wait_s: u32,
    /// `-N`, as for the sender.
    pub no_normalize: bool,
}

impl PktgenRx {
    /// The command line.
    pub fn argv(&self) -> Vec<String> {
        let mut argv: Vec<String> = vec!["pkt-gen".into()];
        if self.no_normalize {
            argv.push("-N".into());
        }
        argv.extend([
            "-f".into(),
            "rx".into(),
            "-i".into(),
            self.iface.clone(),
            "-w".into(),
            self.wait_s.to_string(),
        ]);
        argv
    }
}

/// Packets a sender needs to last `seconds` at `pps`.
pub(crate) fn count_for(seconds: f64, pps: f64) -> u64 {
    (seconds * pps).ceil().max(1.0) as u64
}

/// The per-second lines of a pkt-gen run (sender or receiver).
pub fn per_second(output: &str) -> Vec<Second> {
    log::seconds(output)
}

/// What a finished pkt-gen sender reported: packets sent and its average rate (`Speed:`).
pub fn sender_summary(output: &str) -> (Option<u64>, Option<f64>) {
    (log::sent_packets(output), log::speed_pps(output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fcs_is_not_in_pktgens_size_and_the_mac_options_follow_the_ranges() {
        let load = Load {
            af: Family::Inet6,
            src: "[2001:2::1]:2000-[2001:2::14]".into(),
            dst: "[2001:3::1]:2000-[2001:3::64]".into(),
            frame_size: 66,
            rate: crate::traffic::Rate::Max,
            seconds: 1.0,
        };
        let mut tx = PktgenTx::from_load(&load, "ix0", "00:07:43:2e:e4:70", 1000);
        tx.src_mac = Some("0c:c4:7a:ab:29:35".into());
        let line = tx.argv().join(" ");
        assert!(
            line.starts_with("pkt-gen -f tx -N -i ix0 -n 1000 -l 62 -6 -d "),
            "{line}"
        );
        assert!(line.ends_with(" -S 0c:c4:7a:ab:29:35 -w 2"), "{line}");
        let rx = PktgenRx {
            iface: "igb3".into(),
            wait_s: 4,
            no_normalize: true,
        };
        assert_eq!(rx.argv().join(" "), "pkt-gen -N -f rx -i igb3 -w 4");
        assert_eq!(count_for(60.0, 1_488_095.0), 89_285_700);
    }
}
