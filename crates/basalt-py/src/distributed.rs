//! What `basalt.distributed` needs from the compiled core beyond the client and server
//! classes: a TFHE server built from server-key bytes alone (a worker loads it once and then
//! sees only serialized ciphertexts), the server-key bytes of a client context, and the
//! assembly of grid points timed on several workers into the local grid's result (Pareto
//! front, CSV, scatter plot). Only glue lives here.

use basalt_sim::grid::{self, GridPoint};
use basalt_tfhe::TfheParams;
use basalt_tfhe::batch::BatchConfig;
use basalt_tfhe::dynamic::{DynCiphertext, DynServerKey};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::err;
use crate::tfhe::PyTfhe;

/// The server side of TFHE for a worker: the server key of one parameter set (no secret),
/// ciphertexts in and out as bytes.
#[pyclass(module = "basalt._basalt", name = "TfheWorkerServer", frozen)]
pub struct PyTfheWorker {
    key: DynServerKey,
    plaintext_modulus: u64,
}

#[pymethods]
impl PyTfheWorker {
    /// Load and validate the server key `data` of the parameter set `name`.
    #[new]
    #[pyo3(signature = (name, data, allow_insecure=false))]
    fn new(py: Python<'_>, name: &str, data: &[u8], allow_insecure: bool) -> PyResult<Self> {
        let params = TfheParams::preset(name, allow_insecure).map_err(err)?;
        let data = data.to_vec();
        py.allow_threads(|| {
            let key = DynServerKey::from_bytes(&data, &params).map_err(err)?;
            Ok(PyTfheWorker { key, plaintext_modulus: params.plaintext_modulus() })
        })
    }
    #[getter]
    fn plaintext_modulus(&self) -> u64 {
        self.plaintext_modulus
    }
    /// `table[m]` on every ciphertext (serialized), by two-level batched PBS over this
    /// process's rayon threads; the outputs serialized, in order. A ciphertext of another key
    /// or set, or a table that does not fit the message space, raises `BasaltError`.
    fn apply_table_batch<'py>(
        &self,
        py: Python<'py>,
        cts: Vec<Vec<u8>>,
        table: Vec<u64>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let p = self.plaintext_modulus;
        if table.len() as u64 != p {
            return Err(err(format!(
                "the table has {} entries; the message space has {p}",
                table.len()
            )));
        }
        if let Some((m, v)) = table.iter().enumerate().find(|(_, v)| **v >= p) {
            return Err(err(format!("table[{m}] = {v} is outside the message space 0..{p}")));
        }
        let out = py.allow_threads(|| {
            let v = cts
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    self.key
                        .ciphertext_from_bytes(b)
                        .map_err(|e| err(format!("ciphertext {i}: {e}")))
                })
                .collect::<PyResult<Vec<DynCiphertext>>>()?;
            let out = self
                .key
                .apply_fn_batch(&v, &|m| table[m as usize], &BatchConfig::default())
                .map_err(err)?;
            Ok::<_, PyErr>(out.iter().map(|c| self.key.ciphertext_to_bytes(c)).collect::<Vec<_>>())
        })?;
        Ok(out.iter().map(|b| PyBytes::new(py, b)).collect())
    }
}

/// The server key of a TFHE client context as bytes (no secret inside): what a worker loads.
#[pyfunction]
fn tfhe_server_key_bytes<'py>(py: Python<'py>, ctx: &PyTfhe) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &ctx.ctx.server_key().to_bytes())
}

/// One grid point as the workers return it: settings, seconds, stall fraction, area, energy,
/// EDP, power.
type PointRow =
    (Vec<(String, String)>, f64, f64, Option<f64>, Option<f64>, Option<f64>, Option<f64>);

/// Grid points timed apart (one per worker task), in grid order, assembled as `sim_grid`
/// returns them: the Pareto front marked over all of them, then (points as JSON, CSV, SVG).
#[pyfunction]
fn sim_grid_merge(machine: &str, rows: Vec<PointRow>) -> PyResult<(String, String, String)> {
    let mut pts: Vec<GridPoint> = rows
        .into_iter()
        .map(|(settings, seconds, stall_fraction, area_mm2, energy_j, edp, power_w)| GridPoint {
            settings,
            seconds,
            stall_fraction,
            area_mm2,
            energy_j,
            edp,
            power_w,
            pareto: false,
        })
        .collect();
    grid::mark_pareto(&mut pts);
    Ok((
        serde_json::to_string(&pts).map_err(err)?,
        grid::csv(&pts),
        basalt_sim::plot::grid_svg(machine, &pts),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTfheWorker>()?;
    m.add_function(wrap_pyfunction!(tfhe_server_key_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(sim_grid_merge, m)?)?;
    Ok(())
}
