//! Osiris' giant-step-centric dataflow (§IV-E) on the simulator: the qualitative claims of
//! §VI-C that the model reproduces.

use basalt_sim::synth::lintrans::{BsgsShape, bsgs_double_hoisted};
use basalt_sim::{Machine, Report, simulate};

fn run(n1: u32, n2: u32, gsc: bool) -> Report {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/osiris.toml");
    let m = Machine::load(path).unwrap();
    let shape = BsgsShape { n: 1 << 16, q_limbs: 13, p_limbs: 14, n1, n2 };
    simulate(&m, &bsgs_double_hoisted(shape, gsc)).unwrap()
}

#[test]
fn gsc_hides_baby_step_keys_when_n2_is_large() {
    // "If the latency of fetching a rotation key is less than the latency of generating n2
    // plaintext diagonals, then DRAM accesses are completely overlapped."
    let r = run(8, 8, true);
    assert_eq!(r.regions["MatVec;BabyStep"].stall_cycles, 0.0);
    // The plain order loads all baby-step keys back to back and stalls on them.
    let plain = run(8, 8, false);
    assert!(plain.regions["MatVec;BabyStep"].stall_cycles > 0.0);
    assert!(plain.cycles > r.cycles);
}

#[test]
fn few_giant_steps_stall_on_keys() {
    // n2 = 1: one diagonal per key cannot hide the key load (Fig. 11(b): 35 % stalls).
    let r64 = run(64, 1, true);
    let r4 = run(16, 4, true);
    assert!(r64.stall_cycles / r64.cycles > 0.3);
    assert!(r64.cycles > 1.5 * r4.cycles);
    // Seeded keys: only one half is streamed (PRNG), 27 limbs × 2^16 × 5 B per key.
    assert_eq!(r64.traffic.keys, 63.0 * 27.0 * 65536.0 * 5.0);
}
