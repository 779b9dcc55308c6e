//! A grid sweep (`basalt_sim::grid`, `basalt sim grid`) over a field the machine does not have,
//! or with a value the machine refuses, is an error naming the axis, given before any point is
//! timed; a grid of known fields times every point.

use std::path::{Path, PathBuf};

use basalt_sim::grid::{GridAxis, grid};
use basalt_sim::synth::ckks::{KsShape, hybrid_keyswitch};
use basalt_trace::Trace;

fn osiris() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/machines/osiris.toml")
}

fn axis(s: &str) -> GridAxis {
    GridAxis::parse(s).unwrap()
}

fn trace() -> Trace {
    hybrid_keyswitch(KsShape { n: 1 << 12, limbs: 6, dnum: 3, special: 2, seeded: true })
}

#[test]
fn an_axis_over_an_unknown_field_is_named() {
    let t = trace();
    let good = axis("memory.hbm_gbps=500,1000");
    for bad in ["memory.no_such_field=1", "units.no_such_unit.lanes=8", "no_such_section.x=1"] {
        let field = bad.split_once('=').unwrap().0;
        // After a good axis too: every axis is checked before the first point is timed.
        let e = grid(&osiris(), &t, &[good.clone(), axis(bad)]).unwrap_err().to_string();
        assert!(e.contains(&format!("axis `{field}`")), "{bad}: {e}");
    }
}

#[test]
fn a_value_the_machine_refuses_is_named_with_its_axis() {
    let e = grid(&osiris(), &trace(), &[axis("memory.hbm_gbps=1000,-5")]).unwrap_err().to_string();
    assert!(e.contains("axis `memory.hbm_gbps`") && e.contains("`-5`"), "{e}");
}

#[test]
fn a_grid_of_known_fields_times_every_point() {
    let axes = [axis("memory.hbm_gbps=500,1000"), axis("units.hadamard.lanes=1024,2048")];
    let pts = grid(&osiris(), &trace(), &axes).unwrap();
    assert_eq!(pts.len(), 4);
    assert!(pts.iter().all(|p| p.seconds > 0.0));
    // Twice the bandwidth at the same lanes never slows the trace down.
    assert!(pts[2].seconds <= pts[0].seconds && pts[3].seconds <= pts[1].seconds);
}
