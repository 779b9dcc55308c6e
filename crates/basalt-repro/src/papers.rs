//! Paper data: `data/papers/<paper>/SOURCE.md` plus one CSV per table, one number per row, with
//! columns `table,row,metric,value,unit,tag,kind,tolerance,from,note` (STYLE.md §6).
//!
//! * tag — `P` stated, `D` derived (arithmetic in the note), `X` ambiguous, `GAP` missing (our
//!   choice);
//! * kind — what a match with the row is evidence of ([`Kind`]): only `target` and
//!   `validation` rows are independent predictions and count in the headline;
//! * tolerance — relative, e.g. `0.01` for ±1 %; absolute when the paper's value is 0;
//!   `inherit` for a derived row, whose tolerance follows from its sources ([`inherited`]);
//! * from — a derived row's sources, `table/row/metric` keys of the same paper separated by
//!   `; `, prefixed `gmean: ` when the row is their geometric mean; empty for other kinds.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::ReproError;

/// The five reproduced papers, in the order reports list them.
pub const PAPERS: [&str; 5] = ["osiris", "fab", "mxv", "craterlake", "strix"];

/// The exact CSV header.
pub const HEADER: &str = "table,row,metric,value,unit,tag,kind,tolerance,from,note";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Tag {
    P,
    D,
    X,
    #[serde(rename = "GAP")]
    Gap,
}

/// What agreement with a paper row is evidence of. A hardware architect reads the headline
/// (independent rows within tolerance); every other kind is listed apart, so that a sum of
/// transcribed figures or a row a constant was fitted to never passes for a prediction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An independent prediction the models were developed against (looked at, never fitted).
    Target,
    /// An independent prediction held out: never looked at while choosing a model or constant.
    Validation,
    /// A machine-file constant was fitted to this row (the constant names it in `fitted`).
    Calibration,
    /// A sum or restatement of figures transcribed into a machine file (or of the equations a
    /// model implements): it checks the transcription, not a model.
    Bookkeeping,
    /// A function of other rows (`from`): judged with their tolerance, never counted twice.
    Derived,
    /// Another system's quoted figure: an input to derived rows, never a model output.
    Baseline,
}

/// The row kinds in report order.
pub const KINDS: [Kind; 6] = [
    Kind::Target,
    Kind::Validation,
    Kind::Calibration,
    Kind::Bookkeeping,
    Kind::Derived,
    Kind::Baseline,
];

/// The name the reports and the Python API used before rows had kinds.
pub use Kind as Role;

impl Kind {
    /// Target and validation rows: the evidence the headline counts.
    pub fn independent(self) -> bool {
        matches!(self, Kind::Target | Kind::Validation)
    }

    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "target" => Kind::Target,
            "validation" => Kind::Validation,
            "calibration" => Kind::Calibration,
            "bookkeeping" => Kind::Bookkeeping,
            "derived" => Kind::Derived,
            "baseline" => Kind::Baseline,
            _ => return None,
        })
    }

    /// Lower-case name, as in the CSVs.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Target => "target",
            Kind::Validation => "validation",
            Kind::Calibration => "calibration",
            Kind::Bookkeeping => "bookkeeping",
            Kind::Derived => "derived",
            Kind::Baseline => "baseline",
        }
    }
}

/// The sources of a derived row and how it combines them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Derivation {
    /// `table/row/metric` keys of the same paper.
    pub from: Vec<String>,
    /// The row is the geometric mean of its sources (else a product or quotient of them).
    pub gmean: bool,
    /// Relative rounding of the printed value (half a unit of its last digit): a derived
    /// row of exact sources still differs from a printed 1.53 by up to 0.005 / 1.53.
    pub printed: f64,
}

