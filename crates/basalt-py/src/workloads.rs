//! The workload registry for Python (`basalt.workloads`): only glue, the runs are
//! `basalt_workloads::registry`'s. Records cross as JSON text (the Python side parses them);
//! the run releases the GIL.

use basalt_workloads::registry::{self, RunOptions};
use pyo3::prelude::*;

use crate::err;

/// Every workload as JSON: a list of `{name, paper, description, preset}`.
#[pyfunction]
fn workloads_list() -> PyResult<String> {
    serde_json::to_string(&registry::list()).map_err(err)
}

/// Run workload `name`; its record as JSON. Unknown names, presets and bad options raise
/// `BasaltError` naming them.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (
    name, preset=None, quick=false, threads=None, progress=false, allow_insecure=false,
    force=false, images=None
))]
fn workloads_run(
    py: Python<'_>,
    name: &str,
    preset: Option<String>,
    quick: bool,
    threads: Option<usize>,
    progress: bool,
    allow_insecure: bool,
    force: bool,
    images: Option<usize>,
) -> PyResult<String> {
    if threads == Some(0) {
        return Err(err("threads must be at least 1"));
    }
    if images == Some(0) {
        return Err(err("images must be at least 1"));
    }
    let opts = RunOptions { preset, quick, threads, progress, allow_insecure, force, images };
    let mut record = py.allow_threads(|| registry::run(name, &opts)).map_err(err)?;
    // The TFHE networks' Strix time: a simulator figure, added above the workloads.
    basalt_repro::strix_nn::annotate(name, &mut record).map_err(err)?;
    Ok(record.to_string())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(workloads_list, m)?)?;
    m.add_function(wrap_pyfunction!(workloads_run, m)?)?;
    Ok(())
}
