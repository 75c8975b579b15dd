//! Several senders in one trial: each its share of the profile, their seconds summed.
//!
//! The profile's source flows are cut into as many consecutive, disjoint parts as there are
//! senders (by address when there are enough addresses, by port otherwise), so that every flow
//! still goes out and no two senders send the same one; an explicit rate is divided among them
//! (the first ones take the remainder), `max` stays `max` on each.

use crate::config::{Profile, Rate};
use crate::error::InputError;
use crate::traffic::packet::FlowRange;

/// `n` consecutive parts of `total` items, as (offset, length), the first ones one longer.
fn parts(total: u32, n: u32) -> impl Iterator<Item = (u32, u32)> {
    let (base, extra) = (total / n, total % n);
    (0..n).map(move |i| (i * base + i.min(extra), base + u32::from(i < extra)))
}

/// `range` cut into `n` disjoint parts, or `None` when it holds fewer than `n` addresses and
/// fewer than `n` ports.
fn split(range: &FlowRange, n: u32) -> Option<Vec<FlowRange>> {
    if range.addresses() >= n {
        Some(
            parts(range.addresses(), n)
                .map(|(at, len)| FlowRange {
                    start: range.address(at),
                    end: range.address(at + len - 1),
                    ..range.clone()
                })
                .collect(),
        )
    } else if range.ports() >= n {
        Some(
            parts(range.ports(), n)
                .map(|(at, len)| FlowRange {
                    port0: range.port0 + at as u16,
                    port1: range.port0 + (at + len - 1) as u16,
                    ..range.clone()
                })
                .collect(),
        )
    } else {
        None
    }
}

/// Each of `n` senders' share of `profile`, in sender order.
pub(super) fn shares(profile: &Profile, n: usize) -> Result<Vec<Profile>, InputError> {
    if n == 1 {
        return Ok(vec![profile.clone()]);
    }
    let name = &profile.name;
    let src: FlowRange = profile
        .src()
        .parse()
        .map_err(|e: InputError| InputError::new(format!("profile `{name}`: src: {}", e.0)))?;
    let n32 = n as u32;
    let ranges = split(&src, n32).ok_or_else(|| {
        InputError::new(format!(
            "profile `{name}`: src = \"{}\" has fewer than {n} addresses and fewer than {n} \
             ports, one part for each of the {n} senders; widen it",
            profile.src()
        ))
    })?;
    let rates: Vec<Rate> = match profile.rate {
        Rate::Max => vec![Rate::Max; n],
        Rate::Pps(pps) if pps < n as u64 => {
            return Err(InputError::new(format!(
                "profile `{name}`: rate = {pps} is less than one packet a second for each of \
                 the {n} senders"
            )))
        }
        Rate::Pps(pps) => parts(pps as u32, n32)
            .map(|(_, len)| Rate::Pps(u64::from(len)))
            .collect(),
    };
    Ok(ranges
        .into_iter()
        .zip(rates)
        .map(|(src, rate)| Profile {
            src: Some(src.to_string()),
            rate,
            ..profile.clone()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(src: &str, rate: Rate) -> Profile {
        Profile {
            src: Some(src.into()),
            rate,
            ..Profile::builtin(crate::config::Family::Inet4)
        }
    }

    #[test]
    fn source_flows_and_rates_split_into_disjoint_shares() {
        let p = profile("198.18.10.1:2000-198.18.10.20", Rate::Pps(100_001));
        let s = shares(&p, 2).unwrap();
        assert_eq!(
            s[0].src.as_deref(),
            Some("198.18.10.1:2000-198.18.10.10:2000")
        );
        assert_eq!(
            s[1].src.as_deref(),
            Some("198.18.10.11:2000-198.18.10.20:2000")
        );
        assert_eq!(
            (s[0].rate, s[1].rate),
            (Rate::Pps(50_001), Rate::Pps(50_000))
        );
        assert_eq!((s[0].dst(), s[0].frame_size()), (p.dst(), p.frame_size()));

        // One address: the ports are shared out; max stays max on each sender.
        let p = profile("[2001:2::1]:2000-[2001:2::1]:2002", Rate::Max);
        let s = shares(&p, 3).unwrap();
        let srcs: Vec<_> = s.iter().map(|p| p.src.clone().unwrap()).collect();
        assert_eq!(
            srcs,
            [
                "[2001:2::1]:2000-[2001:2::1]:2000",
                "[2001:2::1]:2001-[2001:2::1]:2001",
                "[2001:2::1]:2002-[2001:2::1]:2002"
            ]
        );
        assert!(s.iter().all(|p| p.rate == Rate::Max));
        assert_eq!(shares(&p, 1).unwrap(), std::slice::from_ref(&p));

        let err = shares(&p, 4).unwrap_err().to_string();
        assert!(err.starts_with("profile `inet4`: src = "), "{err}");
        let err = shares(&profile("198.18.10.1-198.18.10.4", Rate::Pps(1)), 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("rate = 1"), "{err}");
    }
}
