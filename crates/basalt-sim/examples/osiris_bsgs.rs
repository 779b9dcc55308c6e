//! Print the simulator report of one double-hoisted BSGS product on Osiris (GSC vs plain order).
//! `cargo run --release -p basalt-sim --example osiris_bsgs -- 8 8`
use basalt_sim::synth::lintrans::{BsgsShape, bsgs_double_hoisted};
use basalt_sim::{Machine, simulate};

fn main() {
    let args: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (n1, n2) = (args.first().copied().unwrap_or(8), args.get(1).copied().unwrap_or(8));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/osiris.toml");
    let m = Machine::load(path).expect("osiris.toml loads");
    for gsc in [true, false] {
        let shape = BsgsShape { n: 1 << 16, q_limbs: 13, p_limbs: 14, n1, n2 };
        let r = simulate(&m, &bsgs_double_hoisted(shape, gsc)).expect("trace fits");
        println!("--- n1 = {n1}, n2 = {n2}, GSC = {gsc}\n{r}");
    }
}
