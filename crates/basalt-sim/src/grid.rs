//! Design-space exploration: one trace timed on every point of a grid over several machine
//! fields at once (`units.mdc.lanes` × `memory.hbm_gbps` × …), with latency, area, energy and
//! energy-delay product per point and the Pareto front over (latency, energy, area).
//!
//! Every axis is checked on its first value before anything is timed, so a typo in a field
//! name is an error naming the axis, not a grid of failures.

use std::path::Path;

use basalt_trace::Trace;
use serde::Serialize;

use crate::{Machine, SimError, simulate};

/// One axis: a dotted machine field (as `basalt sim run --set` takes) and its values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GridAxis {
    pub field: String,
    pub values: Vec<String>,
}

impl GridAxis {
    /// Parse `field=v1,v2,…`.
    pub fn parse(s: &str) -> Result<GridAxis, SimError> {
        let bad = |m: &str| SimError::Grid(format!("axis `{s}`: {m}"));
        let (field, values) = s.split_once('=').ok_or_else(|| bad("expected FIELD=V1,V2,…"))?;
        let values: Vec<String> =
            values.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
        if field.trim().is_empty() || values.is_empty() {
            return Err(bad("needs a field and at least one value"));
        }
        Ok(GridAxis { field: field.trim().into(), values })
    }
}

/// One grid point: its settings and what the machine does there.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GridPoint {
    /// `(field, value)` per axis, in axis order.
    pub settings: Vec<(String, String)>,
    pub seconds: f64,
    /// Memory stall over latency.
    pub stall_fraction: f64,
    pub area_mm2: Option<f64>,
    pub energy_j: Option<f64>,
    /// Energy × latency (J·s).
    pub edp: Option<f64>,
    /// Average power over the run.
    pub power_w: Option<f64>,
    /// No other point is at least as good on latency, energy and area and better on one.
    pub pareto: bool,
}

/// Time `trace` on every point of the grid `axes` over the machine file at `machine`
/// (row-major: the last axis varies fastest).
///
/// # Errors
/// [`SimError::Grid`] for an empty grid or an axis whose field the machine does not have (or
/// whose value it refuses), naming the axis; any error of timing the trace.
pub fn grid(machine: &Path, trace: &Trace, axes: &[GridAxis]) -> Result<Vec<GridPoint>, SimError> {
    if axes.is_empty() {
        return Err(SimError::Grid("a grid needs at least one axis (FIELD=V1,V2,…)".into()));
    }
    let total = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
    let total = match total {
        Some(n) if n <= MAX_POINTS => n,
        _ => {
            let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
            return Err(SimError::Grid(format!(
                "a grid of {} points is more than one grid may hold ({MAX_POINTS}): split the sweep",
                sizes.join(" × ")
            )));
        }
    };
    for a in axes {
        if a.values.is_empty() {
            return Err(SimError::Grid(format!("axis `{}` has no values", a.field)));
        }
        for v in &a.values {
            let o = format!("{}={v}", a.field);
            crate::check_timing_overrides(&[&o])?;
            Machine::load_with(machine, &[&o]).map_err(|e| {
                SimError::Grid(format!("axis `{}` (value `{v}`) does not apply: {e}", a.field))
            })?;
        }
    }
    let mut out = Vec::with_capacity(total);
    for i in 0..total {
        let mut rest = i;
        let mut settings = vec![(String::new(), String::new()); axes.len()];
        for (k, a) in axes.iter().enumerate().rev() {
            settings[k] = (a.field.clone(), a.values[rest % a.values.len()].clone());
            rest /= a.values.len();
        }
        let sets: Vec<String> = settings.iter().map(|(f, v)| format!("{f}={v}")).collect();
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let m = Machine::load_with(machine, &sets)?;
        let r = simulate(&m, trace)?;
        out.push(GridPoint {
            settings,
            seconds: r.seconds,
            stall_fraction: r.stall_cycles / r.cycles.max(1.0),
            area_mm2: r.costs.area_mm2,
            energy_j: r.energy_j,
            edp: r.energy_j.map(|e| e * r.seconds),
            power_w: r.costs.power_w,
            pareto: false,
        });
    }
    mark_pareto(&mut out);
    Ok(out)
}

