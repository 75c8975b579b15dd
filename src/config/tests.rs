//! Unit tests of `config`.

use super::*;

const SETS: [&str; 5] = [
    "forwarding",
    "nft-stateless",
    "nft-stateful",
    "iptables-stateful",
    "iptables-legacy-stateful",
];

fn parse(text: &str) -> Result<Campaign, String> {
    Campaign::from_toml(text, "c.toml", &SETS).map_err(|e| e.to_string())
}

#[test]
fn empty_file_is_the_builtin_campaign() {
    assert_eq!(parse("").unwrap(), Campaign::builtin());
}

#[test]
fn defaults_round_trip_through_toml() {
    let c = Campaign::default();
    assert_eq!(parse(&c.to_toml()).unwrap(), c);
}

#[test]
fn errors_name_the_key() {
    let cases = [
        ("iterations = 0", "key `iterations`"),
        ("[trial]\nduration = -5", "key `trial.duration`"),
        ("[trial]\nduratoin = 5", "unknown field `duratoin`"),
        (
            "config_sets = [\"pf\"]",
            "`pf` is neither a built-in config set",
        ),
        ("title = ", "line 1, column 9"),
        (
            "[[profiles]]\nname = \"a.b\"\naf = \"inet4\"",
            "`profiles[0].name`: `a.b` holds `.`",
        ),
        (
            "[[profiles]]\nname = \"big\"\naf = \"inet4\"\nframe_size = 9000",
            "profiles[0].frame_size",
        ),
        (
            "[[profiles]]\nname = \"v6\"\naf = \"inet6\"\nframe_size = 64",
            "`profiles[0].frame_size`: 64 is outside 66…1518 bytes, the inet6 range",
        ),
        ("[[profiles]]\nname = \"x\"\naf = \"inet5\"", "line 3"),
        ("[trial]\nduration = 3", "make the trial longer"),
    ];
    for (text, want) in cases {
        let err = parse(text).unwrap_err();
        assert!(err.contains(want), "{text:?} gave {err:?}, wanted {want:?}");
        assert!(err.starts_with("c.toml: "), "{err}");
        assert!(!err.contains('\n'), "one line only: {err:?}");
    }
}

#[test]
fn an_unset_frame_size_is_the_familys_smallest_and_is_written_out() {
    let c = parse(
        "[[profiles]]\nname = \"a\"\naf = \"inet4\"\n\
             [[profiles]]\nname = \"b\"\naf = \"inet6\"",
    )
    .unwrap();
    let sizes: Vec<Option<u32>> = c.profiles.iter().map(|p| p.frame_size).collect();
    assert_eq!(sizes, [Some(64), Some(66)]);
    assert!(c.to_toml().contains("frame_size = 66"));
    let builtin: Vec<u32> = Campaign::default()
        .profiles
        .iter()
        .map(Profile::frame_size)
        .collect();
    assert_eq!(builtin, [64, 66]);
}

#[test]
fn rate_is_max_or_positive() {
    let p = |r: &str| {
        parse(&format!(
            "[[profiles]]\nname = \"a\"\naf = \"inet4\"\nrate = {r}"
        ))
    };
    assert_eq!(p("\"max\"").unwrap().profiles[0].rate, Rate::Max);
    assert_eq!(p("250000").unwrap().profiles[0].rate, Rate::Pps(250_000));
    // As `benchlab gen -r` takes it.
    assert_eq!(p("\"250k\"").unwrap().profiles[0].rate, Rate::Pps(250_000));
    assert_eq!(
        p("\"1.5M\"").unwrap().profiles[0].rate,
        Rate::Pps(1_500_000)
    );
    assert!(p("0").is_err());
    assert!(p("\"0k\"").is_err());
    assert!(p("\"fast\"").is_err());
}

/// `benchlab run` with no argument runs what examples/default.toml says, the alternating
/// design included.
#[test]
fn the_builtin_campaign_is_examples_default_toml() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/default.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let file = Campaign::from_toml(&text, path, crate::dut::KNOWN_PRESETS).unwrap();
    // The file spells out the flows the built-in profiles leave implicit.
    let explicit = |mut c: Campaign| {
        for p in &mut c.profiles {
            (p.src, p.dst) = (Some(p.src().into()), Some(p.dst().into()));
        }
        c
    };
    assert_eq!(explicit(file.clone()), explicit(Campaign::builtin()));
    assert_eq!(file.design, Design::Alternating);
}

#[test]
fn the_alternating_settings_are_checked_at_load() {
    let bad = |extra: &str| {
        let text = format!("design = \"alternating\"\n{extra}");
        Campaign::from_toml(&text, "c.toml", crate::dut::KNOWN_PRESETS)
            .unwrap_err()
            .to_string()
    };
    assert!(bad("[alternating]\nestimator = \"p0\"\n").contains("alternating.estimator"));
    assert!(bad("[alternating]\nphase = 0.25\n").contains("alternating.settle"));
    assert!(bad("[alternating]\nsettle = -1\n").contains("must be 0 seconds or more, not -1.0"));
    assert!(bad("[alternating]\nprecision = -1\n").contains("alternating.precision"));
    assert!(bad("config_sets = [\"forwarding\"]\n").contains("at least two"));
    // Two quick versions make two entries with one config set; a version that reboots does not.
    let versions = "config_sets = [\"forwarding\"]\n[[versions]]\nname = \"a\"\n\
                    [[versions]]\nname = \"b\"\nsysctls = { \"net.ipv4.ip_forward\" = \"1\" }\n";
    let text = format!("design = \"alternating\"\n{versions}");
    assert!(Campaign::from_toml(&text, "c.toml", crate::dut::KNOWN_PRESETS).is_ok());
    assert!(bad(&format!("{versions}reboot = [\"reboot\"]\n")).contains("at least two"));
    let trials = Campaign::from_toml(
        "design = \"trials\"\n[alternating]\n",
        "c.toml",
        crate::dut::KNOWN_PRESETS,
    );
    assert!(trials
        .unwrap_err()
        .to_string()
        .contains("design = \"alternating\""));
}

