//! Radix-integer bindings: a client (secret key: encrypt/decrypt), a server (server key only:
//! every operation), opaque integer and boolean ciphertexts. The Python types (`Uint8` …
//! `Int64`, operators) live in `python/basalt/integer.py`.

use std::sync::Arc;

use basalt_tfhe::TfheParams;
use basalt_tfhe::integer::bitwise::BitOp;
use basalt_tfhe::integer::comparison::Order;
use basalt_tfhe::integer::shift::ShiftKind;
use basalt_tfhe::integer::{
    BoolCiphertext, IntegerClient, IntegerServer, IntegerType, RadixCiphertext,
};
use basalt_tfhe::serialize::{deserialize_server_key, serialize_server_key};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::err;

/// Secret key of radix integers on a 64-bit-torus set with 2-bit (or wider) digits.
#[pyclass(module = "basalt._basalt", name = "IntegerClient", frozen)]
pub struct PyIntegerClient {
    ck: IntegerClient<u64>,
}

/// Server key only: every integer operation, no decryption.
#[pyclass(module = "basalt._basalt", name = "IntegerServer", frozen)]
#[derive(Clone)]
pub struct PyIntegerServer {
    sk: Arc<IntegerServer<u64>>,
}

/// An encrypted integer (opaque).
#[pyclass(module = "basalt._basalt", name = "RadixCiphertext", frozen)]
#[derive(Clone)]
pub struct PyRadix {
    ct: RadixCiphertext<u64>,
}

/// An encrypted boolean (opaque).
#[pyclass(module = "basalt._basalt", name = "EncryptedBoolean", frozen)]
#[derive(Clone)]
pub struct PyEncBool {
    b: BoolCiphertext<u64>,
}

impl From<IntegerClient<u64>> for PyIntegerClient {
    fn from(ck: IntegerClient<u64>) -> Self {
        PyIntegerClient { ck }
    }
}

impl From<IntegerServer<u64>> for PyIntegerServer {
    fn from(sk: IntegerServer<u64>) -> Self {
        PyIntegerServer { sk: Arc::new(sk) }
    }
}

fn params_u64(name: &str, allow_insecure: bool) -> PyResult<TfheParams> {
    let p = TfheParams::preset(name, allow_insecure).map_err(err)?;
    if p.torus_bits != 64 {
        return Err(err(format!("radix integers use a 64-bit torus; set '{name}' is 32-bit")));
    }
    Ok(p)
}

fn ty(bits: u32, signed: bool) -> IntegerType {
    IntegerType { bits, signed }
}

#[pymethods]
impl PyIntegerClient {
    /// Fresh keys for the parameter set `name` (default TFHE-rs's 2+2-bit set).
    #[new]
    #[pyo3(signature = (name = "TFHERS_2_2_KS_PBS", allow_insecure = false))]
    fn new(py: Python<'_>, name: &str, allow_insecure: bool) -> PyResult<Self> {
        let p = params_u64(name, allow_insecure)?;
        py.allow_threads(|| Ok(PyIntegerClient { ck: IntegerClient::generate(&p).map_err(err)? }))
    }

    #[getter]
    fn name(&self) -> String {
        self.ck.params().name.clone()
    }

    /// Identity of the key (hex), carried by every ciphertext.
    #[getter]
    fn key_id(&self) -> String {
        format!("{:016x}", self.ck.client_key().key_id())
    }

    /// The matching server (bootstrapping and key-switching keys; no secret).
    fn server(&self, py: Python<'_>) -> PyIntegerServer {
        py.allow_threads(|| PyIntegerServer { sk: Arc::new(self.ck.server()) })
    }

    fn encrypt(&self, value: i128, bits: u32, signed: bool) -> PyResult<PyRadix> {
        Ok(PyRadix { ct: self.ck.encrypt(value, ty(bits, signed)).map_err(err)? })
    }

    fn decrypt(&self, ct: &PyRadix) -> PyResult<i128> {
        self.ck.decrypt(&ct.ct).map_err(err)
    }

    fn encrypt_bool(&self, b: bool) -> PyResult<PyEncBool> {
        Ok(PyEncBool { b: self.ck.encrypt_bool(b).map_err(err)? })
    }

    fn decrypt_bool(&self, b: &PyEncBool) -> PyResult<bool> {
        self.ck.decrypt_bool(&b.b).map_err(err)
    }
}

fn bitop(name: &str) -> Option<BitOp> {
    Some(match name {
        "and" => BitOp::And,
        "or" => BitOp::Or,
        "xor" => BitOp::Xor,
        _ => return None,
    })
}

