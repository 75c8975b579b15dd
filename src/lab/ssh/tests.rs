use super::*;
use crate::lab::LabConfig;

#[test]
fn node_tables_make_a_real_lab_and_missing_keys_are_named() {
    let lab = LabConfig::parse(
        r#"
[ssh]
config = "cfg"
connect_timeout = 3
[hosts.dut]
transport = "ssh"
host = "apu2"
interfaces = ["igb1", "igb2"]
[hosts.sender]
transport = "ssh"
host = "gen1"
interface = "igb1"
dut_mac = "00:0d:b9:41:ca:3d"
[hosts.receiver]
transport = "ssh"
host = "gen1"
interface = "igb2"
"#,
        "LAB.toml",
    )
    .unwrap();
    let real = lab.ssh_lab().unwrap().unwrap();
    assert_eq!(real.dut.host, "apu2");
    let t = real.ssh.transport(&real.senders[0]);
    let line = t.ssh_argv(&["true".into()]).join(" ");
    assert!(
        line.starts_with("ssh -o BatchMode=yes -o ConnectTimeout=3 "),
        "{line}"
    );
    assert!(line.ends_with(" -F cfg -- gen1 'true'"), "{line}");
    assert_eq!(LabConfig::default().ssh_lab(), Ok(None));

    let err = LabConfig::parse(
        "[hosts.dut]\ntransport = \"ssh\"\nhost = \"a\"\n",
        "LAB.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("LAB.toml:1: missing field `receiver`"),
        "{err}"
    );
    let err = LabConfig::parse(
        "[hosts.dut]\ntransport = \"telnet\"\nhost = \"a\"\n",
        "LAB.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("LAB.toml:2: unknown variant `telnet`"),
        "{err}"
    );
}

#[test]
fn a_dut_pmc_event_is_one_event_name() {
    let lab = |event: &str| {
        LabConfig::parse(
            &format!(
                "[hosts.dut]\ntransport = \"ssh\"\nhost = \"bsd\"\npmc_event = \"{event}\"\n\
                 [hosts.sender]\ntransport = \"ssh\"\nhost = \"g\"\ninterface = \"e0\"\n\
                 dut_mac = \"02:00:00:00:00:01\"\n\
                 [hosts.receiver]\ntransport = \"ssh\"\nhost = \"g\"\ninterface = \"e1\"\n"
            ),
            "LAB.toml",
        )
    };
    let real = lab("cpu_clk_unhalted.thread_p").unwrap().ssh_lab();
    let event = real.unwrap().unwrap().dut.pmc_event;
    assert_eq!(event.as_deref(), Some("cpu_clk_unhalted.thread_p"));
    let err = lab("two events").unwrap_err().to_string();
    assert!(
        err.starts_with("LAB.toml: [hosts.dut] pmc_event = \"two events\""),
        "{err}"
    );
}

#[test]
fn several_senders_replace_the_one_sender_and_exactly_one_form_is_named() {
    let hosts = |senders: &str| {
        format!(
            "[hosts.dut]\ntransport = \"ssh\"\nhost = \"dut\"\n{senders}\n\
             [hosts.receiver]\ntransport = \"ssh\"\nhost = \"rx\"\ninterface = \"r0\"\n"
        )
    };
    let one = |table: &str, host: &str, generator: &str| {
        format!(
            "[{table}]\ntransport = \"ssh\"\nhost = \"{host}\"\ninterface = \"s0\"\n\
             dut_mac = \"02:00:00:00:00:01\"\ngenerator = \"{generator}\"\n"
        )
    };
    let two =
        one("[hosts.senders]", "gen1", "trafgen") + &one("[hosts.senders]", "gen2", "benchlab");
    let lab = LabConfig::parse(&hosts(&two), "LAB.toml").unwrap();
    let real = lab.ssh_lab().unwrap().unwrap();
    let names: Vec<_> = real
        .senders
        .iter()
        .map(|s| (s.host.as_str(), s.tool()))
        .collect();
    let trafgen = Generator::named("trafgen").unwrap();
    assert_eq!(names, [("gen1", trafgen), ("gen2", Generator::default())]);
    assert_eq!(real.receiving_generator(), None);

    let err = |text: &str| LabConfig::parse(text, "LAB.toml").unwrap_err().to_string();
    let both = one("hosts.sender", "gen1", "benchlab") + &two;
    assert_eq!(
        err(&hosts(&both)),
        "LAB.toml: [hosts] has both [hosts.sender] and [[hosts.senders]]: keep one"
    );
    assert_eq!(
        err(&hosts("")),
        "LAB.toml: [hosts] needs [hosts.sender] (or [[hosts.senders]] for several)"
    );
    let mixed =
        one("[hosts.senders]", "gen1", "pkt-gen") + &one("[hosts.senders]", "gen2", "trafgen");
    assert!(err(&hosts(&mixed)).contains("[[hosts.senders]] generator: pkt-gen senders"));
    let no_mac = "[[hosts.senders]]\ntransport = \"ssh\"\nhost = \"gen3\"\ninterface = \"s0\"\n";
    assert_eq!(
        err(&hosts(&(two + no_mac))),
        "LAB.toml: [[hosts.senders]] host = \"gen3\" needs dut_mac = \"MAC\" (the DUT's \
         sender-side MAC)"
    );
}