#[test]
fn throughput_profiles_take_the_search_table_and_its_errors_name_the_key() {
    let profile = "[[profiles]]\nname = \"inet4\"\naf = \"inet4\"\nmeasure = \"throughput\"\n";
    let c = parse(profile).unwrap();
    assert_eq!(c.profiles[0].measure, Measure::Throughput);
    assert_eq!(c.search(), crate::search::SearchConfig::mlrsearch());
    let c = parse(&format!("{profile}[search]\npreset = \"rfc2544\"\n")).unwrap();
    assert_eq!(c.search().goals[0].final_trial_duration, 60.0);
    // Written out and read back, the search and the measure stay.
    assert_eq!(parse(&c.to_toml()).unwrap(), c);
    assert_eq!(parse("").unwrap().profiles[0].measure, Measure::Saturation);
    let cases = [
        (
            format!("{profile}[search]\n[[search.goals]]\nexceed_ratio = 1.5\n"),
            "key `search.goals[0].exceed_ratio` = 1.5",
        ),
        (
            "[search]\npreset = \"rfc2544\"\n".to_string(),
            "key `search`: no profile has measure = \"throughput\"",
        ),
        (
            format!("{}rate = 5000\n", profile),
            "key `profiles[0].rate`: 5000",
        ),
        (
            profile.replace("throughput", "ndr"),
            "unknown variant `ndr`",
        ),
    ];
    for (text, wanted) in cases {
        let e = parse(&text).unwrap_err();
        assert!(e.contains(wanted), "{text}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn overrides_are_merged_once_and_only_their_faults_say_so() {
    let prepare = |text: &str, overrides: Overrides| {
        let c = Campaign::parse(text, "c.toml").unwrap();
        c.prepare("c.toml", &SETS, &overrides, None)
            .map_err(|e| e.to_string())
    };
    let quick = Overrides {
        quick: true,
        iterations: Some(2),
        ..Overrides::default()
    };
    let c = prepare("", quick).unwrap();
    let alt = c.alternating.as_ref().unwrap();
    assert_eq!((c.iterations, alt.min_blocks), (2, 2));
    assert_eq!(alt.max_duration, std::time::Duration::from_secs(40));
    // `--profile` chooses the design: the trials one, which has no `[alternating]`.
    let profile = Overrides {
        profile: true,
        ..Overrides::default()
    };
    let c = prepare("", profile).unwrap();
    assert_eq!((c.design, c.alternating.is_none()), (Design::Trials, true));
    let suffix = "(with -n/--duration/--quick/--profile applied)";
    let many = Overrides {
        iterations: Some(0),
        ..Overrides::default()
    };
    assert!(prepare("", many).unwrap_err().ends_with(suffix));
    // A fault the flags leave as the file wrote it is the file's; one they change is theirs.
    let file = prepare("iterations = 0", profile).unwrap_err();
    assert!(
        file.contains("key `iterations`") && !file.contains(suffix),
        "{file}"
    );
    assert!(prepare("iterations = 0", quick).is_ok());
    // A search and an alternating latency run shrink with the rest.
    let search_text = "[trial]\nlatency = true\n[[profiles]]\nname = \"a\"\naf = \"inet4\"\n\
                       measure = \"throughput\"\n";
    let c = prepare(search_text, quick).unwrap();
    let search = c.search();
    assert_eq!(search.search_duration_max, 60.0);
    assert_eq!(search.goals[0].duration_sum, 3.0);
    assert!(search.validate().is_ok());
    // RFC 2544's one trial per load, no preceding targets, stays valid shrunk.
    let rfc = prepare(
        &format!("{search_text}[search]\npreset = \"rfc2544\"\n"),
        quick,
    );
    assert!(rfc.unwrap().search().validate().is_ok());
    let c = prepare("[trial]\nlatency = true\n", quick).unwrap();
    assert_eq!(c.latency().blocks, 4);
}

#[test]
fn seconds_no_duration_holds_are_refused_by_key_before_the_typed_parse() {
    for (text, want) in [
        (
            "[trial]\nwarmup = nan",
            "key `trial.warmup`: must be a number of seconds",
        ),
        (
            "[alternating]\nmax_duration = inf",
            "key `alternating.max_duration`: must be 1 to",
        ),
        (
            "[alternating]\nphase = -1",
            "key `alternating.phase`: must be 0.2 to 60 seconds",
        ),
        (
            "[alternating]\nestimator = \"mode\"",
            "key `alternating.estimator`: unknown",
        ),
    ] {
        let err = parse(text).unwrap_err();
        assert!(
            err.starts_with("c.toml: ") && err.contains(want),
            "{text}: {err}"
        );
    }
    let c = parse("[alternating]\nphase = 0.3\nestimator = \"median\"\n").unwrap();
    let text = c.to_toml();
    assert!(text.contains("phase = 0.3\n") && text.contains("estimator = \"median\""));
    assert_eq!(parse(&text).unwrap(), c);
}
