//! The Linux presets: `forwarding`, `nft-stateless`, `nft-stateful`, `iptables-stateful`
//! (iptables-nft) and `iptables-legacy-stateful`.
//!
//! Each filters in the forward hook with the seeds' shape: the rule that passes the test
//! traffic (all IP, as the seeds' `allow ip from any to any keep-state`) and a default drop; the
//! stateful sets put the usual `established,related` rule first. Passing rules carry a
//! `benchlab-pass…` comment, which is how their counters are found.

use anyhow::{bail, Context, Result};
use serde_json::Value;

use super::{ConfigSet, PASS_COMMENT};
use crate::error::InputError;
use crate::transport::{Command, Transport};

/// The nftables table every nft preset lives in.
pub(crate) const NFT_TABLE: &str = "benchlab";
/// The iptables chain every iptables preset lives in, jumped from `FORWARD`.
pub(crate) const IPTABLES_CHAIN: &str = "benchlab-forward";

const FORWARDING_SYSCTLS: [&str; 2] = [
    "net.ipv4.conf.all.forwarding",
    "net.ipv6.conf.all.forwarding",
];

/// The Linux preset called `name`.
pub(crate) fn preset(name: &str) -> Option<Box<dyn ConfigSet>> {
    Some(match name {
        "forwarding" => Box::new(Forwarding),
        "nft-stateless" => Box::new(Nft { stateful: false }),
        "nft-stateful" => Box::new(Nft { stateful: true }),
        "iptables-stateful" => Box::new(Iptables {
            backend: Backend::Nft,
        }),
        "iptables-legacy-stateful" => Box::new(Iptables {
            backend: Backend::Legacy,
        }),
        _ => return None,
    })
}

/// Plain forwarding: no firewall rule at all.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Forwarding;

impl ConfigSet for Forwarding {
    fn name(&self) -> &str {
        "forwarding"
    }

    fn ruleset(&self) -> String {
        FORWARDING_SYSCTLS
            .iter()
            .map(|k| format!("sysctl {k}=1\n"))
            .collect::<String>()
            + "# no firewall rule\n"
    }

    fn apply(&self, dut: &dyn Transport) -> Result<()> {
        let settings: Vec<String> = FORWARDING_SYSCTLS
            .iter()
            .map(|k| format!("{k}=1"))
            .collect();
        let mut argv = vec!["sysctl", "-q", "-w"];
        argv.extend(settings.iter().map(String::as_str));
        dut.run(&argv)?;
        Ok(())
    }

    fn verify(&self, dut: &dyn Transport) -> Result<()> {
        let mut argv = vec!["sysctl", "-n"];
        argv.extend(FORWARDING_SYSCTLS);
        let values = dut.run(&argv)?;
        if values.split_whitespace().any(|v| v != "1") {
            bail!(
                "{}: forwarding is off ({})",
                dut.host(),
                values.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
        // A set that was not reverted would be measured as "forwarding".
        let ruleset = dut.run(&["nft", "list", "ruleset"])?;
        if !ruleset.trim().is_empty() {
            bail!(
                "{}: forwarding expects no firewall, but nftables has rules (a config set was not reverted): {}",
                dut.host(),
                ruleset.lines().next().unwrap_or_default().trim()
            );
        }
        Ok(())
    }

    fn counters(&self, _dut: &dyn Transport) -> Result<Option<u64>> {
        Ok(None)
    }

    fn revert(&self, _dut: &dyn Transport) -> Result<()> {
        // Forwarding itself belongs to the lab (or the DUT's version), not to this set.
        Ok(())
    }
}

/// nftables, stateless (`notrack`, accept, default drop) or stateful (conntrack).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Nft {
    /// Conntrack (`ct state`) rules instead of `notrack`.
    pub(crate) stateful: bool,
}

impl Nft {
    fn pass_rules(&self) -> usize {
        if self.stateful {
            2
        } else {
            1
        }
    }
}

impl ConfigSet for Nft {
    fn name(&self) -> &str {
        if self.stateful {
            "nft-stateful"
        } else {
            "nft-stateless"
        }
    }

