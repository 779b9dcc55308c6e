//! Programs whose bootstraps are markers: a [`Marker::Bootstrap`] event where the program
//! refreshed a ciphertext. A whole ResNet-20 or sort holds dozens to hundreds of identical
//! bootstraps, each seconds to record at N = 2^16, so the workloads record each as a marker
//! (`basalt_trace::mark`) and the simulator times it from one separately recorded bootstrap.
//!
//! [`simulate_with_bootstrap`] cuts the program at its markers, times every segment on its own
//! (the on-chip store and the overlap windows start afresh after a bootstrap, which itself
//! fills the chip) and adds the bootstrap once per marker. [`crate::simulate`] refuses a trace
//! with markers, so a program never silently loses its bootstraps.

use basalt_trace::{Event, Marker, Trace};

use crate::machine::Machine;
use crate::report::Report;
use crate::{SimError, schedule};

/// The empty region that stood for a bootstrap before the trace had a [`Marker`] event. A trace
/// holding it is refused with a message, rather than timed without its bootstraps.
const OLD_BOOTSTRAP_REGION: &str = "bootstrap (timed from the Bootstrap program)";

/// How many bootstrap markers `t` holds.
pub fn bootstrap_markers(t: &Trace) -> usize {
    t.markers(Marker::Bootstrap)
}

/// [`SimError::BadTrace`] if `t` marks a bootstrap with the old empty region.
pub(crate) fn check_marker_form(t: &Trace) -> Result<(), SimError> {
    if t.events.iter().any(|e| matches!(e, Event::Enter { name } if name == OLD_BOOTSTRAP_REGION)) {
        return Err(SimError::BadTrace(format!(
            "the region `{OLD_BOOTSTRAP_REGION}` is the old form of a bootstrap marker: record \
             the trace again (bootstraps are now `{{\"ev\":\"Marker\",\"marker\":\"bootstrap\"}}` events)"
        )));
    }
    Ok(())
}

/// Cut `t` at every bootstrap marker: the segments in between, each with the regions open at
/// the cut closed and reopened (so windows are cut where they were), and the number of markers.
///
/// # Errors
/// [`SimError::BadTrace`] for a bootstrap marked in the old form.
pub fn split_at_bootstraps(t: &Trace) -> Result<(Vec<Trace>, usize), SimError> {
    check_marker_form(t)?;
    let mut segments = Vec::new();
    let mut current = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut markers = 0;
    for ev in &t.events {
        match ev {
            Event::Marker { marker: Marker::Bootstrap } => {
                markers += 1;
                current.extend(open.iter().map(|_| Event::Exit));
                segments.push(Trace { events: std::mem::take(&mut current) });
                current = open.iter().map(|n| Event::Enter { name: n.clone() }).collect();
            }
            Event::Enter { name } => {
                open.push(name.clone());
                current.push(ev.clone());
            }
            Event::Exit => {
                open.pop();
                current.push(ev.clone());
            }
            _ => current.push(ev.clone()),
        }
    }
    segments.push(Trace { events: current });
    Ok((segments, markers))
}

