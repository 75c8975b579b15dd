//! Seconds in the campaign file: float seconds in its text, [`Duration`]s in the typed model.
//!
//! A key holding seconds is read into a `Duration` (`#[serde(with = "seconds")]`, or
//! `seconds::option`) and written back as the same float seconds ([`secs`]), so that a results
//! directory's `campaign.toml` reads as it always did. What no `Duration` of the model holds
//! (negative, NaN, infinite, past [`MAX_SECONDS`]) fails the typed parse, whose refusal then
//! comes from `check_file` with the rule of its key: serde alone would say where, not which key
//! (`versions[1].online_timeout`), and validation says which key for every other fault.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

use super::bad;
use crate::error::InputError;
use crate::stats::Estimator;

/// The longest trial, warm-up or cool-down, in seconds (a day); no seconds key allows more.
pub(crate) const MAX_SECONDS: f64 = 86_400.0;

/// The float seconds of `d`, as the file gave them: one rounding of its exact nanoseconds, so
/// that a value read (to the nanosecond) is written and shown back as it was written.
pub(crate) fn secs(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e9
}

/// `secs` as a `Duration`, if the model holds it: from 0 to [`MAX_SECONDS`], to the nearest
/// nanosecond.
pub(crate) fn duration(secs: f64) -> Option<Duration> {
    (0.0..=MAX_SECONDS)
        .contains(&secs)
        .then(|| Duration::try_from_secs_f64(secs).ok())
        .flatten()
}

/// Whether `secs` suits `key` (`trial.duration`, `versions[2].online_timeout`…); the refusal
/// names the file and the key, in the words each key has always had.
pub(crate) fn check(origin: &str, key: &str, secs: f64) -> Result<(), InputError> {
    let range = match key {
        "alternating.phase" => 0.2..=60.0,
        // Below a second the floor holds too few probes to bound the error (none at 0).
        "alternating.max_duration" | "latency.floor_duration" => 1.0..=MAX_SECONDS,
        _ => 0.0..=MAX_SECONDS,
    };
    if range.contains(&secs) {
        return Ok(());
    }
    let rule = match key {
        "alternating.phase" => "must be 0.2 to 60 seconds".to_string(),
        "alternating.max_duration" | "latency.floor_duration" => {
            "must be 1 to 86400 seconds".to_string()
        }
        // Below a settle's upper bound, its phase, validation checks it with the phase.
        "alternating.settle" if secs.is_nan() || secs < 0.0 => "must be 0 seconds or more".into(),
        _ => format!("must be a number of seconds from 0 to {MAX_SECONDS}"),
    };
    // `{:?}` keeps 1e300 short.
    Err(bad(origin, key, format!("{rule}, not {secs:?}")))
}

/// `secs` for `key` as a `Duration`, or the refusal naming the key: a value the command line
/// gives (`--duration`).
pub(crate) fn duration_of(origin: &str, key: &str, secs: f64) -> Result<Duration, InputError> {
    check(origin, key, secs)?;
    // Every key's range lies within 0 to MAX_SECONDS, which a `Duration` holds.
    Ok(Duration::from_secs_f64(secs))
}

/// Refuses a seconds key whose value no `Duration` holds and an estimator that names none, each
/// naming its key: the typed parse refuses both too, but says only where (it is asked once that
/// parse failed); text that is no TOML is left to the typed parse, which says where.
pub(super) fn check_file(text: &str, origin: &str) -> Result<(), InputError> {
    let Ok(file) = toml::from_str::<toml::Table>(text) else {
        return Ok(());
    };
    let table = |name: &str| file.get(name).and_then(toml::Value::as_table);
    let mut keys: Vec<(String, &toml::Value)> = Vec::new();
    for (name, fields) in [
        ("trial", &["duration", "warmup", "cooldown"][..]),
        ("alternating", &["phase", "settle", "max_duration"][..]),
    ] {
        for field in fields {
            if let Some(value) = table(name).and_then(|t| t.get(*field)) {
                keys.push((format!("{name}.{field}"), value));
            }
        }
    }
    let versions = file.get("versions").and_then(toml::Value::as_array);
    for (i, version) in versions.into_iter().flatten().enumerate() {
        if let Some(value) = version.get("online_timeout") {
            keys.push((format!("versions[{i}].online_timeout"), value));
        }
    }
    for (key, value) in keys {
        // Another type is the typed parse's to refuse.
        let secs = match value {
            toml::Value::Float(f) => *f,
            toml::Value::Integer(i) => *i as f64,
            _ => continue,
        };
        if duration(secs).is_none() {
            check(origin, &key, secs)?;
        }
    }
    let estimator = table("alternating").and_then(|t| t.get("estimator"));
    if let Some(name) = estimator.and_then(toml::Value::as_str) {
        (name.parse::<Estimator>()).map_err(|e| bad(origin, "alternating.estimator", e))?;
    }
    Ok(())
}

/// Writes a duration as float seconds.
pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(secs(*d))
}

/// Reads float seconds (or whole ones) into a duration.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = f64::deserialize(d)?;
    duration(secs).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "must be a number of seconds from 0 to {MAX_SECONDS}, not {secs:?}"
        ))
    })
}

/// The same for an optional key.
pub(crate) mod option {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes a duration, if any, as float seconds.
    pub(crate) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    /// Reads float seconds, if any, into a duration.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        #[derive(Deserialize)]
        struct Seconds(#[serde(deserialize_with = "super::deserialize")] Duration);
        Ok(Option::<Seconds>::deserialize(d)?.map(|Seconds(d)| d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_read_are_written_back_as_they_were() {
        for text in [
            "0.3",
            "2.7",
            "0.1",
            "1.3",
            "0.123456789",
            "86400.0",
            "10.0",
            "0.0",
        ] {
            let d = duration(text.parse().unwrap()).unwrap();
            assert_eq!(secs(d).to_string(), text.trim_end_matches(".0").to_string());
        }
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e300, MAX_SECONDS + 1.0] {
            assert_eq!(duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn refusals_name_the_key_in_its_own_words() {
        let line = |key: &str, secs: f64| check("c.toml", key, secs).unwrap_err().to_string();
        assert_eq!(
            line("trial.duration", -5.0),
            "c.toml: key `trial.duration`: must be a number of seconds from 0 to 86400, not -5.0"
        );
        assert!(line("alternating.settle", -1.0).ends_with("must be 0 seconds or more, not -1.0"));
        assert!(line("alternating.phase", 0.1).ends_with("must be 0.2 to 60 seconds, not 0.1"));
        assert!(line("alternating.max_duration", f64::INFINITY).ends_with("not inf"));
        assert!(check("c.toml", "alternating.settle", 0.3).is_ok());
        let file =
            "[[versions]]\nname = \"a\"\n[[versions]]\nname = \"b\"\nonline_timeout = 1e300\n";
        let e = check_file(file, "c.toml").unwrap_err().to_string();
        assert!(e.contains("key `versions[1].online_timeout`"), "{e}");
    }
}
