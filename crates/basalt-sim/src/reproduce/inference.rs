//! One network inference timed as its marker trace plus one recorded bootstrap per
//! [`BOOTSTRAP_REGION`](crate::BOOTSTRAP_REGION) in it ([`crate::refresh`]): the ResNet-20 rows
//! of CraterLake and Osiris.

use basalt_trace::Trace;

use crate::machine::Machine;
use crate::refresh::{bootstrap_markers, simulate_with_bootstrap};
use crate::reproduce::Traces;
use crate::synth::Program;
use crate::{SimError, simulate};

/// One inference: the network's trace and its bootstrap's, and how many bootstraps.
pub(super) struct Inference {
    net: Trace,
    boot: Trace,
    pub(super) bootstraps: usize,
}

impl Inference {
    /// The traces of `net` (with its bootstraps as markers) and of the `boot` it stands for;
    /// `None` if the source records neither.
    pub(super) fn load(
        traces: &Traces,
        net: &Program,
        boot: &Program,
    ) -> Result<Option<Inference>, SimError> {
        let (Some(net), Some(boot)) = (traces.program(net)?, traces.program(boot)?) else {
            return Ok(None);
        };
        let bootstraps = bootstrap_markers(&net);
        Ok(Some(Inference { net, boot, bootstraps }))
    }

    /// Milliseconds on `m`: the network's segments between bootstraps plus `bootstraps`
    /// bootstraps.
    pub(super) fn ms(&self, m: &Machine) -> Result<f64, SimError> {
        Ok(simulate_with_bootstrap(m, &self.net, &self.boot)?.seconds * 1e3)
    }

    /// The network trace's ring degree.
    pub(super) fn ring_degree(&self) -> u32 {
        super::craterlake_security::ring_degree(&self.net)
    }

    /// Milliseconds on `m` of the network's kernels (all segments) and of one bootstrap.
    pub(super) fn split_ms(&self, m: &Machine) -> Result<(f64, f64), SimError> {
        let boot = simulate(m, &self.boot)?.seconds * 1e3;
        Ok((self.ms(m)? - self.bootstraps as f64 * boot, boot))
    }
}
