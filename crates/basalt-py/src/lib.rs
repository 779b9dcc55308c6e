//! PyO3 bindings. Only glue lives here: every error becomes a Python exception, never a panic.

use pyo3::prelude::*;

#[pymodule]
fn _basalt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
