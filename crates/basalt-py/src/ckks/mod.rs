//! CKKS bindings in two roles over one engine. The client ([`client::PyCkks`]) holds the key
//! pair, encrypts, decrypts and makes every evaluation key; the server ([`server::PyServer`])
//! holds parameters and evaluation keys only and runs every homomorphic operation. The client
//! holds a server on its own evaluation keys, so each operation is bound once. Parameters and
//! keys as objects live in [`keys`]; the ciphertext handle in [`ciphertext`]; the bootstrapping
//! circuit, shared by every engine of the same parameters, in [`circuit`].

mod ciphertext;
mod circuit;
mod client;
mod keys;
mod server;

pub use ciphertext::PyCiphertext;
pub(crate) use circuit::shared as shared_circuit;
pub use client::PyCkks;
pub(crate) use keys::encaps_from_bytes;
pub use keys::{PyEvalKeys, PyKey, PyParams};
pub(crate) use server::Boot;
pub use server::PyServer;

use pyo3::prelude::*;

/// Names and aliases of the CKKS presets.
#[pyfunction]
fn ckks_presets() -> Vec<(String, Vec<String>)> {
    basalt_ckks::params::presets::names()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCkks>()?;
    m.add_class::<PyCiphertext>()?;
    m.add_class::<PyParams>()?;
    m.add_class::<PyEvalKeys>()?;
    m.add_class::<PyKey>()?;
    m.add_class::<PyServer>()?;
    m.add_function(wrap_pyfunction!(ckks_presets, m)?)?;
    m.add_function(wrap_pyfunction!(circuit::circuits_encoded, m)?)?;
    Ok(())
}
