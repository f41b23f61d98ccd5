//! The SVG latency plot of a run, written by hand (no plotting crate).

use std::fmt::Write as _;

use serde_json::Value;

use crate::measure::ScenarioResult;

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A hand-written SVG: per scenario, the latency percentiles p50-p90-p99-
/// p99.9 of the server (blue) and of its static-body baseline (grey) on a
/// log axis, the 2 ms line, and req/s with the ratio on the right.
pub fn svg(results: &[ScenarioResult], r: &Value) -> String {
    let (left, right, top, row) = (190.0, 200.0, 70.0, 34.0);
    let plot_w = 560.0;
    let width = left + plot_w + right;
    let height = top + row * results.len() as f64 + 50.0;
    let all: Vec<f64> = results
        .iter()
        .flat_map(|s| {
            [
                s.main.p50_us,
                s.main.p999_us,
                s.baseline.p50_us,
                s.baseline.p999_us,
            ]
        })
        .filter(|v| *v > 0.0)
        .collect();
    // No scenario (a run of only the burst): an axis from 100 µs.
    let lo = all
        .iter()
        .cloned()
        .reduce(f64::min)
        .unwrap_or(100.0)
        .max(1.0);
    let hi = all.iter().cloned().fold(0.0, f64::max).max(2000.0);
    let (d0, d1) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let x = |us: f64| left + (us.max(1.0).log10() - d0) / (d1 - d0) * plot_w;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="15" font-weight="bold">followgraph HTTP latency, {} accounts, {} connections (closed loop)</text>"#,
        r["config"]["accounts"], r["config"]["connections"]
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="38" fill="#555">{} · commit {} · thick bar p50-p90, thin p90-p99, whisker p99-p99.9 (log scale)</text>"##,
        xml(r["date"].as_str().unwrap_or("")),
        xml(&r["git"]["commit"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(10)
            .collect::<String>())
    );
    let _ = writeln!(
        s,
        r##"<rect x="{left}" y="46" width="12" height="8" fill="#1f77b4"/><text x="{}" y="54">server</text><rect x="{}" y="46" width="12" height="8" fill="#999"/><text x="{}" y="54">static-body baseline (same mean body size)</text>"##,
        left + 16.0,
        left + 70.0,
        left + 86.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="54" font-weight="bold">req/s (ratio)</text>"#,
        left + plot_w + 12.0
    );
    // Grid: decades and 1-2-5.
    let mut d = d0 as i32;
    while d as f64 <= d1 {
        for m in [1.0, 2.0, 5.0] {
            let us = m * 10f64.powi(d);
            if us.log10() > d1 + 1e-9 {
                break;
            }
            let gx = x(us);
            let _ = writeln!(
                s,
                r##"<line x1="{gx:.1}" y1="{top}" x2="{gx:.1}" y2="{:.1}" stroke="{}" stroke-width="1"/>"##,
                height - 40.0,
                if m == 1.0 { "#ccc" } else { "#eee" }
            );
            let label = if us >= 1000.0 {
                format!("{} ms", us / 1000.0)
            } else {
                format!("{us} µs")
            };
            let _ = writeln!(
                s,
                r##"<text x="{gx:.1}" y="{:.1}" text-anchor="middle" fill="#555">{label}</text>"##,
                height - 25.0
            );
        }
        d += 1;
    }
    let tx = x(2000.0);
    let _ = writeln!(
        s,
        r##"<line x1="{tx:.1}" y1="{top}" x2="{tx:.1}" y2="{:.1}" stroke="#d62728" stroke-dasharray="4 3"/><text x="{:.1}" y="{:.1}" fill="#d62728">2 ms</text>"##,
        height - 40.0,
        tx + 3.0,
        top - 3.0
    );
    for (i, r) in results.iter().enumerate() {
        let y0 = top + row * i as f64;
        if i % 2 == 1 {
            let _ = writeln!(
                s,
                r##"<rect x="0" y="{y0}" width="{width}" height="{row}" fill="#f6f8fa" fill-opacity="0.6"/>"##
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            left - 8.0,
            y0 + row / 2.0 + 4.0,
            xml(r.name)
        );
        for (w, color, dy) in [(&r.main, "#1f77b4", 11.0), (&r.baseline, "#999", 24.0)] {
            let y = y0 + dy;
            let (a, b, c, e) = (x(w.p50_us), x(w.p90_us), x(w.p99_us), x(w.p999_us));
            let _ = writeln!(
                s,
                r#"<line x1="{c:.1}" y1="{y:.1}" x2="{e:.1}" y2="{y:.1}" stroke="{color}" stroke-width="1.5"/><line x1="{e:.1}" y1="{:.1}" x2="{e:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5"/>"#,
                y - 3.0,
                y + 3.0
            );
            let _ = writeln!(
                s,
                r#"<rect x="{b:.1}" y="{:.1}" width="{:.1}" height="4" fill="{color}"/>"#,
                y - 2.0,
                (c - b).max(1.0)
            );
            let _ = writeln!(
                s,
                r#"<rect x="{a:.1}" y="{:.1}" width="{:.1}" height="8" fill="{color}"><title>p50 {} µs, p90 {} µs, p99 {} µs, p99.9 {} µs</title></rect>"#,
                y - 4.0,
                (b - a).max(1.5),
                w.p50_us,
                w.p90_us,
                w.p99_us,
                w.p999_us
            );
        }
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{:.1}">{:.0} <tspan fill="#999">/ {:.0}</tspan> ({:.2}x)</text>"##,
            left + plot_w + 12.0,
            y0 + row / 2.0 + 4.0,
            r.main.rps,
            r.baseline.rps,
            r.ratio
        );
    }
    s.push_str("</svg>\n");
    s
}
