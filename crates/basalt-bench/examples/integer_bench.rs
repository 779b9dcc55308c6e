//! Radix-integer operations on one parameter set, one JSON line per measurement.
//!
//! ```text
//! cargo run --release -p basalt-bench --example integer_bench -- [--set TFHERS_2_2_KS_PBS] \
//!     [--threads 1,2] [--bits 8,16,32,64] [--ops add,mul,lt,eq] [--reps 5] [--carry auto|scan|ripple]
//! ```

use basalt_bench::tfhe_integer::{IntOp, IntegerBenchOptions, run_integer_bench};
use basalt_tfhe::TfheParams;
use basalt_tfhe::integer::CarryPropagation;

fn fail(msg: String) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut set = "TFHERS_2_2_KS_PBS".to_string();
    let mut o = IntegerBenchOptions::default();
    let mut i = 0;
    while i < args.len() {
        let v =
            args.get(i + 1).cloned().unwrap_or_else(|| fail(format!("{} needs a value", args[i])));
        let nums = |v: &str| -> Vec<usize> {
            v.split(',')
                .map(|x| x.trim().parse().unwrap_or_else(|_| fail(format!("not a number: {x}"))))
                .collect()
        };
        match args[i].as_str() {
            "--set" => set = v,
            "--threads" => o.threads = nums(&v),
            "--bits" => o.bits = nums(&v).into_iter().map(|b| b as u32).collect(),
            "--reps" => o.reps = nums(&v)[0],
            "--ops" => {
                o.ops = v
                    .split(',')
                    .map(|x| IntOp::parse(x).unwrap_or_else(|| fail(format!("unknown op {x}"))))
                    .collect()
            }
            "--carry" => {
                o.carry = match v.as_str() {
                    "auto" => CarryPropagation::Auto,
                    "scan" => CarryPropagation::Scan,
                    "ripple" => CarryPropagation::Ripple,
                    x => fail(format!("--carry takes auto, scan or ripple, not {x}")),
                }
            }
            x => fail(format!("unknown argument {x}")),
        }
        i += 2;
    }
    let params = TfheParams::preset(&set, false).unwrap_or_else(|e| fail(e.to_string()));
    let r = run_integer_bench(&params, &o, &mut |r| {
        println!("{}", serde_json::to_string(r).expect("json"))
    });
    if let Err(e) = r {
        fail(e);
    }
}
