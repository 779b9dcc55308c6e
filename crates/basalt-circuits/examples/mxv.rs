//! HE-MxV suite: prints one JSON line per layer.
//!
//! ```text
//! cargo run --release -p basalt-circuits --example mxv -- [A|B|C] [threads] [layer names…]
//! ```
//! Defaults: set B, rayon's default thread count, all seven layers. The strategy comes from
//! `BASALT_MXV_STRATEGY`: `auto` (default, at most 64 partial sums), `auto:<max_partials>`,
//! `diag` (the paper's one rotation per hybrid diagonal), `diag-hoisted`, `bsgs:<n1>`.

use basalt_circuits::lintrans::{GscOrder, Hoisting, Strategy};
use basalt_circuits::mxv_suite::{DEFAULT_STRATEGY, LAYERS, MxvSet, layer, mxv_suite_with};

fn strategy() -> Strategy {
    let s = std::env::var("BASALT_MXV_STRATEGY").unwrap_or_default();
    let (name, arg) = s.split_once(':').unwrap_or((s.as_str(), ""));
    let num = arg.parse::<usize>().ok();
    match name {
        "diag" => Strategy::Diagonal { hoisting: Hoisting::None },
        "diag-hoisted" => Strategy::Diagonal { hoisting: Hoisting::Single },
        "bsgs" => Strategy::Bsgs {
            n1: num.unwrap_or(64),
            hoisting: Hoisting::Double,
            order: GscOrder::GiantStepCentric { max_partials: 64, of_limb: true },
        },
        "auto" if num.is_some() => Strategy::Auto { max_partials: num.unwrap_or(64) },
        _ => DEFAULT_STRATEGY,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let set = args.first().and_then(|s| MxvSet::parse(s)).unwrap_or(MxvSet::B);
    let threads = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let layers: Vec<_> = if args.len() > 2 {
        args[2..].iter().filter_map(|n| layer(n)).collect()
    } else {
        LAYERS.to_vec()
    };
    for l in layers {
        match mxv_suite_with(set, &[l], threads, strategy()) {
            Ok(recs) => recs
                .iter()
                .for_each(|r| println!("{}", serde_json::to_string(r).expect("serializable"))),
            Err(e) => println!("{{\"layer\":\"{}\",\"error\":\"{e}\"}}", l.name),
        }
    }
}
