//! Figures as SVG, written by hand so the simulator stays dependency-free (no plotting crate,
//! no font files): per-unit utilisation, HBM traffic by kind, a roofline, a sweep line plot and
//! the paper-reproduction ratios.
//!
//! Every figure is a plain SVG 1.1 document with labelled axes and a title; text is escaped, so
//! machine and region names cannot break the XML. The functions return strings; the CLI writes
//! them (`basalt sim run --plot-dir`, `sweep --plot`, `reproduce --plot`).
//!
//! # The roofline's "operations"
//! Units of different classes count different things (butterflies, MACs, coefficients), so the
//! roofline counts *lane-operations*: one lane of one unit instance busy for one cycle. A
//! program's work is Σ busy cycles × lanes × instances over its unit groups, and the machine's
//! compute roof is Σ lanes × instances × clock (all groups at once) when kernels chain, or the
//! widest group alone when the machine runs one kernel at a time (`overlap = "serial"`). The
//! bandwidth roof is HBM bytes/s, and arithmetic intensity is work per HBM byte. With these
//! definitions the program's point can never lie above the roof, whatever the unit mix.

use std::fmt::Write;

use serde::Serialize;

use crate::machine::{Machine, Overlap};
use crate::report::Report;

const W: f64 = 720.0;
const H: f64 = 440.0;
/// Plot area margins: left, right, top, bottom.
const ML: f64 = 90.0;
const MR: f64 = 30.0;
const MT: f64 = 50.0;
const MB: f64 = 70.0;
const PALETTE: [&str; 6] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1"];

/// Escape text for SVG character data and attribute values.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A document under construction: header, title and axis labels are written up front.
struct Svg {
    out: String,
}

impl Svg {
    fn new(title: &str, xlabel: &str, ylabel: &str) -> Svg {
        let mut out = String::new();
        let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(out, r#"<rect x="0" y="0" width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            out,
            r#"<text class="title" x="{}" y="28" text-anchor="middle" font-size="15">{}</text>"#,
            W / 2.0,
            esc(title)
        );
        let _ = writeln!(
            out,
            r#"<text class="xlabel" x="{}" y="{}" text-anchor="middle">{}</text>"#,
            ML + (W - ML - MR) / 2.0,
            H - 15.0,
            esc(xlabel)
        );
        let _ = writeln!(
            out,
            r#"<text class="ylabel" x="20" y="{y}" text-anchor="middle" transform="rotate(-90 20 {y})">{}</text>"#,
            esc(ylabel),
            y = MT + (H - MT - MB) / 2.0
        );
        let _ = writeln!(
            out,
            r#"<rect x="{ML}" y="{MT}" width="{}" height="{}" fill="none" stroke="black"/>"#,
            W - ML - MR,
            H - MT - MB
        );
        Svg { out }
    }

    fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, style: &str) {
        let _ = writeln!(
            self.out,
            r#"<line x1="{x1:.2}" y1="{y1:.2}" x2="{x2:.2}" y2="{y2:.2}" {style}/>"#
        );
    }

    fn text(&mut self, x: f64, y: f64, anchor: &str, s: &str) {
        let _ = writeln!(
            self.out,
            r#"<text x="{x:.2}" y="{y:.2}" text-anchor="{anchor}">{}</text>"#,
            esc(s)
        );
    }

    /// [`Svg::text`] at a 10 px font (secondary labels).
    fn small_text(&mut self, x: f64, y: f64, anchor: &str, s: &str) {
        let _ = writeln!(
            self.out,
            r#"<text x="{x:.2}" y="{y:.2}" text-anchor="{anchor}" font-size="10">{}</text>"#,
            esc(s)
        );
    }

    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, tip: &str) {
        let _ = writeln!(
            self.out,
            r#"<rect class="bar" x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="{fill}"><title>{}</title></rect>"#,
            esc(tip)
        );
    }

    fn polyline(&mut self, class: &str, pts: &[(f64, f64)], stroke: &str) {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.2},{y:.2}")).collect();
        let _ = writeln!(
            self.out,
            r#"<polyline class="{class}" points="{}" fill="none" stroke="{stroke}" stroke-width="2"/>"#,
            p.join(" ")
        );
    }

    fn circle(&mut self, x: f64, y: f64, fill: &str, tip: &str) {
        let _ = writeln!(
            self.out,
            r#"<circle class="point" cx="{x:.2}" cy="{y:.2}" r="5" fill="{fill}"><title>{}</title></circle>"#,
            esc(tip)
        );
    }

    fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

