//! Strix's time for the TFHE deep networks NN-20/50/100 (Strix Fig. 7): each bootstrapping
//! layer of `basalt_workloads::tfhe_nn` as epochs of PBS + KS (basalt-tfhe's own trace of the
//! batch, [`crate::pbs_epoch`]) on the
//! built-in `strix` machine. The workload itself runs the networks on the CPU and knows
//! nothing of the simulator; [`annotate`] adds this model's time to its record
//! (`strix_model`), as `basalt workload run nn-20` and `basalt.workloads.run("nn-20")` print it.

use basalt_sim::machine::Batching;
use basalt_sim::{Machine, simulate};
use basalt_tfhe::TfheParams;
use basalt_workloads::tfhe_nn::Network;
use serde_json::{Value, json};

use crate::pbs_epoch::{self, PLP};

/// Strix time of one inference (seconds) on `data/machines/strix.toml`: every bootstrapping
/// layer as `⌈W / (TvLP·B)⌉` epochs of PBS + KS, KS of an epoch hidden under the next epoch's
/// blind rotation inside a layer but not across layers.
pub fn seconds(net: &Network, params: &TfheParams) -> Result<Value, String> {
    let path = basalt_sim::source::builtin_machine("strix").ok_or("no built-in strix machine")?;
    let m = Machine::load(&path).map_err(|e| e.to_string())?;
    let tvlp = m.units.iter().find(|u| u.name == "vma").map_or(1, |u| u.count);
    let core = match m.switches.batching {
        Some(Batching::Device) => 1,
        _ => m.switches.core_batch.unwrap_or(1),
    };
    let epoch = (tvlp * core) as usize;
    let mut cache = std::collections::HashMap::new();
    let mut epoch_cycles = |b: usize| -> Result<(f64, f64), String> {
        if let Some(v) = cache.get(&b) {
            return Ok(*v);
        }
        let t = pbs_epoch::record(params, b, PLP);
        let r = simulate(&m, &t).map_err(|e| e.to_string())?;
        let sum = |prefix: &str| -> f64 {
            r.regions.iter().filter(|(k, _)| k.starts_with(prefix)).map(|(_, s)| s.cycles).sum()
        };
        let v = (sum("PBS"), sum("KeySwitch"));
        cache.insert(b, v);
        Ok(v)
    };
    let mut cycles = 0.0;
    for layer in net.relu_layers() {
        let w = layer.outputs;
        let (full, rest) = (w / epoch, w % epoch);
        let mut last_ks = 0.0;
        for b in std::iter::repeat_n(epoch, full).chain((rest > 0).then_some(rest)) {
            let (br, ks) = epoch_cycles(b)?;
            cycles += br.max(ks);
            last_ks = ks;
        }
        cycles += last_ks.min(cycles);
    }
    Ok(json!({
        "machine": m.name,
        "epoch_lwes": epoch,
        "seconds": cycles / m.hz(),
    }))
}

/// Add `strix_model` (the [`seconds`] of the network at each size of the record) to the record
/// of `basalt_workloads::registry::run(name, ..)`, for the TFHE networks (`nn-20`, `nn-50`,
/// `nn-100`); any other workload's record is left as it is.
///
/// # Errors
/// A record of a TFHE network whose sizes do not name a parameter set of the workload, or a
/// network that does not load.
pub fn annotate(name: &str, record: &mut Value) -> Result<(), String> {
    if !name.starts_with("nn-") {
        return Ok(());
    }
    let full = Network::load(name)?;
    let net = if record["quick"].as_bool() == Some(true) { full.truncated() } else { full };
    let Some(sizes) = record.get_mut("sizes").and_then(Value::as_array_mut) else {
        return Err(format!("{name}: the record has no `sizes`"));
    };
    for size in sizes {
        let n = size["polynomial_size"]
            .as_u64()
            .ok_or_else(|| format!("{name}: a size without `polynomial_size`"))?;
        let params = TfheParams::preset(&format!("NN_N{n}"), false).map_err(|e| e.to_string())?;
        size["strix_model"] = seconds(&net, &params)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wider network takes longer on Strix, every layer's epochs are counted, and a record of
    /// another workload is left alone.
    #[test]
    fn deeper_networks_take_longer_on_strix() {
        let params = TfheParams::preset("NN_N1024", false).unwrap();
        let t = |name: &str| {
            let v = seconds(&Network::load(name).unwrap(), &params).unwrap();
            assert_eq!(v["machine"], "strix");
            v["seconds"].as_f64().unwrap()
        };
        let (a, b) = (t("nn-20"), t("nn-50"));
        assert!(a > 0.0 && b > a, "{a} {b}");
        let mut other = json!({"workload": "lola"});
        annotate("lola", &mut other).unwrap();
        assert_eq!(other, json!({"workload": "lola"}));
        let mut record = json!({"quick": true, "sizes": [{"polynomial_size": 1024}]});
        annotate("nn-20", &mut record).unwrap();
        assert!(record["sizes"][0]["strix_model"]["seconds"].as_f64().unwrap() > 0.0);
        let mut bad = json!({"quick": true, "sizes": [{"polynomial_size": 3}]});
        assert!(annotate("nn-20", &mut bad).is_err());
    }
}
