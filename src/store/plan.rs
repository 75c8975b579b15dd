//! The list of trials a campaign runs, in the order it runs them.

use std::fmt;

use crate::config::{Campaign, Order};

/// One trial's coordinates: `runs/<version>.<config>.<profile>.<iter>`, or
/// `runs/<version>.<config>.<profile>.profile` for the profiling trial of a series.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TrialKey {
    /// Version name.
    pub(crate) version: String,
    /// Config set name.
    pub(crate) config: String,
    /// Traffic profile name.
    pub(crate) profile: String,
    /// Iteration, from 1; [`PROFILING`] for the profiling trial, which is not measured.
    pub(crate) iteration: u32,
}

/// The iteration number of a profiling trial (`.profile` in its directory name): it profiles
/// the DUT and never counts as a measurement.
pub const PROFILING: u32 = 0;

impl fmt::Display for TrialKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}.", self.version, self.config, self.profile)?;
        match self.iteration {
            PROFILING => f.write_str("profile"),
            i => write!(f, "{i}"),
        }
    }
}

impl TrialKey {
    /// Parses a trial directory name; `None` when it is not one.
    pub(crate) fn parse(dir_name: &str) -> Option<Self> {
        let mut parts = dir_name.split('.');
        let key = TrialKey {
            version: parts.next()?.to_string(),
            config: parts.next()?.to_string(),
            profile: parts.next()?.to_string(),
            iteration: match parts.next()? {
                "profile" => PROFILING,
                n => n.parse().ok().filter(|&i| i > 0)?,
            },
        };
        parts.next().is_none().then_some(key)
    }

    /// True for the profiling trial of a series.
    pub(crate) fn is_profiling(&self) -> bool {
        self.iteration == PROFILING
    }
}

/// Every trial of `campaign`, in its order. A profiling campaign adds one profiling trial per
/// series right after the series' last iteration, so that it needs no extra change of version
/// or config set.
pub fn plan(campaign: &Campaign) -> Vec<TrialKey> {
    let configs: Vec<&str> = campaign.config_set_names().collect();
    let mut keys = Vec::new();
    let mut push = |v: &str, c: &str, p: &str, i: u32| {
        keys.push(TrialKey {
            version: v.to_string(),
            config: c.to_string(),
            profile: p.to_string(),
            iteration: i,
        })
    };
    let iterations = 1..=campaign.iterations;
    match campaign.order {
        Order::Sequential => {
            for v in &campaign.versions {
                for c in &configs {
                    for p in &campaign.profiles {
                        for i in iterations.clone() {
                            push(&v.name, c, &p.name, i);
                        }
                        if campaign.profile {
                            push(&v.name, c, &p.name, PROFILING);
                        }
                    }
                }
            }
        }
        Order::Interleaved => {
            for i in iterations {
                let last = i == campaign.iterations;
                for v in &campaign.versions {
                    for c in &configs {
                        for p in &campaign.profiles {
                            push(&v.name, c, &p.name, i);
                            if last && campaign.profile {
                                push(&v.name, c, &p.name, PROFILING);
                            }
                        }
                    }
                }
            }
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_cover_the_same_trials() {
        let mut c = Campaign {
            iterations: 2,
            ..Campaign::default()
        };
        let inter = plan(&c);
        c.order = Order::Sequential;
        let seq = plan(&c);
        assert_eq!(inter.len(), 4 * 2 * 2);
        assert_eq!(seq[0].to_string(), "default.forwarding.inet4.1");
        assert_eq!(seq[1].to_string(), "default.forwarding.inet4.2");
        assert_eq!(inter[1].to_string(), "default.forwarding.inet6.1");
        let (mut a, mut b) = (inter.clone(), seq.clone());
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }

    #[test]
    fn keys_round_trip_through_dir_names() {
        for k in plan(&Campaign::default()) {
            assert_eq!(TrialKey::parse(&k.to_string()), Some(k));
        }
        assert_eq!(TrialKey::parse("a.b.c"), None);
        assert_eq!(TrialKey::parse("a.b.c.0"), None);
        assert_eq!(TrialKey::parse("a.b.c.1.x"), None);
    }

    #[test]
    fn profiling_trials_follow_each_series_last_iteration() {
        let mut c = Campaign {
            iterations: 2,
            profile: true,
            ..Campaign::default()
        };
        c.config_sets.truncate(1);
        let names: Vec<String> = plan(&c).iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "default.forwarding.inet4.1",
                "default.forwarding.inet6.1",
                "default.forwarding.inet4.2",
                "default.forwarding.inet4.profile",
                "default.forwarding.inet6.2",
                "default.forwarding.inet6.profile",
            ]
        );
        c.order = Order::Sequential;
        let keys = plan(&c);
        assert_eq!(keys[2].to_string(), "default.forwarding.inet4.profile");
        for k in keys {
            assert_eq!(TrialKey::parse(&k.to_string()), Some(k));
        }
    }
}
