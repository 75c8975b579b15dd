//! A lab namespace as the kernel has it, read with `ip -j`: its interfaces, static routes and
//! permanent neighbours, so that `lab status` shows what is really there, not the plan.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::lab::addressing::Net;
use crate::lab::topology::Role;
use crate::transport::{LocalTransport, Transport};

/// A namespace as the kernel has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamespaceFacts {
    /// Its name.
    pub name: String,
    /// The roles living in it.
    pub roles: Vec<Role>,
    /// Its interfaces except `lo`.
    pub interfaces: Vec<InterfaceFacts>,
    /// Its routes through a gateway (IPv4 then IPv6).
    pub routes: Vec<RouteFacts>,
    /// Its permanent neighbour entries.
    pub neighbours: Vec<NeighbourFacts>,
}

/// An interface as the kernel has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceFacts {
    /// Its name.
    pub(crate) name: String,
    /// Its MAC.
    pub(crate) mac: String,
    /// Its operational state (`UP`, …).
    pub(crate) state: String,
    /// Its MTU in bytes.
    pub(crate) mtu: u32,
    /// Its global addresses.
    pub(crate) addresses: Vec<Net>,
}

/// A route through a gateway.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteFacts {
    /// Destination (`198.18.0.0/16`).
    pub(crate) destination: String,
    /// Gateway.
    pub(crate) via: String,
    /// Outgoing interface.
    pub(crate) dev: String,
}

/// A permanent neighbour entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeighbourFacts {
    /// The neighbour's address.
    pub(crate) address: String,
    /// Its MAC.
    pub(crate) mac: String,
    /// The interface.
    pub(crate) dev: String,
}

/// What `ip -j addr` says of an interface.
#[derive(Deserialize)]
struct IpLink {
    ifname: String,
    #[serde(default)]
    address: String,
    #[serde(default)]
    operstate: String,
    #[serde(default)]
    mtu: u32,
    #[serde(default)]
    addr_info: Vec<IpAddrInfo>,
}

#[derive(Deserialize)]
struct IpAddrInfo {
    local: String,
    prefixlen: u8,
    #[serde(default)]
    scope: String,
}

#[derive(Deserialize)]
struct IpRoute {
    dst: String,
    #[serde(default)]
    gateway: Option<String>,
    #[serde(default)]
    dev: String,
}

#[derive(Deserialize)]
struct IpNeigh {
    dst: String,
    #[serde(default)]
    lladdr: Option<String>,
    #[serde(default)]
    dev: String,
    #[serde(default)]
    state: Vec<String>,
}

fn ip_json<T: for<'de> Deserialize<'de>>(ns: &str, args: &[&str]) -> Result<Vec<T>> {
    let mut argv = vec!["ip", "-j", "-n", ns];
    argv.extend_from_slice(args);
    let text = LocalTransport.run(&argv)?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(&text)
        .with_context(|| format!("{ns}: unexpected output of `ip {}`", args.join(" ")))
}

/// Interfaces, static routes and permanent neighbours of namespace `ns`, as the kernel has them.
pub(crate) fn read_namespace(ns: &str, roles: Vec<Role>) -> Result<NamespaceFacts> {
    let interfaces = ip_json::<IpLink>(ns, &["addr", "show"])?
        .into_iter()
        .filter(|l| l.ifname != "lo")
        .map(|l| InterfaceFacts {
            addresses: l
                .addr_info
                .iter()
                .filter(|a| a.scope == "global")
                .filter_map(|a| format!("{}/{}", a.local, a.prefixlen).parse::<Net>().ok())
                .collect(),
            name: l.ifname,
            mac: l.address,
            state: l.operstate,
            mtu: l.mtu,
        })
        .collect();
    let mut routes = Vec::new();
    for family in [&["route", "show"][..], &["-6", "route", "show"][..]] {
        routes.extend(ip_json::<IpRoute>(ns, family)?.into_iter().filter_map(|r| {
            Some(RouteFacts {
                destination: r.dst,
                via: r.gateway?,
                dev: r.dev,
            })
        }));
    }
    let neighbours = ip_json::<IpNeigh>(ns, &["neigh", "show"])?
        .into_iter()
        .filter(|n| n.state.iter().any(|s| s == "PERMANENT"))
        .filter_map(|n| {
            Some(NeighbourFacts {
                address: n.dst,
                mac: n.lladdr?,
                dev: n.dev,
            })
        })
        .collect();
    Ok(NamespaceFacts {
        name: ns.to_string(),
        roles,
        interfaces,
        routes,
        neighbours,
    })
}
