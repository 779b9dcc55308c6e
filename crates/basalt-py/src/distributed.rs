//! What `basalt.distributed` needs from the compiled core beyond the client and server
//! classes: a CKKS server built from key files one key at a time (a worker holds only the keys
//! of its role, never a second copy of them), a TFHE server built from server-key bytes alone
//! (a worker loads it once and then sees only serialized ciphertexts) and runs a deep
//! network's layer by rows, and the assembly of grid points timed on several workers into the
//! local grid's result (Pareto front, CSV, scatter plot). Only glue lives here.

use std::path::PathBuf;

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, config};
use basalt_ckks::progress::KeyMemory;
use basalt_ckks::{EvaluationKeys, Evaluator, GaloisKey, Parameters, RelinKey};
use basalt_sim::grid::{self, GridPoint};
use basalt_tfhe::TfheParams;
use basalt_tfhe::batch::BatchConfig;
use basalt_tfhe::dynamic::{DynCiphertext, DynServerKey};
use basalt_workloads::tfhe_nn::{Network, TestSet};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::{Arc, Mutex};

use crate::ckks::{Boot, PyParams, PyServer, encaps_from_bytes};
use crate::err;

/// A CKKS server from key files (`(kind, path)`: `relinearization`, `rotation`,
/// `conjugation`, `bootstrapping`), each read, validated and expanded to full form on its own,
/// so that loading holds the keys once plus one file: a single serialized key set is held
/// three times over while it loads (the bytes, their decoding, the expanded keys), which at
/// N = 2^16 is what keeps two workers from sharing a machine. With `bootstrap` (and
/// bootstrapping parameters) the server also builds the bootstrapping circuit, whose encoded
/// diagonals are gigabytes at N = 2^16; a worker that never bootstraps goes without.
#[pyfunction]
fn ckks_server_from_key_files(
    py: Python<'_>,
    params: &PyParams,
    files: Vec<(String, PathBuf)>,
    bootstrap: bool,
) -> PyResult<PyServer> {
    let p = params.clone();
    py.allow_threads(move || {
        let prm = &p.params;
        let conj = prm.ring().galois_element_conjugate();
        let mut keys = EvaluationKeys::default();
        let mut encaps = None;
        for (kind, path) in &files {
            let at = |e: &dyn std::fmt::Display| err(format!("{}: {e}", path.display()));
            let data = std::fs::read(path).map_err(|e| at(&e))?;
            match kind.as_str() {
                "relinearization" => {
                    let r = RelinKey::from_bytes(prm, &data).map_err(|e| at(&e))?;
                    let key = r.key.expanded(prm).map_err(|e| at(&e))?;
                    if keys.relin.replace(RelinKey { key }).is_some() {
                        return Err(at(&"a second relinearization key"));
                    }
                }
                "rotation" | "conjugation" => {
                    let g = GaloisKey::from_bytes(prm, &data).map_err(|e| at(&e))?;
                    if (g.galois == conj) != (kind == "conjugation") {
                        return Err(at(&format!("not a {kind} key")));
                    }
                    let galois = g.galois;
                    let key = g.key.expanded(prm).map_err(|e| at(&e))?;
                    if keys.galois.insert(galois, GaloisKey { galois, key }).is_some() {
                        return Err(at(&format!("Galois element {galois} appears twice")));
                    }
                }
                "bootstrapping" => {
                    let cfg = p.boot.as_ref().ok_or_else(|| {
                        at(&"bootstrapping keys, but the parameters do not bootstrap")
                    })?;
                    let e = encaps_from_bytes(&p, cfg, &data).map_err(|e| at(&e))?;
                    if encaps.replace(e).is_some() {
                        return Err(at(&"a second set of bootstrapping keys"));
                    }
                }
                other => return Err(at(&format!("unknown key kind {other:?}"))),
            }
        }
        // The evaluator checks that every key is of these parameters and of one key set.
        let eval = Evaluator::new(prm, keys).map_err(err)?;
        if let Some(e) = &encaps {
            eval.key_id().join(e.key_id(), "the bootstrapping keys").map_err(err)?;
        }
        let boot = match (&p.boot, bootstrap) {
            (Some(cfg), true) => {
                if cfg.ephemeral_h.is_some() && encaps.is_none() {
                    return Err(err("this circuit needs the bootstrapping keys: none given"));
                }
                let bt = crate::ckks::shared_circuit(prm, *cfg)?;
                Some(Boot { cfg: *cfg, bt, encaps })
            }
            _ => None,
        };
        let mut server = PyServer::assemble(p.params.clone(), eval, boot);
        server.config = p.boot;
        Ok(server)
    })
}

/// What each role of FAB-2's data-parallel training holds in memory at `preset` (with the
/// bootstrapping circuit for `log_slots`, default all slots), from the parameters and the
/// circuit's shape alone: no key is generated, no diagonal encoded, so it answers in seconds
/// for N = 2^16. A *gradient* worker holds the relinearisation key and the keys of the
/// `rotations` the gradient uses; the *update* worker (it also computes a share's gradient,
/// sums, updates and bootstraps) holds the relinearisation and conjugation keys, the union of
/// those rotations and the circuit's, the bootstrapping keys (counted as one key) and the
/// circuit's encoded diagonals. Keys are counted in full form, as a server holds them (a
/// seeded file is `per_key_seeded` a key); every key with every part, as the program's keys are
/// generated (exact for a set with one key-switching gadget, an upper bound for banded ones).
#[pyfunction]
#[pyo3(signature = (preset, rotations, log_slots=None))]
fn ckks_role_memory<'py>(
    py: Python<'py>,
    preset: &str,
    rotations: Vec<i64>,
    log_slots: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let params = Parameters::preset_insecure(preset).map_err(err)?;
    let cfg = config::for_preset(preset, log_slots, params.log_n())
        .ok_or_else(|| err(format!("preset {preset:?} has no bootstrapping circuit")))?;
    role_memory(py, &params, cfg, &rotations)
}

