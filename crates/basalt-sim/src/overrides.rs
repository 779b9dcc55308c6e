//! `key=value` overrides of a machine file, applied to the TOML *before* validation, so a sweep
//! (`basalt sim sweep --set memory.hbm_gbps=2000`) or an ablation (`switches.kshgen=false`) is
//! checked exactly like a shipped file. `units.<name>.<field>` and `components.<name>.<field>`
//! address array entries by their `name`.
//!
//! A file may also start from another (`extends = "craterlake.toml"`, a path beside it): a
//! variant the paper describes as "the chip, changed thus" (CraterLake's 128K configuration)
//! then states only its changes, and the base's tags and sources are not copied.

use std::path::Path;

use crate::{Machine, SimError};

fn parse_value(s: &str) -> toml::Value {
    if let Ok(b) = s.parse::<bool>() {
        return toml::Value::Boolean(b);
    }
    if let Ok(i) = s.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if let Ok(f) = s.parse::<f64>() {
        return toml::Value::Float(f);
    }
    toml::Value::String(s.to_string())
}

fn set(root: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    let mut table = root;
    let mut i = 0;
    while i + 1 < parts.len() {
        let p = parts[i];
        let is_array = match table.get(p) {
            Some(toml::Value::Array(_)) => true,
            Some(toml::Value::Table(_)) => false,
            Some(_) => return Err(format!("`{p}` is not a table")),
            None => {
                table.insert(p.to_string(), toml::Value::Table(toml::Table::new()));
                false
            }
        };
        let v = table.get_mut(p).expect("present: checked or inserted above");
        if is_array {
            let name = *parts.get(i + 1).ok_or("missing entry name")?;
            let items = v.as_array_mut().expect("checked to be an array");
            let entry = items
                .iter_mut()
                .find(|e| e.get("name").and_then(|n| n.as_str()) == Some(name))
                .ok_or_else(|| format!("no `{p}` entry named `{name}`"))?;
            table = entry.as_table_mut().ok_or("array entry is not a table")?;
            i += 2;
        } else {
            table = v.as_table_mut().expect("checked to be a table");
            i += 1;
        }
    }
    let last = parts.get(i).ok_or("empty key")?;
    table.insert(last.to_string(), value);
    Ok(())
}

