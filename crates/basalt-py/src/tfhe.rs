//! TFHE bindings in two roles over one engine. The server (`TfheServer`) is built from the
//! parameter set and a `TfheServerKey` (bootstrapping and key-switching keys) alone: lookup
//! tables, gates, batches and radix integers, no decryption. The client (`TfheContext`) holds the
//! secret key: it encrypts, decrypts and makes the server key, and it extends the server on its
//! own server key, so every homomorphic operation is bound once and the two roles cannot drift
//! apart. Ciphertexts are opaque handles carrying the identity of their key; lookup tables are
//! given as the list of outputs on every message.

use std::sync::Arc;

use basalt_tfhe::integer::{IntegerClient, IntegerServer};
use basalt_tfhe::{
    BatchConfig, DynCiphertext, DynClientKey, DynServerKey, Gate, TfheContext, TfheParams,
};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::err;
use crate::integer::{PyIntegerClient, PyIntegerServer};
use crate::progress::PyProgress;

/// The server role and the engine of both roles: the server key and the batch schedule, every
/// operation on ciphertexts of one key, no secret, no decryption.
#[pyclass(module = "basalt._basalt", name = "TfheServer", subclass, frozen)]
pub struct PyTfheServer {
    key: DynServerKey,
    batch: BatchConfig,
}

/// Keys and parameters of one TFHE instance: the client role. The secret key lives here; the
/// operations are those of the server it extends, on its own server key.
#[pyclass(module = "basalt._basalt", name = "TfheContext", extends = PyTfheServer, frozen)]
pub struct PyTfhe {
    ctx: TfheContext,
}

/// The server key of one client (no secret inside): what a client sends to a server.
#[pyclass(module = "basalt._basalt", name = "TfheServerKey", frozen)]
#[derive(Clone)]
pub struct PyTfheServerKey {
    key: DynServerKey,
}

/// An encrypted small integer or boolean (opaque).
#[pyclass(module = "basalt._basalt", name = "TfheCiphertext", frozen)]
#[derive(Clone)]
pub struct PyTfheCt {
    ct: DynCiphertext,
}