/// [`ckks_role_memory`] for the parameters of a context (they must bootstrap).
#[pyfunction]
fn ckks_role_memory_of<'py>(
    py: Python<'py>,
    params: &PyParams,
    rotations: Vec<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = params.boot.ok_or_else(|| err("these parameters do not bootstrap"))?;
    role_memory(py, &params.params, cfg, &rotations)
}

fn role_memory<'py>(
    py: Python<'py>,
    params: &Parameters,
    cfg: BootstrapConfig,
    rotations: &[i64],
) -> PyResult<Bound<'py, PyDict>> {
    let bt = Bootstrapper::symbolic(params, cfg).map_err(err)?;
    let ring = params.ring();
    let galois = |steps: &[i64]| -> std::collections::BTreeSet<u64> {
        steps.iter().map(|&k| ring.galois_element_for_rotation(k)).filter(|&g| g != 1).collect()
    };
    let (task, circuit) = (galois(rotations), galois(&bt.rotations()));
    let union = task.union(&circuit).count() as u64;
    let full = KeyMemory::estimate(params, 0, false, false).per_key;
    let seeded = KeyMemory::estimate(params, 0, false, true).per_key;
    let encaps = if cfg.ephemeral_h.is_some() { full } else { 0 };
    let diagonals: u64 = bt
        .coeff_to_slot()
        .iter()
        .chain(bt.slot_to_coeff())
        .map(|t| t.stored_plaintext_bytes())
        .sum();
    let gradient_keys = 1 + task.len() as u64;
    let update_keys = 2 + union;
    let d = PyDict::new(py);
    d.set_item("preset", params.name())?;
    d.set_item("log_n", params.log_n())?;
    d.set_item("slots", 1u64 << cfg.log_slots)?;
    d.set_item("per_key", full)?;
    d.set_item("per_key_seeded", seeded)?;
    d.set_item("task_rotations", task.len())?;
    d.set_item("circuit_rotations", circuit.len())?;
    d.set_item("shared_rotations", task.intersection(&circuit).count())?;
    d.set_item("gradient_keys", gradient_keys)?;
    d.set_item("gradient_key_bytes", gradient_keys * full)?;
    d.set_item("update_keys", update_keys)?;
    d.set_item("update_key_bytes", update_keys * full + encaps)?;
    d.set_item("bootstrapping_key_bytes", encaps)?;
    d.set_item("circuit_plaintext_bytes", diagonals)?;
    d.set_item("ciphertext_bytes", 2 * (params.max_level() as u64 + 1) * params.n() as u64 * 8)?;
    Ok(d)
}

/// The Galois element of each rotation step (1: the identity, no key needed) on `params`'
/// ring: how a key file is matched to a program's steps.
#[pyfunction]
fn ckks_rotation_galois(params: &PyParams, steps: Vec<i64>) -> Vec<u64> {
    let ring = params.params.ring();
    steps.iter().map(|&k| ring.galois_element_for_rotation(k)).collect()
}

/// What a server needs besides the relinearisation key to run the bootstrapping circuit of
/// `params`: the circuit's rotation steps (one Galois key each; the conjugation key too) and
/// whether it needs the encapsulation keys (a circuit with a sparse ephemeral secret). `None`
/// for parameters without a circuit. From the circuit's shape: no diagonal is encoded. A
/// selection of key files for a worker that bootstraps is completed with these.
#[pyfunction]
fn ckks_bootstrap_key_needs(params: &PyParams) -> PyResult<Option<(Vec<i64>, bool)>> {
    let encaps = params.boot.is_some_and(|c| c.ephemeral_h.is_some());
    Ok(params.shape()?.map(|bt| (bt.rotations(), encaps)))
}

/// The same parameters without their bootstrapping circuit: what a worker that never
/// bootstraps is built from (no circuit to build, no bootstrapping keys expected).
#[pyfunction]
fn ckks_params_without_bootstrapping(params: &PyParams) -> PyParams {
    PyParams { params: params.params.clone(), boot: None }
}

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
    m.add_function(wrap_pyfunction!(ckks_server_from_key_files, m)?)?;
    m.add_function(wrap_pyfunction!(ckks_params_without_bootstrapping, m)?)?;
    m.add_function(wrap_pyfunction!(ckks_role_memory, m)?)?;
    m.add_function(wrap_pyfunction!(ckks_role_memory_of, m)?)?;
    m.add_function(wrap_pyfunction!(ckks_rotation_galois, m)?)?;
    m.add_function(wrap_pyfunction!(ckks_bootstrap_key_needs, m)?)?;
    m.add_function(wrap_pyfunction!(sim_grid_merge, m)?)?;
    m.add_function(wrap_pyfunction!(tfhe_nn_layers, m)?)?;
    m.add_function(wrap_pyfunction!(tfhe_nn_plain, m)?)?;
    m.add_function(wrap_pyfunction!(tfhe_nn_test_image, m)?)?;
    Ok(())
}
