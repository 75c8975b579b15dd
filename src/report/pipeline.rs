//! The report pipeline, the same for `benchlab report` and the end of `benchlab run`: read a
//! directory (benchlab results or netbenches logs), settle the options (command line over
//! `report.toml` over what the results say), build the [`Report`] and write its files.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::InputError;
use crate::ingest;
use crate::report::archive::Plan;
use crate::report::settings::{MinistatGeneration, Settings};
use crate::report::{reproduce, write_files, Report, ReportOptions};
use crate::stats::Flavor;

/// What the command line sets over `report.toml` and the campaign.
#[derive(Debug, Default)]
pub(crate) struct Overrides {
    /// `--versions`.
    pub(crate) versions: Option<Vec<String>>,
    /// `--configs`.
    pub(crate) configs: Option<Vec<String>>,
    /// `--ministat`.
    pub(crate) ministat: Option<MinistatGeneration>,
}

/// A report written: the model and how many files it wrote.
#[derive(Debug)]
pub(crate) struct Written {
    /// The report.
    pub(crate) report: Report,
    /// Files written into the output directory.
    pub(crate) files: usize,
}

/// Reads `dir` (benchlab results or netbenches logs), builds the report and writes its files
/// into `out_dir` (created if missing); `known_sets` are the built-in config set names a
/// stored campaign may use.
pub(crate) fn from_dir(
    dir: &Path,
    out_dir: &Path,
    overrides: Overrides,
    known_sets: &[&str],
) -> anyhow::Result<Written> {
    check_dirs(dir, out_dir)?;
    let settings = Settings::load(dir)?;
    let netbenches = !ingest::benchlab::is_results_dir(dir);
    let (results, defaults) = if netbenches {
        (ingest::netbenches::read_dir(dir)?, ReportOptions::default())
    } else {
        let read = ingest::benchlab::read_dir(dir, known_sets)?;
        let defaults = campaign_options(&read);
        (read.results, defaults)
    };
    let asked = overrides.ministat.or(settings.ministat);
    // The command line wins over report.toml, which wins over what the results say.
    let mut labels = defaults.labels;
    labels.extend(settings.labels);
    let mut options = ReportOptions {
        versions: (overrides.versions)
            .or(settings.versions)
            .or(defaults.versions),
        configs: overrides.configs.or(settings.configs).or(defaults.configs),
        flavor: asked.map(Into::into).unwrap_or(defaults.flavor),
        title: settings.title.or(defaults.title),
        lines: if settings.lines.is_empty() {
            defaults.lines
        } else {
            settings.lines
        },
        labels,
        trials_advice: defaults.trials_advice,
        tables: Vec::new(),
    };
    // An archive's own README tells which series it compared, in which order, and which
    // ministat made its tables (unless one was asked for).
    let readme = netbenches.then(|| reproduce::archive_readme(dir)).flatten();
    let plan = (readme.as_deref()).and_then(|readme| Plan::read(readme, &results));
    if let Some(plan) = &plan {
        options.tables = plan.tables.clone();
    }
    let chosen = match (&readme, asked) {
        (Some(readme), None) => reproduce::choose(readme, &results, &options)?,
        _ => None,
    };
    let flavor_reason = chosen.map(|(flavor, why)| {
        options.flavor = flavor;
        why
    });
    let mut report = Report::build(results, &options)?;
    report.flavor_reason = flavor_reason;
    if let Some(plan) = &plan {
        let reason = plan.reason(&report);
        report.lines.push(reason);
        report.unreproduced = plan.unreproduced(&report);
    }
    let files = report.files()?;
    write_files(out_dir, &files)?;
    Ok(Written {
        report,
        files: files.len(),
    })
}

