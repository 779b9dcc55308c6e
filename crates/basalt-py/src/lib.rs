//! PyO3 bindings. Only glue lives here: every error becomes a Python `basalt.BasaltError`
//! (a `ValueError`), never a panic, and heavy work releases the GIL.

mod bootstrap;
mod ckks;
mod distributed;
mod helr;
mod integer;
mod lintrans;
mod progress;
mod sim;
mod tfhe;
mod workloads;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

// Named after the package, where users (and pickle, which ships exceptions between Ray
// workers by module and name) find it: `basalt.BasaltError`.
create_exception!(basalt, BasaltError, PyValueError, "Invalid input to a Basalt operation.");

/// Map any displayable error to a `BasaltError`.
pub(crate) fn err(e: impl std::fmt::Display) -> PyErr {
    BasaltError::new_err(e.to_string())
}

#[pymodule]
fn _basalt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("BasaltError", m.py().get_type::<BasaltError>())?;
    ckks::register(m)?;
    lintrans::register(m)?;
    bootstrap::register(m)?;
    tfhe::register(m)?;
    integer::register(m)?;
    sim::register(m)?;
    workloads::register(m)?;
    progress::register(m)?;
    helr::register(m)?;
    distributed::register(m)?;
    Ok(())
}
