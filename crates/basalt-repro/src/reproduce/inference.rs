//! One network inference timed as its marker trace plus one recorded bootstrap per
//! [`basalt_trace::Marker::Bootstrap`] in it ([`basalt_sim::refresh`]): the ResNet-20 rows
//! of CraterLake and Osiris.

use basalt_trace::Trace;

use crate::program::Program;
use crate::reproduce::Traces;
use basalt_sim::machine::Machine;
use basalt_sim::refresh::{bootstrap_markers, simulate_with_bootstrap};
use basalt_sim::simulate;

use crate::ReproError;

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
    ) -> Result<Option<Inference>, ReproError> {
        let (Some(net), Some(boot)) = (traces.program(net)?, traces.program(boot)?) else {
            return Ok(None);
        };
        let bootstraps = bootstrap_markers(&net);
        Ok(Some(Inference { net, boot, bootstraps }))
    }

    /// Milliseconds on `m`: the network's segments between bootstraps plus `bootstraps`
    /// bootstraps.
    pub(super) fn ms(&self, m: &Machine) -> Result<f64, ReproError> {
        Ok(simulate_with_bootstrap(m, &self.net, &self.boot)?.seconds * 1e3)
    }

    /// The network trace's ring degree.
    pub(super) fn ring_degree(&self) -> u32 {
        super::craterlake_security::ring_degree(&self.net)
    }

    /// Milliseconds on `m` of the network's kernels (all segments) and of one bootstrap.
    pub(super) fn split_ms(&self, m: &Machine) -> Result<(f64, f64), ReproError> {
        let boot = simulate(m, &self.boot)?.seconds * 1e3;
        Ok((self.ms(m)? - self.bootstraps as f64 * boot, boot))
    }
}
