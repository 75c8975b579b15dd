//! Archives built in temporary directories from the netbenches fixtures: the archive's
//! `CPU/NIC/topic/results/<run>` layout, and synthetic histories of one series renamed to other
//! revisions with its rates scaled.

use std::path::{Path, PathBuf};

use crate::common::copy_dir;

/// Copies each fixture run into `root/cpu/nic/topic/results/<name>`; returns the run folders.
pub fn archive(root: &Path, lab: [&str; 3], runs: &[(&str, &Path)]) -> Vec<PathBuf> {
    let [cpu, nic, topic] = lab;
    let results = root.join(cpu).join(nic).join(topic).join("results");
    (runs.iter())
        .map(|(name, fixture)| {
            let to = results.join(name);
            copy_dir(fixture, &to);
            to
        })
        .collect()
}

/// The series the synthetic histories copy: tests/data/netbenches/003, image 299288,
/// config set fastforwarding, five iterations.
const SOURCE_IMAGE: &str = "299288";
const SOURCE_CONFIG: &str = "fastforwarding";

/// The lab of the synthetic histories, as the path gives it.
pub const SYNTH_LAB: [&str; 3] = ["Synth_8Cores", "NIC_S", "regress"];

/// One netbenches run per `(image, factor)` under `root/Synth_8Cores/NIC_S/regress/results/`,
/// each the source series renamed to `image` with every receiver rate multiplied by `factor`;
/// returns the run folders, in the order given.
pub fn synthetic(root: &Path, revisions: &[(&str, f64)]) -> Vec<PathBuf> {
    let [cpu, nic, topic] = SYNTH_LAB;
    let results = root.join(cpu).join(nic).join(topic).join("results");
    let source = crate::data("netbenches/003");
    let prefix = format!("bench.{SOURCE_IMAGE}.{SOURCE_CONFIG}.");
    revisions
        .iter()
        .map(|(image, factor)| {
            let run = results.join(image);
            std::fs::create_dir_all(&run).unwrap();
            for entry in std::fs::read_dir(&source).unwrap() {
                let name = entry.unwrap().file_name().into_string().unwrap();
                let Some(rest) = name.strip_prefix(&prefix) else {
                    continue;
                };
                let text = std::fs::read_to_string(source.join(&name)).unwrap();
                let text = if rest == "info" {
                    text.replace(
                        &format!("IMAGE=\"{SOURCE_IMAGE}\""),
                        &format!("IMAGE=\"{image}\""),
                    )
                } else if rest.ends_with(".receiver") {
                    scale_rates(&text, *factor)
                } else {
                    text
                };
                let to = run.join(format!("bench.{image}.{SOURCE_CONFIG}.{rest}"));
                std::fs::write(to, text).unwrap();
            }
            run
        })
        .collect()
}

/// A pkt-gen receiver log with the rate of every `… N pps (…)` line multiplied by `factor`.
pub fn scale_rates(log: &str, factor: f64) -> String {
    let lines: Vec<String> = log
        .split('\n')
        .map(|line| {
            let mut fields: Vec<String> = line.split(' ').map(str::to_string).collect();
            let rate = fields.get(3).and_then(|f| f.parse::<f64>().ok());
            match rate {
                Some(pps) if fields.get(4).is_some_and(|f| f == "pps") => {
                    fields[3] = format!("{:.0}", pps * factor);
                    fields.join(" ")
                }
                _ => line.to_string(),
            }
        })
        .collect();
    lines.join("\n")
}

/// The values of an archive's `.pps` file (one iteration's median per line).
pub fn pps_file(path: &Path) -> Vec<f64> {
    (std::fs::read_to_string(path).unwrap().lines())
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().parse().unwrap())
        .collect()
}
