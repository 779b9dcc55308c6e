//! Summary rows that are geometric means of other rows (CraterLake Tables 3–5's "deep" and
//! "shallow" gmeans, Osiris' geomean of its nine improvements). A summary row is computed from
//! our own constituent rows, and only when every constituent was computed: a gmean over the
//! rows we happen to model would compare a different set with the paper's.

use super::{Computed, computed};

/// One summary row: its key and the rows (same table and metric) it is the gmean of.
struct Gmean {
    paper: &'static str,
    table: &'static str,
    row: &'static str,
    metrics: &'static [&'static str],
    of: &'static [&'static str],
}

/// CraterLake §8: deep benchmarks bootstrap, shallow ones do not ("includes unpacked
/// bootstrapping", Table 3's note). Table 4 spells two row names differently ("Unencrypt.").
const DEEP: &[&str] = &["ResNet-20", "Logistic Regression", "LSTM", "Packed Bootstrapping"];
const SHALLOW_T3: &[&str] = &[
    "Unpacked bootstrapping",
    "CIFAR Unencryp. Wghts.",
    "MNIST Unencryp. Wghts.",
    "MNIST Encryp. Wghts.",
];
const SHALLOW_T4: &[&str] = &[
    "Unpacked Bootstrapping",
    "CIFAR Unencrypt. Wghts.",
    "MNIST Unencrypt. Wghts.",
    "MNIST Encryp. Wghts.",
];
const ABLATIONS: &[&str] =
    &["speedup vs no KSHGen", "speedup vs no CRB/chaining", "speedup vs F1+ network"];

const GMEANS: &[Gmean] = &[
    Gmean {
        paper: "craterlake",
        table: "3",
        row: "deep gmean",
        metrics: &["speedup vs F1+", "speedup vs CPU"],
        of: DEEP,
    },
    Gmean {
        paper: "craterlake",
        table: "3",
        row: "shallow gmean",
        metrics: &["speedup vs F1+", "speedup vs CPU"],
        of: SHALLOW_T3,
    },
    Gmean { paper: "craterlake", table: "4", row: "deep gmean", metrics: ABLATIONS, of: DEEP },
    Gmean {
        paper: "craterlake",
        table: "4",
        row: "shallow gmean",
        metrics: ABLATIONS,
        of: SHALLOW_T4,
    },
    Gmean {
        paper: "craterlake",
        table: "5",
        row: "gmean",
        metrics: &["128-bit slowdown vs 80-bit", "200-bit slowdown vs 80-bit"],
        of: DEEP,
    },
];

/// Osiris' abstract: 6,603× is the geomean of Table III(a)'s nine "Improv." values.
const OSIRIS_ROWS: &[&str] = &[
    "T_mult,a/s",
    "T_Mv:128,a/s",
    "MLP",
    "LoLA",
    "LeNet",
    "Bootstrap",
    "HELR-1024",
    "ResNet-20",
    "Sorting",
];

/// The summary rows of `paper` computable from `comp` (appended by the caller).
pub(super) fn summaries(paper: &str, comp: &[Computed]) -> Vec<Computed> {
    let find = |table: &str, row: &str, metric: &str| {
        comp.iter().find(|c| c.table == table && c.row == row && c.metric == metric)
    };
    let gmean =
        |values: &[f64]| (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp();
    let mut out = Vec::new();
    for g in GMEANS.iter().filter(|g| g.paper == paper) {
        for &metric in g.metrics {
            let parts: Option<Vec<f64>> =
                g.of.iter().map(|r| find(g.table, r, metric).map(|c| c.value)).collect();
            if let Some(v) = parts {
                let how = format!("geometric mean of our {} rows ({metric})", g.of.join(", "));
                out.push(computed(g.table, g.row, metric, gmean(&v), &how));
            }
        }
    }
    if paper == "craterlake" {
        out.extend(register_file(comp));
    }
    if paper == "osiris" {
        let metric = "improvement vs CPU";
        let parts: Option<Vec<f64>> =
            OSIRIS_ROWS.iter().map(|r| find("III(a)", r, metric).map(|c| c.value)).collect();
        if let Some(v) = parts {
            let how = "geometric mean of our nine III(a) improvement rows (the abstract's 6,603x)";
            out.push(computed("III(a)", "all", "geomean improvement vs CPU", gmean(&v), how));
        }
    }
    out
}

/// CraterLake Fig. 11 (prose only): deep benchmarks slow down by up to 5.5x with smaller
/// register files, shallow ones are insensitive, and above 256 MB only packed bootstrapping
/// gains much (1.5x at 300 MB). From our per-benchmark constituents, each summary only when all
/// of its benchmarks were computed.
fn register_file(comp: &[Computed]) -> Vec<Computed> {
    use super::craterlake::{RF_SLOWDOWN, RF_SPEEDUP};
    let find = |row: &str, metric: &str| {
        comp.iter().find(|c| c.table == "11" && c.row == row && c.metric == metric)
    };
    let mut out = Vec::new();
    for (row, of) in [("deep max", DEEP), ("shallow max", SHALLOW_T3)] {
        let parts: Option<Vec<f64>> =
            of.iter().map(|r| find(r, RF_SLOWDOWN).map(|c| c.value)).collect();
        if let Some(v) = parts {
            let each: Vec<String> =
                of.iter().zip(&v).map(|(r, x)| format!("{r} {x:.2}x")).collect();
            let how = format!(
                "largest of our slowdowns at 100 MB against 256 MB (craterlake.toml with \
                 memory.onchip_mib=100): {}",
                each.join(", ")
            );
            out.push(computed("11", row, RF_SLOWDOWN, v.iter().copied().fold(0.0, f64::max), &how));
        }
    }
    if let Some(c) = find("Packed Bootstrapping", RF_SPEEDUP) {
        out.push(computed("11", &c.row, &c.metric, c.value, &c.how));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_file_summaries_take_the_largest_slowdown_of_complete_sets() {
        use crate::reproduce::constituent;
        use crate::reproduce::craterlake::{RF_SLOWDOWN, RF_SPEEDUP};
        let mut rows: Vec<Computed> = DEEP
            .iter()
            .enumerate()
            .map(|(i, r)| constituent("11", r, RF_SLOWDOWN, 1.0 + i as f64, "t"))
            .collect();
        rows.push(constituent("11", "Packed Bootstrapping", RF_SPEEDUP, 1.2, "t"));
        let s = summaries("craterlake", &rows);
        let get = |row: &str| s.iter().find(|c| c.row == row).map(|c| (c.value, c.constituent));
        assert_eq!(get("deep max"), Some((4.0, false)));
        assert_eq!(get("Packed Bootstrapping"), Some((1.2, false)), "reported as a row");
        assert_eq!(get("shallow max"), None, "no shallow constituents");
    }

    #[test]
    fn a_gmean_needs_every_constituent() {
        let rows = |names: &[&str]| -> Vec<Computed> {
            names
                .iter()
                .enumerate()
                .map(|(i, r)| computed("3", r, "speedup vs F1+", 2f64.powi(i as i32), "t"))
                .collect()
        };
        // Three of the four deep rows: no deep gmean.
        assert!(summaries("craterlake", &rows(&DEEP[..3])).is_empty());
        // All four: 2^((0+1+2+3)/4) = 2^1.5.
        let s = summaries("craterlake", &rows(DEEP));
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].table.as_str(), s[0].row.as_str()), ("3", "deep gmean"));
        assert!((s[0].value - 2f64.powf(1.5)).abs() < 1e-12);
        // Another paper's summaries are not derived from these rows.
        assert!(summaries("osiris", &rows(DEEP)).is_empty());
    }
}