/// Half a unit of the last printed digit of `text`, relative to `value` (0 for a zero).
fn printed_rounding(text: &str, value: f64) -> f64 {
    if value == 0.0 {
        return 0.0;
    }
    let mantissa = text.trim().split(['e', 'E']).next().unwrap_or("");
    let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len());
    0.5 * 10f64.powi(-(decimals as i32)) / value.abs()
}

/// The tolerance a derived row inherits from sources with tolerances `t` (the row keeps at
/// least the rounding of its printed value): the worst case of a
/// product or quotient of quantities each within ±tᵢ is 1/Π(1 − tᵢ) − 1 (a 1/x of a ±20 % row
/// may be off by 25 %), and of their geometric mean 1/Π(1 − tᵢ)^(1/n) − 1. A source tolerance
/// of 100 % or more is read as 99 % (the bound stays finite, and very wide).
pub fn inherited(t: &[f64], gmean: bool) -> f64 {
    let w = if gmean && !t.is_empty() { 1.0 / t.len() as f64 } else { 1.0 };
    let shrink: f64 = t.iter().map(|ti| (1.0 - ti.min(0.99)).powf(w)).product();
    1.0 / shrink - 1.0
}

/// One number from a paper.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PaperRow {
    pub paper: String,
    pub table: String,
    pub row: String,
    pub metric: String,
    pub value: f64,
    pub unit: String,
    pub tag: Tag,
    /// The row's [`Kind`] (named `role` in the JSON report and the Python API).
    pub role: Kind,
    /// Relative tolerance; for a derived row, the one inherited from its sources.
    pub tolerance: f64,
    /// Sources of a derived row (empty otherwise).
    pub derivation: Derivation,
    pub note: String,
}

impl PaperRow {
    /// `table/row/metric`, the key reproductions match on.
    pub fn key(&self) -> (&str, &str, &str) {
        (&self.table, &self.row, &self.metric)
    }
}

/// Split one CSV line (RFC 4180 quoting, no embedded newlines).
fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            ('"', true) => quoted = false,
            ('"', false) if cur.is_empty() => quoted = true,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    if quoted {
        return Err("unterminated quote".into());
    }
    out.push(cur);
    Ok(out)
}

