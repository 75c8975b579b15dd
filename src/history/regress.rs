//! The changes jumpavg found: where a trend's group ends and the next begins lower
//! (regression) or higher (progression). Each is measured as ministat measures a comparison
//! (Student's t over the two groups' iterations, 95 %), drawn as a differential flamegraph when
//! both sides were profiled, and, when both versions are quick versions of benchlab campaigns,
//! handed a campaign file that alternates them under the same traffic to confirm it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::db::Db;
use super::revision::Revision;
use super::trend::{file_safe, Point, Trend};
use crate::config::{Campaign, Design};
use crate::stats::jumpavg::Trend as Kind;
use crate::stats::{compare, Confidence, Flavor, Summary};

/// A change between two groups of a trend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The series, in one line.
    pub(crate) series: String,
    /// Regression (lower) or progression (higher).
    pub(crate) kind: Kind,
    /// The last version of the group before.
    pub(crate) before: String,
    /// The first version of the group after.
    pub(crate) after: String,
    /// When the first run after ran, when known.
    pub(crate) date: Option<String>,
    /// The first run after's revision, when it has one (newest-first order, `--since`).
    #[serde(skip)]
    pub(crate) revision: Option<Revision>,
    /// The groups' averages (pps).
    pub(crate) before_avg: f64,
    /// The average after.
    pub(crate) after_avg: f64,
    /// Δ of the averages, in percent of the group before (ministat's relative difference).
    pub(crate) delta_pct: f64,
    /// Half-width of its 95 % interval, in percent.
    pub(crate) ci_pct: f64,
    /// Whether ministat's test finds it (|Δ| beyond its interval).
    pub(crate) significant: bool,
    /// Iterations pooled before and after.
    pub(crate) iterations: (usize, usize),
    /// The differential flamegraph of the two runs, when both were profiled and it was drawn.
    pub(crate) flamegraph: Option<PathBuf>,
    /// The command that confirms the change with an alternating run, when both are quick
    /// versions of benchlab campaigns.
    pub(crate) confirm: Option<String>,
    /// The two runs (database ids), for the flamegraph and the confirming campaign.
    #[serde(skip)]
    pub(crate) runs: (i64, i64),
    /// The two runs' campaigns (database ids).
    #[serde(skip)]
    pub(crate) campaigns: (i64, i64),
    /// Whether both runs are quick versions, profiled.
    #[serde(skip)]
    pub(crate) sides: [(bool, bool); 2],
    /// Config set and profile, for the confirming campaign.
    #[serde(skip)]
    pub(crate) cell: (String, String),
    /// File-name stem of the series.
    #[serde(skip)]
    pub(crate) slug: String,
}

/// Every change of `trends`, newest first (by the first run after: revision, else date);
/// `since` keeps those at or after a revision (`r318516`) or a date (`2020-12-01`).
pub(crate) fn changes(trends: &[Trend], since: Option<&str>) -> Vec<Change> {
    let mut out: Vec<Change> = trends.iter().flat_map(changes_of).collect();
    if let Some(since) = since {
        let revision = Revision::parse(since);
        out.retain(|c| match (&revision, &c.revision, &c.date) {
            (Some(s), Some(r), _) => r.order >= s.order,
            (None, _, Some(date)) => date.as_str() >= since,
            _ => false,
        });
    }
    out.sort_by(|a, b| {
        let key = |c: &Change| {
            (
                c.revision.as_ref().map_or(i64::MIN, |r| r.order),
                c.date.clone().unwrap_or_default(),
            )
        };
        key(b).cmp(&key(a))
    });
    out
}

fn changes_of(trend: &Trend) -> Vec<Change> {
    let groups = &trend.grouping.groups;
    groups
        .windows(2)
        .filter(|g| g[1].trend != Kind::Normal)
        .map(|g| {
            let pool = |start: usize, len: usize| -> Vec<f64> {
                (trend.points[start..start + len].iter())
                    .flat_map(|p| p.values.iter().copied())
                    .collect()
            };
            let (a, b) = (pool(g[0].start, g[0].len), pool(g[1].start, g[1].len));
            let (sa, sb) = (
                Summary::of(&a, Flavor::Current),
                Summary::of(&b, Flavor::Current),
            );
            let c = compare(&sa, &sb, Confidence::P95, Flavor::Current);
            let before: &Point = &trend.points[g[0].start + g[0].len - 1];
            let after: &Point = &trend.points[g[1].start];
            Change {
                series: trend.name(),
                kind: g[1].trend,
                before: before.version.clone(),
                after: after.version.clone(),
                date: after.date.clone(),
                revision: after.revision.clone(),
                before_avg: sa.mean,
                after_avg: sb.mean,
                delta_pct: c.relative_pct,
                ci_pct: c.relative_ci_pct,
                significant: c.significant,
                iterations: (a.len(), b.len()),
                flamegraph: None,
                confirm: None,
                runs: (before.run, after.run),
                campaigns: (before.campaign, after.campaign),
                sides: [
                    (before.quick, before.profiled),
                    (after.quick, after.profiled),
                ],
                cell: (trend.config.clone(), trend.profile.clone()),
                slug: trend.slug(),
            }
        })
        .collect()
}

