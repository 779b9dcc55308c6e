//! The bootstrapping circuit, encoded once per process. Its diagonals take seconds and
//! gigabytes to encode at N = 2^16, and a process often holds several engines of the same
//! parameters: a client context and the server built from its keys, two servers, a server
//! rebuilt from parameters loaded as JSON. Every engine of equal parameters and configuration
//! holds the same circuit (an `Arc`); the table keeps only weak references, so the diagonals
//! are freed with the last engine that uses them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_ckks::{Parameters, ParametersLiteral};
use pyo3::prelude::*;

use crate::err;

/// A circuit some engine holds, with what it was built for.
struct Entry {
    params_id: u64,
    literal: ParametersLiteral,
    cfg: BootstrapConfig,
    circuit: Weak<Bootstrapper>,
}

impl Entry {
    fn serves(&self, params: &Parameters, cfg: &BootstrapConfig) -> Option<Arc<Bootstrapper>> {
        let same =
            self.params_id == params.id() && self.cfg == *cfg && &self.literal == params.literal();
        if same { self.circuit.upgrade() } else { None }
    }
}

static SHARED: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Circuits encoded in this process (what shows that engines share one).
static ENCODED: AtomicUsize = AtomicUsize::new(0);

fn table() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    // An entry is pushed whole; a panic elsewhere leaves the table consistent.
    SHARED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The encoded circuit of `params` and `cfg`: the one a live engine already holds, else built
/// now. The lock is not held while encoding (seconds), so other circuits are not kept
/// waiting; two threads racing for the same circuit may both encode it, and the second keeps
/// the first one's.
///
/// # Errors
/// The circuit's own (a configuration these parameters cannot run).
pub(crate) fn shared(params: &Parameters, cfg: BootstrapConfig) -> PyResult<Arc<Bootstrapper>> {
    if let Some(bt) = table().iter().find_map(|e| e.serves(params, &cfg)) {
        return Ok(bt);
    }
    let built = Arc::new(Bootstrapper::new(params, cfg).map_err(err)?);
    ENCODED.fetch_add(1, Ordering::Relaxed);
    let mut t = table();
    t.retain(|e| e.circuit.strong_count() > 0);
    if let Some(bt) = t.iter().find_map(|e| e.serves(params, &cfg)) {
        return Ok(bt);
    }
    t.push(Entry {
        params_id: params.id(),
        literal: params.literal().clone(),
        cfg,
        circuit: Arc::downgrade(&built),
    });
    Ok(built)
}

/// How many bootstrapping circuits this process has encoded (each engine that bootstraps
/// holds one; engines of equal parameters share theirs).
#[pyfunction]
#[pyo3(name = "_ckks_circuits_encoded")]
pub(crate) fn circuits_encoded() -> usize {
    ENCODED.load(Ordering::Relaxed)
}