/// A linear or base-10 logarithmic mapping from data to pixels.
#[derive(Clone, Copy)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    p0: f64,
    p1: f64,
}

impl Axis {
    fn new(lo: f64, hi: f64, log: bool, p0: f64, p1: f64) -> Axis {
        let (lo, hi) = if log {
            (lo.log10().floor(), hi.log10().ceil().max(lo.log10().floor() + 1.0))
        } else {
            let (lo, hi) = if hi > lo { (lo, hi) } else { (lo - 1.0, lo + 1.0) };
            let step = nice_step(hi - lo);
            ((lo / step).floor() * step, (hi / step).ceil() * step)
        };
        Axis { lo, hi, log, p0, p1 }
    }

    fn px(&self, v: f64) -> f64 {
        let t = if self.log { v.max(1e-300).log10() } else { v };
        self.p0 + (t - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)
    }

    /// Tick values (data units).
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            (self.lo as i32..=self.hi as i32).map(|e| 10f64.powi(e)).collect()
        } else {
            let step = nice_step(self.hi - self.lo);
            let n = ((self.hi - self.lo) / step).round() as i32;
            (0..=n).map(|i| self.lo + i as f64 * step).collect()
        }
    }
}

/// A 1/2/5 × 10^k step giving about five ticks over `span`.
fn nice_step(span: f64) -> f64 {
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f < 1.5 {
        1.0
    } else if f < 3.5 {
        2.0
    } else if f < 7.5 {
        5.0
    } else {
        10.0
    }
}

/// A number as the figures print it.
pub fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e4 || v.abs() < 1e-2 {
        // Three significant digits, trailing zeros dropped: 1e5, 1.21e5.
        let e = format!("{v:.2e}");
        let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
        format!("{}e{exp}", mantissa.trim_end_matches('0').trim_end_matches('.'))
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}").trim_end_matches('0').to_string()
    }
}