/// The most points one grid evaluates. Each point is one simulation of the trace (milliseconds
/// to seconds), and the Pareto marking compares every pair, so a grid of a million points would
/// run for hours; above this bound the grid is refused before any point is timed.
pub const MAX_POINTS: usize = 20_000;

/// Mark the points no other point dominates on (latency, energy, area); a missing energy or
/// area counts as equal everywhere (the comparison falls back to the figures that exist).
pub fn mark_pareto(points: &mut [GridPoint]) {
    let key = |p: &GridPoint| [p.seconds, p.energy_j.unwrap_or(0.0), p.area_mm2.unwrap_or(0.0)];
    let keys: Vec<[f64; 3]> = points.iter().map(key).collect();
    for (i, p) in points.iter_mut().enumerate() {
        p.pareto = !keys.iter().enumerate().any(|(j, q)| {
            j != i
                && q.iter().zip(&keys[i]).all(|(a, b)| a <= b)
                && q.iter().zip(&keys[i]).any(|(a, b)| a < b)
        });
    }
}

/// The grid as CSV: one column per axis, then `seconds,stall_fraction,area_mm2,energy_j,
/// edp_js,power_w,pareto`.
pub fn csv(points: &[GridPoint]) -> String {
    let quote = |s: &str| if s.contains(',') { format!("\"{s}\"") } else { s.to_string() };
    let opt = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.6e}"));
    let mut s = String::new();
    if let Some(p) = points.first() {
        for (f, _) in &p.settings {
            s += &quote(f);
            s.push(',');
        }
    }
    s += "seconds,stall_fraction,area_mm2,energy_j,edp_js,power_w,pareto\n";
    for p in points {
        for (_, v) in &p.settings {
            s += &quote(v);
            s.push(',');
        }
        s += &format!(
            "{:.6e},{:.4},{},{},{},{},{}\n",
            p.seconds,
            p.stall_fraction,
            opt(p.area_mm2),
            opt(p.energy_j),
            opt(p.edp),
            opt(p.power_w),
            p.pareto
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(s: f64, e: f64, a: f64) -> GridPoint {
        GridPoint {
            settings: vec![("x".into(), format!("{s}"))],
            seconds: s,
            stall_fraction: 0.0,
            area_mm2: Some(a),
            energy_j: Some(e),
            edp: Some(e * s),
            power_w: Some(e / s),
            pareto: false,
        }
    }

    #[test]
    fn a_grid_beyond_the_bound_is_refused_before_any_point_is_timed() {
        let axis = |f: &str| GridAxis {
            field: f.into(),
            values: (0..200).map(|v| v.to_string()).collect(),
        };
        // No machine file is read: the size is checked first.
        let trace = Trace::default();
        let e = grid(Path::new("no-such-machine.toml"), &trace, &[axis("a"), axis("b")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("200 × 200") && e.contains("20000"), "{e}");
    }

    #[test]
    fn the_pareto_front_keeps_exactly_the_undominated_points() {
        let mut p =
            vec![pt(1.0, 4.0, 1.0), pt(2.0, 2.0, 1.0), pt(2.0, 4.0, 1.0), pt(1.0, 4.0, 2.0)];
        mark_pareto(&mut p);
        let front: Vec<bool> = p.iter().map(|x| x.pareto).collect();
        assert_eq!(front, [true, true, false, false]);
        let c = csv(&p);
        assert!(
            c.starts_with("x,seconds,stall_fraction,area_mm2,energy_j,edp_js,power_w,pareto\n")
        );
        assert_eq!(c.lines().count(), 5);
    }

    #[test]
    fn axes_parse_and_refuse_nonsense() {
        let a = GridAxis::parse("memory.hbm_gbps=500, 1000,2000").unwrap();
        assert_eq!(a.values, ["500", "1000", "2000"]);
        assert!(GridAxis::parse("memory.hbm_gbps").is_err());
        assert!(GridAxis::parse("memory.hbm_gbps=").is_err());
    }
}
