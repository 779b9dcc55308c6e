//! The trained ResNets in the clear over the digits' whole test split: accuracy with the exact
//! ReLU and with the encrypted run's composite minimax ReLU (the twin's arithmetic), their
//! agreement and the largest ReLU input, as one JSON line per network.
//!
//! `cargo run --release -p basalt-workloads --example resnet_plaintext [-- --quick]`
//!
//! Without `--quick`: ResNet-20 on the digits as 32×32×3 (each pixel a 4×4 block, the grey
//! plane in all three channels), the sign of degrees 15, 15, 27 (minutes on two cores). With
//! it: the toy ResNet of the `--quick` runs on 4×4×3 (2×2 means), the (7, 7) sign (seconds).

use basalt_workloads::digits;
use basalt_workloads::resnet::{Arch, TOY, score_split, trained};
use basalt_workloads::resnet_run::relu_sign;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quick = std::env::args().any(|a| a == "--quick");
    let (arch, name) = if quick {
        (TOY, "resnet_toy")
    } else {
        (Arch { slots: 1 << 15, ..Arch::RESNET20 }, "resnet20")
    };
    let net = trained(arch)?;
    let sign = relu_sign(quick)?;
    let test = digits::load()?.test;
    let s = score_split(&net, &sign, &test)?;
    let side = arch.side;
    println!(
        "{}",
        serde_json::json!({
            "network": name,
            "data": format!("sklearn digits test split as {side}x{side}x3"),
            "relu_sign_degrees": sign.degrees(),
            "relu_sign_eps": sign.eps,
            "images": s.images,
            "accuracy_exact_relu": s.exact,
            "accuracy_approx_relu": s.approx,
            "agreement": s.agreement,
            "max_relu_input": s.max_relu_input,
        })
    );
    Ok(())
}
