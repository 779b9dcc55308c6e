//! What `basalt.distributed` needs from the compiled core beyond the client and server
//! classes: a TFHE server built from server-key bytes alone (a worker loads it once and then
//! sees only serialized ciphertexts) and runs a deep network's layer by rows, and the
//! assembly of grid points timed on several workers into the local grid's result (Pareto
//! front, CSV, scatter plot). Only glue lives here.

use basalt_sim::grid::{self, GridPoint};
use basalt_tfhe::TfheParams;
use basalt_tfhe::batch::BatchConfig;
use basalt_tfhe::dynamic::{DynCiphertext, DynServerKey};
use basalt_workloads::tfhe_nn::{Network, TestSet};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, Mutex};

use crate::err;

/// The server side of TFHE for a worker: the server key of one parameter set (no secret),
/// ciphertexts in and out as bytes.
#[pyclass(module = "basalt._basalt", name = "TfheWorkerServer", frozen)]
pub struct PyTfheWorker {
    key: DynServerKey,
    plaintext_modulus: u64,
    /// Networks loaded so far (a worker runs many layers of few networks).
    networks: Mutex<Vec<Arc<Network>>>,
}

fn network(name: &str) -> PyResult<Network> {
    Network::load(name).map_err(err)
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
            Ok(PyTfheWorker {
                key,
                plaintext_modulus: params.plaintext_modulus(),
                networks: Mutex::new(Vec::new()),
            })
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

    /// Rows `start..end` of weight layer `layer` of the network `name` (`nn-20`, `nn-50`,
    /// `nn-100`) on the encrypted activations `inputs` (serialized): pre-activations and, but
    /// for the output layer, the ReLU bootstrap (two-level batched). The outputs serialized.
    fn nn_layer<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        layer: usize,
        start: usize,
        end: usize,
        inputs: Vec<Vec<u8>>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let DynServerKey::U64(sk) = &self.key else {
            return Err(err("the networks run on a 64-bit torus set (NN_N1024 …)"));
        };
        let net = {
            let mut nets = self.networks.lock().map_err(|_| err("network cache poisoned"))?;
            let want = network(name)?.name;
            match nets.iter().find(|n| n.name == want) {
                Some(n) => n.clone(),
                None => {
                    let n = Arc::new(network(name)?);
                    nets.push(n.clone());
                    n
                }
            }
        };
        let out = py.allow_threads(|| {
            let a = inputs
                .iter()
                .enumerate()
                .map(|(i, b)| match self.key.ciphertext_from_bytes(b) {
                    Ok(DynCiphertext::U64(c)) => Ok(c),
                    Ok(_) => Err(err(format!("input {i}: a 32-bit-torus ciphertext"))),
                    Err(e) => Err(err(format!("input {i}: {e}"))),
                })
                .collect::<PyResult<Vec<_>>>()?;
            let lut = net.relu_lut(sk).map_err(err)?;
            let out = net.encrypted_layer(sk, &lut, layer, start..end, &a).map_err(err)?;
            Ok::<_, PyErr>(
                out.iter().map(basalt_tfhe::serialize::serialize_ciphertext).collect::<Vec<_>>(),
            )
        })?;
        Ok(out.iter().map(|b| PyBytes::new(py, b)).collect())
    }
}

/// The weight layers of network `name` as (inputs, outputs); all but the last end in a ReLU
/// bootstrap.
#[pyfunction]
fn tfhe_nn_layers(name: &str) -> PyResult<Vec<(usize, usize)>> {
    Ok(network(name)?.layers().iter().map(|d| (d.inputs, d.outputs)).collect())
}

/// The network's integer program in the clear on `image`: the activations after each ReLU
/// layer (modulo 2p), then the signed logits.
#[pyfunction]
fn tfhe_nn_plain(name: &str, image: Vec<i64>) -> PyResult<Vec<Vec<i64>>> {
    let net = network(name)?;
    if image.len() != net.conv.inputs {
        return Err(err(format!("an image has {} pixels, {} given", net.conv.inputs, image.len())));
    }
    Ok(net.plain_activations(&image))
}

/// Test image `i` of the networks' split (2-bit pixels, 28×28) and its label.
#[pyfunction]
fn tfhe_nn_test_image(i: usize) -> PyResult<(Vec<i64>, usize)> {
    let t = TestSet::load().map_err(err)?;
    let n = t.images.len();
    let img = t.images.get(i).ok_or_else(|| err(format!("test image {i} of {n}")))?;
    Ok((img.clone(), t.labels[i]))
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
    m.add_function(wrap_pyfunction!(sim_grid_merge, m)?)?;
    m.add_function(wrap_pyfunction!(tfhe_nn_layers, m)?)?;
    m.add_function(wrap_pyfunction!(tfhe_nn_plain, m)?)?;
    m.add_function(wrap_pyfunction!(tfhe_nn_test_image, m)?)?;
    Ok(())
}
