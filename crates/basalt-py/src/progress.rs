//! Long operations from Python: progress callbacks, Ctrl-C, and the memory keys will take.
//!
//! Key generation and bootstrapping run with the GIL released. Between steps (one key, one
//! bootstrapping stage) the library calls [`PyProgress::step`], which takes the GIL briefly
//! to run pending signal handlers (`PyErr_CheckSignals`, so Ctrl-C raises `KeyboardInterrupt`)
//! and the user's `progress(stage, done, total)` callback; either raising cancels the
//! operation, and the exception is re-raised in place of the library's "cancelled" error.

use std::sync::Mutex;

use basalt_ckks::Parameters;
use basalt_ckks::progress::{Cancelled, KeyMemory, Progress, available_memory};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::err;

/// A [`Progress`] for Python callers: checks signals and calls an optional callback.
pub struct PyProgress {
    callback: Option<Py<PyAny>>,
    stage: Mutex<(String, u64)>,
    raised: Mutex<Option<PyErr>>,
}

impl PyProgress {
    /// Check signals at every step; call `callback(stage, done, total)` if given.
    pub fn new(callback: Option<Py<PyAny>>) -> PyProgress {
        PyProgress { callback, stage: Mutex::new((String::new(), 0)), raised: Mutex::new(None) }
    }

    /// The Python exception that cancelled the operation (Ctrl-C, or one the callback
    /// raised), else `e` as a `BasaltError`.
    pub fn error(&self, e: impl std::fmt::Display) -> PyErr {
        match self.raised.lock().map(|mut r| r.take()) {
            Ok(Some(py_err)) => py_err,
            _ => err(e),
        }
    }
}

impl Progress for PyProgress {
    fn stage(&self, name: &str, total: u64) {
        if let Ok(mut s) = self.stage.lock() {
            *s = (name.to_string(), total);
        }
    }

    fn step(&self, done: u64) -> Result<(), Cancelled> {
        let (name, total) = self.stage.lock().map(|s| s.clone()).unwrap_or_default();
        Python::with_gil(|py| {
            let r = py.check_signals().and_then(|()| match &self.callback {
                Some(cb) => cb.call1(py, (name, done, total)).map(|_| ()),
                None => Ok(()),
            });
            r.map_err(|e| {
                if let Ok(mut slot) = self.raised.lock() {
                    *slot = Some(e);
                }
                Cancelled
            })
        })
    }
}

/// The memory a parameter set's keys will take, before they are generated: `per_key` (one
/// key-switching key with every part), `keys` (relinearisation + rotations + conjugation),
/// `total` (with the key pair and working space) and `available` (the machine's MemAvailable,
/// `None` where unknown). With `bootstrapping=True` the keys of the preset's bootstrapping
/// circuit, each with only the parts of the levels it runs at, are added, and its
/// relinearisation key is the only one (a client that bootstraps makes no other): `keys` are
/// then the rotations and conjugation.
#[pyfunction]
#[pyo3(signature = (preset, rotations=0, conjugate=false, bootstrapping=false, seeded=false))]
fn ckks_estimate<'py>(
    py: Python<'py>,
    preset: &str,
    rotations: usize,
    conjugate: bool,
    bootstrapping: bool,
    seeded: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let params = Parameters::preset_insecure(preset).map_err(err)?;
    let m = KeyMemory::estimate(&params, rotations, conjugate, seeded);
    let boot = if bootstrapping {
        let cfg = basalt_circuits::bootstrap::config::for_preset(preset, None, params.log_n())
            .ok_or_else(|| err(format!("preset {preset:?} has no bootstrapping circuit")))?;
        let bt = basalt_circuits::bootstrap::Bootstrapper::symbolic(&params, cfg).map_err(err)?;
        bt.key_bytes(seeded)
    } else {
        0
    };
    let relin = if bootstrapping { m.per_key } else { 0 };
    let d = PyDict::new(py);
    d.set_item("per_key", m.per_key)?;
    d.set_item("keys", m.keys - u64::from(bootstrapping))?;
    d.set_item("bootstrapping", boot)?;
    d.set_item("total", m.total - relin + boot)?;
    d.set_item("available", available_memory())?;
    Ok(d)
}

/// The security estimate a preset's parameters carry: `bits`, `meets` (128/192/256 or
/// `None`), `log_qp`, the cheapest `attack` and its block size `beta`, the `secret` as
/// estimated, `core_svp_bits`, `source`, and the source's own `claimed` bits. Reading the
/// estimate of a set below 128 bits needs no opt-in (using it does).
#[pyfunction]
fn ckks_security<'py>(py: Python<'py>, preset: &str) -> PyResult<Bound<'py, PyDict>> {
    let params = Parameters::preset_insecure(preset).map_err(err)?;
    let s = params.security();
    let d = PyDict::new(py);
    d.set_item("bits", s.bits)?;
    d.set_item("meets", s.meets)?;
    d.set_item("log_qp", s.log_qp)?;
    d.set_item("attack", &s.attack)?;
    d.set_item("beta", s.beta)?;
    d.set_item("secret", &s.secret)?;
    d.set_item("core_svp_bits", s.core_svp_bits)?;
    d.set_item("source", &s.source)?;
    d.set_item("claimed", params.literal().provenance.claimed_security)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ckks_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(ckks_security, m)?)?;
    Ok(())
}