    fn ruleset(&self) -> String {
        let body = if self.stateful {
            format!(
                "\tchain forward {{\n\
                 \t\ttype filter hook forward priority filter; policy drop;\n\
                 \t\tct state established,related counter accept comment \"{PASS_COMMENT}-established\"\n\
                 \t\tct state new counter accept comment \"{PASS_COMMENT}-new\"\n\
                 \t}}\n"
            )
        } else {
            format!(
                "\tchain prerouting {{\n\
                 \t\ttype filter hook prerouting priority raw; policy accept;\n\
                 \t\tnotrack\n\
                 \t}}\n\
                 \tchain forward {{\n\
                 \t\ttype filter hook forward priority filter; policy drop;\n\
                 \t\tcounter accept comment \"{PASS_COMMENT}\"\n\
                 \t}}\n"
            )
        };
        format!("table inet {NFT_TABLE} {{\n{body}}}\n")
    }

    fn apply(&self, dut: &dyn Transport) -> Result<()> {
        // Declaring then deleting the table first makes apply replace a leftover table in
        // the same atomic transaction instead of adding duplicate rules to it.
        let script = format!(
            "table inet {NFT_TABLE}\ndelete table inet {NFT_TABLE}\n{}",
            self.ruleset()
        );
        dut.check(&Command::new(["nft", "-f", "-"]).stdin(script))?;
        Ok(())
    }

    fn verify(&self, dut: &dyn Transport) -> Result<()> {
        let (rules, _) = nft_pass_counters(dut)?;
        if rules != self.pass_rules() {
            bail!(
                "{}: table inet {NFT_TABLE} has {rules} passing rules, {} expected",
                dut.host(),
                self.pass_rules()
            );
        }
        Ok(())
    }

    fn counters(&self, dut: &dyn Transport) -> Result<Option<u64>> {
        nft_pass_counters(dut).map(|(_, packets)| Some(packets))
    }

    fn revert(&self, dut: &dyn Transport) -> Result<()> {
        // Declaring the table first makes the delete succeed whether or not it is there, in
        // one command: under traffic every command spawned waits for a busy CPU.
        let script = format!("table inet {NFT_TABLE}\ndelete table inet {NFT_TABLE}\n");
        dut.check(&Command::new(["nft", "-f", "-"]).stdin(script))?;
        Ok(())
    }

    fn gone(&self, dut: &dyn Transport) -> Result<bool> {
        Ok(!nft_table_exists(dut, "inet", NFT_TABLE)?)
    }

    fn replaces(&self) -> Option<&'static str> {
        // apply replaces the table in one transaction, whatever it held.
        Some("nft table inet benchlab")
    }
}

fn nft_table_exists(dut: &dyn Transport, family: &str, name: &str) -> Result<bool> {
    let tables = dut.run(&["nft", "list", "tables", family])?;
    Ok(tables
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["table", family, name]))
}

/// (rules carrying the pass comment, packets they counted) in table `inet benchlab`.
fn nft_pass_counters(dut: &dyn Transport) -> Result<(usize, u64)> {
    let text = dut.run(&["nft", "-j", "list", "table", "inet", NFT_TABLE])?;
    parse_nft_pass_counters(&text)
        .with_context(|| format!("{}: unexpected `nft -j` output", dut.host()))
}

fn parse_nft_pass_counters(json: &str) -> Result<(usize, u64)> {
    let doc: Value = serde_json::from_str(json)?;
    let mut rules = 0;
    let mut packets = 0;
    for item in doc["nftables"].as_array().context("no nftables array")? {
        let rule = &item["rule"];
        let passing = rule["comment"]
            .as_str()
            .is_some_and(|c| c.starts_with(PASS_COMMENT));
        if !passing {
            continue;
        }
        rules += 1;
        packets += rule["expr"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["counter"]["packets"].as_u64())
            .sum::<u64>();
    }
    Ok((rules, packets))
}

/// Which iptables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// iptables-nft: the x_tables API over nftables.
    Nft,
    /// iptables-legacy: the original x_tables in the kernel.
    Legacy,
}

impl Backend {
    /// The program of this backend for `family` (`""` or `"6"`) and `tool` (`""`, `-save`, `-restore`).
    fn program(self, family: &str, tool: &str) -> String {
        let backend = match self {
            Self::Nft => "nft",
            Self::Legacy => "legacy",
        };
        format!("ip{family}tables-{backend}{tool}")
    }
}