/// Lay `top` over `base`: tables merge key by key; arrays of named tables (`units`,
/// `components`) merge entry by entry with the base's entry of the same `name`, and entries
/// with a new name are appended; any other value replaces the base's.
fn merge(base: &mut toml::Table, top: toml::Table) {
    for (k, v) in top {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(t)) => merge(b, t),
            (Some(toml::Value::Array(b)), toml::Value::Array(t)) => {
                for entry in t {
                    let name = entry.get("name").cloned();
                    let same =
                        b.iter_mut().find(|e| name.is_some() && e.get("name") == name.as_ref());
                    match (same, entry) {
                        (Some(toml::Value::Table(e)), toml::Value::Table(t)) => merge(e, t),
                        (_, entry) => b.push(entry),
                    }
                }
            }
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The TOML of the machine file at `path`, with its `extends` chain resolved (see
/// [`crate::source`] for where a base may come from).
fn read_table(path: &Path) -> Result<toml::Table, SimError> {
    crate::source::read_machine_table(path, merge)
}

/// Switches a machine file states for the record but that no timing of a given trace reads:
/// they choose how a program is *recorded* (its operation order, its batch) or feed one
/// reproduction. Overriding one when timing a trace would change nothing, silently, so
/// [`check_timing_overrides`] refuses it and says where it does take effect.
const RECORDED_SWITCHES: [(&str, &str); 5] = [
    (
        "switches.gsc_order",
        "the BSGS order is chosen when the program is recorded (`basalt trace`: networks take \
         the GSC order unless `--plain-order`, without OF-Limb with `--stored-diagonals`; \
         bootstraps take it with `--dft-n1`)",
    ),
    (
        "switches.reordered_keyswitch",
        "the key-switch order is chosen when the program is recorded (`basalt trace \
         --reordered`)",
    ),
    (
        "switches.fpgas",
        "FAB-2's eight FPGAs split the HELR iteration into per-FPGA programs, which only \
         `basalt sim reproduce fab` (Table 8) builds; time each FPGA's share as its own trace",
    ),
    (
        "switches.batching",
        "the TFHE batch is chosen when the program is recorded (how many LWEs one blind \
         rotation carries)",
    ),
    (
        "switches.core_batch",
        "the TFHE batch is chosen when the program is recorded (how many LWEs one blind \
         rotation carries)",
    ),
];

/// Refuse `key=value` overrides that cannot change the timing of a recorded trace (the
/// switches a recording or a reproduction reads: `switches.gsc_order`, `reordered_keyswitch`,
/// `fpgas`, `batching`, `core_batch`); `basalt sim run`, `sweep` and `compare` and Python's
/// `basalt.sim.run` call it before timing.
///
/// # Errors
/// [`SimError::RecordedSwitch`] naming the first such field and where it does take effect.
pub fn check_timing_overrides(overrides: &[&str]) -> Result<(), SimError> {
    for o in overrides {
        let field = o.split_once('=').map_or(*o, |(k, _)| k).trim();
        if let Some((_, takes_effect)) = RECORDED_SWITCHES.iter().find(|(f, _)| *f == field) {
            return Err(SimError::RecordedSwitch { field: field.into(), takes_effect });
        }
    }
    Ok(())
}

impl Machine {
    /// Parse `text`, apply `key=value` overrides, then validate as [`Machine::from_toml`] does.
    pub fn from_toml_with(
        text: &str,
        path: &Path,
        overrides: &[&str],
    ) -> Result<Machine, SimError> {
        let bad = |message: String| SimError::Parse { path: path.into(), message };
        let root: toml::Table = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        Machine::from_table_with(root, path, overrides)
    }

    fn from_table_with(
        mut root: toml::Table,
        path: &Path,
        overrides: &[&str],
    ) -> Result<Machine, SimError> {
        let bad = |message: String| SimError::Parse { path: path.into(), message };
        for o in overrides {
            let (k, v) =
                o.split_once('=').ok_or_else(|| bad(format!("override `{o}` is not key=value")))?;
            set(&mut root, k.trim(), parse_value(v.trim()))
                .map_err(|m| bad(format!("override `{o}`: {m}")))?;
        }
        let text = toml::to_string(&root).map_err(|e| bad(e.to_string()))?;
        Machine::from_toml(&text, path)
    }

    /// [`Machine::load`] with overrides (applied after the file's `extends` base).
    pub fn load_with(path: impl AsRef<Path>, overrides: &[&str]) -> Result<Machine, SimError> {
        let path = path.as_ref();
        Machine::from_table_with(read_table(path)?, path, overrides)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_a_recording_reads_are_refused_when_timing_a_trace() {
        assert!(check_timing_overrides(&["memory.hbm_gbps=2000", "switches.kshgen=false"]).is_ok());
        for (set, hint) in [
            ("switches.gsc_order=false", "--plain-order"),
            ("switches.reordered_keyswitch = true", "--reordered"),
            ("switches.fpgas=8", "reproduce fab"),
            ("switches.core_batch=3", "TFHE batch"),
        ] {
            let e = check_timing_overrides(&["memory.hbm_gbps=2000", set]).unwrap_err();
            let field = set.split('=').next().unwrap().trim();
            assert!(matches!(&e, SimError::RecordedSwitch { field: f, .. } if f == field), "{e}");
            assert!(e.to_string().contains(hint), "{e}");
        }
    }

    fn strix() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/machines/strix.toml")
    }

    #[test]
    fn overrides_reach_tables_units_and_switches() {
        let m = Machine::load_with(
            strix(),
            &["memory.hbm_gbps=150", "units.fft.lanes=8", "switches.folding=false"],
        )
        .unwrap();
        assert_eq!(m.memory.hbm_gbps, 150.0);
        assert_eq!(m.units.iter().find(|u| u.name == "fft").unwrap().lanes, 8);
        assert_eq!(m.switches.folding, Some(false));
    }

    #[test]
    fn a_named_entry_merges_with_the_base_entry() {
        let mut base: toml::Table = toml::from_str(
            "a = 1\n[t]\nx = 1\ny = 2\n[[units]]\nname = \"u\"\nlanes = 4\nrows = 2\n",
        )
        .unwrap();
        let top: toml::Table = toml::from_str(
            "a = 3\n[t]\ny = 5\n[[units]]\nname = \"u\"\nlanes = 8\n[[units]]\nname = \"v\"\n",
        )
        .unwrap();
        merge(&mut base, top);
        let want: toml::Table = toml::from_str(concat!(
            "a = 3\n[t]\nx = 1\ny = 5\n",
            "[[units]]\nname = \"u\"\nlanes = 8\nrows = 2\n[[units]]\nname = \"v\"\n",
        ))
        .unwrap();
        assert_eq!(base, want);
    }

    #[test]
    fn overrides_are_validated() {
        let e = Machine::load_with(strix(), &["memory.hbm_gbps=-3"]).unwrap_err();
        assert!(matches!(e, SimError::NonPositive { .. }), "{e}");
        let e = Machine::load_with(strix(), &["units.nope.lanes=2"]).unwrap_err();
        assert!(e.to_string().contains("no `units` entry named `nope`"), "{e}");
        let e = Machine::load_with(strix(), &["memory.hbm=3"]).unwrap_err();
        assert!(e.to_string().contains("hbm"), "{e}");
        assert!(Machine::load_with(strix(), &["clock_ghz"]).is_err());
    }
}