/// Ciphertexts per step of a batch: progress is reported, and Ctrl-C checked, between steps.
/// A step is many core-level batches per thread, so the two-level schedule keeps its
/// throughput; the result is bit-identical to one call (batching is bit-identical to one by one).
fn batch_step() -> usize {
    64 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl PyTfheServer {
    fn on(key: DynServerKey) -> PyTfheServer {
        PyTfheServer { key, batch: BatchConfig::default() }
    }

    fn params(&self) -> &TfheParams {
        self.key.params()
    }

    fn check_table(&self, table: &[u64]) -> PyResult<()> {
        let p = self.params().plaintext_modulus();
        if table.len() as u64 != p {
            return Err(err(format!(
                "the table has {} entries; the message space has {p}",
                table.len()
            )));
        }
        if let Some((m, v)) = table.iter().enumerate().find(|(_, v)| **v >= p) {
            return Err(err(format!("table[{m}] = {v} is outside the message space 0..{p}")));
        }
        Ok(())
    }
}

fn gate_of(name: &str) -> PyResult<Gate> {
    match name.to_ascii_lowercase().as_str() {
        "nand" => Ok(Gate::Nand),
        "and" => Ok(Gate::And),
        "or" => Ok(Gate::Or),
        "xor" => Ok(Gate::Xor),
        other => Err(err(format!("unknown gate {other:?} (nand, and, or, xor)"))),
    }
}

fn hex(id: u64) -> String {
    format!("{id:016x}")
}

#[pymethods]
impl PyTfheServer {
    /// A server for the parameter set `name` holding `key`; a key of another set is refused.
    /// No insecure opt-in here: the key exists, so whoever made or loaded it gave it.
    #[new]
    fn new(name: &str, key: &PyTfheServerKey) -> PyResult<PyTfheServer> {
        let params = TfheParams::preset(name, true).map_err(err)?;
        if params.id() != key.key.params().id() {
            return Err(err(format!(
                "parameter set mismatch: the server key was made for '{}', the server runs '{}'",
                key.key.params().name,
                params.name
            )));
        }
        Ok(PyTfheServer::on(key.key.clone()))
    }

    /// Messages are integers in `0..plaintext_modulus` (message and carry space).
    #[getter]
    fn plaintext_modulus(&self) -> u64 {
        self.params().plaintext_modulus()
    }
    #[getter]
    fn message_modulus(&self) -> u64 {
        self.params().message_modulus
    }
    #[getter]
    fn name(&self) -> String {
        self.params().name.clone()
    }

    /// The key's identity (hex): ciphertexts carry it, and every operation checks it.
    #[getter]
    fn key_id(&self) -> String {
        hex(self.key.key_id())
    }

    /// The server key (no secret): hand it to `TfheServer`, or send its bytes.
    fn server_key(&self) -> PyTfheServerKey {
        PyTfheServerKey { key: self.key.clone() }
    }

    /// The radix-integer server on the same key (shared, not copied).
    fn integer_server(&self) -> PyResult<PyIntegerServer> {
        let name = &self.params().name;
        let k = self.key.as_u64().ok_or_else(|| {
            err(format!("radix integers use a 64-bit torus; set '{name}' is 32-bit"))
        })?;
        Ok(PyIntegerServer::from(IntegerServer::from_shared(Arc::clone(k)).map_err(err)?))
    }

    /// One programmable bootstrap evaluating the table `table[m]` (one output per message).
    fn apply_table(&self, py: Python<'_>, ct: &PyTfheCt, table: Vec<u64>) -> PyResult<PyTfheCt> {
        self.check_table(&table)?;
        let ct = ct.ct.clone();
        py.allow_threads(|| {
            let out = self.key.apply_fn(&ct, &|m| table[m as usize]).map_err(err)?;
            Ok(PyTfheCt { ct: out })
        })
    }

    /// Several tables of one ciphertext from one blind rotation (many-LUT): `tables[i][x]` for
    /// `x` in `0..=max_value`, the ciphertext promised to hold a value there; one result per
    /// table. Needs `(max_value + 1) * len(tables) <= plaintext_modulus`.
    fn apply_many_tables(
        &self,
        py: Python<'_>,
        ct: &PyTfheCt,
        tables: Vec<Vec<u64>>,
        max_value: u64,
    ) -> PyResult<Vec<PyTfheCt>> {
        let ct = ct.ct.clone();
        py.allow_threads(|| {
            let outs = self.key.apply_many_tables(&ct, &tables, max_value).map_err(err)?;
            Ok(outs.into_iter().map(|ct| PyTfheCt { ct }).collect())
        })
    }

    /// The table on many ciphertexts, with two-level batching over the cores; `progress(stage,
    /// done, total)` is called between steps, and Ctrl-C stops the batch there.
    #[pyo3(signature = (cts, table, progress=None))]
    fn apply_table_batch(
        &self,
        py: Python<'_>,
        cts: Vec<PyTfheCt>,
        table: Vec<u64>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Vec<PyTfheCt>> {
        use basalt_ckks::progress::Progress;
        self.check_table(&table)?;
        let v: Vec<DynCiphertext> = cts.into_iter().map(|c| c.ct).collect();
        let progress = PyProgress::new(progress);
        progress.stage("apply_batch", v.len() as u64);
        let mut out = Vec::with_capacity(v.len());
        for chunk in v.chunks(batch_step()) {
            let done = py.allow_threads(|| {
                self.key.apply_fn_batch(chunk, &|m| table[m as usize], &self.batch).map_err(err)
            })?;
            out.extend(done.into_iter().map(|ct| PyTfheCt { ct }));
            progress
                .step(out.len() as u64)
                .map_err(|c| progress.error(basalt_ckks::CkksError::from(c)))?;
        }
        Ok(out)
    }

    /// A boolean gate (`nand`, `and`, `or`, `xor`) on two encrypted booleans.
    fn gate(&self, py: Python<'_>, name: &str, a: &PyTfheCt, b: &PyTfheCt) -> PyResult<PyTfheCt> {
        let g = gate_of(name)?;
        let (a, b) = (a.ct.clone(), b.ct.clone());
        py.allow_threads(|| Ok(PyTfheCt { ct: self.key.gate(g, &a, &b).map_err(err)? }))
    }

    /// Load a ciphertext; corrupted bytes or another set/key raise `BasaltError`.
    fn ciphertext_from_bytes(&self, data: &[u8]) -> PyResult<PyTfheCt> {
        Ok(PyTfheCt { ct: self.key.ciphertext_from_bytes(data).map_err(err)? })
    }
}

#[pymethods]
impl PyTfhe {
    /// Keys for the parameter set `name` (`basalt.tfhe.presets()`); sets below 128-bit security
    /// need `allow_insecure=True`. The server key is refused beyond the memory available
    /// unless `force`; `progress(stage, done, total)` hears of its rows, and Ctrl-C (or an
    /// exception the callback raises) stops its generation between them.
    #[new]
    #[pyo3(signature = (name, allow_insecure=false, progress=None, force=false))]
    fn new(
        py: Python<'_>,
        name: &str,
        allow_insecure: bool,
        progress: Option<Py<PyAny>>,
        force: bool,
    ) -> PyResult<PyClassInitializer<PyTfhe>> {
        let name = name.to_string();
        let progress = PyProgress::new(progress);
        let ctx = py.allow_threads(|| {
            TfheContext::new_with(&name, allow_insecure, force, &progress)
                .map_err(|e| progress.error(e))
        })?;
        let engine = PyTfheServer::on(ctx.server_key().clone());
        Ok(PyClassInitializer::from(engine).add_subclass(PyTfhe { ctx }))
    }

    fn encrypt(&self, m: u64) -> PyResult<PyTfheCt> {
        Ok(PyTfheCt { ct: self.ctx.encrypt(m).map_err(err)? })
    }
    fn decrypt(&self, ct: &PyTfheCt) -> PyResult<u64> {
        self.ctx.decrypt(&ct.ct).map_err(err)
    }
    fn encrypt_bool(&self, b: bool) -> PyTfheCt {
        PyTfheCt { ct: self.ctx.encrypt_bool(b) }
    }
    fn decrypt_bool(&self, ct: &PyTfheCt) -> PyResult<bool> {
        self.ctx.decrypt_bool(&ct.ct).map_err(err)
    }

    /// The radix-integer client on this context's secret key (64-bit sets with 2-bit digits).
    fn integer_client(&self) -> PyResult<PyIntegerClient> {
        match self.ctx.client_key() {
            DynClientKey::U64(k) => {
                Ok(PyIntegerClient::from(IntegerClient::new(k.clone()).map_err(err)?))
            }
            DynClientKey::U32(_) => Err(err(format!(
                "radix integers use a 64-bit torus; set '{}' is 32-bit",
                self.ctx.set_name()
            ))),
        }
    }

    /// Whether `ct` holds a boolean (gate encoding) rather than an integer.
    fn is_boolean(&self, ct: &PyTfheCt) -> bool {
        ct.is_boolean()
    }

    fn ciphertext_to_bytes<'py>(&self, py: Python<'py>, ct: &PyTfheCt) -> Bound<'py, PyBytes> {
        ct.to_bytes(py)
    }
}

