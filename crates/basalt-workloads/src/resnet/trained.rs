//! ResNet weights trained on the digits by `scripts/train_weights.py --models
//! resnet20,resnet_toy` (numpy, seeded; provenance in `data/weights/provenance.json`), the
//! digits as the networks read them, and the cleartext score over a whole split.
//!
//! The training uses the exact ReLU and no batch norm; afterwards every ReLU input is scaled
//! (a trunk scale per stage, one per block's inner ReLU, compensated by the next layer: a
//! folded batch norm's scale, the function unchanged) to peak at 0.5 on the training split,
//! inside `[−1, 1]` where the composite minimax sign of the encrypted ReLU
//! `x·(1 + sign(x))/2` is defined. [`score_split`] measures what the approximation costs: the
//! accuracy of the exact network and of the twin with the encrypted run's sign.

use basalt_circuits::polynomial::minimax::CompositeSign;
use rayon::prelude::*;

use super::{Arch, Network};
use crate::classify::argmax;
use crate::digits::{self, DataError, Digit};

const RESNET20_WEIGHTS: &[u8] = include_bytes!("../../../../data/weights/resnet20.bin");
const TOY_WEIGHTS: &[u8] = include_bytes!("../../../../data/weights/resnet_toy.bin");

/// ResNet-20's structure at toy size (the `--quick` runs): 4×4×3 images, 4 / 8 / 16
/// channels, one block per stage, the ten digits, 64 slots.
pub const TOY: Arch =
    Arch { side: 4, in_channels: 3, base_channels: 4, blocks: 1, classes: 10, slots: 64 };

/// Whether `a` and `b` are the same network (the slots are the packing's, not the weights').
fn same_shape(a: &Arch, b: &Arch) -> bool {
    Arch { slots: 0, ..*a } == Arch { slots: 0, ..*b }
}

/// The network with the weights trained on the digits: [`Arch::RESNET20`] (32×32×3) or
/// [`TOY`] (4×4×3), at `arch.slots` slots.
///
/// # Errors
/// Another shape (no weights are trained for it), a malformed weight file, a stage that does
/// not fit `arch.slots`.
pub fn trained(arch: Arch) -> Result<Network, DataError> {
    let (file, bytes) = if same_shape(&arch, &Arch::RESNET20) {
        ("data/weights/resnet20.bin", RESNET20_WEIGHTS)
    } else if same_shape(&arch, &TOY) {
        ("data/weights/resnet_toy.bin", TOY_WEIGHTS)
    } else {
        return Err(DataError {
            file: "data/weights",
            reason: format!("no trained ResNet of shape {arch:?}"),
        });
    };
    let a = digits::parse_weights(file, bytes)?;
    let shapes = arch.convs();
    let mut want: Vec<Vec<usize>> =
        shapes.iter().flat_map(|s| [vec![s.cout, s.cin, s.k, s.k], vec![s.cout]]).collect();
    want.push(vec![arch.classes, arch.base_channels << 2]);
    want.push(vec![arch.classes]);
    let have: Vec<&[usize]> = a.iter().map(|x| x.shape.as_slice()).collect();
    if have != want.iter().map(Vec::as_slice).collect::<Vec<_>>() {
        return Err(DataError { file, reason: format!("shapes {have:?}, expected {want:?}") });
    }
    let (convs, dense) = a.split_at(2 * shapes.len());
    let convs = convs.chunks(2).map(|p| (p[0].values.clone(), p[1].values.clone())).collect();
    let rows = dense[0].values.chunks(dense[0].shape[1]).map(<[f64]>::to_vec).collect();
    Network::from_weights(arch, convs, rows, dense[1].values.clone())
        .map_err(|e| DataError { file, reason: e.to_string() })
}

/// The image a trained network reads: `3 × side²` values in `[0, 1]`, the grey plane in all
/// three channels; at side 4 the 2×2 means ([`digits::to4`]), else each pixel a
/// `(side/8)²` block (32×32: 4×4 blocks).
pub fn image(arch: &Arch, d: &Digit) -> Vec<f64> {
    let side = arch.side;
    let plane = if side == 4 {
        digits::to4(d)
    } else {
        let k = side / 8;
        (0..side * side)
            .map(|t| f64::from(d.pixels[(t / side) / k * 8 + (t % side) / k]) / 16.0)
            .collect()
    };
    plane.repeat(arch.in_channels)
}

/// The cleartext network over a split: the accuracy with the exact ReLU and with the
/// encrypted run's approximation (the same arithmetic as its twin), their agreement, and the
/// largest |ReLU input| met (the sign is defined on `[−1, 1]`).
#[derive(Clone, Debug, PartialEq)]
pub struct SplitScore {
    pub images: usize,
    pub exact: f64,
    pub approx: f64,
    pub agreement: f64,
    pub max_relu_input: f64,
}

/// Score `net` over `images` in the clear, in parallel (the current rayon pool).
///
/// # Errors
/// An image whose ReLU inputs leave `[−1, 1]`.
pub fn score_split(
    net: &Network,
    sign: &CompositeSign,
    images: &[Digit],
) -> basalt_circuits::Result<SplitScore> {
    let per: Vec<(bool, bool, bool, f64)> = images
        .par_iter()
        .map(|d| -> basalt_circuits::Result<(bool, bool, bool, f64)> {
            let x = image(&net.arch, d);
            let (exact, peak) = net.evaluate_plain_peak(&x, None)?;
            let approx = net.evaluate_plain(&x, Some(sign))?;
            let (e, a) = (argmax(&exact), argmax(&approx));
            let label = usize::from(d.label);
            Ok((e == label, a == label, e == a, peak))
        })
        .collect::<basalt_circuits::Result<_>>()?;
    let n = per.len().max(1) as f64;
    let rate =
        |f: fn(&(bool, bool, bool, f64)) -> bool| per.iter().filter(|p| f(p)).count() as f64 / n;
    Ok(SplitScore {
        images: per.len(),
        exact: rate(|p| p.0),
        approx: rate(|p| p.1),
        agreement: rate(|p| p.2),
        max_relu_input: per.iter().map(|p| p.3).fold(0.0, f64::max),
    })
}