fn shift_kind(name: &str) -> PyResult<ShiftKind> {
    Ok(match name {
        "left" => ShiftKind::Left,
        "right" => ShiftKind::Right,
        "rotate_left" => ShiftKind::RotateLeft,
        "rotate_right" => ShiftKind::RotateRight,
        _ => {
            return Err(err(format!(
                "unknown shift {name:?} (left, right, rotate_left, rotate_right)"
            )));
        }
    })
}

#[pymethods]
impl PyIntegerServer {
    /// Load a server from the bytes of `server_key_bytes()` for the set `name`.
    #[staticmethod]
    #[pyo3(signature = (data, name = "TFHERS_2_2_KS_PBS", allow_insecure = false))]
    fn from_bytes(py: Python<'_>, data: &[u8], name: &str, allow_insecure: bool) -> PyResult<Self> {
        let p = params_u64(name, allow_insecure)?;
        py.allow_threads(|| {
            let key = deserialize_server_key::<u64>(data, &p).map_err(err)?;
            Ok(PyIntegerServer { sk: Arc::new(IntegerServer::new(key).map_err(err)?) })
        })
    }

    /// The server key as bytes (no secret inside).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &serialize_server_key(self.sk.server_key()))
    }

    #[getter]
    fn key_id(&self) -> String {
        format!("{:016x}", self.sk.key_id())
    }

    /// `a op b` for op in add, sub, mul, and, or, xor, min, max.
    fn binary(&self, py: Python<'_>, op: &str, a: &PyRadix, b: &PyRadix) -> PyResult<PyRadix> {
        let sk = &self.sk;
        py.allow_threads(|| {
            let ct = match op {
                "add" => sk.add(&a.ct, &b.ct),
                "sub" => sk.sub(&a.ct, &b.ct),
                "mul" => sk.mul(&a.ct, &b.ct),
                "min" => sk.min(&a.ct, &b.ct),
                "max" => sk.max(&a.ct, &b.ct),
                _ => match bitop(op) {
                    Some(o) => sk.bitop(o, &a.ct, &b.ct),
                    None => return Err(err(format!("unknown integer operation {op:?}"))),
                },
            };
            Ok(PyRadix { ct: ct.map_err(err)? })
        })
    }

    /// `a op c` for a clear integer `c`: add, sub, mul (reduced mod 2^bits), and, or, xor,
    /// min, max (`c` must fit the type).
    fn scalar(&self, py: Python<'_>, op: &str, a: &PyRadix, c: i128) -> PyResult<PyRadix> {
        let sk = &self.sk;
        py.allow_threads(|| {
            let ct = match op {
                "add" => sk.scalar_add(&a.ct, c),
                "sub" => sk.scalar_sub(&a.ct, c),
                "mul" => sk.scalar_mul(&a.ct, c),
                _ => {
                    let t = sk.trivial(c, a.ct.integer_type()).map_err(err)?;
                    match (op, bitop(op)) {
                        ("min", _) => sk.min(&a.ct, &t),
                        ("max", _) => sk.max(&a.ct, &t),
                        (_, Some(o)) => sk.bitop(o, &a.ct, &t),
                        _ => return Err(err(format!("unknown integer operation {op:?}"))),
                    }
                }
            };
            Ok(PyRadix { ct: ct.map_err(err)? })
        })
    }

    /// `-a` (op "neg") or `~a` (op "not").
    fn unary(&self, py: Python<'_>, op: &str, a: &PyRadix) -> PyResult<PyRadix> {
        let sk = &self.sk;
        py.allow_threads(|| {
            let ct = match op {
                "neg" => sk.neg(&a.ct),
                "not" => sk.bitnot(&a.ct),
                _ => return Err(err(format!("unknown unary operation {op:?} (neg, not)"))),
            };
            Ok(PyRadix { ct: ct.map_err(err)? })
        })
    }

    /// Comparison `op` in eq, ne, lt, le, gt, ge with another integer or (`b` None) the clear `c`.
    #[pyo3(signature = (op, a, b = None, c = None))]
    fn compare(
        &self,
        py: Python<'_>,
        op: &str,
        a: &PyRadix,
        b: Option<&PyRadix>,
        c: Option<i128>,
    ) -> PyResult<PyEncBool> {
        let sk = &self.sk;
        let rhs = match (b, c) {
            (Some(b), None) => b.ct.clone(),
            (None, Some(c)) => sk.trivial(c, a.ct.integer_type()).map_err(err)?,
            _ => return Err(err("compare takes exactly one of b (ciphertext) or c (integer)")),
        };
        py.allow_threads(|| {
            let r = match op {
                "eq" => sk.eq(&a.ct, &rhs),
                "ne" => sk.ne(&a.ct, &rhs),
                "lt" => sk.compare(&a.ct, &rhs, Order::Lt),
                "le" => sk.compare(&a.ct, &rhs, Order::Le),
                "gt" => sk.compare(&a.ct, &rhs, Order::Gt),
                "ge" => sk.compare(&a.ct, &rhs, Order::Ge),
                _ => return Err(err(format!("unknown comparison {op:?}"))),
            };
            Ok(PyEncBool { b: r.map_err(err)? })
        })
    }

    /// Shift or rotate (`left`, `right`, `rotate_left`, `rotate_right`) by a clear amount.
    fn shift_clear(&self, py: Python<'_>, kind: &str, a: &PyRadix, k: u64) -> PyResult<PyRadix> {
        let kind = shift_kind(kind)?;
        py.allow_threads(|| Ok(PyRadix { ct: self.sk.shift_clear(&a.ct, k, kind).map_err(err)? }))
    }

    /// Shift or rotate by an encrypted amount.
    fn shift(&self, py: Python<'_>, kind: &str, a: &PyRadix, k: &PyRadix) -> PyResult<PyRadix> {
        let kind = shift_kind(kind)?;
        py.allow_threads(|| Ok(PyRadix { ct: self.sk.shift(&a.ct, &k.ct, kind).map_err(err)? }))
    }

    /// `cond ? a : b`.
    fn select(
        &self,
        py: Python<'_>,
        cond: &PyEncBool,
        a: &PyRadix,
        b: &PyRadix,
    ) -> PyResult<PyRadix> {
        py.allow_threads(|| Ok(PyRadix { ct: self.sk.select(&cond.b, &a.ct, &b.ct).map_err(err)? }))
    }

    /// Boolean `and`, `or`, `xor`.
    fn bool_op(
        &self,
        py: Python<'_>,
        op: &str,
        x: &PyEncBool,
        y: &PyEncBool,
    ) -> PyResult<PyEncBool> {
        let sk = &self.sk;
        py.allow_threads(|| {
            let r = match op {
                "and" => sk.bool_and(&x.b, &y.b),
                "or" => sk.bool_or(&x.b, &y.b),
                "xor" => sk.bool_xor(&x.b, &y.b),
                _ => return Err(err(format!("unknown boolean operation {op:?}"))),
            };
            Ok(PyEncBool { b: r.map_err(err)? })
        })
    }

    fn bool_not(&self, x: &PyEncBool) -> PyResult<PyEncBool> {
        Ok(PyEncBool { b: self.sk.bool_not(&x.b).map_err(err)? })
    }

    /// A boolean as an integer 0/1 of the given type.
    fn bool_to_integer(&self, x: &PyEncBool, bits: u32, signed: bool) -> PyResult<PyRadix> {
        Ok(PyRadix { ct: self.sk.bool_to_integer(&x.b, ty(bits, signed)).map_err(err)? })
    }

    /// Load an integer ciphertext (checked against this server's key and the type's shape).
    fn integer_from_bytes(&self, data: &[u8]) -> PyResult<PyRadix> {
        Ok(PyRadix { ct: self.sk.radix_from_bytes(data).map_err(err)? })
    }

    fn bool_from_bytes(&self, data: &[u8]) -> PyResult<PyEncBool> {
        Ok(PyEncBool { b: self.sk.bool_from_bytes(data).map_err(err)? })
    }
}

#[pymethods]
impl PyRadix {
    #[getter]
    fn bits(&self) -> u32 {
        self.ct.integer_type().bits
    }
    #[getter]
    fn signed(&self) -> bool {
        self.ct.integer_type().signed
    }
    #[getter]
    fn key_id(&self) -> String {
        format!("{:016x}", self.ct.key_id())
    }
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.ct.to_bytes())
    }
}

#[pymethods]
impl PyEncBool {
    #[getter]
    fn key_id(&self) -> String {
        format!("{:016x}", self.b.key_id())
    }
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.b.to_bytes())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyIntegerClient>()?;
    m.add_class::<PyIntegerServer>()?;
    m.add_class::<PyRadix>()?;
    m.add_class::<PyEncBool>()?;
    Ok(())
}
