//! "Ours vs theirs" for every paper row: the model computes a figure, the CSV holds the paper's
//! value, the report divides. Rows are grouped by [`Kind`]: the headline counts only the
//! independent ones (target and validation); calibration, bookkeeping and derived rows are
//! judged and listed apart, baselines (other systems' figures) are never modelled. Rows no
//! model computes yet are listed as such rather than faked.
//!
//! Each paper has a module whose `compute` returns the rows it can model, each with a one-line
//! account of *how* (which trace, which machine, which override). Every machine-file constant
//! fitted to a row names it (`[[fitted]]`), and [`check_fits`] holds the CSVs to it: a row a
//! constant was fitted to is a calibration row, and a calibration row names its constant.

mod craterlake;
mod craterlake_logreg;
mod craterlake_resnet;
mod craterlake_security;
mod fab;
mod gmean;
mod inference;
mod lola;
mod lstm;
mod markdown;
mod mnist;
mod mxv;
mod osiris;
mod osiris_resnet;
mod sort;
mod strix;
mod strix_gpu;

use std::fmt;
use std::path::Path;

use serde::Serialize;

use basalt_sim::machine::Machine;
use basalt_trace::Trace;

use crate::ReproError;
use crate::papers::{self, KINDS, Kind, PAPERS, PaperRow, Reading, Tag};
use crate::program::{ClosedForm, Program, TraceSource, Workload};

/// Traces for the reproductions, with their provenance.
pub(crate) struct Traces<'a> {
    src: &'a dyn TraceSource,
}

impl Traces<'_> {
    /// The trace for `w` and a provenance tag (`library trace` or `closed form`).
    pub(crate) fn get(&self, w: &Workload) -> (Trace, &'static str) {
        match self.src.trace(w) {
            Some(t) => (t, "library trace"),
            None => (w.closed_form(), "closed form"),
        }
    }

    /// The library's trace of `p`, or `None` when the source records no programs (then the
    /// rows that need it stay "not yet modelled": there is no closed form to fall back to).
    pub(crate) fn program(&self, p: &Program) -> Result<Option<Trace>, ReproError> {
        self.src
            .program(p)
            .map_err(|message| ReproError::TraceSource { program: format!("{p:?}"), message })
    }
}

/// A figure the model computed for one paper row.
#[derive(Clone, Debug, PartialEq)]
pub struct Computed {
    pub table: String,
    pub row: String,
    pub metric: String,
    pub value: f64,
    pub how: String,
    /// Only an input to a summary row (`gmean::summaries`): the paper gives no number for it,
    /// so it is dropped before the report.
    pub constituent: bool,
}

pub(crate) fn computed(table: &str, row: &str, metric: &str, value: f64, how: &str) -> Computed {
    Computed {
        table: table.into(),
        row: row.into(),
        metric: metric.into(),
        value,
        how: how.into(),
        constituent: false,
    }
}

/// A [`Computed`] figure that only feeds a summary row.
pub(crate) fn constituent(table: &str, row: &str, metric: &str, value: f64, how: &str) -> Computed {
    Computed { constituent: true, ..computed(table, row, metric, value, how) }
}

/// One paper row with our figure, if any.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReproRow {
    pub paper: String,
    pub table: String,
    pub row: String,
    pub metric: String,
    pub unit: String,
    pub tag: Tag,
    /// The row's kind (`kind` in JSON): only target and validation rows are evidence.
    #[serde(rename = "kind")]
    pub role: Kind,
    pub theirs: f64,
    pub ours: Option<f64>,
    /// ours / theirs.
    pub ratio: Option<f64>,
    /// Relative tolerance; a derived row's is inherited from its sources.
    pub tolerance: f64,
    /// A derived row's sources (`table/row/metric`), empty otherwise.
    pub from: Vec<String>,
    /// |ratio − 1| ≤ tolerance (with a 1e-9 slack for exact counts); |ours| ≤ tolerance when
    /// the paper's value is 0.
    pub within: Option<bool>,
    /// How the figure was computed, or why it is not (yet).
    pub how: String,
}

/// All rows of the requested papers, and the readings followed where a paper contradicts
/// itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReproReport {
    pub rows: Vec<ReproRow>,
    pub readings: Vec<Reading>,
}

