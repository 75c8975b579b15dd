//! The FreeBSD presets, shaped like the seeds' labs (netbenches `configs/<set>/`, notes §3):
//! `forwarding`, `ipfw-stateless`, `ipfw-stateful`, `pf-stateless`, `pf-stateful`,
//! `ipf-stateless`, `ipf-stateful`. Two rules each (the one that passes the test traffic and the
//! firewall's default), two static routes, ICMP redirects off (which keeps the fast-forward path).
//!
//! Files go where FreeBSD reads local overrides, so the DUT's own `rc.conf` (management
//! address, sshd) is never replaced: `/etc/rc.conf.local`, `/etc/sysctl.conf.local`,
//! `/boot/loader.conf.local`, and the ruleset (`/etc/ipfw.rules`, `/etc/pf.conf`,
//! `/etc/ipf.rules`). A file that existed is kept as `FILE.benchlab-orig` and put back by
//! revert. The settings are also applied at once (sysctl, routes, firewall), so no reboot is
//! needed; the files make them survive one (a version change reboots).
//!
//! No FreeBSD host exists where benchlab is developed: these sets are checked with
//! `MockTransport` only (the commands and files they produce), never run on FreeBSD yet.

use anyhow::{bail, Result};

use super::{ConfigSet, PASS_COMMENT};
use crate::transport::{Command, Transport};

/// The ipfw rule number of the pass rule (the seeds' `add 3000 allow …`).
const IPFW_RULE: u32 = 3000;

/// A packet filter of FreeBSD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Firewall {
    /// ipfw(8).
    Ipfw,
    /// pf(4).
    Pf,
    /// ipfilter (ipf(8)).
    Ipf,
}

/// The static routes towards the generator's networks, as in the seeds' `rc.conf`
/// (`route_generator="-net 198.18.0.0/16 198.18.0.203"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Routes {
    /// Next hop of 198.18.0.0/16 (and of 2001:2::/49): the sender's lab address.
    pub(crate) sender_gw: String,
    /// Next hop of 198.19.0.0/16: the receiver's lab address.
    pub(crate) receiver_gw: String,
    /// IPv6 next hop on the sender side.
    pub(crate) sender_gw6: String,
    /// IPv6 next hop on the receiver side.
    pub(crate) receiver_gw6: String,
}

impl Default for Routes {
    /// The seeds' lab: the generator is .203 on both sides.
    fn default() -> Self {
        Self {
            sender_gw: "198.18.0.203".into(),
            receiver_gw: "198.19.0.203".into(),
            sender_gw6: "2001:2::203".into(),
            receiver_gw6: "2001:2:0:8000::203".into(),
        }
    }
}

impl Routes {
    /// `(route add|delete) ARGS` of the two IPv4 and two IPv6 routes.
    fn route_args(&self) -> Vec<Vec<String>> {
        [
            ["-inet", "198.18.0.0/16", &self.sender_gw],
            ["-inet", "198.19.0.0/16", &self.receiver_gw],
            ["-inet6", "2001:2::/49", &self.sender_gw6],
            ["-inet6", "2001:2:0:8000::/49", &self.receiver_gw6],
        ]
        .iter()
        .map(|[af, net, gw]| strings(&[af, "-net", net, gw]))
        .collect()
    }
}

/// A FreeBSD preset: forwarding alone, or one firewall stateless or stateful.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FreeBsdSet {
    name: String,
    firewall: Option<(Firewall, bool)>,
    routes: Routes,
}

/// The FreeBSD preset called `name`, with the seeds' routes.
pub(crate) fn preset(name: &str) -> Option<FreeBsdSet> {
    let firewall = match name {
        "forwarding" => None,
        "ipfw-stateless" => Some((Firewall::Ipfw, false)),
        "ipfw-stateful" => Some((Firewall::Ipfw, true)),
        "pf-stateless" => Some((Firewall::Pf, false)),
        "pf-stateful" => Some((Firewall::Pf, true)),
        "ipf-stateless" => Some((Firewall::Ipf, false)),
        "ipf-stateful" => Some((Firewall::Ipf, true)),
        _ => return None,
    };
    Some(FreeBsdSet {
        name: name.to_string(),
        firewall,
        routes: Routes::default(),
    })
}

