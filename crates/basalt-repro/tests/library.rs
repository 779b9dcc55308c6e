//! The libraries as the reproductions' trace source: programs recorded shape-only at full size.

use basalt_repro::library::LibrarySource;
use basalt_repro::{Program, TraceSource};
use basalt_trace::{Kernel, Trace};

/// CraterLake's 200-bit column normalises per element: one N = 128K ciphertext holds two
/// trainings side by side, each in the 80-bit layout. Recorded so, the 128K run does the 80-bit
/// run's operations (the same rotations and products, so the same operation count), on twice
/// the ring; the per-element time is then half of it (`reproduce/craterlake_logreg.rs`).
#[test]
fn two_trainings_side_by_side_at_128k_run_the_64k_operations() {
    let logreg = |preset: &str, side_by_side| Program::Logreg {
        preset: preset.into(),
        start_limbs: 38,
        iterations: 2,
        side_by_side,
        seeded: true,
    };
    let src = LibrarySource::default();
    let t80 = src.program(&logreg("CRATERLAKE_80_BOOT", 1)).unwrap().unwrap();
    let t200 = src.program(&logreg("CRATERLAKE_200_BOOT", 2)).unwrap().unwrap();
    let count = |t: &Trace, f: fn(&Kernel) -> Option<u32>| -> (usize, u32) {
        let ns: Vec<u32> = t.kernels().filter_map(f).collect();
        (ns.len(), ns.iter().copied().max().unwrap_or(0))
    };
    let stores = |k: &Kernel| match k {
        Kernel::CtStore { n, .. } => Some(*n),
        _ => None,
    };
    let automorphisms = |k: &Kernel| match k {
        Kernel::Automorph { n, .. } => Some(*n),
        _ => None,
    };
    let (ops80, n80) = count(&t80, stores);
    let (ops200, n200) = count(&t200, stores);
    assert_eq!((ops200, n200), (ops80, 2 * n80), "same operations, twice the ring");
    assert_eq!(count(&t200, automorphisms).0, count(&t80, automorphisms).0);
    // A split that leaves a training fewer than 256 slots (one per feature) is refused.
    let err = src.program(&logreg("CRATERLAKE_80_BOOT", 3)).unwrap_err();
    assert!(err.contains("side_by_side = 3"), "{err}");
}
