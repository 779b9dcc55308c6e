//! One inference (MNIST, LSTM) recorded in trace mode (shape-only ciphertexts, no arithmetic)
//! at a preset: what `basalt sim reproduce` times. The kernel stream equals a real run's (tests).

use basalt_circuits::bootstrap::{
    BootstrapConfig, Bootstrapper, Encapsulation, config::for_preset,
};
use basalt_ckks::{Ciphertext, Evaluator, KeyGenerator, Parameters};
use basalt_trace::{Trace, record};

use crate::Result;
use crate::lstm::{self, Lstm, LstmModel};
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
    let inputs =
        Inputs { count: network.inputs(), level: model.input_level(), slots: model.input_slots() };
    record_shapes(params, &model.rotations(), seeded, inputs, |eval, cts| model.evaluate(eval, cts))
}

/// The input ciphertexts of an inference: how many, at which level, with how many slots.
pub(crate) struct Inputs {
    pub count: usize,
    pub level: usize,
    pub slots: usize,
}

/// Record `run` on shape-only `inputs` with symbolic keys for `rotations` (and the
/// relinearisation key), `seeded` or not.
pub(crate) fn record_shapes(
    params: &Parameters,
    rotations: &[i64],
    seeded: bool,
    inputs: Inputs,
    run: impl FnOnce(&Evaluator, &[Ciphertext]) -> Result<Ciphertext>,
) -> Result<Trace> {
    let keys = KeyGenerator::new(params).gen_symbolic_evaluation_keys(rotations, false, seeded);
    let eval = Evaluator::new(params, keys)?;
    let cts = (0..inputs.count)
        .map(|_| {
            let mut ct = Ciphertext::symbolic(params, inputs.level)?;
            ct.set_slots(inputs.slots);
            Ok(ct)
        })
        .collect::<Result<Vec<_>>>()?;
    let (out, t) = record(|| run(&eval, &cts));
    out?;
    Ok(t)
}

/// Record one LSTM inference ([`crate::lstm`], 128-wide, `steps` inputs) at `preset` in trace
/// mode: the chain's bootstrapping circuit (`for_preset`) at 128 slots after every interval
/// the bootstrap's output levels hold; `seeded` keys as for [`record_inference`]. The
/// products use `rule`.
///
/// # Errors
/// A preset without a bootstrapping circuit, a chain too short for one step, scheme errors.
pub fn record_lstm(
    params: &Parameters,
    preset: &str,
    steps: usize,
    rule: StrategyRule,
    seeded: bool,
) -> Result<Trace> {
    let log_slots = lstm::HIDDEN.trailing_zeros();
    let cfg = for_preset(preset, Some(log_slots), params.log_n()).ok_or_else(|| {
        basalt_circuits::CircuitError::Invalid(format!("{preset} has no bootstrapping circuit"))
    })?;
    record_lstm_with(params, cfg, lstm::HIDDEN, steps, rule, seeded)
}

/// [`record_lstm`] with any bootstrapping circuit and state width (`cfg.log_slots` must be
/// `log2 width`): the toy-ring tests compare it with a real run.
///
/// # Errors
/// As [`record_lstm`].
pub fn record_lstm_with(
    params: &Parameters,
    cfg: BootstrapConfig,
    width: usize,
    steps: usize,
    rule: StrategyRule,
    seeded: bool,
) -> Result<Trace> {
    let bt = Bootstrapper::symbolic(params, cfg)?;
    let model = LstmModel::prepare(params, &Lstm::new(width, 0), &bt, rule, true)?;
    let mut rots = bt.rotations();
    rots.extend(model.rotations());
    let keys = KeyGenerator::new(params).gen_symbolic_evaluation_keys(&rots, true, seeded);
    let eval = Evaluator::new(params, keys)?;
    let encaps = bt.config().ephemeral_h.map(|h| Encapsulation::symbolic(params, h)).transpose()?;
    let shape = |level: usize| -> Result<Ciphertext> {
        let mut ct = Ciphertext::symbolic(params, level)?;
        ct.set_slots(model.slots());
        ct.set_scale(model.scale());
        Ok(ct)
    };
    let h0 = shape(model.level(0))?;
    let xs = (0..steps).map(|i| shape(model.level(i))).collect::<Result<Vec<_>>>()?;
    let (out, t) = record(|| model.evaluate(&eval, &bt, encaps.as_ref(), &h0, &xs));
    out?;
    Ok(t)
}