impl FreeBsdSet {
    /// The files this set writes on the DUT: (path, contents).
    pub(crate) fn files(&self) -> Vec<(&'static str, String)> {
        let r = &self.routes;
        let mut rc = format!(
            "# benchlab config set {name}\n\
             gateway_enable=\"YES\"\n\
             ipv6_gateway_enable=\"YES\"\n\
             static_routes=\"generator receiver\"\n\
             route_generator=\"-net 198.18.0.0/16 {}\"\n\
             route_receiver=\"-net 198.19.0.0/16 {}\"\n\
             ipv6_static_routes=\"generator receiver\"\n\
             ipv6_route_generator=\"-net 2001:2::/49 {}\"\n\
             ipv6_route_receiver=\"-net 2001:2:0:8000::/49 {}\"\n",
            r.sender_gw,
            r.receiver_gw,
            r.sender_gw6,
            r.receiver_gw6,
            name = self.name
        );
        let mut loader = String::from(
            "# benchlab: netisr on every CPU (an `options RSS` kernel otherwise drops ~95 %)\n\
             net.isr.maxthreads=\"-1\"\n\
             net.isr.bindthreads=\"1\"\n",
        );
        let sysctl = "# benchlab: no ICMP redirects, which keeps the fast-forward path\n\
                      net.inet.ip.redirect=0\n\
                      net.inet6.ip6.redirect=0\n"
            .to_string();
        let mut files = Vec::new();
        match self.firewall {
            None => {}
            Some((Firewall::Ipfw, stateful)) => {
                rc.push_str("firewall_enable=\"YES\"\nfirewall_script=\"/etc/ipfw.rules\"\n");
                // Loading ipfw must not lock benchlab out before the rules are in.
                loader.push_str("net.inet.ip.fw.default_to_accept=\"1\"\n");
                files.push(("/etc/ipfw.rules", ipfw_rules(stateful)));
            }
            Some((Firewall::Pf, stateful)) => {
                rc.push_str("pf_enable=\"YES\"\npf_rules=\"/etc/pf.conf\"\n");
                files.push(("/etc/pf.conf", pf_conf(stateful)));
            }
            Some((Firewall::Ipf, stateful)) => {
                rc.push_str("ipfilter_enable=\"YES\"\nipfilter_rules=\"/etc/ipf.rules\"\n");
                files.push(("/etc/ipf.rules", ipf_rules(stateful)));
            }
        }
        let mut all = vec![
            ("/etc/rc.conf.local", rc),
            ("/etc/sysctl.conf.local", sysctl),
            ("/boot/loader.conf.local", loader),
        ];
        all.extend(files);
        all
    }

    /// The commands that put the set in force now, in order.
    fn live_commands(&self) -> Vec<Vec<String>> {
        let mut cmds: Vec<Vec<String>> = vec![strings(&[
            "sysctl",
            "net.inet.ip.forwarding=1",
            "net.inet6.ip6.forwarding=1",
            "net.inet.ip.redirect=0",
            "net.inet6.ip6.redirect=0",
        ])];
        let firewall: &[&[&str]] = match self.firewall {
            None => &[],
            // One command: the rules are in before the session's packets are dropped for long.
            Some((Firewall::Ipfw, _)) => &[&["sh", "-c", "kldload -n ipfw && sh /etc/ipfw.rules"]],
            // States flushed: a set applied in place over a stateful one must not pass its
            // traffic through the states the other left.
            Some((Firewall::Pf, _)) => &[
                &["kldload", "-n", "pf"],
                &["pfctl", "-f", "/etc/pf.conf"],
                &["pfctl", "-F", "states"],
                &[
                    "sh",
                    "-c",
                    "pfctl -e 2>&1 | grep -v 'already enabled' || true",
                ],
            ],
            Some((Firewall::Ipf, _)) => &[
                &["kldload", "-n", "ipl"],
                &["ipf", "-E"],
                &["ipf", "-Fa", "-f", "/etc/ipf.rules"],
                &["ipf", "-FS"],
            ],
        };
        cmds.extend(firewall.iter().map(|a| strings(a)));
        cmds
    }
}