fn x_ticks(s: &mut Svg, a: &Axis) {
    for t in a.ticks() {
        let x = a.px(t);
        s.line(x, H - MB, x, H - MB + 5.0, r#"stroke="black""#);
        s.line(x, MT, x, H - MB, r##"stroke="#ddd""##);
        s.text(x, H - MB + 18.0, "middle", &fmt_num(t));
    }
}

fn y_ticks(s: &mut Svg, a: &Axis) {
    for t in a.ticks() {
        let y = a.px(t);
        s.line(ML - 5.0, y, ML, y, r#"stroke="black""#);
        s.line(ML, y, W - MR, y, r##"stroke="#ddd""##);
        s.text(ML - 8.0, y + 4.0, "end", &fmt_num(t));
    }
}

/// Vertical bars, one per label, on a linear axis from 0 (`ymax` or the largest value).
fn bars(title: &str, ylabel: &str, items: &[(String, f64)], ymax: Option<f64>) -> String {
    let top = ymax.unwrap_or_else(|| items.iter().map(|i| i.1).fold(0.0, f64::max)).max(1e-12);
    bars_on(title, ylabel, items, Axis::new(0.0, top, false, H - MB, MT))
}

/// Vertical bars on `ya`, each rising from the axis' bottom.
fn bars_on(title: &str, ylabel: &str, items: &[(String, f64)], ya: Axis) -> String {
    let mut s = Svg::new(title, "", ylabel);
    y_ticks(&mut s, &ya);
    let n = items.len().max(1) as f64;
    let slot = (W - ML - MR) / n;
    for (i, (label, v)) in items.iter().enumerate() {
        let x = ML + slot * (i as f64 + 0.15);
        let y = ya.px(*v);
        s.rect(
            x,
            y,
            slot * 0.7,
            (H - MB) - y,
            PALETTE[i % PALETTE.len()],
            &format!("{label}: {v}"),
        );
        // A machine variant (`osiris@memory.hbm_gbps=2000`) gets one line per part, each
        // override small and by its last field name, so neighbouring labels do not run into
        // each other (the bar's tooltip keeps the whole label).
        let mut parts = label.split('@');
        s.text(x + slot * 0.35, H - MB + 18.0, "middle", parts.next().unwrap_or_default());
        for (k, part) in parts.enumerate() {
            let short = part.rsplit('.').next().unwrap_or(part);
            s.small_text(x + slot * 0.35, H - MB + 31.0 + 11.0 * k as f64, "middle", short);
        }
        s.text(x + slot * 0.35, y - 4.0, "middle", &fmt_num(*v));
    }
    s.finish()
}

/// One trace's latency on several machines (`basalt sim compare --plot`): a bar per machine,
/// in µs on a logarithmic axis (machines differ by orders of magnitude). Machines that could
/// not run the trace are left out.
pub fn compare_svg(trace: &str, rows: &[(String, f64)]) -> String {
    let us: Vec<(String, f64)> = rows.iter().map(|(m, s)| (m.clone(), s * 1e6)).collect();
    let lo = us.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let hi = us.iter().map(|r| r.1).fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && lo > 0.0 { (lo, hi) } else { (1.0, 10.0) };
    let ya = Axis::new(lo, hi, true, H - MB, MT);
    bars_on(&format!("{trace}: latency per machine"), "latency (us)", &us, ya)
}

/// The three figures of one run, as (file name, SVG): utilisation per unit, HBM traffic by
/// kind, roofline. One list so the CLI and the Python package write the same set.
pub fn run_figures(m: &Machine, r: &Report) -> [(&'static str, String); 3] {
    [
        ("utilisation.svg", utilisation_svg(r)),
        ("traffic.svg", traffic_svg(r)),
        ("roofline.svg", roofline_svg(&m.name, &Roofline::new(m, r))),
    ]
}

/// Per-unit-group utilisation (busy / total cycles), in percent.
pub fn utilisation_svg(r: &Report) -> String {
    let items: Vec<(String, f64)> =
        r.units.iter().map(|u| (u.name.clone(), 100.0 * u.utilisation)).collect();
    let title = format!("{}: unit utilisation ({:.3} us)", r.machine, r.seconds * 1e6);
    bars(&title, "utilisation (%)", &items, Some(100.0))
}

/// HBM traffic by kind, in MiB.
pub fn traffic_svg(r: &Report) -> String {
    let t = &r.traffic;
    let mib = |b: f64| b / (1024.0 * 1024.0);
    let items = vec![
        ("keys".to_string(), mib(t.keys)),
        ("ciphertexts".to_string(), mib(t.ciphertexts)),
        ("plaintexts".to_string(), mib(t.plaintexts)),
        ("intermediates".to_string(), mib(t.intermediates)),
    ];
    let title = format!("{}: HBM traffic by kind ({:.2} MiB)", r.machine, mib(t.total()));
    bars(&title, "traffic (MiB)", &items, None)
}

/// The numbers behind a roofline (see the module doc for "lane-operations").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Roofline {
    /// Compute roof, lane-operations per second.
    pub peak_ops_per_s: f64,
    /// Bandwidth roof, HBM bytes per second.
    pub bandwidth_bytes_per_s: f64,
    /// The program's work in lane-operations.
    pub ops: f64,
    /// The program's HBM bytes.
    pub bytes: f64,
    /// The program's achieved lane-operations per second.
    pub achieved_ops_per_s: f64,
}

impl Roofline {
    /// Work and roofs of report `r`, which must have been simulated on `m`.
    pub fn new(m: &Machine, r: &Report) -> Roofline {
        let rate = |u: &crate::machine::Unit| u.lanes as f64 * u.count as f64 * m.hz();
        let peak = match m.overlap() {
            Overlap::Chained => m.units.iter().map(rate).sum(),
            Overlap::Serial => m.units.iter().map(rate).fold(0.0, f64::max),
        };
        let ops: f64 = m
            .units
            .iter()
            .zip(&r.units)
            .map(|(u, s)| s.busy_cycles * u.lanes as f64 * u.count as f64)
            .sum();
        Roofline {
            peak_ops_per_s: peak,
            bandwidth_bytes_per_s: m.memory.hbm_gbps * 1e9,
            ops,
            bytes: r.traffic.total(),
            achieved_ops_per_s: if r.seconds > 0.0 { ops / r.seconds } else { 0.0 },
        }
    }

    /// Work per HBM byte; `None` when the program moves no HBM bytes.
    pub fn intensity(&self) -> Option<f64> {
        (self.bytes > 0.0).then(|| self.ops / self.bytes)
    }

    /// Ops/byte where the bandwidth roof meets the compute roof.
    pub fn ridge(&self) -> f64 {
        self.peak_ops_per_s / self.bandwidth_bytes_per_s
    }

    /// min(peak, intensity × bandwidth).
    pub fn attainable(&self, intensity: f64) -> f64 {
        self.peak_ops_per_s.min(intensity * self.bandwidth_bytes_per_s)
    }
}

/// Roofline: attainable lane-ops/s against arithmetic intensity (log–log), the program's point
/// on it. A program with no HBM traffic is drawn at the right edge and says so.
pub fn roofline_svg(machine: &str, rf: &Roofline) -> String {
    let ridge = rf.ridge();
    let ai = rf.intensity();
    let mut xs = vec![ridge];
    xs.extend(ai);
    let xlo = xs.iter().cloned().fold(f64::INFINITY, f64::min) / 100.0;
    let xhi = xs.iter().cloned().fold(0.0, f64::max) * 100.0;
    let ylo = rf.attainable(xlo).min(rf.achieved_ops_per_s.max(1.0)) / 10.0;
    let yhi = rf.peak_ops_per_s * 10.0;
    let mut s = Svg::new(
        &format!("{machine}: roofline"),
        "arithmetic intensity (lane-ops per HBM byte)",
        "throughput (lane-ops/s)",
    );
    let xa = Axis::new(xlo, xhi, true, ML, W - MR);
    let ya = Axis::new(ylo, yhi, true, H - MB, MT);
    x_ticks(&mut s, &xa);
    y_ticks(&mut s, &ya);
    // The roof: sampled along x so the polyline is exactly min(peak, ai·bw) at its vertices.
    let (x0, x1) = (10f64.powf(xa.lo), 10f64.powf(xa.hi));
    let mut vx = vec![x0, ridge, x1];
    vx.retain(|&x| x >= x0 && x <= x1);
    let roof: Vec<(f64, f64)> = vx.iter().map(|&x| (xa.px(x), ya.px(rf.attainable(x)))).collect();
    s.polyline("roof", &roof, "black");
    s.text(
        xa.px(x1) - 5.0,
        ya.px(rf.peak_ops_per_s) - 6.0,
        "end",
        &format!("compute roof {:.3e} lane-ops/s", rf.peak_ops_per_s),
    );
    s.text(
        xa.px(x0) + 5.0,
        ya.px(rf.attainable(x0)) - 8.0,
        "start",
        &format!("HBM {:.0} GB/s", rf.bandwidth_bytes_per_s / 1e9),
    );
    let (px, label) = match ai {
        Some(a) => (a, format!("program: {a:.3} ops/B, {:.3e} ops/s", rf.achieved_ops_per_s)),
        None => (x1, "program: no HBM traffic (drawn at the right edge)".to_string()),
    };
    let y = ya.px(rf.achieved_ops_per_s.max(10f64.powf(ya.lo)));
    s.circle(xa.px(px), y, PALETTE[3], &label);
    s.text(xa.px(px) - 8.0, y + 18.0, "end", &label);
    s.finish()
}

/// One point of a sweep: the swept value (as given) and the metric.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    pub value: String,
    pub metric: f64,
}

/// A line plot of `ylabel` over the swept `field`. Numeric values get a numeric x axis (sorted;
/// logarithmic when they span more than a factor of 20); otherwise the values are categories in
/// the order given.
pub fn sweep_svg(machine: &str, field: &str, ylabel: &str, pts: &[SweepPoint]) -> String {
    let nums: Option<Vec<f64>> = pts.iter().map(|p| p.value.trim().parse::<f64>().ok()).collect();
    let mut s = Svg::new(&format!("{machine}: sweep of {field}"), field, ylabel);
    let ymax = pts.iter().map(|p| p.metric).fold(0.0, f64::max);
    let ya = Axis::new(0.0, ymax.max(1e-12), false, H - MB, MT);
    y_ticks(&mut s, &ya);
    let mut xy: Vec<(f64, f64, String)> = match nums {
        Some(v) if !v.is_empty() => {
            let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let log = lo > 0.0 && hi / lo > 20.0;
            let xa = Axis::new(lo, hi, log, ML, W - MR);
            x_ticks(&mut s, &xa);
            let mut xy: Vec<_> =
                v.iter().zip(pts).map(|(&x, p)| (xa.px(x), p.metric, p.value.clone())).collect();
            xy.sort_by(|a, b| a.0.total_cmp(&b.0));
            xy
        }
        _ => {
            let slot = (W - ML - MR) / pts.len().max(1) as f64;
            pts.iter()
                .enumerate()
                .map(|(i, p)| {
                    let x = ML + slot * (i as f64 + 0.5);
                    s.text(x, H - MB + 18.0, "middle", &p.value);
                    (x, p.metric, p.value.clone())
                })
                .collect()
        }
    };
    let line: Vec<(f64, f64)> = xy.iter().map(|(x, m, _)| (*x, ya.px(*m))).collect();
    s.polyline("series", &line, PALETTE[0]);
    for (x, m, v) in xy.drain(..) {
        s.circle(x, ya.px(m), PALETTE[0], &format!("{field} = {v}: {m:.4}"));
    }
    s.finish()
}

/// One point of [`ratio_svg`]: a ratio (ours / theirs), its tolerance band, the series it
/// belongs to (coloured and listed in a legend) and its tooltip.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioPoint {
    pub series: String,
    pub ratio: f64,
    pub tolerance: f64,
    pub tip: String,
}

/// Ratios on a log scale, one per slot in order, each over a grey band of ±its tolerance around
/// 1 (the reproduction report's figure). Points with a non-positive ratio are skipped.
pub fn ratio_svg(title: &str, ylabel: &str, points: &[RatioPoint]) -> String {
    let rows: Vec<_> = points.iter().filter(|r| r.ratio > 0.0).collect();
    let mut s = Svg::new(title, "row", ylabel);
    let lo = rows.iter().map(|r| r.ratio).fold(0.5, f64::min);
    let hi = rows.iter().map(|r| r.ratio).fold(2.0, f64::max);
    let ya = Axis::new(lo, hi, true, H - MB, MT);
    y_ticks(&mut s, &ya);
    s.line(ML, ya.px(1.0), W - MR, ya.px(1.0), r#"stroke="black" stroke-dasharray="4 3""#);
    let slot = (W - ML - MR) / rows.len().max(1) as f64;
    let series: Vec<&str> = {
        let mut p: Vec<&str> = rows.iter().map(|r| r.series.as_str()).collect();
        p.dedup();
        p
    };
    for (i, r) in rows.iter().enumerate() {
        let x = ML + slot * (i as f64 + 0.5);
        let tol = r.tolerance.clamp(0.0, 0.99);
        let (b0, b1) = (ya.px(1.0 + tol), ya.px(1.0 - tol));
        let _ = writeln!(
            s.out,
            r##"<rect class="band" x="{:.2}" y="{b0:.2}" width="{:.2}" height="{:.2}" fill="#ccc"/>"##,
            x - slot * 0.4,
            slot * 0.8,
            (b1 - b0).max(0.5)
        );
        let c = series.iter().position(|p| *p == r.series).unwrap_or(0) % PALETTE.len();
        s.circle(x, ya.px(r.ratio), PALETTE[c], &r.tip);
    }
    for (i, p) in series.iter().enumerate() {
        let _ = writeln!(
            s.out,
            r#"<text x="{:.2}" y="{}" fill="{}">● {}</text>"#,
            ML + 10.0 + 110.0 * i as f64,
            MT + 16.0,
            PALETTE[i % PALETTE.len()],
            esc(p)
        );
    }
    s.finish()
}

/// A design-space grid as a scatter of energy over latency (log–log), the Pareto front
/// (over latency, energy and area) drawn as a line through its points.
pub fn grid_svg(machine: &str, pts: &[crate::grid::GridPoint]) -> String {
    let xy: Vec<(f64, f64, bool, String)> = pts
        .iter()
        .filter_map(|p| {
            let label: Vec<String> = p.settings.iter().map(|(f, v)| format!("{f}={v}")).collect();
            let label = format!(
                "{}: {:.4} ms, {:.4e} J{}",
                label.join(" "),
                p.seconds * 1e3,
                p.energy_j?,
                p.area_mm2.map_or(String::new(), |a| format!(", {a:.1} mm²"))
            );
            Some((p.seconds * 1e3, p.energy_j?, p.pareto, label))
        })
        .collect();
    let mut s = Svg::new(&format!("{machine}: design-space grid"), "latency (ms)", "energy (J)");
    if xy.is_empty() {
        s.text(W / 2.0, H / 2.0, "middle", "no point has an energy figure");
        return s.finish();
    }
    let span = |v: Vec<f64>| {
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        (lo / 1.2, hi * 1.2)
    };
    let (x0, x1) = span(xy.iter().map(|p| p.0).collect());
    let (y0, y1) = span(xy.iter().map(|p| p.1).collect());
    let xa = Axis::new(x0.log10(), x1.log10(), false, ML, W - MR);
    let ya = Axis::new(y0.log10(), y1.log10(), false, H - MB, MT);
    x_ticks(&mut s, &xa);
    y_ticks(&mut s, &ya);
    let mut front: Vec<(f64, f64)> =
        xy.iter().filter(|p| p.2).map(|p| (xa.px(p.0.log10()), ya.px(p.1.log10()))).collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    s.polyline("pareto", &front, PALETTE[1]);
    for (x, y, on, label) in &xy {
        let c = if *on { PALETTE[1] } else { PALETTE[0] };
        s.circle(xa.px(x.log10()), ya.px(y.log10()), c, label);
    }
    s.text(W - MR, MT + 12.0, "end", "axes: log10; orange = Pareto front");
    s.finish()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A strict-enough XML check for what this module writes: every tag closes in order,
    /// attributes are quoted, text holds no raw `<` or stray `&`. Returns the element names in
    /// document order.
    pub(crate) fn check_xml(doc: &str) -> Result<Vec<String>, String> {
        let body =
            doc.strip_prefix(r#"<?xml version="1.0" encoding="UTF-8"?>"#).ok_or("no prolog")?;
        let mut stack: Vec<String> = Vec::new();
        let mut names = Vec::new();
        let mut rest = body;
        let mut seen_root = false;
        while let Some(i) = rest.find('<') {
            check_text(&rest[..i])?;
            let j = rest[i..].find('>').ok_or("unterminated tag")? + i;
            let tag = &rest[i + 1..j];
            rest = &rest[j + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                let open = stack.pop().ok_or(format!("stray </{name}>"))?;
                if open != name {
                    return Err(format!("</{name}> closes <{open}>"));
                }
                continue;
            }
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let name = tag.split_whitespace().next().ok_or("empty tag")?.to_string();
            if stack.is_empty() && seen_root {
                return Err("two root elements".into());
            }
            seen_root = true;
            // Attributes: name="value" pairs, quotes balanced.
            if tag.matches('"').count() % 2 != 0 {
                return Err(format!("unbalanced quotes in <{tag}>"));
            }
            names.push(name.clone());
            if !self_closing {
                stack.push(name);
            }
        }
        check_text(rest)?;
        if !stack.is_empty() {
            return Err(format!("unclosed {stack:?}"));
        }
        Ok(names)
    }

    fn check_text(t: &str) -> Result<(), String> {
        for (i, _) in t.match_indices('&') {
            let ent = &t[i..];
            if !["&amp;", "&lt;", "&gt;", "&quot;"].iter().any(|e| ent.starts_with(e)) {
                return Err(format!("stray & in {t:?}"));
            }
        }
        Ok(())
    }

    /// The `points` of the first polyline with `class`.
    pub(crate) fn polyline(doc: &str, class: &str) -> Vec<(f64, f64)> {
        let key = format!(r#"<polyline class="{class}" points=""#);
        let s = &doc[doc.find(&key).expect("polyline") + key.len()..];
        let s = &s[..s.find('"').unwrap()];
        s.split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn the_checker_rejects_broken_documents() {
        let p = r#"<?xml version="1.0" encoding="UTF-8"?>"#;
        assert!(check_xml(&format!("{p}<svg><g></svg></g>")).is_err());
        assert!(check_xml(&format!("{p}<svg><text>a < b</text></svg>")).is_err());
        assert!(check_xml(&format!("{p}<svg><text>a & b</text></svg>")).is_err());
        assert!(check_xml(&format!("{p}<svg><rect/>")).is_err());
        assert_eq!(check_xml(&format!("{p}<svg><rect/></svg>")).unwrap(), ["svg", "rect"]);
    }

    #[test]
    fn names_are_escaped() {
        let pts = [
            SweepPoint { value: "a<b".into(), metric: 1.0 },
            SweepPoint { value: "c&d".into(), metric: 2.0 },
        ];
        let svg = sweep_svg("m\"x", "f", "latency (us)", &pts);
        check_xml(&svg).unwrap();
        assert!(svg.contains("a&lt;b") && svg.contains("c&amp;d"));
    }

    #[test]
    fn numeric_sweeps_are_sorted_along_x() {
        let pts: Vec<SweepPoint> = [(2000.0, 1.0), (500.0, 4.0), (1000.0, 2.0)]
            .iter()
            .map(|&(v, m)| SweepPoint { value: format!("{v}"), metric: m })
            .collect();
        let svg = sweep_svg("m", "memory.hbm_gbps", "latency (us)", &pts);
        let names = check_xml(&svg).unwrap();
        assert_eq!(names.iter().filter(|n| *n == "circle").count(), 3);
        let line = polyline(&svg, "series");
        assert!(line.windows(2).all(|w| w[0].0 < w[1].0), "{line:?}");
        // Latency falls as bandwidth rises: SVG y grows downwards.
        assert!(line.windows(2).all(|w| w[0].1 < w[1].1), "{line:?}");
        assert!(svg.contains(">memory.hbm_gbps</text>") && svg.contains(">latency (us)</text>"));
    }

    fn craterlake_keyswitch() -> (Machine, Report) {
        use crate::synth::ckks::{KsShape, hybrid_keyswitch};
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/craterlake.toml");
        let m = Machine::load(path).unwrap();
        let t =
            hybrid_keyswitch(KsShape { n: 1 << 16, limbs: 60, dnum: 1, special: 60, seeded: true });
        let r = crate::simulate(&m, &t).unwrap();
        (m, r)
    }

    /// The `y` attribute of each bar, in document order.
    fn bar_tops(svg: &str) -> Vec<f64> {
        svg.split(r#"<rect class="bar""#)
            .skip(1)
            .map(|r| {
                let y = r.split("y=\"").nth(1).unwrap().split('"').next().unwrap();
                y.parse().unwrap()
            })
            .collect()
    }

    #[test]
    fn compare_bars_are_logarithmic_in_latency() {
        let rows = [("fast".to_string(), 1e-5), ("slow".to_string(), 1e-3), ("mid".into(), 1e-4)];
        let svg = compare_svg("t.json", &rows);
        check_xml(&svg).unwrap();
        let tops = bar_tops(&svg);
        assert_eq!(tops.len(), 3);
        // 10, 1000 and 100 us: equal steps on a log axis, taller (smaller y) for slower.
        assert!(tops[1] < tops[2] && tops[2] < tops[0], "{tops:?}");
        let (a, b) = (tops[0] - tops[2], tops[2] - tops[1]);
        assert!((a - b).abs() < 1e-6 * a.abs().max(1.0), "{tops:?}");
        assert!(svg.contains(">latency (us)</text>"));
    }

    #[test]
    fn utilisation_and_traffic_bars_match_the_report() {
        let (_, r) = craterlake_keyswitch();
        let svg = utilisation_svg(&r);
        let names = check_xml(&svg).unwrap();
        assert_eq!(svg.matches(r#"<rect class="bar""#).count(), r.units.len());
        assert!(names.iter().filter(|n| *n == "text").count() > r.units.len());
        assert!(svg.contains(">utilisation (%)</text>"));
        for u in &r.units {
            assert!(svg.contains(&format!(">{}</text>", u.name)), "{}", u.name);
        }
        let svg = traffic_svg(&r);
        check_xml(&svg).unwrap();
        assert_eq!(svg.matches(r#"<rect class="bar""#).count(), 4);
        assert!(svg.contains(">traffic (MiB)</text>") && svg.contains(">keys</text>"));
        // Only keys move in a key switch: the keys bar is the only one with height.
        let heights: Vec<f64> = svg
            .match_indices(r#"<rect class="bar""#)
            .map(|(i, _)| {
                let s = &svg[i..];
                let h = &s[s.find("height=\"").unwrap() + 8..];
                h[..h.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(heights[0] > 100.0 && heights[1..].iter().all(|&h| h == 0.0), "{heights:?}");
    }

    #[test]
    fn the_program_lies_under_a_monotone_roof() {
        let (m, r) = craterlake_keyswitch();
        let rf = Roofline::new(&m, &r);
        let ai = rf.intensity().unwrap();
        assert!(rf.achieved_ops_per_s > 0.0);
        assert!(rf.achieved_ops_per_s <= rf.attainable(ai) * (1.0 + 1e-9), "{rf:?}");
        // The key switch at L = 60 is memory-bound on CraterLake (its 26 MiB hint takes ~27 µs
        // at 1 TB/s, its compute ~6 µs): left of the ridge.
        assert!(ai < rf.ridge(), "{ai} vs ridge {}", rf.ridge());
        let svg = roofline_svg(&m.name, &rf);
        check_xml(&svg).unwrap();
        assert!(svg.contains("arithmetic intensity") && svg.contains("throughput (lane-ops/s)"));
        let roof = polyline(&svg, "roof");
        assert!(roof.len() >= 2);
        assert!(roof.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 >= w[1].1), "{roof:?}");
        assert_eq!(svg.matches("<circle").count(), 1);
        // More bandwidth moves the ridge left and lifts the point.
        let m2 = Machine::load_with(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/craterlake.toml"),
            &["memory.hbm_gbps=4000"],
        )
        .unwrap();
        let rf2 = Roofline::new(&m2, &crate::simulate(&m2, &craterlake_keyswitch_trace()).unwrap());
        assert!(rf2.ridge() < rf.ridge() && rf2.achieved_ops_per_s > rf.achieved_ops_per_s);
    }

    fn craterlake_keyswitch_trace() -> basalt_trace::Trace {
        use crate::synth::ckks::{KsShape, hybrid_keyswitch};
        hybrid_keyswitch(KsShape { n: 1 << 16, limbs: 60, dnum: 1, special: 60, seeded: true })
    }

    #[test]
    fn a_program_without_traffic_is_drawn_at_the_edge() {
        let (m, mut r) = craterlake_keyswitch();
        r.traffic = crate::memory::Traffic::default();
        let rf = Roofline::new(&m, &r);
        assert_eq!(rf.intensity(), None);
        let svg = roofline_svg(&m.name, &rf);
        check_xml(&svg).unwrap();
        assert!(svg.contains("no HBM traffic"));
    }

    #[test]
    fn ratio_plots_draw_every_positive_ratio_with_its_band() {
        let p = |series: &str, ratio: f64| RatioPoint {
            series: series.into(),
            ratio,
            tolerance: 0.1,
            tip: format!("{series} <{ratio}>"),
        };
        let pts = [p("a", 1.0), p("a", 0.5), p("b", 3.0), p("b", 0.0)];
        let svg = ratio_svg("t", "ours / theirs", &pts);
        check_xml(&svg).unwrap();
        assert_eq!(svg.matches(r#"<circle class="point""#).count(), 3);
        assert_eq!(svg.matches(r#"class="band""#).count(), 3);
        assert!(svg.contains(">ours / theirs</text>") && svg.contains("&lt;3&gt;"));
        assert!(svg.contains("● a") && svg.contains("● b"));
    }

    #[test]
    fn nice_ticks_cover_the_range() {
        let a = Axis::new(0.0, 87.0, false, 0.0, 100.0);
        assert_eq!(a.ticks(), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        let l = Axis::new(0.03, 250.0, true, 0.0, 100.0);
        assert_eq!(l.ticks().len(), 6); // 1e-2 … 1e3
        assert!((l.px(1.0) - 40.0).abs() < 1e-9);
    }
}
