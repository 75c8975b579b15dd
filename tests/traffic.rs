//! The generator and the receiver on real namespaces: sender → DUT (Linux forwarding) → receiver.
//!
//! Needs root (CI runs the tests as root); without it every test says so and passes. Each test
//! builds its own lab in namespaces `bltraffic-t<pid>x<n>-*`, removed by a Drop guard even when
//! the test fails.
// FFI in the test only: an AF_PACKET capture socket and kill(2) for Ctrl-C.
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use benchlab::traffic::packet::{build_frame, FlowPos, FrameSpec, Mac};
use benchlab::traffic::receiver::{Receiver, RxConfig};
use benchlab::traffic::{self, os, Engine, GenConfig, IfRef, Limit, Rate, TxSummary};

fn root() -> bool {
    if os::is_root() {
        return true;
    }
    eprintln!("skipped: needs root (network namespaces)");
    false
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("running ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn in_ns(ns: &str, cmd: &[&str]) -> String {
    let out = Command::new("ip")
        .args(["netns", "exec", ns])
        .args(cmd)
        .output()
        .expect("running ip netns exec");
    assert!(
        out.status.success(),
        "{}: {}",
        cmd.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A three-node lab: sender ↔ DUT ↔ receiver; the DUT forwards 198.19.10.0/24 and
/// 2001:2:0:8010::/64 to the receiver, which counts and drops.
struct Lab {
    sender: String,
    dut: String,
    receiver: String,
    s0: String,
    r0: String,
    dut_mac: Mac,
    sender_mac: Mac,
}

impl Lab {
    fn up() -> Lab {
        static N: AtomicU32 = AtomicU32::new(0);
        let id = format!(
            "{}x{}",
            std::process::id() % 100_000,
            N.fetch_add(1, Ordering::Relaxed)
        );
        let p = format!("bltraffic-t{id}");
        let lab = Lab {
            sender: format!("{p}-sender"),
            dut: format!("{p}-dut"),
            receiver: format!("{p}-receiver"),
            s0: format!("blt{id}s"),
            r0: format!("blt{id}r"),
            dut_mac: Mac([0; 6]),
            sender_mac: Mac([0; 6]),
        };
        // From here on, Drop removes whatever was created.
        let mut lab = lab;
        let (d0, d1) = (format!("blt{id}a"), format!("blt{id}b"));
        for ns in [&lab.sender, &lab.dut, &lab.receiver] {
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }

        ip(&[
            "link",
            "add",
            &lab.s0,
            "netns",
            &lab.sender,
            "type",
            "veth",
            "peer",
            "name",
            &d0,
            "netns",
            &lab.dut,
        ]);
        ip(&[
            "link",
            "add",
            &d1,
            "netns",
            &lab.dut,
            "type",
            "veth",
            "peer",
            "name",
            &lab.r0,
            "netns",
            &lab.receiver,
        ]);
        // The receiver counts every packet: the DUT's egress gets no IPv6 address at all (no
        // DAD, no MLD reports), and reaches the receiver through static neighbours only.
        in_ns(
            &lab.dut,
            &[
                "sysctl",
                "-qw",
                &format!("net.ipv6.conf.{d1}.addr_gen_mode=1"),
            ],
        );
        for (ns, dev, a4, a6) in [
            (&lab.sender, &lab.s0, "198.18.0.1/16", "2001:2::1/64"),
            (&lab.dut, &d0, "198.18.0.2/16", "2001:2::2/64"),
            (&lab.dut, &d1, "198.19.0.2/16", ""),
            (
                &lab.receiver,
                &lab.r0,
                "198.19.0.1/16",
                "2001:2:0:8000::1/64",
            ),
        ] {
            ip(&["-n", ns, "addr", "add", a4, "dev", dev]);
            if !a6.is_empty() {
                ip(&["-n", ns, "addr", "add", a6, "dev", dev, "nodad"]);
            }
            ip(&["-n", ns, "link", "set", dev, "up"]);
        }
        // Frames cross the sender veth through the DUT's NAPI (needed by XDP frames).
        in_ns(&lab.sender, &["ethtool", "-K", &lab.s0, "tso", "off"]);
        in_ns(&lab.dut, &["ethtool", "-K", &d0, "gro", "on"]);
        in_ns(
            &lab.dut,
            &[
                "sysctl",
                "-qw",
                "net.ipv4.ip_forward=1",
                "net.ipv6.conf.all.forwarding=1",
            ],
        );
        in_ns(
            &lab.dut,
            &[
                "sysctl",
                "-qw",
                "net.ipv4.conf.all.rp_filter=0",
                &format!("net.ipv4.conf.{d0}.rp_filter=0"),
            ],
        );
        let rmac = in_ns(
            &lab.receiver,
            &["cat", &format!("/sys/class/net/{}/address", lab.r0)],
        );
        ip(&[
            "-n",
            &lab.dut,
            "route",
            "add",
            "198.19.10.0/24",
            "via",
            "198.19.0.1",
        ]);
        ip(&[
            "-n",
            &lab.dut,
            "neigh",
            "replace",
            "198.19.0.1",
            "lladdr",
            &rmac,
            "dev",
            &d1,
            "nud",
            "permanent",
        ]);
        ip(&[
            "-n",
            &lab.dut,
            "-6",
            "route",
            "add",
            "2001:2:0:8010::/64",
            "via",
            "fe80::1",
            "dev",
            &d1,
        ]);
        ip(&[
            "-n",
            &lab.dut,
            "-6",
            "neigh",
            "replace",
            "fe80::1",
            "lladdr",
            &rmac,
            "dev",
            &d1,
            "nud",
            "permanent",
        ]);
        lab.dut_mac = in_ns(&lab.dut, &["cat", &format!("/sys/class/net/{d0}/address")])
            .parse()
            .unwrap();
        lab.sender_mac = traffic::interface_mac(&lab.sender_if()).unwrap();
        lab.settle();
        lab
    }

    /// Waits until the links' own start-up chatter (IPv6 DAD, MLD reports) is over, so that
    /// the receiver counts nothing but test traffic: its counter still for 1.5 s.
    fn settle(&self) {
        let counter = format!("/sys/class/net/{}/statistics/rx_packets", self.r0);
        let (mut last, mut still_since) = (String::new(), Instant::now());
        let deadline = Instant::now() + Duration::from_secs(8);
        while Instant::now() < deadline {
            let now = in_ns(&self.receiver, &["cat", &counter]);
            if now != last {
                (last, still_since) = (now, Instant::now());
            } else if still_since.elapsed() >= Duration::from_millis(1500) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn sender_if(&self) -> IfRef {
        IfRef {
            netns: Some(self.sender.clone()),
            name: self.s0.clone(),
        }
    }

    fn receiver_if(&self) -> IfRef {
        IfRef {
            netns: Some(self.receiver.clone()),
            name: self.r0.clone(),
        }
    }

    fn spec(&self, src: &str, dst: &str, size: usize) -> FrameSpec {
        FrameSpec::new(
            self.sender_mac,
            self.dut_mac,
            src.parse().unwrap(),
            dst.parse().unwrap(),
            size,
        )
        .unwrap()
    }

    fn gen(&self, spec: FrameSpec, rate: Rate, limit: Limit, engine: Engine) -> GenConfig {
        GenConfig {
            rate,
            limit,
            engine,
            ..GenConfig::new(self.sender_if(), spec)
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in [&self.sender, &self.dut, &self.receiver] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

const V4_2000: (&str, &str) = (
    "198.18.10.1:2000-198.18.10.20",
    "198.19.10.1:2000-198.19.10.100",
);
const V6_2000: (&str, &str) = (
    "[2001:2:0:10::1]-[2001:2:0:10::14]",
    "[2001:2:0:8010::1]-[2001:2:0:8010::64]",
);
const V4_1: (&str, &str) = ("198.18.10.1:2000", "198.19.10.1:2000");
const V6_1: (&str, &str) = ("[2001:2:0:10::1]", "[2001:2:0:8010::1]");

/// Runs a generator to its end; returns its summary and the packets the receiver counted.
fn trial(lab: &Lab, cfg: GenConfig) -> (TxSummary, u64) {
    let rx = Receiver::start(RxConfig::new(lab.receiver_if())).unwrap();
    let mut g = traffic::builtin(cfg).unwrap();
    g.start().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !g.is_finished() {
        assert!(Instant::now() < deadline, "the generator did not finish");
        g.next_sample(Duration::from_millis(50));
    }
    let summary = g.stop().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let series = rx.stop().unwrap();
    (summary, series.samples.last().map_or(0, |s| s.rx_pkts))
}

#[test]
fn fixed_count_arrives_complete_v4_v6_1_and_2000_flows_both_engines() {
    if !root() {
        return;
    }
    let lab = Lab::up();
    for engine in [Engine::Xdp, Engine::Packet] {
        for ((src, dst), size) in [(V4_1, 64), (V4_2000, 64), (V6_1, 66), (V6_2000, 66)] {
            let n = 20_000;
            let cfg = lab.gen(
                lab.spec(src, dst, size),
                Rate::Pps(50_000),
                Limit::Count(n),
                engine,
            );
            let (sent, received) = trial(&lab, cfg);
            assert_eq!(sent.engine, engine);
            assert_eq!(
                (sent.tx_pkts, sent.interrupted),
                (n, false),
                "{engine} {src}"
            );
            assert_eq!(received, n, "{engine} {src} -> {dst}: received");
        }
    }
}

/// RFC 1071, written again here so that the check does not trust the code it checks.
fn csum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in data.chunks(2) {
        sum += (u32::from(pair[0]) << 8) + u32::from(*pair.get(1).unwrap_or(&0));
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Opens a capture socket on the receiver's interface (all protocols).
fn capture(lab: &Lab) -> OwnedFd {
    let name = lab.r0.clone();
    os::in_netns(Some(&lab.receiver), move || {
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: plain socket(2) call; the descriptor is owned right after.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(proto)) };
        assert!(
            fd >= 0,
            "capture socket: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: fd is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let cname = std::ffi::CString::new(name).unwrap();
        // SAFETY: cname is a valid C string; sll is plain data passed with its size; the
        // option values are live ints and timevals passed with their sizes.
        unsafe {
            let mut sll: libc::sockaddr_ll = std::mem::zeroed();
            sll.sll_family = libc::AF_PACKET as u16;
            sll.sll_protocol = proto;
            sll.sll_ifindex = libc::if_nametoindex(cname.as_ptr()) as i32;
            let size = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            assert_eq!(
                libc::bind(
                    fd.as_raw_fd(),
                    (&sll as *const libc::sockaddr_ll).cast(),
                    size
                ),
                0
            );
            let buf: libc::c_int = 8 << 20;
            let int = std::mem::size_of::<libc::c_int>() as u32;
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&buf as *const libc::c_int).cast(),
                int,
            );
            let tv = libc::timeval {
                tv_sec: 1,
                tv_usec: 0,
            };
            let tvs = std::mem::size_of::<libc::timeval>() as u32;
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                tvs,
            );
        }
        Ok(fd)
    })
    .unwrap()
}

/// Receives the UDP frames of `spec`'s family until a timeout.
fn captured(fd: &OwnedFd, ethertype: u16, max: usize) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    let mut buf = vec![0u8; 2048];
    while frames.len() < max {
        // SAFETY: buf is a live writable buffer of buf.len() bytes.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n <= 0 {
            break;
        }
        let f = &buf[..n as usize];
        // The kernel's own frames of the family (an IPv6 interface's MLD reports, which come
        // when they will) are not the generator's: only UDP is.
        let udp = match ethertype {
            0x0800 => f.get(23) == Some(&17),
            _ => f.get(20) == Some(&17),
        };
        if f.len() >= 14 && u16::from_be_bytes([f[12], f[13]]) == ethertype && udp {
            frames.push(f.to_vec());
        }
    }
    frames
}

#[test]
fn frames_walk_the_documented_flows_with_valid_checksums() {
    if !root() {
        return;
    }
    let lab = Lab::up();
    for engine in [Engine::Xdp, Engine::Packet] {
        for ((src, dst), size, ethertype) in [
            (V4_2000, 64, 0x0800),
            (V6_2000, 66, 0x86dd),
            (V4_2000, 1518, 0x0800),
            // Again: the XDP engine's program, kept from the first run, starts its flows and
            // its count over.
            (V4_2000, 64, 0x0800),
        ] {
            let spec = lab.spec(src, dst, size);
            let fd = capture(&lab);
            let n = 300;
            let (sent, _) = trial(
                &lab,
                lab.gen(spec.clone(), Rate::Pps(10_000), Limit::Count(n), engine),
            );
            assert_eq!(sent.tx_pkts, n);
            let frames = captured(&fd, ethertype, n as usize);
            assert_eq!(frames.len(), n as usize, "{engine} {src}: frames captured");
            let mut pos = FlowPos::default();
            for f in &frames {
                let want = build_frame(&spec, pos);
                assert_eq!(
                    f.len(),
                    spec.frame_size - 4,
                    "{engine}: frame length (FCS excluded)"
                );
                let (l4, addrs) = if ethertype == 0x0800 {
                    assert_eq!(csum(&f[14..34]), 0, "{engine}: IPv4 header checksum");
                    assert_eq!(f[22], 63, "TTL after one router");
                    (34, 26..34)
                } else {
                    assert_eq!(f[21], 63, "hop limit after one router");
                    (54, 22..54)
                };
                // Addresses, ports, length, checksum and payload exactly as documented.
                assert_eq!(
                    f[addrs.clone()],
                    want[addrs.clone()],
                    "{engine}: addresses of {pos:?}"
                );
                assert_eq!(f[l4..], want[l4..], "{engine}: UDP of {pos:?}");
                let mut pseudo = f[addrs].to_vec();
                let udp_len = f.len() - l4;
                if ethertype == 0x0800 {
                    pseudo.extend_from_slice(&[0, 17]);
                    pseudo.extend_from_slice(&(udp_len as u16).to_be_bytes());
                } else {
                    pseudo.extend_from_slice(&(udp_len as u32).to_be_bytes());
                    pseudo.extend_from_slice(&[0, 0, 0, 17]);
                }
                pseudo.extend_from_slice(&f[l4..]);
                assert_eq!(csum(&pseudo), 0, "{engine}: UDP checksum of {pos:?}");
                pos = pos.next(&spec);
            }
        }
    }
}

#[test]
fn the_rate_limiter_spaces_a_fixed_count() {
    if !root() {
        return;
    }
    let lab = Lab::up();
    for engine in [Engine::Xdp, Engine::Packet] {
        let (n, pps) = (30_000u64, 30_000u64);
        let cfg = lab.gen(
            lab.spec(V4_2000.0, V4_2000.1, 64),
            Rate::Pps(pps),
            Limit::Count(n),
            engine,
        );
        let (sent, received) = trial(&lab, cfg);
        assert_eq!((sent.tx_pkts, received), (n, n), "{engine}");
        // Never faster than asked (a busy machine only makes it slower): at most one burst early.
        let shortest = (n - 64) as f64 / pps as f64;
        assert!(
            sent.elapsed_s >= shortest,
            "{engine}: {n} packets at {pps} pps took {} s",
            sent.elapsed_s
        );
        assert!(sent.elapsed_s < 30.0, "{engine}: took {} s", sent.elapsed_s);
    }
}

#[test]
fn a_duration_run_samples_every_second_and_stop_interrupts() {
    if !root() {
        return;
    }
    let lab = Lab::up();
    for engine in [Engine::Xdp, Engine::Packet] {
        let cfg = lab.gen(
            lab.spec(V4_1.0, V4_1.1, 64),
            Rate::Pps(20_000),
            Limit::Duration(Duration::from_millis(2200)),
            engine,
        );
        let mut g = traffic::builtin(cfg).unwrap();
        g.start().unwrap();
        let mut samples = Vec::new();
        while !g.is_finished() {
            samples.extend(g.next_sample(Duration::from_millis(50)));
        }
        let summary = g.stop().unwrap();
        samples.extend(std::iter::from_fn(|| g.next_sample(Duration::ZERO)));
        assert!(!summary.interrupted, "{engine}");
        assert!(
            summary.elapsed_s >= 2.1 && summary.elapsed_s < 10.0,
            "{engine}: {}",
            summary.elapsed_s
        );
        assert!(samples.len() >= 3, "{engine}: {samples:?}");
        assert!(
            (samples[0].t_s - 1.0).abs() < 0.5,
            "{engine}: first sample at {}",
            samples[0].t_s
        );
        assert_eq!(
            samples.last().unwrap().tx_pkts,
            summary.tx_pkts,
            "{engine}: the last sample is the total"
        );

        // Unlimited at full speed, stopped from outside.
        let cfg = lab.gen(
            lab.spec(V4_2000.0, V4_2000.1, 64),
            Rate::Max,
            Limit::Forever,
            engine,
        );
        let mut g = traffic::builtin(cfg).unwrap();
        g.start().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let summary = g.stop().unwrap();
        assert!(
            summary.interrupted && summary.tx_pkts > 0,
            "{engine}: {summary:?}"
        );
    }
}

fn benchlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_benchlab"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    // `gen` sending on `iface` from `src` to `dst`, then `rest`.
    let gen =
        |iface: &'static str, (src, dst): (&'static str, &'static str), rest: &[&'static str]| {
            let mut args = vec![
                "gen",
                "-i",
                iface,
                "-D",
                "02:00:00:00:00:02",
                "-s",
                src,
                "-d",
                dst,
            ];
            args.extend_from_slice(rest);
            args
        };
    let v4 = ("198.18.10.1", "198.19.10.1");
    let cases: Vec<Vec<&str>> = vec![
        gen("bltraffic-none0", v4, &["-n", "1"]),
        gen("bltraffic-nons/x", v4, &[]),
        gen("lo", ("198.18.10.20-198.18.10.1", "198.19.10.1"), &[]),
        gen("lo", ("198.18.10.1", "[2001:2::1]"), &[]),
        gen("lo", ("[2001:2::1]", "[2001:2::2]"), &["-l", "64"]),
        gen("lo", v4, &["-r", "fast"]),
        gen("lo", v4, &["--engine", "packet", "--input-queue", "4096"]),
        vec!["rx", "-i", "bltraffic-none0", "-t", "1"],
    ];
    for args in &cases {
        let out = benchlab(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        // One line says what is wrong (clap adds its usage hint after a flag it rejects).
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("benchlab: ") || first.starts_with("error: "),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr
                .lines()
                .filter(|l| l.starts_with("benchlab: ") || l.starts_with("error: "))
                .count()
                == 1
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn ctrl_c_stops_gen_and_rx_with_a_summary() {
    if !root() {
        return;
    }
    let lab = Lab::up();
    let sender = lab.sender_if().to_string();
    let receiver = lab.receiver_if().to_string();
    let dmac = lab.dut_mac.to_string();
    let gen_args = [
        "gen", "-i", &sender, "-D", &dmac, "-s", V4_2000.0, "-d", V4_2000.1, "-r", "10k", "--json",
    ];
    let children = [
        Command::new(env!("CARGO_BIN_EXE_benchlab"))
            .args(gen_args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
        Command::new(env!("CARGO_BIN_EXE_benchlab"))
            .args(["rx", "-i", &receiver, "--json"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    ];
    std::thread::sleep(Duration::from_millis(2500));
    for child in children {
        // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "summary", "{stdout}");
        assert!(
            stdout.lines().filter(|l| l.contains("\"sample\"")).count() >= 2,
            "{stdout}"
        );
    }
}