fn strings(argv: &[&str]) -> Vec<String> {
    argv.iter().map(|s| s.to_string()).collect()
}

fn ipfw_rules(stateful: bool) -> String {
    format!(
        "#!/bin/sh\n\
         fwcmd=\"/sbin/ipfw\"\n\
         ${{fwcmd}} -f flush\n\
         ${{fwcmd}} add {IPFW_RULE} allow ip from any to any{}\n",
        if stateful { " keep-state" } else { "" }
    )
}

fn pf_conf(stateful: bool) -> String {
    format!(
        "set skip on lo0\npass {}label \"{PASS_COMMENT}\"\n",
        if stateful { "" } else { "no state " }
    )
}

fn ipf_rules(stateful: bool) -> String {
    let keep = if stateful { " keep state" } else { "" };
    format!(
        "pass in quick on lo0 all\npass out quick on lo0 all\n\
         pass in quick proto udp from any to any{keep}\n\
         pass out quick proto udp from any to any{keep}\n\
         pass in quick proto icmp from any to any{keep}\n\
         pass out quick proto icmp from any to any{keep}\n\
         pass in quick proto tcp from any to any flags S/SAFR{keep}\n\
         pass out quick proto tcp from any to any flags S/SAFR{keep}\n"
    )
}

/// Runs `argv`, accepting a failure whose message says the thing is already there or gone.
fn tolerant(dut: &dyn Transport, argv: &[String]) -> Result<()> {
    let out = dut.exec(&Command::new(argv.to_vec()))?;
    let benign = ["exists", "not in table", "No such process", "not found"];
    if out.success() || benign.iter().any(|b| out.stderr.contains(b)) {
        Ok(())
    } else {
        Err(crate::transport::failed(dut.host(), argv, &out).into())
    }
}

/// Keeps an existing file as `FILE.benchlab-orig` (once), then writes `contents`.
const BACKUP_AND_WRITE: &str = r#"if [ -e "$1" ] && [ ! -e "$1.benchlab-orig" ]; then cp -p "$1" "$1.benchlab-orig"; fi; cat > "$1""#;
/// Puts the kept file back, or removes benchlab's.
const RESTORE: &str =
    r#"if [ -e "$1.benchlab-orig" ]; then mv "$1.benchlab-orig" "$1"; else rm -f "$1"; fi"#;

impl ConfigSet for FreeBsdSet {
    fn name(&self) -> &str {
        &self.name
    }

