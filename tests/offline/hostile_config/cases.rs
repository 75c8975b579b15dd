//! The hostile cases of `hostile_config`, one generator per class.

/// A well-formed campaign the cases change one thing of: two config sets, one profile.
pub const BASE: &str = "iterations = 2\nconfig_sets = [\"forwarding\", \"nft-stateless\"]\n";

/// One hostile input: the campaign's text, extra arguments, directories to make beside it,
/// and what the one line must name.
pub struct Case {
    pub name: String,
    pub toml: String,
    pub args: Vec<String>,
    pub dirs: Vec<String>,
    pub key: String,
}

/// A case of `run --check` on `toml` whose line must name `key`.
pub fn case(name: impl Into<String>, toml: impl Into<String>, key: impl Into<String>) -> Case {
    Case {
        name: name.into(),
        toml: toml.into(),
        args: Vec::new(),
        dirs: Vec::new(),
        key: key.into(),
    }
}

/// `s` as a TOML string, escaped.
pub fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A `[[versions]]` entry named `name`.
pub fn version(name: &str) -> String {
    format!("[[versions]]\nname = {}\n", q(name))
}

/// An inet4 `[[profiles]]` entry named `name`.
pub fn profile(name: &str) -> String {
    format!("[[profiles]]\nname = {}\naf = \"inet4\"\n", q(name))
}

/// A throughput campaign whose one goal is named `goal`.
pub fn goal(goal: &str) -> String {
    format!(
        "design = \"trials\"\n[[profiles]]\nname = \"p\"\naf = \"inet4\"\nmeasure = \
         \"throughput\"\n[[search.goals]]\nname = {}\n",
        q(goal)
    )
}

/// Names no file name may be built from, each kind of fault.
pub fn bad_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "",
        ".",
        "..",
        "x/../../../escaped",
        "a/b",
        "/abs",
        "a\0b",
        "a\nb",
        "a\x1b[31mb",
        "a.b",
        "a b",
        "-n",
        "--quick",
        "é",
        "a\\b",
        "a\u{202e}b",
        "a\tb",
        "a:b*",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    names.extend(["x".repeat(65), "y".repeat(300), "z".repeat(100_000)]);
    names
}

/// A campaign's text made around one value.
type Entry = fn(&str) -> String;

/// Bad names of every kind, and names within the bound whose file names are not.
pub fn names() -> Vec<Case> {
    let mut cases = Vec::new();
    let kinds: [(Entry, &str); 4] = [
        (|n| format!("{BASE}{}", version(n)), "versions[0].name"),
        (
            |n| format!("{BASE}{}{}", version("ok"), version(n)),
            "versions[1].name",
        ),
        (|n| format!("{BASE}{}", profile(n)), "profiles[0].name"),
        (|n| format!("{BASE}{}", goal(n)), "search.goals[0].name"),
    ];
    for (i, n) in bad_names().into_iter().enumerate() {
        for (toml, key) in kinds {
            cases.push(case(format!("{key} {i}"), toml(&n), key));
        }
    }
    // A config set directory's last component is its name.
    for (i, dir) in ["a.b", "a b", "-x", "é", "a\nb", &"c".repeat(65)]
        .iter()
        .enumerate()
    {
        let mut c = case(
            format!("config set directory {i}"),
            format!(
                "config_sets = [\"forwarding\", {}]\n",
                q(&format!("sets/{dir}"))
            ),
            "config_sets[1]",
        );
        c.dirs.push(format!("sets/{dir}"));
        cases.push(c);
    }
    // Names each within the bound, whose combination is not.
    let long = |c: char| c.to_string().repeat(64);
    let mut c = case(
        "goal file name over 255 bytes",
        format!(
            "config_sets = [{}]\n{}{}",
            q(&format!("sets/{}", long('c'))),
            goal(&long('g')).replace("name = \"p\"", &format!("name = {}", q(&long('p')))),
            version(&long('v'))
        ),
        "search.goals[0].name",
    );
    c.dirs.push(format!("sets/{}", long('c')));
    cases.push(c);
    let four: String = "abcd".chars().map(|c| version(&long(c))).collect();
    cases.push(case(
        "alternated versions joined over 255 bytes",
        format!("{BASE}design = \"alternating\"\n{four}"),
        "`versions`",
    ));
    cases
}

