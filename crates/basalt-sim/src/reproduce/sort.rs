//! Osiris Table III "Sorting" (Set IV; NH / SH / DH at 1 TB/s, targets; at 2 TB/s, validation):
//! the library's bitonic sort of 2^14 values (`basalt_workloads::sort`, recorded shape-only on
//! `OSIRIS_SET_IV` with its bootstraps as [`BOOTSTRAP_REGION`] markers) plus as many 2^14-slot
//! bootstraps on the reconstructed `OSIRIS_SET_IV_BOOT` chain, each recorded once.
//!
//! The sort needs hundreds of bootstraps; recording and simulating each would take minutes, so
//! the trace is cut at the markers, every segment between two bootstraps is timed on its own
//! (a bootstrap streams gigabytes of keys, so nothing of a segment's survives on chip to the
//! next), and the bootstrap's time is counted once per marker. Nothing here is fitted.

use std::path::Path;

use basalt_trace::{Event, Trace};

use super::osiris::{COLUMNS, DFT_N1, machines};
use crate::machine::Machine;
use crate::reproduce::{Computed, Traces, computed};
use crate::synth::{BOOTSTRAP_REGION, DftPlan, Program};
use crate::{SimError, simulate};

/// Lattigo's CPU time for the sort as Table III quotes it (23.0 K s), for the improvement rows.
const CPU_SORT_S: f64 = 23_000.0;

/// log2 of the values sorted (§VI: 2^14 elements in (0, 1)); the bootstraps are sparse with as
/// many slots.
const LOG_LEN: u32 = 14;

/// Rows of `paper` from the sort's traces (Osiris only).
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, SimError> {
    if paper != "osiris" {
        return Ok(Vec::new());
    }
    let p = Program::Sort { preset: "OSIRIS_SET_IV".into(), log_len: LOG_LEN, seeded: true };
    let Some(sort) = traces.program(&p)? else { return Ok(Vec::new()) };
    let (segments, boots) = split_at_refreshes(&sort);
    let (m1, m2) = machines(data)?;
    let segments_s = |m: &Machine| -> Result<f64, SimError> {
        segments.iter().map(|t| Ok(simulate(m, t)?.seconds)).sum()
    };
    let rest = [segments_s(&m1)?, segments_s(&m2)?];
    let mut out = Vec::new();
    for (col, hoisting) in COLUMNS {
        let p = Program::Bootstrap {
            preset: "OSIRIS_SET_IV_BOOT".into(),
            log_slots: Some(LOG_LEN),
            dft: Some(DftPlan { n1: DFT_N1, hoisting, max_partials: 4 }),
            seeded: true,
        };
        let Some(boot) = traces.program(&p)? else { return Ok(Vec::new()) };
        for (b, (table, m)) in [("III(a)", &m1), ("III(b)", &m2)].into_iter().enumerate() {
            let boot_s = simulate(m, &boot)?.seconds;
            let s = rest[b] + boots as f64 * boot_s;
            let how = format!(
                "library traces at {} TB/s: bitonic sort of 2^14 (basalt_workloads::sort, 105 \
                 stages, 12 degree-7 polynomials per comparison, OSIRIS_SET_IV, seeded keys) \
                 {:.3} s in {} segments + {boots} x {col} 2^14-slot bootstrap on \
                 OSIRIS_SET_IV_BOOT (reconstructed chain) {:.3} ms",
                b + 1,
                rest[b],
                segments.len(),
                boot_s * 1e3
            );
            out.push(computed(table, "Sorting", &format!("{col} latency"), s, &how));
            if col == "DH" {
                let imp = "quoted CPU 23.0 K s / our DH latency";
                out.push(computed(table, "Sorting", "improvement vs CPU", CPU_SORT_S / s, imp));
            }
        }
    }
    Ok(out)
}

/// Cut `t` at every (empty) [`BOOTSTRAP_REGION`] region: the segments in between, each with the
/// regions open at the cut closed and reopened (so windows are cut where they were), and the
/// number of refreshes.
fn split_at_refreshes(t: &Trace) -> (Vec<Trace>, usize) {
    let mut segments = Vec::new();
    let mut current = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let (mut refreshes, mut in_marker) = (0, false);
    for ev in &t.events {
        match ev {
            Event::Enter { name } if name == BOOTSTRAP_REGION => {
                refreshes += 1;
                in_marker = true;
                current.extend(open.iter().map(|_| Event::Exit));
                segments.push(Trace { events: std::mem::take(&mut current) });
                current = open.iter().map(|n| Event::Enter { name: n.clone() }).collect();
            }
            Event::Exit if in_marker => in_marker = false,
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
    (segments, refreshes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_trace::Kernel;

    #[test]
    fn refresh_markers_cut_the_trace_with_regions_balanced() {
        let k = || Event::Kernel(Kernel::Ntt { n: 16, limbs: 1 });
        let enter = |n: &str| Event::Enter { name: n.into() };
        let t = Trace {
            events: vec![
                enter("SortStage"),
                k(),
                enter(BOOTSTRAP_REGION),
                Event::Exit,
                k(),
                k(),
                Event::Exit,
                enter(BOOTSTRAP_REGION),
                Event::Exit,
            ],
        };
        let (segs, n) = split_at_refreshes(&t);
        assert_eq!((segs.len(), n), (3, 2));
        assert_eq!(segs[0].events, vec![enter("SortStage"), k(), Event::Exit]);
        assert_eq!(segs[1].events, vec![enter("SortStage"), k(), k(), Event::Exit]);
        assert!(segs[2].events.is_empty());
        let kernels: usize = segs.iter().map(|s| s.kernels().count()).sum();
        assert_eq!(kernels, t.kernels().count());
    }
}
