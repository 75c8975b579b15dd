use super::*;

#[test]
fn renders_a_png_of_the_seeds_size() {
    let chart = Chart {
        file_name: "graph.png".into(),
        profile: String::new(),
        title: "t".into(),
        subtitle: "s".into(),
        y_label: "y".into(),
        x_label: "x".into(),
        groups: vec!["forwarding".into()],
        members: vec!["a".into(), "b".into()],
        bars: vec![Bar {
            group: 0,
            member: 1,
            median: 2.0e6,
            min: 1.9e6,
            max: 2.1e6,
        }],
    };
    let png = render_png(&chart).unwrap();
    assert_eq!(&png[1..4], b"PNG");
}