/// iptables, stateful (conntrack), in chain `benchlab-forward` jumped from `FORWARD`, IPv4
/// and IPv6. The legacy backend cannot unregister its filter hooks once used: after revert
/// its empty `FORWARD` chain still runs in the DUT namespace until the lab goes down.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Iptables {
    /// nft or legacy.
    pub(crate) backend: Backend,
}

const FAMILIES: [&str; 2] = ["", "6"];

impl Iptables {
    fn restore_script() -> String {
        format!(
            "*filter\n\
             :{IPTABLES_CHAIN} - [0:0]\n\
             -A {IPTABLES_CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -m comment --comment {PASS_COMMENT}-established -j ACCEPT\n\
             -A {IPTABLES_CHAIN} -m conntrack --ctstate NEW -m comment --comment {PASS_COMMENT}-new -j ACCEPT\n\
             -A {IPTABLES_CHAIN} -j DROP\n\
             -A FORWARD -j {IPTABLES_CHAIN}\n\
             COMMIT\n"
        )
    }

    /// The filter table as `ip[6]tables-save -c` prints it.
    fn save(&self, dut: &dyn Transport, family: &str) -> Result<String> {
        let save = self.backend.program(family, "-save");
        Ok(dut.run(&[&save, "-c", "-t", "filter"])?)
    }

    fn check_available(&self, dut: &dyn Transport) -> Result<()> {
        if self.backend == Backend::Nft {
            return Ok(());
        }
        let program = self.backend.program("", "");
        let out = dut.exec(&Command::new([
            program.as_str(),
            "-w",
            "-n",
            "-L",
            "FORWARD",
        ]));
        let reason = match out {
            Ok(out) if out.success() => return Ok(()),
            Ok(out) => out.stderr.lines().next().unwrap_or_default().to_string(),
            Err(e) => e.to_string(),
        };
        bail!(InputError::new(format!(
            "{}: iptables-legacy-stateful needs the legacy iptables backend, which is not available ({reason}): install iptables (Debian ships iptables-legacy) or use iptables-stateful",
            dut.host()
        )))
    }

    /// Removes our chain and its jump in one family, if they are there: when the filter table
    /// holds nothing else (iptables-nft), by deleting the table; else in one restore, one
    /// transaction (each `iptables -D/-F/-X` is one, and on a DUT under load each waits for
    /// the kernel's grace period). Switching sets under traffic runs this twice per switch,
    /// and each command spawned then waits for a CPU the generator keeps busy, so the common
    /// cases take one command: a save that shows nothing of ours, or a table that is all ours.
    fn remove(&self, dut: &dyn Transport, family: &str) -> Result<()> {
        let saved = self.save(dut, family)?;
        let ours = OurFilter::read(&saved);
        if ours.jumps == 0 && !ours.chain {
            return Ok(());
        }
        let table = if family.is_empty() { "ip" } else { "ip6" };
        if self.backend == Backend::Nft && ours.whole_table {
            dut.run(&["nft", "delete", "table", table, "filter"])?;
            return Ok(());
        }
        let mut script = String::from("*filter\n");
        for _ in 0..ours.jumps {
            script.push_str(&format!("-D FORWARD -j {IPTABLES_CHAIN}\n"));
        }
        if ours.chain {
            script.push_str(&format!("-F {IPTABLES_CHAIN}\n-X {IPTABLES_CHAIN}\n"));
        }
        let restore = self.backend.program(family, "-restore");
        dut.check(&Command::new([restore.as_str(), "-w", "--noflush"]).stdin(script + "COMMIT\n"))?;
        if self.backend == Backend::Nft {
            drop_empty_filter_table(dut, table)?;
        }
        Ok(())
    }
}

/// What of ours an `ip[6]tables-save -t filter` shows.
#[derive(Debug, PartialEq, Eq)]
struct OurFilter {
    /// `FORWARD` rules jumping to our chain.
    jumps: usize,
    /// Whether our chain exists.
    chain: bool,
    /// Nothing else is there: built-in chains accept, no other chain or rule.
    whole_table: bool,
}

