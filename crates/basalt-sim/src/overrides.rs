//! `key=value` overrides of a machine file, applied to the TOML *before* validation, so a sweep
//! (`basalt sim sweep --set memory.hbm_gbps=2000`) or an ablation (`switches.kshgen=false`) is
//! checked exactly like a shipped file. `units.<name>.<field>` and `components.<name>.<field>`
//! address array entries by their `name`.

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

impl Machine {
    /// Parse `text`, apply `key=value` overrides, then validate as [`Machine::from_toml`] does.
    pub fn from_toml_with(
        text: &str,
        path: &Path,
        overrides: &[&str],
    ) -> Result<Machine, SimError> {
        let bad = |message: String| SimError::Parse { path: path.into(), message };
        let mut root: toml::Table = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        for o in overrides {
            let (k, v) =
                o.split_once('=').ok_or_else(|| bad(format!("override `{o}` is not key=value")))?;
            set(&mut root, k.trim(), parse_value(v.trim()))
                .map_err(|m| bad(format!("override `{o}`: {m}")))?;
        }
        let text = toml::to_string(&root).map_err(|e| bad(e.to_string()))?;
        Machine::from_toml(&text, path)
    }

    /// [`Machine::load`] with overrides.
    pub fn load_with(path: impl AsRef<Path>, overrides: &[&str]) -> Result<Machine, SimError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|source| SimError::Io { path: path.into(), source })?;
        Machine::from_toml_with(&text, path, overrides)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
