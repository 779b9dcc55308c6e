//! Bootstrapping in trace mode: the same [`Bootstrapper::bootstrap`] code on shape-only
//! ciphertexts and keys, recording the kernel stream the simulator times. A full N = 2^16
//! bootstrap traces in well under a second.

use basalt_ckks::{Ciphertext, Evaluator, Parameters};
use basalt_trace::{Event, Trace, record};

use super::{Bootstrapper, Encapsulation};
use crate::accounting::OpCounts;
use crate::error::Result;

/// Regions whose kernels are key-switching work.
const KEYSWITCH_REGIONS: [&str; 5] = ["KeySwitch", "Decompose", "ModUp", "ModDown", "InnerProduct"];

/// A recorded bootstrap.
#[derive(Clone, Debug)]
pub struct BootstrapTrace {
    pub trace: Trace,
    pub counts: OpCounts,
    /// Modular multiplications inside key-switching regions over all of them.
    pub keyswitch_share: f64,
}

/// Trace one bootstrap of a level-0 ciphertext with `bt`'s configuration.
///
/// # Errors
/// Scheme errors (none expected for a valid bootstrapper).
pub fn record_bootstrap(params: &Parameters, bt: &Bootstrapper) -> Result<BootstrapTrace> {
    let eval = Evaluator::new(params, bt.symbolic_keys(false))?;
    let encaps = match bt.config().ephemeral_h {
        None => None,
        Some(h) => Some(Encapsulation::symbolic(params, h)?),
    };
    let mut ct = Ciphertext::symbolic(params, 0)?;
    ct.set_slots(bt.slots());
    // The preset's scale, or the largest power of two the message ratio allows at level 0
    // (FAB's scale equals its 54-bit q_0).
    ct.set_scale(params.default_scale().min(bt.max_input_scale()));
    let (out, trace) = record(|| bt.bootstrap(&eval, encaps.as_ref(), &ct));
    out?;
    let n = params.n();
    let counts = OpCounts::from_trace(&trace, n);
    let (mut inside, mut outside) = (Trace::default(), Trace::default());
    let mut stack: Vec<bool> = Vec::new();
    for e in &trace.events {
        match e {
            Event::Enter { name } => {
                let ks = stack.last().copied().unwrap_or(false)
                    || KEYSWITCH_REGIONS.contains(&name.as_str());
                stack.push(ks);
            }
            Event::Exit => {
                stack.pop();
            }
            Event::Key { .. } | Event::Marker { .. } => {}
            Event::Kernel(_) => {
                if stack.last().copied().unwrap_or(false) {
                    inside.events.push(e.clone());
                } else {
                    outside.events.push(e.clone());
                }
            }
        }
    }
    let ks = OpCounts::from_trace(&inside, n).modmults as f64;
    let rest = OpCounts::from_trace(&outside, n).modmults as f64;
    Ok(BootstrapTrace { trace, counts, keyswitch_share: ks / (ks + rest).max(1.0) })
}