impl OurFilter {
    fn read(saved: &str) -> Self {
        let jump = format!("-A FORWARD -j {IPTABLES_CHAIN}");
        let own_rule = format!("-A {IPTABLES_CHAIN} ");
        let mut ours = OurFilter {
            jumps: 0,
            chain: false,
            whole_table: true,
        };
        for line in saved.lines() {
            if let Some(chain) = line.strip_prefix(':') {
                let mut words = chain.split_whitespace();
                match (words.next(), words.next()) {
                    (Some(IPTABLES_CHAIN), _) => ours.chain = true,
                    (Some("INPUT" | "FORWARD" | "OUTPUT"), Some("ACCEPT")) => {}
                    _ => ours.whole_table = false,
                }
            } else if line.ends_with(&jump) {
                ours.jumps += 1;
            } else if line.contains("-A ") && !line.contains(&own_rule) {
                ours.whole_table = false;
            }
        }
        ours
    }
}

/// iptables-nft creates table `<family> filter` with hooked base chains; once it holds no rule
/// and accepts everything it only costs time per packet, so it goes.
fn drop_empty_filter_table(dut: &dyn Transport, family: &str) -> Result<()> {
    // One listing both tells whether the table exists and what it holds.
    let out = dut.exec(&Command::new([
        "nft", "-j", "list", "table", family, "filter",
    ]))?;
    if !out.success() {
        return Ok(());
    }
    let doc: Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{}: unexpected `nft -j` output", dut.host()))?;
    let items = doc["nftables"].as_array().cloned().unwrap_or_default();
    let empty = items.iter().all(|i| {
        i.get("rule").is_none()
            && i["chain"]
                .get("policy")
                .is_none_or(|p| p.as_str() == Some("accept"))
    });
    if empty {
        dut.run(&["nft", "delete", "table", family, "filter"])?;
    }
    Ok(())
}

/// (rules carrying the pass comment, packets they counted) in `ip[6]tables-save -c` output.
fn parse_iptables_pass_counters(saved: &str) -> (usize, u64) {
    let marker = format!("--comment {PASS_COMMENT}");
    saved
        .lines()
        .filter(|l| l.contains(&marker))
        .filter_map(|l| {
            let counts = l.strip_prefix('[')?.split(']').next()?;
            counts.split(':').next()?.parse::<u64>().ok()
        })
        .fold((0, 0), |(n, sum), p| (n + 1, sum + p))
}

impl ConfigSet for Iptables {
    fn name(&self) -> &str {
        match self.backend {
            Backend::Nft => "iptables-stateful",
            Backend::Legacy => "iptables-legacy-stateful",
        }
    }

    fn ruleset(&self) -> String {
        FAMILIES
            .iter()
            .map(|f| {
                format!(
                    "# {} --noflush\n{}",
                    self.backend.program(f, "-restore"),
                    Self::restore_script()
                )
            })
            .collect()
    }

    fn apply(&self, dut: &dyn Transport) -> Result<()> {
        self.check_available(dut)?;
        for family in FAMILIES {
            // A leftover chain would get a second jump: start from none.
            self.remove(dut, family)?;
            let restore = self.backend.program(family, "-restore");
            dut.check(
                &Command::new([restore.as_str(), "-w", "--noflush"]).stdin(Self::restore_script()),
            )?;
        }
        Ok(())
    }

    fn verify(&self, dut: &dyn Transport) -> Result<()> {
        for family in FAMILIES {
            let saved = self.save(dut, family)?;
            let jump = format!("-A FORWARD -j {IPTABLES_CHAIN}");
            let (rules, _) = parse_iptables_pass_counters(&saved);
            if !saved.lines().any(|l| l.ends_with(&jump)) || rules != 2 {
                bail!(
                    "{}: {} has {rules} passing rules in {IPTABLES_CHAIN} (2 expected) or no jump to it from FORWARD",
                    dut.host(),
                    self.backend.program(family, "")
                );
            }
        }
        Ok(())
    }

    fn counters(&self, dut: &dyn Transport) -> Result<Option<u64>> {
        let mut packets = 0;
        for family in FAMILIES {
            packets += parse_iptables_pass_counters(&self.save(dut, family)?).1;
        }
        Ok(Some(packets))
    }

    fn revert(&self, dut: &dyn Transport) -> Result<()> {
        for family in FAMILIES {
            self.remove(dut, family)?;
        }
        Ok(())
    }

    fn gone(&self, dut: &dyn Transport) -> Result<bool> {
        let chain = format!(":{IPTABLES_CHAIN} ");
        for family in FAMILIES {
            // A family whose filter table is gone cannot be saved, and holds no chain either.
            let saved = self.save(dut, family).unwrap_or_default();
            if saved.lines().any(|l| l.starts_with(&chain)) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
