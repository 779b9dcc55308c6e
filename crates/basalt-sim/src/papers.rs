//! Paper data: `data/papers/<paper>/SOURCE.md` plus one CSV per table, one number per row, with
//! columns `table,row,metric,value,unit,tag,role,tolerance,note` (STYLE.md §6).
//!
//! * tag — `P` stated, `D` derived (arithmetic in the note), `X` ambiguous, `GAP` missing (our
//!   choice);
//! * role — `target` (may be used to fit a constant, which must then name the row) or
//!   `validation` (never tuned on);
//! * tolerance — relative, e.g. `0.01` for ±1 %; absolute when the paper's value is 0.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::SimError;

/// The five reproduced papers, in the order reports list them.
pub const PAPERS: [&str; 5] = ["osiris", "fab", "mxv", "craterlake", "strix"];

/// The exact CSV header.
pub const HEADER: &str = "table,row,metric,value,unit,tag,role,tolerance,note";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Tag {
    P,
    D,
    X,
    #[serde(rename = "GAP")]
    Gap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Target,
    Validation,
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
    pub role: Role,
    pub tolerance: f64,
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
pub fn load_csv(path: &Path, paper: &str) -> Result<Vec<PaperRow>, SimError> {
    let text = crate::source::read_to_string(path)?;
    let err =
        |line: usize, message: String| SimError::PaperData { path: path.into(), line, message };
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
        if f.len() != 9 {
            return Err(err(n, format!("expected 9 fields, found {}", f.len())));
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
        let role = match f[6].as_str() {
            "target" => Role::Target,
            "validation" => Role::Validation,
            r => return Err(err(n, format!("unknown role `{r}` (target or validation)"))),
        };
        let tolerance: f64 = f[7]
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| err(n, format!("tolerance `{}` must be a number >= 0", f[7])))?;
        if tag == Tag::D && f[8].trim().is_empty() {
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
            note: f[8].clone(),
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
) -> Result<Vec<Reading>, SimError> {
    let path = data_dir.join("papers").join(paper).join("readings.toml");
    let text = crate::source::read_to_string(&path)?;
    let bad = |message: String| SimError::PaperData { path: path.clone(), line: 0, message };
    let file: ReadingsFile = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let mut out = file.reading;
    for r in &mut out {
        r.paper = paper.into();
        for key in &r.rows {
            let known = rows.iter().any(|row| {
                format!("{}/{}/{}", row.table, row.row, row.metric).eq_ignore_ascii_case(key)
            });
            if !known {
                return Err(bad(format!("reading names row `{key}`, which no CSV has")));
            }
        }
    }
    Ok(out)
}

/// Every CSV of one paper (sorted by file name), after checking SOURCE.md exists.
pub fn load_paper(data_dir: &Path, paper: &str) -> Result<Vec<PaperRow>, SimError> {
    if !PAPERS.contains(&paper) {
        return Err(SimError::UnknownPaper(paper.into()));
    }
    let dir = data_dir.join("papers").join(paper);
    let source = dir.join("SOURCE.md");
    if !crate::source::is_file(&source) {
        return Err(SimError::PaperData {
            path: source,
            line: 0,
            message: "every paper directory needs a SOURCE.md".into(),
        });
    }
    let files: Vec<PathBuf> = crate::source::list_dir(&dir)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    let mut rows = Vec::new();
    for f in files {
        rows.extend(load_csv(&f, paper)?);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str, body: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("basalt-sim-papers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p
    }

    #[test]
    fn a_reading_of_an_unknown_row_is_an_error() {
        let data = std::env::temp_dir().join(format!("basalt-sim-readings-{}", std::process::id()));
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
    fn unknown_tag_and_role_are_errors() {
        let p = tmp("tag.csv", &format!("{HEADER}\nT,r,m,1,x,Q,target,0,\n"));
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("unknown tag `Q`"));
        let p = tmp("role.csv", &format!("{HEADER}\nT,r,m,1,x,P,tuned,0,\n"));
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("unknown role `tuned`"));
        let p = tmp("d.csv", &format!("{HEADER}\nT,r,m,1,x,D,target,0,\n"));
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("arithmetic"));
        let p = tmp("hdr.csv", "table,row,value\n");
        assert!(load_csv(&p, "t").unwrap_err().to_string().contains("header"));
    }

    #[test]
    fn every_paper_csv_loads() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
        for p in PAPERS {
            let rows = load_paper(&data, p).unwrap();
            assert!(rows.len() >= 10, "{p}: only {} rows", rows.len());
            let readings = load_readings(&data, p, &rows).unwrap();
            assert!(readings.len() >= 3, "{p}: {} readings", readings.len());
        }
        // The held-out rows the brief names, and nothing else, are validation; CraterLake's
        // Fig. 11 prose figures (added in session 7) are held out too: nothing was tuned on them.
        for (paper, tables) in [
            ("osiris", &["III(b)"][..]),
            ("craterlake", &["4", "5", "11"][..]),
            ("strix", &["VII"][..]),
            ("fab", &[][..]),
            ("mxv", &[][..]),
        ] {
            for r in load_paper(&data, paper).unwrap() {
                let held_out = tables.contains(&r.table.as_str());
                let want = if held_out { Role::Validation } else { Role::Target };
                assert_eq!(r.role, want, "{paper} {:?}", r.key());
            }
        }
    }
}