#[test]
fn the_example_campaign_describes_a_real_lab() {
    let text = include_str!("../../../examples/ssh-lab.toml");
    let c = crate::config::Campaign::from_toml(text, "ssh-lab.toml", crate::dut::KNOWN_PRESETS)
        .unwrap();
    let lab = c.lab.ssh_lab().unwrap().unwrap();
    assert_eq!(
        (lab.dut.host.as_str(), lab.senders[0].host.as_str()),
        ("dut1", "gen1")
    );
    assert_eq!(c.versions[1].reboot, ["systemctl", "reboot"]);
    assert_eq!(
        c.versions[1].online_timeout,
        Some(std::time::Duration::from_secs(300))
    );
}

#[test]
fn a_generator_is_named_from_the_registry_and_its_rules_are_kept() {
    let lab = |generator: &str, cpu: &str| {
        LabConfig::parse(
            &format!(
                "[hosts.dut]\ntransport = \"ssh\"\nhost = \"dut\"\n\
                 [hosts.sender]\ntransport = \"ssh\"\nhost = \"g\"\ninterface = \"e0\"\n\
                 dut_mac = \"02:00:00:00:00:01\"\ngenerator = \"{generator}\"\n{cpu}\
                 [hosts.receiver]\ntransport = \"ssh\"\nhost = \"g\"\ninterface = \"e1\"\n"
            ),
            "LAB.toml",
        )
    };
    // Further generators add their names to the lists, hence the prefixes.
    let err = lab("pktgen", "").unwrap_err().to_string();
    assert!(
        err.starts_with(
            "LAB.toml:9: generator = \"pktgen\": use one of \"benchlab\", \"pkt-gen\", \"trafgen\""
        ),
        "{err}"
    );
    let err = lab("pkt-gen", "cpu = 2\n").unwrap_err().to_string();
    assert!(
        err.starts_with(
            "LAB.toml: [hosts.sender] host = \"g\": cpu is for the benchlab and trafgen"
        ),
        "{err}"
    );
    assert!(
        err.ends_with(" generators; pin pkt-gen in its host's own setup"),
        "{err}"
    );
    let real = lab("pkt-gen", "").unwrap().ssh_lab().unwrap().unwrap();
    let pktgen = real.receiving_generator().unwrap();
    assert_eq!(
        (pktgen.name(), pktgen.label()),
        ("pkt-gen", "pkt-gen -f tx")
    );
    // Saved campaigns write the name back as it was read.
    let saved = toml::to_string(&real.senders[0]).unwrap();
    assert!(saved.contains("generator = \"pkt-gen\"\n"), "{saved}");
    let trafgen = lab("trafgen", "cpu = 0\n")
        .unwrap()
        .ssh_lab()
        .unwrap()
        .unwrap();
    assert_eq!(trafgen.senders[0].tool().label(), "trafgen");
    assert_eq!(trafgen.receiving_generator(), None);
}

#[test]
fn probes_run_where_the_senders_and_the_receiver_are_one_host_without_netmap() {
    let lab = |senders: &[(&str, &str)], receiver: &str| {
        let tables: String = senders
            .iter()
            .map(|(host, generator)| {
                format!(
                    "[[hosts.senders]]\ntransport = \"ssh\"\nhost = \"{host}\"\n\
                     interface = \"s0\"\ndut_mac = \"02:00:00:00:00:01\"\n\
                     generator = \"{generator}\"\n"
                )
            })
            .collect();
        let text = format!(
            "[hosts.dut]\ntransport = \"ssh\"\nhost = \"dut\"\n{tables}\
             [hosts.receiver]\ntransport = \"ssh\"\nhost = \"{receiver}\"\ninterface = \"r0\"\n"
        );
        LabConfig::parse(&text, "LAB.toml")
            .unwrap()
            .ssh_lab()
            .unwrap()
            .unwrap()
    };
    // The 2-node layout: the probes leave by the first sender's interface.
    let two_node = lab(&[("gen1", "benchlab"), ("gen1", "trafgen")], "gen1");
    assert_eq!(two_node.prober().unwrap().host, "gen1");
    let err = lab(&[("gen1", "benchlab"), ("gen2", "benchlab")], "gen1")
        .prober()
        .unwrap_err();
    assert!(
        err.starts_with("the sender gen2 and the receiver gen1 are two hosts, two clocks"),
        "{err}"
    );
    let err = lab(&[("gen1", "pkt-gen")], "gen1").prober().unwrap_err();
    assert!(
        err.starts_with("pkt-gen senders hold the lab's interfaces"),
        "{err}"
    );
}
