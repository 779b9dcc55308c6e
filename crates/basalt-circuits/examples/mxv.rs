//! HE-MxV suite: prints one JSON line per layer.
//!
//! ```text
//! cargo run --release -p basalt-circuits --example mxv -- [A|B|C] [threads] [layer names…]
//! ```
//! Defaults: set B, rayon's default thread count, all seven layers.

use basalt_circuits::mxv_suite::{LAYERS, MxvSet, layer, mxv_suite};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let set = args
        .first()
        .and_then(|s| MxvSet::parse(s))
        .unwrap_or(MxvSet::B);
    let threads = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let layers: Vec<_> = if args.len() > 2 {
        args[2..].iter().filter_map(|n| layer(n)).collect()
    } else {
        LAYERS.to_vec()
    };
    for l in layers {
        match mxv_suite(set, &[l], threads) {
            Ok(recs) => recs
                .iter()
                .for_each(|r| println!("{}", serde_json::to_string(r).expect("serializable"))),
            Err(e) => println!("{{\"layer\":\"{}\",\"error\":\"{e}\"}}", l.name),
        }
    }
}