impl ReproReport {
    /// A row by key.
    pub fn get(&self, paper: &str, table: &str, row: &str, metric: &str) -> Option<&ReproRow> {
        self.rows
            .iter()
            .find(|r| r.paper == paper && r.table == table && r.row == row && r.metric == metric)
    }

    /// Modelled rows outside their tolerance.
    pub fn misses(&self) -> impl Iterator<Item = &ReproRow> {
        self.rows.iter().filter(|r| r.within == Some(false))
    }

    /// The headline: independent (target and validation) rows, modelled, within tolerance.
    pub fn headline(&self) -> (usize, usize, usize) {
        counts(self.rows.iter().filter(|r| r.role.independent()))
    }
}

/// The fitted constants of every machine file under `data_dir/machines` (and `gpu/`), as
/// `(file, paper, field, row key)`. Read as plain TOML so that a fit is found whatever else
/// the file holds.
fn fits(data_dir: &Path) -> Result<Vec<(String, String, String, String)>, ReproError> {
    let mut out = Vec::new();
    for dir in [data_dir.join("machines"), data_dir.join("machines").join("gpu")] {
        // Built-in machines or a folder on disk (`--data`, `BASALT_DATA`).
        let Ok(entries) = crate::data::list_dir(&dir) else { continue };
        let files: Vec<_> =
            entries.into_iter().filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
        for path in files {
            let text = crate::data::read_to_string(&path)?;
            let v: toml::Table = toml::from_str(&text)
                .map_err(|e| ReproError::Parse { path: path.clone(), message: e.to_string() })?;
            let Some(list) = v.get("fitted").and_then(|f| f.as_array()) else { continue };
            let bad = |message: String| ReproError::Parse { path: path.clone(), message };
            let paper = v.get("paper").and_then(|p| p.as_str()).ok_or_else(|| {
                bad("a file with `[[fitted]]` constants must name its `paper`".into())
            })?;
            for f in list {
                let field = f.get("field").and_then(|x| x.as_str()).unwrap_or("?");
                let rows = f.get("rows").and_then(|x| x.as_array()).ok_or_else(|| {
                    bad(format!("fitted `{field}` must list the `rows` it was fitted to"))
                })?;
                for r in rows {
                    let key = r.as_str().ok_or_else(|| bad("fitted rows are strings".into()))?;
                    out.push((
                        path.display().to_string(),
                        paper.to_string(),
                        field.to_string(),
                        key.to_string(),
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// Every row a machine constant was fitted to is a calibration row of its paper, and every
/// calibration row names the constant fitted to it.
///
/// # Errors
/// A fit naming an unknown or non-calibration row; a calibration row no fit names.
pub fn check_fits(data_dir: &Path, paper: &str, rows: &[PaperRow]) -> Result<(), ReproError> {
    let fits: Vec<_> = fits(data_dir)?.into_iter().filter(|f| f.1 == paper).collect();
    let bad = |message: String| ReproError::PaperData {
        path: Path::new("data/papers").join(paper),
        line: 0,
        message,
    };
    for (file, _, field, key) in &fits {
        match rows.iter().find(|r| papers::key_string(r) == *key) {
            None => {
                return Err(bad(format!("{file}: `{field}` names row `{key}`, which no CSV has")));
            }
            Some(r) if r.role != Kind::Calibration => {
                return Err(bad(format!(
                    "{file}: `{field}` was fitted to row `{key}`, so that row's kind must be \
                     calibration (it is {})",
                    r.role.name()
                )));
            }
            Some(_) => {}
        }
    }
    for r in rows.iter().filter(|r| r.role == Kind::Calibration) {
        let key = papers::key_string(r);
        if !fits.iter().any(|f| f.3 == key) {
            return Err(bad(format!(
                "calibration row `{key}` is named by no machine file's `[[fitted]]` constant"
            )));
        }
    }
    Ok(())
}

/// Load a machine file from `data_dir/machines/<name>.toml`.
pub(crate) fn machine(data_dir: &Path, name: &str) -> Result<Machine, ReproError> {
    Ok(Machine::load(data_dir.join("machines").join(format!("{name}.toml")))?)
}

/// Reproduce one paper (`Some("strix")`) or all of them, against `data_dir` (the repository's
/// `data/` directory).
///
/// # Errors
/// Paper data or machine files that fail to load or validate; a model that computes a row the
/// CSVs do not have (a typo in a key).
pub fn reproduce(paper: Option<&str>, data_dir: &Path) -> Result<ReproReport, ReproError> {
    reproduce_with(paper, data_dir, &ClosedForm)
}

/// [`reproduce`] with traces from `src` where it has them (e.g. recorded by the libraries),
/// falling back to the closed-form generators; each row's `how` says which was used.
pub fn reproduce_with(
    paper: Option<&str>,
    data_dir: &Path,
    src: &dyn TraceSource,
) -> Result<ReproReport, ReproError> {
    let traces = Traces { src };
    let list: Vec<&str> = match paper {
        Some(p) if PAPERS.contains(&p) => vec![p],
        Some(p) => return Err(ReproError::UnknownPaper(p.into())),
        None => PAPERS.to_vec(),
    };
    let mut out = ReproReport::default();
    for p in list {
        let rows = papers::load_paper(data_dir, p)?;
        let mut comp = match p {
            "osiris" => osiris::compute(data_dir, &traces)?,
            "fab" => fab::compute(data_dir, &traces)?,
            "mxv" => mxv::compute(data_dir, &traces)?,
            "craterlake" => craterlake::compute(data_dir, &traces)?,
            "strix" => {
                let mut rows = strix::compute(data_dir)?;
                rows.extend(strix_gpu::compute(data_dir)?);
                rows
            }
            _ => unreachable!("checked against PAPERS"),
        };
        comp.extend(mnist::compute(p, data_dir, &traces)?);
        comp.extend(craterlake_resnet::compute(p, data_dir, &traces)?);
        comp.extend(osiris_resnet::compute(p, data_dir, &traces)?);
        comp.extend(sort::compute(p, data_dir, &traces)?);
        comp.extend(lstm::compute(p, data_dir, &traces)?);
        comp.extend(lola::compute(p, data_dir, &traces)?);
        comp.extend(craterlake_logreg::compute(p, data_dir, &traces)?);
        let summaries = gmean::summaries(p, &comp);
        comp.extend(summaries);
        comp.retain(|c| !c.constituent);
        check_fits(data_dir, p, &rows)?;
        out.readings.extend(papers::load_readings(data_dir, p, &rows)?);
        out.rows.extend(join(p, &rows, comp)?);
    }
    Ok(out)
}

fn join(paper: &str, rows: &[PaperRow], comp: Vec<Computed>) -> Result<Vec<ReproRow>, ReproError> {
    for (i, c) in comp.iter().enumerate() {
        let key = (&*c.table, &*c.row, &*c.metric);
        if comp[..i].iter().any(|d| (&*d.table, &*d.row, &*d.metric) == key) {
            return Err(ReproError::PaperData {
                path: Path::new("data/papers").join(paper),
                line: 0,
                message: format!("two models computed ({}, {}, {})", c.table, c.row, c.metric),
            });
        }
        if rows
            .iter()
            .any(|r| r.key() == (&*c.table, &*c.row, &*c.metric) && r.role == Kind::Baseline)
        {
            return Err(ReproError::PaperData {
                path: Path::new("data/papers").join(paper),
                line: 0,
                message: format!(
                    "model computed ({}, {}, {}), another system's quoted figure (a baseline)",
                    c.table, c.row, c.metric
                ),
            });
        }
        if !rows.iter().any(|r| r.key() == (&*c.table, &*c.row, &*c.metric)) {
            return Err(ReproError::PaperData {
                path: Path::new("data/papers").join(paper),
                line: 0,
                message: format!(
                    "model computed ({}, {}, {}) but no CSV row has that key",
                    c.table, c.row, c.metric
                ),
            });
        }
    }
    Ok(rows
        .iter()
        .map(|r| {
            let c = comp.iter().find(|c| r.key() == (&*c.table, &*c.row, &*c.metric));
            let ours = c.map(|c| c.value);
            // A zero paper value has no ratio; its tolerance is absolute.
            let ratio = ours.filter(|_| r.value != 0.0).map(|o| o / r.value);
            let within = match (ours, ratio) {
                (Some(o), None) => Some(o.abs() <= r.tolerance + 1e-9),
                (_, Some(q)) => Some((q - 1.0).abs() <= r.tolerance + 1e-9),
                _ => None,
            };
            ReproRow {
                paper: paper.into(),
                table: r.table.clone(),
                row: r.row.clone(),
                metric: r.metric.clone(),
                unit: r.unit.clone(),
                tag: r.tag,
                role: r.role,
                theirs: r.value,
                ours,
                ratio,
                tolerance: r.tolerance,
                from: r.derivation.from.clone(),
                within,
                how: c.map_or_else(|| "not yet modelled".into(), |c| c.how.clone()),
            }
        })
        .collect())
}

/// Rows, modelled rows and rows within tolerance among `rows`.
fn counts<'a>(rows: impl Iterator<Item = &'a ReproRow>) -> (usize, usize, usize) {
    let (mut all, mut modelled, mut within) = (0, 0, 0);
    for r in rows {
        all += 1;
        modelled += usize::from(r.ours.is_some());
        within += usize::from(r.within == Some(true));
    }
    (all, modelled, within)
}

fn num(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e6 || v.abs() < 1e-3) {
        format!("{v:.4e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

impl fmt::Display for ReproReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in PAPERS {
            let rows: Vec<&ReproRow> = self.rows.iter().filter(|r| r.paper == p).collect();
            if rows.is_empty() {
                continue;
            }
            writeln!(f, "== {p}")?;
            for kind in KINDS {
                let (done, todo): (Vec<&&ReproRow>, Vec<&&ReproRow>) =
                    rows.iter().filter(|r| r.role == kind).partition(|r| r.ours.is_some());
                if done.is_empty() && todo.is_empty() {
                    continue;
                }
                if kind == Kind::Baseline {
                    writeln!(f, "-- baseline rows (other systems' figures): {}", todo.len())?;
                    continue;
                }
                writeln!(
                    f,
                    "-- {} rows: {} modelled, {} not yet",
                    kind.name(),
                    done.len(),
                    todo.len()
                )?;
                if !done.is_empty() {
                    writeln!(
                        f,
                        "{:<6} {:<26} {:<26} {:>12} {:>12} {:>8} {:>6} {:>6}  how",
                        "table", "row", "metric", "theirs", "ours", "ratio", "±", "ok"
                    )?;
                }
                for r in &done {
                    let ok = match r.within {
                        Some(true) => "yes",
                        Some(false) => "NO",
                        None => "-",
                    };
                    writeln!(
                        f,
                        "{:<6} {:<26} {:<26} {:>12} {:>12} {:>8} {:>6.3} {:>6}  {}",
                        r.table,
                        r.row,
                        r.metric,
                        num(r.theirs),
                        num(r.ours.unwrap_or(f64::NAN)),
                        r.ratio.map_or("-".to_string(), |q| format!("{q:.4}")),
                        r.tolerance,
                        ok,
                        r.how
                    )?;
                }
                if !todo.is_empty() {
                    let keys: Vec<String> = todo
                        .iter()
                        .map(|r| format!("{}/{}/{}", r.table, r.row, r.metric))
                        .collect();
                    writeln!(f, "   not yet modelled: {}", keys.join("; "))?;
                }
            }
            let readings: Vec<&Reading> = self.readings.iter().filter(|r| r.paper == p).collect();
            if !readings.is_empty() {
                writeln!(
                    f,
                    "-- Where the paper contradicts itself or is silent, the model follows:"
                )?;
            }
            for (i, r) in readings.iter().enumerate() {
                writeln!(f, "{:>3}. {}\n     -> {}", i + 1, r.issue, r.follows)?;
            }
        }
        if PAPERS.iter().filter(|p| self.rows.iter().any(|r| r.paper == **p)).count() > 1 {
            let (all, modelled, within) = self.headline();
            writeln!(
                f,
                "== all papers: {all} independent rows (target and validation), {modelled} \
                 modelled, {within} within tolerance; {} rows of other kinds listed apart",
                self.rows.len() - all
            )?;
        }
        Ok(())
    }
}
