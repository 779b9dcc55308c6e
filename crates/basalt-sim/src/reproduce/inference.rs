//! One network inference timed as its marker trace plus one recorded bootstrap per
//! [`BOOTSTRAP_REGION`] in it: the ResNet-20 rows of CraterLake and Osiris.

use basalt_trace::{Event, Trace};

use crate::machine::Machine;
use crate::reproduce::Traces;
use crate::synth::{BOOTSTRAP_REGION, Program};
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
        let bootstraps = net
            .events
            .iter()
            .filter(|e| matches!(e, Event::Enter { name } if name == BOOTSTRAP_REGION))
            .count();
        Ok(Some(Inference { net, boot, bootstraps }))
    }

    /// Milliseconds on `m`: the network's kernels plus `bootstraps` bootstraps.
    pub(super) fn ms(&self, m: &Machine) -> Result<f64, SimError> {
        let net = simulate(m, &self.net)?.seconds;
        let boot = simulate(m, &self.boot)?.seconds;
        Ok((net + self.bootstraps as f64 * boot) * 1e3)
    }

    /// Milliseconds on `m` of the network's kernels and of one bootstrap.
    pub(super) fn split_ms(&self, m: &Machine) -> Result<(f64, f64), SimError> {
        Ok((simulate(m, &self.net)?.seconds * 1e3, simulate(m, &self.boot)?.seconds * 1e3))
    }
}
