//! `basalt sim compare`: one trace on several machines, or on variants of one ("CraterLake;
//! Osiris at 2 TB/s; Strix with 4 cores"), one row each: latency, stall, the busiest unit,
//! HBM traffic by kind, energy. A machine that cannot run the trace (a TFHE trace on a CKKS
//! machine, a ring larger than it supports) gets its error in its row; the others still run.

use std::path::Path;

use crate::sim::{machine_path, resolve_data};

/// A machine and its overrides, written `NAME` or `NAME@field=value@field=value…`.
#[derive(Debug)]
pub struct Variant {
    spec: String,
    name: String,
    overrides: Vec<String>,
}

impl Variant {
    /// Parse `NAME@field=value…`; an override without `=` is an error naming the spec.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut parts = spec.split('@');
        let name = parts.next().unwrap_or_default().trim().to_string();
        if name.is_empty() {
            return Err(format!("{spec:?}: a machine name comes before any @override"));
        }
        let overrides: Vec<String> = parts.map(|s| s.trim().to_string()).collect();
        if let Some(bad) = overrides.iter().find(|o| !o.contains('=')) {
            return Err(format!("{spec:?}: override {bad:?} is not field=value"));
        }
        Ok(Variant { spec: spec.to_string(), name, overrides })
    }
}

/// Every machine file of the data folder (top level; the built-in ones by default), by name.
pub fn all_machines(data: &Path) -> Result<Vec<String>, String> {
    let dir = resolve_data(data).join("machines");
    let mut names: Vec<String> = basalt_sim::source::list_dir(&dir)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    Ok(names)
}

/// `v`'s machine file with its overrides; a bad file or override is an error naming `v`.
fn load(data: &Path, v: &Variant) -> Result<basalt_sim::Machine, String> {
    let sets: Vec<&str> = v.overrides.iter().map(String::as_str).collect();
    basalt_sim::check_timing_overrides(&sets)
        .and_then(|()| basalt_sim::Machine::load_with(machine_path(data, &v.name), &sets))
        .map_err(|e| format!("{}: {e}", v.spec))
}

/// Time `trace` (and `bootstrap` per marker, if given) on `m`; a trace the machine cannot run
/// is an error (for its row only, in a comparison).
pub fn time(
    m: &basalt_sim::Machine,
    trace: &basalt_trace::Trace,
    bootstrap: Option<&basalt_trace::Trace>,
) -> Result<basalt_sim::Report, String> {
    match bootstrap {
        Some(b) => basalt_sim::refresh::simulate_with_bootstrap(m, trace, b),
        None => basalt_sim::simulate(m, trace),
    }
    .map_err(|e| e.to_string())
}

fn mib(bytes: f64) -> f64 {
    bytes / f64::from(1u32 << 20)
}

/// The busiest unit and its utilisation in percent.
fn busiest(r: &basalt_sim::Report) -> (String, f64) {
    r.units
        .iter()
        .max_by(|a, b| a.utilisation.total_cmp(&b.utilisation))
        .map_or(("-".into(), 0.0), |u| (u.name.clone(), 100.0 * u.utilisation))
}

/// Run the comparison and print it (a table, or one JSON object per line with `--json`);
/// returns (machine, seconds) of the machines that ran the trace.
pub fn run(
    data: &Path,
    specs: &[String],
    trace: &basalt_trace::Trace,
    bootstrap: Option<&basalt_trace::Trace>,
    json: bool,
) -> Result<Vec<(String, f64)>, String> {
    let specs = if specs.is_empty() { all_machines(data)? } else { specs.to_vec() };
    let variants = specs.iter().map(|s| Variant::parse(s)).collect::<Result<Vec<_>, _>>()?;
    // Every machine loads before anything is printed: a typo fails the command, not a row.
    let loaded = variants.iter().map(|v| load(data, v)).collect::<Result<Vec<_>, _>>()?;
    if !json {
        println!(
            "{:<32} {:>12} {:>7} {:>18} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "machine",
            "latency",
            "stall%",
            "busiest unit",
            "keys MiB",
            "ct MiB",
            "pt MiB",
            "interm MiB",
            "energy mJ"
        );
    }
    let mut timed = Vec::new();
    for (v, m) in variants.iter().zip(&loaded) {
        let outcome = time(m, trace, bootstrap);
        if let Ok(r) = &outcome {
            timed.push((v.spec.clone(), r.seconds));
        }
        if json {
            let row = match &outcome {
                Ok(r) => serde_json::json!({ "machine": v.spec, "report": r }),
                Err(e) => serde_json::json!({ "machine": v.spec, "error": e }),
            };
            println!("{row}");
            continue;
        }
        match outcome {
            Ok(r) => {
                let (unit, util) = busiest(&r);
                let energy = r.energy_j.map_or_else(|| "-".into(), |j| format!("{:.3}", j * 1e3));
                println!(
                    "{:<32} {:>12} {:>7.1} {:>18} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10}",
                    v.spec,
                    latency(r.seconds),
                    100.0 * r.stall_cycles / r.cycles.max(1.0),
                    format!("{unit} {util:.0}%"),
                    mib(r.traffic.keys),
                    mib(r.traffic.ciphertexts),
                    mib(r.traffic.plaintexts),
                    mib(r.traffic.intermediates),
                    energy,
                );
            }
            Err(e) => println!("{:<32} cannot run this trace: {e}", v.spec),
        }
    }
    Ok(timed)
}

/// A latency with a unit that keeps three significant digits readable.
pub fn latency(seconds: f64) -> String {
    if seconds >= 0.1 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-4 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.2} us", seconds * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_is_a_name_then_overrides() {
        let v = Variant::parse("osiris@memory.hbm_gbps=2000@switches.gsc=false").unwrap();
        assert_eq!(v.name, "osiris");
        assert_eq!(v.overrides, ["memory.hbm_gbps=2000", "switches.gsc=false"]);
        assert!(Variant::parse("strix").unwrap().overrides.is_empty());
        assert!(Variant::parse("@memory.hbm_gbps=1").unwrap_err().contains("machine name"));
        assert!(Variant::parse("fab@fpgas").unwrap_err().contains("not field=value"));
    }

    #[test]
    fn latencies_keep_their_unit_readable() {
        assert_eq!(latency(0.25), "0.250 s");
        assert_eq!(latency(0.004_03), "4.030 ms");
        assert_eq!(latency(6.88e-5), "68.80 us");
    }
}
