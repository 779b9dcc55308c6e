//! The papers' data (`data/papers/<paper>/`): built into this crate under the simulator's
//! virtual folder ([`basalt_sim::source::builtin_dir`]), so `basalt sim reproduce` runs the
//! same from a checkout, an installed wheel or any working directory. A data folder on disk
//! (`--data`, `$BASALT_DATA`) is read from disk. Everything outside `papers/` (the machine
//! files) is the simulator's ([`basalt_sim::source`]).

use std::path::{Path, PathBuf};

use basalt_sim::SimError;
use basalt_sim::source::{self, BUILTIN_ROOT};

macro_rules! data_file {
    ($rel:literal) => {
        ($rel, include_str!(concat!("../../../data/", $rel)))
    };
}

/// Every shipped paper file, by its path relative to the data folder.
static FILES: &[(&str, &str)] = &[
    data_file!("papers/craterlake/SOURCE.md"),
    data_file!("papers/craterlake/fig11.csv"),
    data_file!("papers/craterlake/readings.toml"),
    data_file!("papers/craterlake/table1.csv"),
    data_file!("papers/craterlake/table2.csv"),
    data_file!("papers/craterlake/table3.csv"),
    data_file!("papers/craterlake/table4.csv"),
    data_file!("papers/craterlake/table5.csv"),
    data_file!("papers/fab/SOURCE.md"),
    data_file!("papers/fab/readings.toml"),
    data_file!("papers/fab/table3.csv"),
    data_file!("papers/fab/table4.csv"),
    data_file!("papers/fab/table5.csv"),
    data_file!("papers/fab/table6.csv"),
    data_file!("papers/fab/table7.csv"),
    data_file!("papers/fab/table8.csv"),
    data_file!("papers/mxv/SOURCE.md"),
    data_file!("papers/mxv/fig3.csv"),
    data_file!("papers/mxv/readings.toml"),
    data_file!("papers/mxv/table5.csv"),
    data_file!("papers/mxv/table6.csv"),
    data_file!("papers/mxv/table7.csv"),
    data_file!("papers/osiris/SOURCE.md"),
    data_file!("papers/osiris/fig11.csv"),
    data_file!("papers/osiris/readings.toml"),
    data_file!("papers/osiris/table3a.csv"),
    data_file!("papers/osiris/table3b.csv"),
    data_file!("papers/osiris/table4.csv"),
    data_file!("papers/osiris/table5.csv"),
    data_file!("papers/strix/SOURCE.md"),
    data_file!("papers/strix/fig2.csv"),
    data_file!("papers/strix/readings.toml"),
    data_file!("papers/strix/table3.csv"),
    data_file!("papers/strix/table5.csv"),
    data_file!("papers/strix/table6.csv"),
    data_file!("papers/strix/table7.csv"),
];

/// The path of `path` relative to the built-in folder, if it lies below `papers/` there.
fn paper_rel(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(BUILTIN_ROOT).ok()?;
    let parts: Vec<&str> = rel.iter().map(|c| c.to_str()).collect::<Option<_>>()?;
    let rel = parts.join("/");
    (rel == "papers" || rel.starts_with("papers/")).then_some(rel)
}

/// The embedded text of a built-in paper file (`papers/strix/table5.csv`).
pub fn builtin_file(rel: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == rel).map(|(_, t)| *t)
}

/// Whether `path` names a file (built-in or on disk).
pub fn is_file(path: &Path) -> bool {
    match paper_rel(path) {
        Some(rel) => builtin_file(&rel).is_some(),
        None => source::is_file(path),
    }
}

/// Whether `path` names a file or a folder (built-in or on disk).
pub fn exists(path: &Path) -> bool {
    match paper_rel(path) {
        Some(rel) => FILES.iter().any(|(p, _)| {
            *p == rel || p.strip_prefix(rel.as_str()).is_some_and(|r| r.starts_with('/'))
        }),
        None => source::exists(path),
    }
}

/// The text of a data file, built-in or on disk.
///
/// # Errors
/// [`SimError::Io`] naming the path.
pub fn read_to_string(path: &Path) -> Result<String, SimError> {
    match paper_rel(path) {
        Some(rel) => builtin_file(&rel).map(str::to_string).ok_or_else(|| SimError::Io {
            path: path.into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such built-in file"),
        }),
        None => source::read_to_string(path),
    }
}

/// The files directly inside a folder, built-in or on disk, sorted.
///
/// # Errors
/// [`SimError::Io`] naming the folder.
pub fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, SimError> {
    match paper_rel(dir) {
        Some(rel) => {
            let prefix = format!("{rel}/");
            let mut out: Vec<PathBuf> = FILES
                .iter()
                .filter_map(|(p, _)| p.strip_prefix(prefix.as_str()))
                .filter(|name| !name.contains('/'))
                .map(|name| dir.join(name))
                .collect();
            out.sort();
            Ok(out)
        }
        None => source::list_dir(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
    }

    /// Every file of the repository's papers folder is built in, byte for byte.
    #[test]
    fn every_shipped_paper_file_is_built_in() {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() { walk(&p, out) } else { out.push(p) }
            }
        }
        let mut files = Vec::new();
        walk(&data().join("papers"), &mut files);
        assert_eq!(files.len(), FILES.len());
        for f in files {
            let rel = f.strip_prefix(data()).unwrap().to_str().unwrap().replace('\\', "/");
            assert_eq!(builtin_file(&rel), Some(std::fs::read_to_string(&f).unwrap().as_str()));
        }
    }

    #[test]
    fn built_in_papers_and_machines_are_listed_side_by_side() {
        let root = source::builtin_dir();
        let papers = list_dir(&root.join("papers/strix")).unwrap();
        assert!(papers.iter().any(|p| p.ends_with("SOURCE.md")), "{papers:?}");
        assert!(exists(&root.join("papers")) && exists(&root.join("machines")));
        assert!(is_file(&root.join("machines/strix.toml")));
        assert!(!is_file(&root.join("papers/strix/nope.csv")));
        let e = read_to_string(&root.join("papers/heax/table1.csv")).unwrap_err().to_string();
        assert!(e.contains("no such built-in file"), "{e}");
    }

    /// The papers' tables reproduce from the built-in copies exactly as from the folder.
    #[test]
    fn reproduction_reads_the_built_in_paper_data() {
        let built = crate::reproduce(Some("strix"), source::builtin_dir()).unwrap();
        let disk = crate::reproduce(Some("strix"), &data()).unwrap();
        assert!(!built.rows.is_empty());
        assert_eq!(serde_json::to_string(&built).unwrap(), serde_json::to_string(&disk).unwrap());
    }
}
