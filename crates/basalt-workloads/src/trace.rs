//! One inference recorded in trace mode (shape-only ciphertexts, no arithmetic) at a preset:
//! what `basalt sim reproduce` times. The kernel stream equals a real run's (tests).

use basalt_ckks::{Ciphertext, Evaluator, KeyGenerator, Parameters};
use basalt_trace::{Trace, record};

use crate::Result;
use crate::mnist::Net;
use crate::network::{Model, StrategyRule};

/// Record one inference of `net` on inputs at `params`' top level; `seeded` keys load half of
/// each key and emit the generation of the other half (KSHGen, Osiris' PRNG).
///
/// # Errors
/// A chain too short for the network, or any scheme error.
pub fn record_inference(
    params: &Parameters,
    net: Net,
    rule: StrategyRule,
    seeded: bool,
) -> Result<Trace> {
    let network = net.build(0);
    let model = Model::prepare(params, &network, rule, true)?;
    let keys =
        KeyGenerator::new(params).gen_symbolic_evaluation_keys(&model.rotations(), false, seeded);
    let eval = Evaluator::new(params, keys)?;
    let inputs = (0..network.inputs())
        .map(|_| {
            let mut ct = Ciphertext::symbolic(params, model.input_level())?;
            ct.set_slots(model.input_slots());
            Ok(ct)
        })
        .collect::<Result<Vec<_>>>()?;
    let (out, t) = record(|| model.evaluate(&eval, &inputs));
    out?;
    Ok(t)
}