/// Load and validate one CSV.
pub fn load_csv(path: &Path, paper: &str) -> Result<Vec<PaperRow>, ReproError> {
    let text = crate::data::read_to_string(path)?;
    let err =
        |line: usize, message: String| ReproError::PaperData { path: path.into(), line, message };
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim_end() == HEADER => {}
        _ => return Err(err(1, format!("header must be exactly `{HEADER}`"))),
    }
    let mut rows: Vec<PaperRow> = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let f = split_csv(line).map_err(|m| err(n, m))?;
        if f.len() != 10 {
            return Err(err(n, format!("expected 10 fields, found {}", f.len())));
        }
        let value: f64 =
            f[3].parse().map_err(|_| err(n, format!("value `{}` is not a number", f[3])))?;
        if !value.is_finite() {
            return Err(err(n, "value must be finite".into()));
        }
        let tag = match f[5].as_str() {
            "P" => Tag::P,
            "D" => Tag::D,
            "X" => Tag::X,
            "GAP" => Tag::Gap,
            t => return Err(err(n, format!("unknown tag `{t}` (P, D, X or GAP)"))),
        };
        let role = Kind::parse(&f[6]).ok_or_else(|| {
            err(
                n,
                format!(
                    "unknown kind `{}` (target, validation, calibration, bookkeeping, derived \
                     or baseline)",
                    f[6]
                ),
            )
        })?;
        let derived = role == Kind::Derived;
        let tolerance: f64 = if derived {
            if f[7] != "inherit" {
                return Err(err(n, "a derived row's tolerance must be `inherit`".into()));
            }
            f64::NAN // resolved from its sources by `load_paper`, at least `printed`
        } else {
            f[7].parse()
                .ok()
                .filter(|t: &f64| t.is_finite() && *t >= 0.0)
                .ok_or_else(|| err(n, format!("tolerance `{}` must be a number >= 0", f[7])))?
        };
        let (gmean, list) = match f[8].strip_prefix("gmean:") {
            Some(rest) => (true, rest),
            None => (false, f[8].as_str()),
        };
        let from: Vec<String> =
            list.split(';').map(str::trim).filter(|k| !k.is_empty()).map(String::from).collect();
        if derived == from.is_empty() {
            return Err(err(
                n,
                if derived {
                    "a derived row must name its sources in `from`".into()
                } else {
                    format!("only a derived row has sources, this one is `{}`", f[6])
                },
            ));
        }
        if tag == Tag::D && f[9].trim().is_empty() {
            return Err(err(n, "a derived (D) row must show its arithmetic in `note`".into()));
        }
        if f[0].is_empty() || f[1].is_empty() || f[2].is_empty() {
            return Err(err(n, "table, row and metric must be non-empty".into()));
        }
        let row = PaperRow {
            paper: paper.into(),
            table: f[0].clone(),
            row: f[1].clone(),
            metric: f[2].clone(),
            value,
            unit: f[4].clone(),
            tag,
            role,
            tolerance,
            derivation: Derivation { from, gmean, printed: printed_rounding(&f[3], value) },
            note: f[9].clone(),
        };
        if rows.iter().any(|r| r.key() == row.key()) {
            return Err(err(n, format!("duplicate row {:?}", row.key())));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Where a paper contradicts itself (or is silent where a model needs a number), and the
/// reading the simulator follows: `data/papers/<paper>/readings.toml`, printed by the report.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reading {
    #[serde(default, skip_deserializing)]
    pub paper: String,
    /// What the paper says in two places (or does not say).
    pub issue: String,
    /// The reading the models and the reproduction follow.
    pub follows: String,
    /// The CSV rows it affects, as `table/row/metric` (checked against the CSVs).
    #[serde(default)]
    pub rows: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadingsFile {
    reading: Vec<Reading>,
}

/// The readings of one paper, each row key checked against `rows` (the paper's CSV rows).
///
/// # Errors
/// A missing or malformed `readings.toml`, or a row key no CSV has.
pub fn load_readings(
    data_dir: &Path,
    paper: &str,
    rows: &[PaperRow],
) -> Result<Vec<Reading>, ReproError> {
    let path = data_dir.join("papers").join(paper).join("readings.toml");
    let text = crate::data::read_to_string(&path)?;
    let bad = |message: String| ReproError::PaperData { path: path.clone(), line: 0, message };
    let file: ReadingsFile = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let mut out = file.reading;
    for r in &mut out {
        r.paper = paper.into();
        for key in &r.rows {
            let known = rows.iter().any(|row| key_string(row).eq_ignore_ascii_case(key));
            if !known {
                return Err(bad(format!("reading names row `{key}`, which no CSV has")));
            }
        }
    }
    Ok(out)
}

/// Every CSV of one paper (sorted by file name), after checking SOURCE.md exists.
pub fn load_paper(data_dir: &Path, paper: &str) -> Result<Vec<PaperRow>, ReproError> {
    if !PAPERS.contains(&paper) {
        return Err(ReproError::UnknownPaper(paper.into()));
    }
    let dir = data_dir.join("papers").join(paper);
    let source = dir.join("SOURCE.md");
    if !crate::data::is_file(&source) {
        return Err(ReproError::PaperData {
            path: source,
            line: 0,
            message: "every paper directory needs a SOURCE.md".into(),
        });
    }
    let files: Vec<PathBuf> = crate::data::list_dir(&dir)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    let mut rows = Vec::new();
    for f in files {
        rows.extend(load_csv(&f, paper)?);
    }
    resolve_derived(&mut rows, &dir)?;
    Ok(rows)
}

/// `table/row/metric` of a row, the form `from`, readings and machine `fitted` lists use.
pub fn key_string(r: &PaperRow) -> String {
    format!("{}/{}/{}", r.table, r.row, r.metric)
}

/// Give every derived row the tolerance its sources imply ([`inherited`]), sources first; a
/// source that is not a row of the paper, or a cycle, is an error naming the row.
fn resolve_derived(rows: &mut [PaperRow], dir: &Path) -> Result<(), ReproError> {
    let bad = |message: String| ReproError::PaperData { path: dir.into(), line: 0, message };
    let keys: Vec<String> = rows.iter().map(key_string).collect();
    let mut idx: Vec<Vec<usize>> = Vec::with_capacity(rows.len());
    for (r, k) in rows.iter().zip(&keys) {
        let mut v = Vec::new();
        for s in &r.derivation.from {
            let i = keys.iter().position(|x| x == s).ok_or_else(|| {
                bad(format!("derived row `{k}` names source `{s}`, which no CSV has"))
            })?;
            v.push(i);
        }
        idx.push(v);
    }
    for _ in 0..rows.len() {
        let mut pending = false;
        for i in 0..rows.len() {
            if !rows[i].tolerance.is_nan() {
                continue;
            }
            let t: Vec<f64> = idx[i].iter().map(|&j| rows[j].tolerance).collect();
            if t.iter().any(|x| x.is_nan()) {
                pending = true;
                continue;
            }
            let d = &rows[i].derivation;
            rows[i].tolerance = inherited(&t, d.gmean).max(d.printed);
        }
        if !pending {
            return Ok(());
        }
    }
    let k = rows.iter().position(|r| r.tolerance.is_nan()).map(|i| keys[i].clone());
    Err(bad(format!("derived rows form a cycle (at `{}`)", k.unwrap_or_default())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str, body: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("basalt-repro-papers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p
    }

    #[test]
    fn a_reading_of_an_unknown_row_is_an_error() {
        let data =
            std::env::temp_dir().join(format!("basalt-repro-readings-{}", std::process::id()));
        let dir = data.join("papers").join("fab");
        std::fs::create_dir_all(&dir).unwrap();
        let body = "[[reading]]\nissue = \"a\"\nfollows = \"b\"\nrows = [\"9/x/y\"]\n";
        std::fs::write(dir.join("readings.toml"), body).unwrap();
        let e = load_readings(&data, "fab", &[]).unwrap_err().to_string();
        assert!(e.contains("9/x/y"), "{e}");
        std::fs::write(dir.join("readings.toml"), "[[reading]]\nissue = \"a\"\n").unwrap();
        assert!(load_readings(&data, "fab", &[]).is_err(), "`follows` is required");
    }

    #[test]
    fn quoted_fields_with_commas() {
        let f = split_csv(r#"a,"b, c","say ""hi""",d"#).unwrap();
        assert_eq!(f, vec!["a", "b, c", r#"say "hi""#, "d"]);
    }

    #[test]
    fn unknown_tag_and_kind_are_errors() {
        let p = tmp("tag.csv", &format!("{HEADER}\nT,r,m,1,x,Q,target,0,,\n"));
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("unknown tag `Q`"));
        let p = tmp("role.csv", &format!("{HEADER}\nT,r,m,1,x,P,tuned,0,,\n"));
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("unknown kind `tuned`"));
        let p = tmp("d.csv", &format!("{HEADER}\nT,r,m,1,x,D,target,0,,\n"));
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("arithmetic"));
        let p = tmp("hdr.csv", "table,row,value\n");
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("header"));
        let p = tmp("inh.csv", &format!("{HEADER}\nT,r,m,1,x,P,derived,0.1,T/a/b,\n"));
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("inherit"));
        let p = tmp("src.csv", &format!("{HEADER}\nT,r,m,1,x,P,derived,inherit,,\n"));
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("sources"));
        let p = tmp("src2.csv", &format!("{HEADER}\nT,r,m,1,x,P,target,0.1,T/a/b,\n"));
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("only a derived row"));
    }

    #[test]
    fn derived_rows_inherit_their_sources_tolerance() {
        // 1/x of a ±20 % row: 1/0.8 − 1 = 25 %; a quotient of two ±20 % rows: 1/0.64 − 1.
        assert!((inherited(&[0.2], false) - 0.25).abs() < 1e-12);
        assert!((inherited(&[0.2, 0.2], false) - 0.5625).abs() < 1e-12);
        // A gmean of rows each within ±t is within the gmean's bound of ±t.
        assert!((inherited(&[0.2; 4], true) - 0.25).abs() < 1e-12);
        assert_eq!(inherited(&[0.0, 0.0], false), 0.0, "exact inputs derive exactly");
        assert!((printed_rounding("1.53", 1.53) - 0.005 / 1.53).abs() < 1e-15);
        assert!((printed_rounding("37", 37.0) - 0.5 / 37.0).abs() < 1e-15);
        let dir = std::env::temp_dir().join(format!("basalt-sim-derived-{}", std::process::id()));
        let body = format!(
            "{HEADER}\nT,a,t,1,x,P,target,0.2,,\nT,b,t,1,x,P,baseline,0,,\n\
             T,a,s,1.000,x,P,derived,inherit,T/b/t; T/a/t,\n\
             T,g,s,1.000,x,P,derived,inherit,gmean: T/a/s,\n"
        );
        let p = tmp("derived.csv", &body);
        let mut rows = load_csv(&p, "t").unwrap();
        resolve_derived(&mut rows, &dir).unwrap();
        assert!((rows[2].tolerance - 0.25).abs() < 1e-12);
        // A gmean of one derived row: its ±25 % read again as a worst case, 1/0.75 − 1.
        assert!((rows[3].tolerance - 1.0 / 3.0).abs() < 1e-12, "gmean of one row");
        let body = format!("{HEADER}\nT,a,s,1,x,P,derived,inherit,T/z/z,\n");
        let mut rows = load_csv(&tmp("dangling.csv", &body), "t").unwrap();
        let e = resolve_derived(&mut rows, &dir).unwrap_err().to_string();
        assert!(e.contains("T/z/z"), "{e}");
        let body = format!(
            "{HEADER}\nT,a,s,1,x,P,derived,inherit,T/b/s,\nT,b,s,1,x,P,derived,inherit,T/a/s,\n"
        );
        let mut rows = load_csv(&tmp("cycle.csv", &body), "t").unwrap();
        assert!(resolve_derived(&mut rows, &dir).unwrap_err().to_string().contains("cycle"));
    }

    #[test]
    fn every_paper_csv_loads() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
        for p in PAPERS {
            let rows = load_paper(&data, p).unwrap();
            assert!(rows.len() >= 10, "{p}: only {} rows", rows.len());
            assert!(rows.iter().all(|r| r.tolerance.is_finite()), "{p}: unresolved tolerance");
            let readings = load_readings(&data, p, &rows).unwrap();
            assert!(readings.len() >= 3, "{p}: {} readings", readings.len());
        }
        // The held-out tables are validation (or derived from validation rows, or baselines):
        // nothing was tuned on them; no other table holds validation rows.
        for (paper, tables) in [
            ("osiris", &["III(b)"][..]),
            ("craterlake", &["4", "5", "11"][..]),
            ("strix", &["VII"][..]),
            ("fab", &[][..]),
            ("mxv", &[][..]),
        ] {
            for r in load_paper(&data, paper).unwrap() {
                let held_out = tables.contains(&r.table.as_str());
                if held_out {
                    assert!(
                        matches!(r.role, Kind::Validation | Kind::Derived),
                        "{paper} {:?}",
                        r.key()
                    );
                } else {
                    assert_ne!(r.role, Kind::Validation, "{paper} {:?}", r.key());
                }
            }
        }
    }
}
