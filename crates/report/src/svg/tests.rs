//! The charts' numbers, colours, text and SVG checked.

use super::*;

#[test]
fn numbers_are_short() {
    assert_eq!(number(0.25), "0.25");
    assert_eq!(number(-0.0001), "0");
    assert_eq!(number(12.0), "12");
    assert_eq!(number(35_000.0), "35k");
    assert_eq!(number(2_000_000.0), "2M");
    assert_eq!(number(f64::NAN), "–");
}

#[test]
fn ticks_of_one_linear_axis_share_a_unit() {
    let ticks = |range: (f64, f64), values: &[f64]| -> Vec<String> {
        values
            .iter()
            .map(|v| Axis::new("t").tick(*v, range))
            .collect()
    };
    let long = ticks((0.0, 10_000.9), &[0.0, 2_000.0, 8_000.0, 10_000.0]);
    assert_eq!(long, ["0", "2k", "8k", "10k"]);
    let fine = ticks((9_990.0, 10_010.0), &[9_995.0, 10_005.0]);
    assert_eq!(fine, ["9.995k", "10.005k"]);
    assert_eq!(ticks((0.0, 1.3e6), &[2e5, 1.2e6]), ["0.2M", "1.2M"]);
    assert_eq!(ticks((0.0, 16.9), &[0.0, 2.5, 16.0]), ["0", "2.5", "16"]);
}

#[test]
fn the_last_x_tick_label_fits_a_chart_without_legend() {
    for end in [1_000.0, 10_000.0, 2e6] {
        let chart = LineChart {
            size: (600, 300),
            x: Axis::new("time (s)").range(0.0, end),
            y: Axis::new("y"),
            series: vec![],
            hline: None,
            markers: false,
            legend: false,
        };
        let svg = line_chart(&chart);
        let label = number_on(end, (0.0, end));
        let tag = format!(">\n{label}\n</text>");
        let at = svg.find(&tag).expect("the last tick label");
        let x: f64 = svg[..at]
            .rsplit("<text x=\"")
            .next()
            .and_then(|t| t.split('"').next()?.parse().ok())
            .expect("its x");
        let right = x + (label.chars().count() as u32 * CHAR_W) as f64 / 2.0;
        assert!(right <= 600.0, "{label} ends at {right}");
    }
}

#[test]
fn ticks_closer_than_a_thousandth_get_the_decimals_that_tell_them_apart() {
    let ticks: Vec<String> = (0..=6)
        .map(|k| number_on(k as f64 * 0.0005, (0.0, 0.003)))
        .collect();
    assert_eq!(
        ticks,
        ["0", "0.0005", "0.001", "0.0015", "0.002", "0.0025", "0.003"]
    );
    assert_eq!(number_on(0.25, (0.0, 1.0)), number(0.25));
    assert_eq!(number_on(1234.5678, (0.0, 5000.0)), number(1234.5678));
}

#[test]
fn delta_labels_use_superscripts() {
    assert_eq!(delta_label(6), "1−10⁻⁶");
    assert_eq!(delta_label(12), "1−10⁻¹²");
}

#[test]
fn log_axis_drops_non_positive_values() {
    let y = Axis::new("events").scale(Scale::Log);
    assert_eq!(y.map(0.0), None);
    assert_eq!(y.map(100.0), Some(2.0));
    assert_eq!(y.span(&[2.0, 3.5]), (2.0, 4.0));
    assert_eq!(y.tick(3.0, (2.0, 4.0)), "1000");
    assert_eq!(y.tick(3.5, (2.0, 4.0)), "");
}

#[test]
fn extreme_values_are_dropped_or_drawn_without_trouble() {
    let points = vec![(0.0, 1e300), (1.0, -1e300), (2.0, 1e14), (3.0, 1e14 + 0.01)];
    let series = vec![Series {
        label: "x".into(),
        colour: Colour::Palette(9),
        points,
    }];
    for scale in [Scale::Linear, Scale::Log, Scale::Delta] {
        let chart = LineChart {
            size: (10, 10),
            x: Axis::new("x").scale(scale),
            y: Axis::new("y").scale(scale),
            series: series.clone(),
            hline: Some(f64::MAX),
            markers: true,
            legend: true,
        };
        assert!(!line_chart(&chart).contains("NaN"));
    }
}

#[test]
fn equal_values_get_an_axis_around_them() {
    let y = Axis::new("y");
    assert_eq!(y.span(&[0.0, 0.0]), (0.0, 1.0), "all zero: 0…1, not −1…1");
    assert_eq!(y.clone().with_zero().span(&[0.0]), (0.0, 1.0));
    assert_eq!(y.span(&[5.0, 5.0]), (4.5, 5.5));
    assert_eq!(y.span(&[-2.0]), (-2.2, -1.8));
}

#[test]
fn long_labels_wrap_at_separators() {
    assert_eq!(
        wrap("sdrf:delta=0.999999,form=max-of-sums", 24),
        ["sdrf:delta=0.999999,", "form=max-of-sums"]
    );
    assert_eq!(wrap("short", 24), ["short"]);
    assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
    assert_eq!(shorten_middle("sdrf:delta=0.999999", 12), "sdrf:d…99999");
    assert_eq!(shorten_middle("drf", 12), "drf");
}

#[test]
fn legends_and_bar_labels_keep_policy_names_whole() {
    let names = [
        "sdrf:delta=0.9999 94.0 %",
        "sdrf:delta=0.999999 93.3 %",
        "sdrf:delta=0.999999,form=max-of-sums 84.0 %",
    ];
    let series = names.iter().enumerate().map(|(i, n)| Series {
        label: n.to_string(),
        colour: Colour::Palette(i),
        points: vec![(0.0, 1.0), (1.0, 2.0)],
    });
    let chart = LineChart {
        size: (1180, 340),
        x: Axis::new("x"),
        y: Axis::new("y"),
        series: series.collect(),
        hline: None,
        markers: false,
        legend: true,
    };
    let bars = names.iter().enumerate().map(|(i, n)| Bar {
        label: n.to_string(),
        value: i as f64,
        text: String::new(),
        colour: Colour::Palette(i),
        error: None,
    });
    let bar = BarChart {
        width: 1180,
        x: Axis::new("x"),
        bars: bars.collect(),
    };
    for svg in [line_chart(&chart), bar_chart(&bar)] {
        for name in names {
            assert!(
                svg.contains(&format!(">\n{name}\n<")),
                "{name} cut in\n{svg}"
            );
        }
        assert!(!svg.contains('…'));
    }
}

#[test]
fn empty_and_nan_series_draw_without_nan() {
    let chart = LineChart {
        size: (500, 300),
        x: Axis::new("x"),
        y: Axis::new("y"),
        series: vec![Series {
            label: "a".into(),
            colour: Colour::Palette(0),
            points: vec![(f64::NAN, 1.0), (0.0, f64::INFINITY)],
        }],
        hline: Some(0.0),
        markers: true,
        legend: true,
    };
    let svg = line_chart(&chart);
    assert!(svg.starts_with("<svg"));
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}
