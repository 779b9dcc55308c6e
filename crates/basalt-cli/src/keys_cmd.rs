//! `basalt keys`: the bytes of every key type of a CKKS preset, as serialized (the form a client
//! sends a server), full and seeded. The keys are generated for real and serialized with their
//! checksums: the figures are the lengths of the byte strings, not a formula.
//!
//! `basalt keys --preset N16QP1546H192H32 --bootstrapping --log-slots 15 --markdown` writes the
//! table of the deployment guide (docs/python.md).

use basalt_circuits::bootstrap::Bootstrapper;
use basalt_circuits::bootstrap::config::for_preset;
use basalt_ckks::{GaloisKey, KeyGenerator, Parameters};
use clap::Args;
use serde_json::{Value, json};

use crate::args;
use crate::progress_bar::TermProgress;

#[derive(Args, Debug)]
pub struct KeysArgs {
    /// CKKS preset (`basalt security` lists them).
    #[arg(long)]
    pub preset: String,
    /// The keys of the preset's bootstrapping circuit (rotations, conjugation, encapsulation).
    #[arg(long)]
    pub bootstrapping: bool,
    /// Slots the bootstrapping circuit packs (log2; default: the preset's full packing).
    #[arg(long, value_parser = args::log_slots)]
    pub log_slots: Option<u32>,
    /// Rotation steps to make keys for, without `--bootstrapping` (comma-separated).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub rotations: Vec<i64>,
    /// Allow a preset estimated below 128-bit security.
    #[arg(long)]
    pub allow_insecure: bool,
    /// Generate even when the keys' estimate exceeds the memory available.
    #[arg(long)]
    pub force: bool,
    /// Print a Markdown table instead of JSON.
    #[arg(long)]
    pub markdown: bool,
}

/// One key type: its count and its bytes, seeded (as generated) and full (expanded).
struct Row {
    what: &'static str,
    count: usize,
    seeded: Option<u64>,
    full: u64,
}

fn len<E: std::fmt::Display>(r: Result<Vec<u8>, E>) -> Result<u64, String> {
    r.map(|b| b.len() as u64).map_err(|e| e.to_string())
}

fn galois_bytes(keys: &[&GaloisKey], params: &Parameters) -> Result<(Option<u64>, u64), String> {
    let mut seeded = 0;
    let mut full = 0;
    for g in keys {
        seeded += len(g.to_bytes())?;
        let expanded = GaloisKey {
            galois: g.galois,
            key: g.key.clone().expanded(params).map_err(|e| e.to_string())?,
        };
        full += len(expanded.to_bytes())?;
    }
    Ok((Some(seeded), full))
}

/// Generate the keys seeded, then measure each key's serialized form, seeded as generated and
/// full after expanding it (one key at a time, so memory holds the seeded set and one full key).
fn rows(a: &KeysArgs) -> Result<(Parameters, Vec<Row>), String> {
    let mut lit = basalt_ckks::params::presets::literal(&a.preset).map_err(|e| e.to_string())?;
    lit.allow_insecure |= a.allow_insecure;
    let params = Parameters::new(lit).map_err(|e| e.to_string())?;
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let pk = kg.gen_public_key(&sk);
    let bar = TermProgress::new();
    let (keys, encaps) = if a.bootstrapping {
        let slots = a.log_slots.unwrap_or(params.log_n() - 1);
        let cfg = for_preset(&a.preset, Some(slots), params.log_n()).ok_or(format!(
            "preset {:?} has no bootstrapping circuit (see docs/bootstrapping.md, Presets)",
            a.preset
        ))?;
        let bt = Bootstrapper::new(&params, cfg).map_err(|e| e.to_string())?;
        bt.generate_keys_with(&sk, true, a.force, &bar).map_err(|e| e.to_string())?
    } else {
        let keys = kg
            .gen_evaluation_keys_with(&sk, &a.rotations, false, true, a.force, &bar)
            .map_err(|e| e.to_string())?;
        (keys, None)
    };
    bar.finish();
    let conj = params.ring().galois_element_conjugate();
    let rotations: Vec<&GaloisKey> = keys.galois.values().filter(|g| g.galois != conj).collect();
    let conjugation: Vec<&GaloisKey> = keys.galois.values().filter(|g| g.galois == conj).collect();
    let mut out = vec![
        Row { what: "secret key", count: 1, seeded: None, full: len(sk.export_bytes())? },
        Row { what: "public key", count: 1, seeded: None, full: len(pk.to_bytes())? },
    ];
    if let Some(r) = &keys.relin {
        let full = basalt_ckks::RelinKey {
            key: r.key.clone().expanded(&params).map_err(|e| e.to_string())?,
        };
        out.push(Row {
            what: "relinearization key",
            count: 1,
            seeded: Some(len(r.to_bytes())?),
            full: len(full.to_bytes())?,
        });
    }
    let (s, f) = galois_bytes(&rotations, &params)?;
    out.push(Row { what: "rotation keys", count: rotations.len(), seeded: s, full: f });
    if !conjugation.is_empty() {
        let (s, f) = galois_bytes(&conjugation, &params)?;
        out.push(Row { what: "conjugation key", count: 1, seeded: s, full: f });
    }
    if let Some(e) = &encaps {
        out.push(Row {
            what: "encapsulation keys (sparse secret)",
            count: 2,
            seeded: None,
            full: len(e.to_bytes())?,
        });
    }
    // The sum, not one serialized set: expanding the whole set at once would hold every key
    // twice (about 2.5 times the full keys' size at N = 2^16), where one key at a time holds one.
    let evaluation = &out[2..];
    let sum_seeded = evaluation.iter().map(|r| r.seeded.unwrap_or(r.full)).sum();
    let sum_full = evaluation.iter().map(|r| r.full).sum();
    out.push(Row {
        what: "all evaluation keys (sum of the rows above but the first two)",
        count: evaluation.iter().map(|r| r.count).sum(),
        seeded: Some(sum_seeded),
        full: sum_full,
    });
    Ok((params, out))
}

fn mib(b: u64) -> String {
    let m = b as f64 / (1u64 << 20) as f64;
    if m >= 1024.0 {
        format!("{:.2} GiB", m / 1024.0)
    } else if m >= 1.0 || b == 0 {
        format!("{m:.1} MiB")
    } else {
        // The secret key: two bits a coefficient.
        format!("{:.1} KiB", b as f64 / 1024.0)
    }
}

/// Run `basalt keys`.
///
/// # Errors
/// Unknown preset, insecure preset without the opt-in, out of memory, scheme errors.
pub fn run(a: &KeysArgs) -> Result<(), String> {
    let (params, rows) = rows(a)?;
    if a.markdown {
        println!(
            "| {} (N = 2^{}, log QP = {:.0}) | count | seeded | full |",
            params.name(),
            params.log_n(),
            params.log_qp()
        );
        println!("|---|---:|---:|---:|");
        for r in &rows {
            let seeded = r.seeded.map_or("–".to_string(), mib);
            println!("| {} | {} | {} | {} |", r.what, r.count, seeded, mib(r.full));
        }
    } else {
        let v: Vec<Value> = rows
            .iter()
            .map(|r| {
                json!({"key": r.what, "count": r.count, "seeded_bytes": r.seeded,
                       "full_bytes": r.full})
            })
            .collect();
        let out = json!({"preset": params.name(), "log_n": params.log_n(),
                         "log_qp": params.log_qp(), "keys": v});
        println!("{out}");
    }
    Ok(())
}
