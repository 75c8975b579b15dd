use benchlab::report::chart::*;
fn main() {
    let chart = Chart {
        file_name: "graph.inet4.png".into(),
        profile: "inet4".into(),
        title: "Comparing 12-head and 11-stable on forwarding/ipfw/pf performance".into(),
        subtitle: "inet4: 2000 flows of 64-byte frames, 1.49 Mpps offered".into(),
        y_label: "Packets per second (median of 5 iterations; whiskers: min, max)".into(),
        x_label: "Config set".into(),
        groups: vec![
            "forwarding".into(),
            "ipfw-statefull".into(),
            "pf-statefull".into(),
        ],
        members: vec!["318516stable".into(), "318516current".into()],
        bars: vec![
            Bar {
                group: 0,
                member: 0,
                median: 689737.0,
                min: 681208.0,
                max: 710973.0,
            },
            Bar {
                group: 0,
                member: 1,
                median: 474873.0,
                min: 473256.0,
                max: 475632.0,
            },
            Bar {
                group: 1,
                member: 0,
                median: 460697.0,
                min: 454230.0,
                max: 464405.0,
            },
            Bar {
                group: 1,
                member: 1,
                median: 311377.0,
                min: 309273.0,
                max: 312866.0,
            },
            Bar {
                group: 2,
                member: 0,
                median: 307848.0,
                min: 306091.0,
                max: 330910.0,
            },
            Bar {
                group: 2,
                member: 1,
                median: 275959.0,
                min: 274431.0,
                max: 279499.0,
            },
        ],
    };
    std::fs::write("/tmp/demo.png", render_png(&chart).unwrap()).unwrap();
}