/// `program` on `machine` with each of its bootstrap markers timed as `bootstrap`: the
/// segments between markers one after the other, plus the bootstrap once per marker. Without
/// markers this is [`crate::simulate`] of `program`.
///
/// # Errors
/// Those of [`crate::simulate`], for the segments and for `bootstrap` (which must not hold
/// markers itself).
pub fn simulate_with_bootstrap(
    machine: &Machine,
    program: &Trace,
    bootstrap: &Trace,
) -> Result<Report, SimError> {
    let (segments, markers) = split_at_bootstraps(program)?;
    let mut parts = Vec::with_capacity(segments.len() + 1);
    for s in segments.iter().filter(|s| !s.events.is_empty()) {
        parts.push((schedule::simulate_unmarked(machine, s)?, 1));
    }
    if markers > 0 {
        parts.push((crate::simulate(machine, bootstrap)?, markers as u64));
    }
    match parts.len() {
        0 => crate::simulate(machine, &Trace::default()),
        _ => Ok(Report::sequence(&parts)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_trace::Kernel;

    fn k() -> Event {
        Event::Kernel(Kernel::Ntt { n: 16, limbs: 1 })
    }

    fn enter(n: &str) -> Event {
        Event::Enter { name: n.into() }
    }

    fn boot() -> Event {
        Event::Marker { marker: Marker::Bootstrap }
    }

    #[test]
    fn markers_cut_the_trace_with_regions_balanced() {
        let t =
            Trace { events: vec![enter("SortStage"), k(), boot(), k(), k(), Event::Exit, boot()] };
        let (segs, n) = split_at_bootstraps(&t).unwrap();
        assert_eq!((segs.len(), n), (3, 2));
        assert_eq!(bootstrap_markers(&t), 2);
        assert_eq!(segs[0].events, vec![enter("SortStage"), k(), Event::Exit]);
        assert_eq!(segs[1].events, vec![enter("SortStage"), k(), k(), Event::Exit]);
        assert!(segs[2].events.is_empty());
        let kernels: usize = segs.iter().map(|s| s.kernels().count()).sum();
        assert_eq!(kernels, t.kernels().count());
    }

    #[test]
    fn bootstraps_are_timed_once_per_marker_and_never_dropped() {
        use crate::synth::ckks::{KsShape, mult, rescale};
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/craterlake.toml");
        let m = Machine::load(dir).unwrap();
        let shape = KsShape { n: 1 << 16, limbs: 20, dnum: 1, special: 20, seeded: true };
        let (a, b, boot_trace) = (mult(shape), rescale(1 << 16, 20), mult(shape));
        let mut program = a.clone();
        program.events.push(boot());
        program.events.extend(b.events.iter().cloned());
        program.events.push(boot());
        assert!(matches!(
            crate::simulate(&m, &program),
            Err(SimError::UntimedBootstraps { markers: 2 })
        ));
        let r = simulate_with_bootstrap(&m, &program, &boot_trace).unwrap();
        let (ra, rb, rboot) = [&a, &b, &boot_trace].map(|t| crate::simulate(&m, t).unwrap()).into();
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().max(1.0);
        assert!(close(r.cycles, ra.cycles + rb.cycles + 2.0 * rboot.cycles));
        assert!(close(
            r.stall_cycles,
            ra.stall_cycles + rb.stall_cycles + 2.0 * rboot.stall_cycles
        ));
        let keys = ra.traffic.keys + rb.traffic.keys + 2.0 * rboot.traffic.keys;
        assert!(close(r.traffic.keys, keys) && keys > 0.0);
        for (u, (x, (y, z))) in
            r.units.iter().zip(ra.units.iter().zip(rb.units.iter().zip(&rboot.units)))
        {
            assert!(close(u.busy_cycles, x.busy_cycles + y.busy_cycles + 2.0 * z.busy_cycles));
            assert!(close(u.utilisation, u.busy_cycles / r.cycles));
        }
        // Without markers it is plain `simulate`.
        assert_eq!(simulate_with_bootstrap(&m, &a, &boot_trace).unwrap(), ra);
    }

    /// A trace recorded with the old marker region is refused by name, by `simulate` and by
    /// the split, never timed as if it had no bootstraps.
    #[test]
    fn the_old_marker_region_is_refused() {
        let t = Trace { events: vec![k(), enter(OLD_BOOTSTRAP_REGION), Event::Exit] };
        let e = split_at_bootstraps(&t).unwrap_err();
        assert!(matches!(e, SimError::BadTrace(_)) && e.to_string().contains("record"), "{e}");
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/craterlake.toml");
        let m = Machine::load(dir).unwrap();
        assert!(matches!(crate::simulate(&m, &t), Err(SimError::BadTrace(_))));
    }
}