#[pymethods]
impl PyTfheServerKey {
    /// Load a server key for the parameter set `name`: a corrupted blob, a key of another set,
    /// or dimensions that do not match the set raise `BasaltError`. Sets below 128-bit security
    /// need `allow_insecure=True` here too (the server consents separately).
    #[staticmethod]
    #[pyo3(signature = (name, data, allow_insecure=false))]
    fn from_bytes(
        py: Python<'_>,
        name: &str,
        data: &[u8],
        allow_insecure: bool,
    ) -> PyResult<PyTfheServerKey> {
        let params = TfheParams::preset(name, allow_insecure).map_err(err)?;
        py.allow_threads(|| {
            Ok(PyTfheServerKey { key: DynServerKey::from_bytes(data, &params).map_err(err)? })
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.allow_threads(|| self.key.to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// Identity of the client key it was made from (hex).
    #[getter]
    fn key_id(&self) -> String {
        hex(self.key.key_id())
    }

    /// Name of the parameter set.
    #[getter]
    fn name(&self) -> String {
        self.key.params().name.clone()
    }
}

#[pymethods]
impl PyTfheCt {
    /// Identity of the key it was encrypted under (hex).
    #[getter]
    fn key_id(&self) -> String {
        hex(match &self.ct {
            DynCiphertext::U32(c) => c.key_id(),
            DynCiphertext::U64(c) => c.key_id(),
        })
    }

    /// Whether it holds a boolean (gate encoding) rather than an integer.
    fn is_boolean(&self) -> bool {
        let enc = match &self.ct {
            DynCiphertext::U32(c) => c.encoding(),
            DynCiphertext::U64(c) => c.encoding(),
        };
        enc == basalt_tfhe::Encoding::Boolean
    }

    /// The ciphertext as bytes (tagged with its parameter set and key, checksummed).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = match &self.ct {
            DynCiphertext::U32(c) => basalt_tfhe::serialize::serialize_ciphertext(c),
            DynCiphertext::U64(c) => basalt_tfhe::serialize::serialize_ciphertext(c),
        };
        PyBytes::new(py, &bytes)
    }
}

/// Names of the TFHE parameter sets.
#[pyfunction]
fn tfhe_presets() -> Vec<String> {
    basalt_tfhe::preset_names().into_iter().map(String::from).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTfhe>()?;
    m.add_class::<PyTfheServerKey>()?;
    m.add_class::<PyTfheServer>()?;
    m.add_class::<PyTfheCt>()?;
    m.add_function(wrap_pyfunction!(tfhe_presets, m)?)?;
    Ok(())
}