/// Sysctls and commands that cannot run as written.
pub fn settings() -> Vec<Case> {
    let mut cases = Vec::new();
    let keys = [
        "a=b",
        "net.ipv4.ip_forward=1",
        "../../etc/passwd",
        "net/../../x",
        "net..ipv4",
        ".net",
        "net.",
        "net ipv4",
        "net\tx",
        "-w",
        "",
        "/net/ipv4",
    ];
    for (i, key) in keys.iter().enumerate() {
        cases.push(case(
            format!("sysctl key {i}"),
            format!(
                "{BASE}[[versions]]\nname = \"v\"\nsysctls = {{ {} = \"1\" }}\n",
                q(key)
            ),
            "versions[0].sysctls",
        ));
    }
    for (i, value) in ["1\n2", "1\r", "\x1b[2J", "a\0"].iter().enumerate() {
        cases.push(case(
            format!("sysctl value {i}"),
            format!(
                "{BASE}[[versions]]\nname = \"v\"\nsysctls = {{ \"net.x\" = {} }}\n",
                q(value)
            ),
            "versions[0].sysctls",
        ));
    }
    let argvs = [
        "[]",
        "[\"\"]",
        "[\" \"]",
        "[\"\", \"-a\"]",
        "[\"echo\", \"a\\u0000\"]",
    ];
    for (i, argv) in argvs.iter().enumerate() {
        for (table, key) in [
            (
                "[[versions]]\nname = \"v\"\ncommands",
                "versions[0].commands[0]",
            ),
            (
                "[[versions]]\nname = \"v\"\ninstall",
                "versions[0].install[0]",
            ),
            ("[hooks]\nbefore", "hooks.before[0]"),
            ("[hooks]\nduring", "hooks.during[0]"),
            ("[hooks]\nafter", "hooks.after[0]"),
        ] {
            cases.push(case(
                format!("command {i} in {key}"),
                format!("{BASE}{table} = [{argv}]\n"),
                key,
            ));
        }
        if *argv != "[]" {
            for key in ["reboot", "online"] {
                cases.push(case(
                    format!("command {i} as {key}"),
                    format!("{BASE}[[versions]]\nname = \"v\"\n{key} = {argv}\n"),
                    format!("versions[0].{key}"),
                ));
            }
        }
    }
    cases
}

/// Ranges of the other address family than the profile's.
pub fn families() -> Vec<Case> {
    let v4 = "198.18.10.1:2000-198.18.10.20";
    let v6 = "[2001:2:0:10::1]:2000-[2001:2:0:10::14]";
    let mut cases = Vec::new();
    for (af, other) in [("inet6", v4), ("inet4", v6)] {
        for key in ["src", "dst"] {
            cases.push(case(
                format!("{af} profile with {key} of the other family"),
                format!(
                    "{BASE}[[profiles]]\nname = \"p\"\naf = \"{af}\"\n{key} = {}\n",
                    q(other)
                ),
                format!("profiles[0].{key}"),
            ));
        }
    }
    cases.push(case(
        "second profile mixed",
        format!(
            "{BASE}{}[[profiles]]\nname = \"q\"\naf = \"inet6\"\nsrc = {}\ndst = {}\n",
            profile("p"),
            q(v6),
            q("198.19.10.1")
        ),
        "profiles[1].dst",
    ));
    cases
}

/// The DUT on the generator's CPU, or on a CPU this machine lacks.
pub fn cpus() -> Vec<Case> {
    let mut cases = Vec::new();
    for cpu in [0, 1, 3] {
        cases.push(case(
            format!("dut_cpu = generator_cpu = {cpu}"),
            format!(
                "{BASE}[lab]\nplacement = \"separate\"\ndut_cpu = {cpu}\ngenerator_cpu = {cpu}\n"
            ),
            "dut_cpu",
        ));
        cases.push(case(
            format!("dut_cpu = generator_cpu = {cpu}, default placement"),
            format!("{BASE}[lab]\ndut_cpu = {cpu}\ngenerator_cpu = {cpu}\n"),
            "dut_cpu",
        ));
    }
    for key in ["dut_cpu", "generator_cpu"] {
        for cpu in [4096u64, 1 << 40] {
            cases.push(case(
                format!("{key} = {cpu}"),
                format!("{BASE}[lab]\nplacement = \"shared\"\n{key} = {cpu}\n")
                    .replace("placement = \"shared\"\ndut_cpu", "dut_cpu"),
                key,
            ));
        }
    }
    cases
}