/// Draws each change's differential flamegraph and writes its confirming campaign into
/// `out_dir` (`flame/`, `confirm/`), where both sides allow.
pub(crate) fn attach(db: &mut Db, changes: &mut [Change], out_dir: &Path) -> anyhow::Result<()> {
    for change in changes.iter_mut() {
        // Versions of 60 characters at most: the slug's 120 and these fit a file name.
        let version = |v: &str| file_safe(v).chars().take(60).collect::<String>();
        let stem = format!(
            "{}.{}-{}",
            change.slug,
            version(&change.before),
            version(&change.after)
        );
        if change.sides.iter().all(|(_, profiled)| *profiled) {
            change.flamegraph = flamegraph(db, change, &out_dir.join("flame"), &stem)?;
        }
        if change.sides.iter().all(|(quick, _)| *quick) {
            let path = out_dir.join("confirm").join(format!("{stem}.toml"));
            if confirm_campaign(db, change, &path)? {
                change.confirm = Some(format!("benchlab run {}", path.display()));
            }
        }
    }
    Ok(())
}

fn flamegraph(
    db: &mut Db,
    change: &Change,
    dir: &Path,
    stem: &str,
) -> anyhow::Result<Option<PathBuf>> {
    let parse =
        |text: Option<String>| text.and_then(|t| crate::profile::folded::Folded::parse(&t).ok());
    let (Some(before), Some(after)) = (
        parse(db.folded(change.runs.0)?),
        parse(db.folded(change.runs.1)?),
    ) else {
        return Ok(None);
    };
    let title = format!("{} → {}", change.before, change.after);
    let decimals = crate::stats::paired::decimals(change.ci_pct, 2);
    let subtitle = format!(
        "{}: red grew, blue shrank ({:+.decimals$}% ± {:.decimals$}%)",
        change.series, change.delta_pct, change.ci_pct
    );
    let svg = crate::report::flame::render_diff(&before, &after, &title, &subtitle)?;
    let path = dir.join(format!("{stem}.svg"));
    crate::atomic::create_dir(dir)?;
    crate::atomic::write(&path, &svg)?;
    Ok(Some(path))
}

/// Writes a campaign alternating the two versions on the change's config set and profile, the
/// later campaign's lab and trial settings kept; false when the versions cannot be told apart
/// (the same definition measured twice) or a campaign file is missing.
fn confirm_campaign(db: &mut Db, change: &Change, path: &Path) -> anyhow::Result<bool> {
    let parse = |text: Option<String>| text.and_then(|t| toml::from_str::<Campaign>(&t).ok());
    let (Some(before), Some(mut after)) = (
        parse(db.campaign_toml(change.campaigns.0)?),
        parse(db.campaign_toml(change.campaigns.1)?),
    ) else {
        return Ok(false);
    };
    let find = |c: &Campaign, name: &str| c.versions.iter().find(|v| v.name == name).cloned();
    let (Some(mut old), Some(new)) = (find(&before, &change.before), find(&after, &change.after))
    else {
        return Ok(false);
    };
    if old.sysctls == new.sysctls && old.commands == new.commands {
        return Ok(false);
    }
    if old.name == new.name {
        old.name = format!("{}-before", old.name);
    }
    let (config, profile) = &change.cell;
    after.title = format!(
        "Confirming {} → {} ({})",
        change.before, change.after, change.series
    );
    after.versions = vec![old, new];
    after.config_sets = vec![config.clone()];
    after.profiles.retain(|p| &p.name == profile);
    after.design = Design::Auto;
    after.design_auto = false;
    after.alternating = None;
    after.profile = false;
    let text = toml::to_string(&after)?;
    crate::atomic::create_dir(path.parent().unwrap_or(Path::new(".")))?;
    crate::atomic::write(path, text.as_bytes())?;
    Ok(true)
}