    fn ruleset(&self) -> String {
        self.files()
            .iter()
            .map(|(path, text)| format!("# {path}\n{text}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn apply(&self, dut: &dyn Transport) -> Result<()> {
        for (path, text) in self.files() {
            dut.check(&Command::new(["sh", "-c", BACKUP_AND_WRITE, "sh", path]).stdin(text))?;
        }
        for args in self.routes.route_args() {
            let mut argv = strings(&["route", "-q", "add"]);
            argv.extend(args);
            tolerant(dut, &argv)?;
        }
        for argv in self.live_commands() {
            dut.check(&Command::new(argv))?;
        }
        Ok(())
    }

    fn verify(&self, dut: &dyn Transport) -> Result<()> {
        let fwd = dut.run(&["sysctl", "-n", "net.inet.ip.forwarding"])?;
        if fwd.trim() != "1" {
            bail!("{}: net.inet.ip.forwarding is {}", dut.host(), fwd.trim());
        }
        let (argv, needle): (&[&str], String) = match self.firewall {
            None => return Ok(()),
            Some((Firewall::Ipfw, _)) => (&["ipfw", "show", "3000"], "allow ip".into()),
            Some((Firewall::Pf, _)) => (&["pfctl", "-s", "rules"], PASS_COMMENT.into()),
            Some((Firewall::Ipf, _)) => (&["ipfstat", "-io"], "pass".into()),
        };
        let rules = dut.run(argv)?;
        if !rules.contains(&needle) {
            bail!(
                "{}: config set `{}` is not in force: `{}` shows no {needle:?}",
                dut.host(),
                self.name,
                argv.join(" ")
            );
        }
        Ok(())
    }

    fn counters(&self, dut: &dyn Transport) -> Result<Option<u64>> {
        let Some((firewall, _)) = self.firewall else {
            return Ok(None);
        };
        Ok(Some(match firewall {
            // `03000 PACKETS BYTES allow ip from any to any`
            Firewall::Ipfw => dut
                .run(&["ipfw", "show", "3000"])?
                .lines()
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum(),
            // `benchlab-pass EVALUATIONS PACKETS BYTES …`
            Firewall::Pf => dut
                .run(&["pfctl", "-s", "labels"])?
                .lines()
                .filter(|l| l.split_whitespace().next() == Some(PASS_COMMENT))
                .filter_map(|l| l.split_whitespace().nth(2)?.parse::<u64>().ok())
                .sum(),
            // `HITS pass in quick proto udp …`: the UDP rules carry the test traffic.
            Firewall::Ipf => dut
                .run(&["ipfstat", "-hio"])?
                .lines()
                .filter(|l| l.contains("proto udp"))
                .filter_map(|l| l.split_whitespace().next()?.parse::<u64>().ok())
                .sum(),
        }))
    }

    fn revert(&self, dut: &dyn Transport) -> Result<()> {
        let off: &[&[&str]] = match self.firewall {
            None => &[],
            Some((Firewall::Ipfw, _)) => &[&["kldunload", "ipfw"]],
            Some((Firewall::Pf, _)) => &[&["pfctl", "-d"], &["pfctl", "-F", "all"]],
            Some((Firewall::Ipf, _)) => &[&["ipf", "-D"]],
        };
        for argv in off {
            tolerant(dut, &strings(argv))?;
        }
        for args in self.routes.route_args() {
            let mut argv = strings(&["route", "-q", "delete"]);
            argv.extend(args);
            tolerant(dut, &argv)?;
        }
        for (path, _) in self.files() {
            dut.check(&Command::new(["sh", "-c", RESTORE, "sh", path]))?;
        }
        Ok(())
    }

    fn gone(&self, dut: &dyn Transport) -> Result<bool> {
        Ok(match self.firewall {
            None => true,
            // Unloaded: `kldstat -q -m` fails for a module that is not there.
            Some((Firewall::Ipfw, _)) => !dut
                .exec(&Command::new(["kldstat", "-q", "-m", "ipfw"]))?
                .success(),
            // `Status: Disabled for 0 days 00:00:03`, or no pf at all.
            Some((Firewall::Pf, _)) => {
                let out = dut.exec(&Command::new(["pfctl", "-s", "info"]))?;
                !out.success() || out.stdout_text().contains("Status: Disabled")
            }
            // `Running: no`, or no ipfilter at all.
            Some((Firewall::Ipf, _)) => {
                let out = dut.exec(&Command::new(["ipf", "-V"]))?;
                !out.success() || out.stdout_text().contains("Running: no")
            }
        })
    }

    fn replaces(&self) -> Option<&'static str> {
        // Each firewall's apply flushes and loads its whole ruleset (`ipfw -f flush`, `pfctl
        // -f`, `ipf -Fa -f`) and rewrites the same files: stateless and stateful switch in
        // place, with no unload that would drop traffic meanwhile.
        match self.firewall? {
            (Firewall::Ipfw, _) => Some("ipfw"),
            (Firewall::Pf, _) => Some("pf"),
            (Firewall::Ipf, _) => Some("ipf"),
        }
    }
}

#[cfg(test)]
mod tests;