/// Said in one line before a reader or writer meets them as odder errors: the input must be a
/// directory, and the output one or nothing yet (under a directory).
fn check_dirs(dir: &Path, out_dir: &Path) -> Result<(), InputError> {
    if !dir.is_dir() {
        let what = if dir.exists() {
            "not a directory"
        } else {
            "no such directory"
        };
        return Err(InputError::new(format!(
            "'{}': {what}; give a benchlab results directory or one of netbenches logs",
            dir.display()
        )));
    }
    // A file, a path under one, a symlink loop: refused before the directory is read.
    crate::atomic::check_output_dir(out_dir)
}

/// The report options a benchlab campaign implies: its title, versions and config sets in its
/// order, version labels, and setup lines from `lab.json` and the campaign's notes.
fn campaign_options(read: &ingest::benchlab::CampaignResults) -> ReportOptions {
    let c = &read.campaign;
    let mut lines = super::host::setup_lines(&read.lab);
    if let Some(placement) = read.lab.placement_summary() {
        let driver = read.lab.nic_driver.as_deref().unwrap_or("veth");
        lines.push(format!(
            "Virtual lab: network namespaces joined by {driver} pairs; {placement}"
        ));
    }
    lines.push(format!("Design: {}, {}", c.design, c.design_reason()));
    lines.extend(c.notes.iter().cloned());
    let mut labels: BTreeMap<String, String> = (c.versions.iter())
        .filter_map(|v| v.label.clone().map(|l| (v.name.clone(), l)))
        .collect();
    // Alternated versions make one run, `<v1>+<v2>`, whose entries `<version>.<set>` the
    // paired lines and the time chart name.
    if c.alternates_versions() {
        let shown: Vec<&str> = (c.versions.iter())
            .map(|v| v.label.as_deref().unwrap_or(&v.name))
            .collect();
        for (v, label) in c.versions.iter().zip(&shown) {
            for set in c.config_set_names() {
                labels.insert(format!("{}.{set}", v.name), format!("{label} ({set})"));
            }
        }
        labels.insert(c.runs().run_version(0), shown.join(" / "));
    }
    ReportOptions {
        versions: Some(c.versions.iter().map(|v| v.name.clone()).collect()),
        configs: Some(c.config_set_names().map(str::to_string).collect()),
        flavor: Flavor::Current,
        title: Some(c.title.clone()),
        lines,
        labels,
        trials_advice: c.trials_advice(),
        tables: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Campaign;
    use crate::store::LabRecord;

    #[test]
    fn a_campaign_names_its_host_its_lab_and_its_notes_in_that_order() {
        let lab: LabRecord = serde_json::from_str(
            r#"{"host": {"cpu": "AMD EPYC", "cores": 2, "os": "Debian 12", "kernel": "Linux vm"},
                "lab": {"placement": {"summary": "the DUT forwards on CPU 1"}}}"#,
        )
        .unwrap();
        let read = ingest::benchlab::CampaignResults {
            campaign: Campaign {
                notes: vec!["tuned by hand".into()],
                ..Campaign::default()
            },
            lab,
            results: ingest::Results::default(),
        };
        let options = campaign_options(&read);
        assert_eq!(
            options.lines,
            [
                "AMD EPYC (2 CPUs)",
                "Debian 12, Linux vm",
                "Virtual lab: network namespaces joined by veth pairs; the DUT forwards on CPU 1",
                "Design: trials, set in the campaign file",
                "tuned by hand",
            ]
        );
        assert_eq!(options.versions, Some(vec!["default".to_string()]));
    }

    #[test]
    fn a_missing_input_or_an_output_that_is_a_file_is_one_line() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, "").unwrap();
        let missing = tmp.path().join("none");
        let e = check_dirs(&missing, tmp.path()).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "': no such directory; give a benchlab results directory or one of netbenches logs"
            ),
            "{e}"
        );
        let e = check_dirs(tmp.path(), &file).unwrap_err().to_string();
        assert!(
            e.ends_with("': exists and is not a directory; choose another output directory (-o)"),
            "{e}"
        );
    }
}