/// `dut_mac` values that are not six hex octets.
pub fn macs() -> Vec<Case> {
    let lab = |mac: &str| {
        format!(
            "{BASE}[lab.hosts.dut]\ntransport = \"ssh\"\nhost = \"dut1\"\n\
             [lab.hosts.sender]\ntransport = \"ssh\"\nhost = \"gen1\"\ninterface = \"e0\"\n\
             dut_mac = {}\n[lab.hosts.receiver]\ntransport = \"ssh\"\nhost = \"gen1\"\n\
             interface = \"e1\"\n",
            q(mac)
        )
    };
    [
        "zz:zz",
        "",
        "00:0d:b9:41:ca",
        "00:0d:b9:41:ca:3d:11",
        "000db941ca3d",
        "00-0d-b9-41-ca-3d",
        "0:d:b9:41:ca:3d",
        "gg:0d:b9:41:ca:3d",
        "00:0d:b9:41:ca:3d\n",
        "00:0d:b9:41:ca:é",
    ]
    .iter()
    .enumerate()
    .map(|(i, mac)| case(format!("MAC {i}"), lab(mac), "dut_mac"))
    .collect()
}

/// `min_blocks` blocks that cannot fit `max_duration`, from the file or the flags.
pub fn alternating() -> Vec<Case> {
    let alt = |table: &str| format!("{BASE}design = \"alternating\"\n[alternating]\n{table}");
    let mut cases = vec![
        case(
            "38 blocks of 2 s over 75 s",
            alt("max_duration = 75\nmin_blocks = 38\n"),
            "",
        ),
        case("8 blocks of 40 s", alt("phase = 10\n"), ""),
        case("10000 blocks", alt("min_blocks = 10000\n"), ""),
        case("1 s budget", alt("max_duration = 1\nmin_blocks = 2\n"), ""),
    ];
    for (args, what) in [(["-n", "100"], "-n"), (["--duration", "10"], "--duration")] {
        let mut c = case(format!("alternating {what}"), alt(""), "");
        c.args = args.iter().map(|s| s.to_string()).collect();
        cases.push(c);
    }
    for c in &mut cases {
        c.key = "alternating.min_blocks".into();
    }
    cases
}

/// `n` entries made by `entry` from names `<stem>0`, `<stem>1`…
pub fn list(n: usize, entry: Entry, stem: &str) -> String {
    (0..n).map(|i| entry(&format!("{stem}{i}"))).collect()
}

/// Lists and plans past their bounds.
pub fn sizes() -> Vec<Case> {
    let sets = |n: usize| format!("config_sets = [{}]\n", vec![q("forwarding"); n].join(", "));
    let goals = format!(
        "{}{}",
        goal("g"),
        list(16, |n| format!("[[search.goals]]\nname = \"{n}\"\n"), "g")
    );
    let (v, p) = (version as Entry, profile as Entry);
    [
        (
            "the issue's 300 × 300 × 10000",
            format!(
                "iterations = 10000\n{}{}",
                list(300, v, "v"),
                list(300, p, "p")
            ),
            "`versions`",
        ),
        ("101 versions", list(101, v, "v"), "`versions`"),
        ("101 profiles", list(101, p, "p"), "`profiles`"),
        ("101 config sets", sets(101), "`config_sets`"),
        ("100000 config sets", sets(100_000), "`config_sets`"),
        (
            "200k trials",
            format!("iterations = 10000\n{}{}", list(5, v, "v"), list(2, p, "p")),
            "`iterations`",
        ),
        (
            "100100 trials",
            format!(
                "iterations = 1000\ndesign = \"trials\"\nprofile = true\n{}{}{}",
                sets(1),
                list(100, v, "v"),
                profile("p")
            ),
            "`iterations`",
        ),
        (
            "10001 iterations",
            "iterations = 10001\n".into(),
            "`iterations`",
        ),
        ("17 goals", format!("{BASE}{goals}"), "search.goals"),
        (
            "2000 commands",
            format!(
                "{BASE}[hooks]\nbefore = [{}]\n",
                vec!["[\"true\"]"; 2000].join(", ")
            ),
            "hooks.before",
        ),
        (
            "2000 notes",
            format!("notes = [{}]\n", vec!["\"n\""; 2000].join(", ")),
            "`notes`",
        ),
    ]
    .into_iter()
    .map(|(name, toml, key)| case(name, toml, key))
    .collect()
}

/// `--resume DIR` alone with flags that would change the stored campaign.
pub fn resume() -> Vec<Case> {
    [
        vec!["-n", "5"],
        vec!["--quick"],
        vec!["--duration", "3"],
        vec!["--profile"],
        vec!["-n", "5", "--duration", "3"],
    ]
    .into_iter()
    .map(|flags| {
        let mut c = case(format!("--resume with {flags:?}"), "", flags[0]);
        c.args = ["--resume", "results/old"]
            .into_iter()
            .chain(flags)
            .map(String::from)
            .collect();
        c
    })
    .collect()
}
