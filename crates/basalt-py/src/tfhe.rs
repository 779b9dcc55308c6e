//! TFHE bindings: a context (client and server keys of one parameter set), ciphertexts as opaque
//! handles, lookup tables given as the list of outputs on every message.

use basalt_tfhe::{DynCiphertext, Gate, TfheContext};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::err;

/// Keys and parameters of one TFHE instance.
#[pyclass(module = "basalt._basalt", name = "TfheContext", frozen)]
pub struct PyTfhe {
    pub(crate) ctx: TfheContext,
}

/// An encrypted small integer (opaque; decrypt it with its context).
#[pyclass(module = "basalt._basalt", name = "TfheCiphertext", frozen)]
#[derive(Clone)]
pub struct PyTfheCt {
    ct: DynCiphertext,
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

#[pymethods]
impl PyTfhe {
    /// Keys for the parameter set `name` (`basalt.tfhe.presets()`); sets below 128-bit security
    /// need `allow_insecure=True`.
    #[new]
    #[pyo3(signature = (name, allow_insecure=false))]
    fn new(py: Python<'_>, name: &str, allow_insecure: bool) -> PyResult<PyTfhe> {
        let name = name.to_string();
        py.allow_threads(|| {
            Ok(PyTfhe { ctx: TfheContext::new(&name, allow_insecure).map_err(err)? })
        })
    }

    /// Messages are integers in `0..plaintext_modulus` (message and carry space).
    #[getter]
    fn plaintext_modulus(&self) -> u64 {
        self.ctx.plaintext_modulus()
    }
    #[getter]
    fn message_modulus(&self) -> u64 {
        self.ctx.message_modulus()
    }
    #[getter]
    fn name(&self) -> String {
        self.ctx.set_name().to_string()
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

    /// One programmable bootstrap evaluating the table `table[m]` (one output per message).
    fn apply_table(&self, py: Python<'_>, ct: &PyTfheCt, table: Vec<u64>) -> PyResult<PyTfheCt> {
        self.check_table(&table)?;
        let ct = ct.ct.clone();
        py.allow_threads(|| {
            let out = self.ctx.apply_lut(&ct, &|m| table[m as usize]).map_err(err)?;
            Ok(PyTfheCt { ct: out })
        })
    }

    /// The table on many ciphertexts, with two-level batching over the cores.
    fn apply_table_batch(
        &self,
        py: Python<'_>,
        cts: Vec<PyTfheCt>,
        table: Vec<u64>,
    ) -> PyResult<Vec<PyTfheCt>> {
        self.check_table(&table)?;
        let v: Vec<DynCiphertext> = cts.into_iter().map(|c| c.ct).collect();
        py.allow_threads(|| {
            let out = self.ctx.apply_lut_batch(&v, &|m| table[m as usize]).map_err(err)?;
            Ok(out.into_iter().map(|ct| PyTfheCt { ct }).collect())
        })
    }

    /// A boolean gate (`nand`, `and`, `or`, `xor`) on two encrypted booleans.
    fn gate(&self, py: Python<'_>, name: &str, a: &PyTfheCt, b: &PyTfheCt) -> PyResult<PyTfheCt> {
        let g = gate_of(name)?;
        let (a, b) = (a.ct.clone(), b.ct.clone());
        py.allow_threads(|| Ok(PyTfheCt { ct: self.ctx.gate(g, &a, &b).map_err(err)? }))
    }

    /// The key's identity (hex): ciphertexts carry it, and every operation checks it.
    #[getter]
    fn key_id(&self) -> String {
        format!("{:016x}", self.ctx.key_id())
    }

    /// Whether `ct` holds a boolean (gate encoding) rather than an integer.
    fn is_boolean(&self, ct: &PyTfheCt) -> bool {
        match &ct.ct {
            DynCiphertext::U32(c) => c.encoding() == basalt_tfhe::Encoding::Boolean,
            DynCiphertext::U64(c) => c.encoding() == basalt_tfhe::Encoding::Boolean,
        }
    }

    fn ciphertext_to_bytes<'py>(&self, py: Python<'py>, ct: &PyTfheCt) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.ctx.ciphertext_to_bytes(&ct.ct))
    }
    /// Load a ciphertext; corrupted bytes or another set/key raise `BasaltError`.
    fn ciphertext_from_bytes(&self, data: &[u8]) -> PyResult<PyTfheCt> {
        Ok(PyTfheCt { ct: self.ctx.ciphertext_from_bytes(data).map_err(err)? })
    }
}

impl PyTfhe {
    fn check_table(&self, table: &[u64]) -> PyResult<()> {
        let p = self.ctx.plaintext_modulus();
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

/// Names of the TFHE parameter sets.
#[pyfunction]
fn tfhe_presets() -> Vec<String> {
    basalt_tfhe::preset_names().into_iter().map(String::from).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTfhe>()?;
    m.add_class::<PyTfheCt>()?;
    m.add_function(wrap_pyfunction!(tfhe_presets, m)?)?;
    Ok(())
}
