//! Where machine files come from: the copies built into this crate, or user paths.
//!
//! The shipped machine files are compiled in (`include_str!`), so the simulator runs the same
//! from a checkout, an installed wheel or any working directory, and never reads a repository's
//! `data/` at run time (`basalt-repro` builds the papers' tables in the same way, under the
//! same virtual folder). They live under a virtual folder,
//! [`builtin_dir`]: paths below it are served from the embedded copies, every other path from
//! the file system. A user's own machine file (a path) still loads from disk.
//!
//! A machine file may start from another (`extends = "craterlake.toml"`). The base is a plain
//! file name, looked up beside the file and then among the built-in machines (so a user's
//! variant can extend a shipped chip); any other path is refused, so a machine file cannot
//! make the simulator open an arbitrary file. Chains are at most [`MAX_EXTENDS_DEPTH`] deep
//! and a file that reaches itself again is a named error, not a stack overflow.

use std::path::{Path, PathBuf};

use crate::SimError;

/// The name of the virtual folder holding the built-in data (`machines/` here; `basalt-repro`
/// adds `papers/`).
pub const BUILTIN_ROOT: &str = "<built-in>";

/// How many `extends` a machine file may chain (CraterLake's 128K variant uses one).
pub const MAX_EXTENDS_DEPTH: usize = 8;

macro_rules! data_file {
    ($rel:literal) => {
        ($rel, include_str!(concat!("../../../data/", $rel)))
    };
}

/// Every shipped data file, by its path relative to the data folder.
static FILES: &[(&str, &str)] = &[
    data_file!("machines/basalt_cpu.toml"),
    data_file!("machines/cpu.toml"),
    data_file!("machines/craterlake.toml"),
    data_file!("machines/craterlake_128k.toml"),
    data_file!("machines/f1plus.toml"),
    data_file!("machines/fab.toml"),
    data_file!("machines/gpu/titan_rtx_nufhe.toml"),
    data_file!("machines/mxv_u200.toml"),
    data_file!("machines/osiris.toml"),
    data_file!("machines/strix.toml"),
];

/// The virtual data folder of the built-in copies (pass it where a data folder is expected).
pub fn builtin_dir() -> &'static Path {
    Path::new(BUILTIN_ROOT)
}

/// The path of `path` relative to the built-in folder, if it lies below it.
fn builtin_rel(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(BUILTIN_ROOT).ok()?;
    let parts: Vec<&str> = rel.iter().map(|c| c.to_str()).collect::<Option<_>>()?;
    Some(parts.join("/"))
}

/// The embedded text of a built-in file (`machines/craterlake.toml`).
pub fn builtin_file(rel: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == rel).map(|(_, t)| *t)
}

/// The names of the built-in machine files (`craterlake`, `strix`, …), sorted.
pub fn builtin_machines() -> Vec<&'static str> {
    let mut v: Vec<&str> = FILES
        .iter()
        .filter_map(|(p, _)| p.strip_prefix("machines/")?.strip_suffix(".toml"))
        .filter(|n| !n.contains('/'))
        .collect();
    v.sort_unstable();
    v
}

/// The path of a built-in machine by name (`craterlake`), if there is one.
pub fn builtin_machine(name: &str) -> Option<PathBuf> {
    let rel = format!("machines/{name}.toml");
    builtin_file(&rel).map(|_| builtin_dir().join(rel))
}

/// A machine given by the user: an existing file, else a built-in machine's name.
///
/// # Errors
/// [`SimError::Io`] naming the built-in machines.
pub fn resolve_machine(name_or_path: &str) -> Result<PathBuf, SimError> {
    let p = Path::new(name_or_path);
    if p.is_file() || builtin_rel(p).is_some_and(|r| builtin_file(&r).is_some()) {
        return Ok(p.to_path_buf());
    }
    builtin_machine(name_or_path).ok_or_else(|| SimError::Io {
        path: p.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!(
                "no such file, and not a built-in machine (one of {})",
                builtin_machines().join(", ")
            ),
        ),
    })
}

/// Whether `path` names a file (built-in or on disk).
pub fn is_file(path: &Path) -> bool {
    match builtin_rel(path) {
        Some(rel) => builtin_file(&rel).is_some(),
        None => path.is_file(),
    }
}

/// Whether `path` names a file or a folder (built-in or on disk).
pub fn exists(path: &Path) -> bool {
    match builtin_rel(path) {
        Some(rel) if rel.is_empty() => true,
        Some(rel) => FILES.iter().any(|(p, _)| {
            *p == rel || p.strip_prefix(rel.as_str()).is_some_and(|r| r.starts_with('/'))
        }),
        None => path.exists(),
    }
}

/// The text of a data file, built-in or on disk.
///
/// # Errors
/// [`SimError::Io`] naming the path.
pub fn read_to_string(path: &Path) -> Result<String, SimError> {
    match builtin_rel(path) {
        Some(rel) => builtin_file(&rel).map(str::to_string).ok_or_else(|| {
            let hint = if rel.starts_with("machines/") {
                format!("no such built-in machine (one of {})", builtin_machines().join(", "))
            } else {
                "no such built-in file".to_string()
            };
            SimError::Io {
                path: path.into(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, hint),
            }
        }),
        None => std::fs::read_to_string(path)
            .map_err(|source| SimError::Io { path: path.into(), source }),
    }
}

/// The files directly inside a folder, built-in or on disk, sorted.
///
/// # Errors
/// [`SimError::Io`] naming the folder.
pub fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, SimError> {
    let mut out: Vec<PathBuf> = match builtin_rel(dir) {
        Some(rel) => {
            let prefix = if rel.is_empty() { String::new() } else { format!("{rel}/") };
            FILES
                .iter()
                .filter_map(|(p, _)| p.strip_prefix(prefix.as_str()))
                .filter(|name| !name.contains('/'))
                .map(|name| dir.join(name))
                .collect()
        }
        None => std::fs::read_dir(dir)
            .map_err(|source| SimError::Io { path: dir.into(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect(),
    };
    out.sort();
    Ok(out)
}

/// The identity of a file for cycle detection: its canonical path on disk, or its virtual one.
fn identity(path: &Path) -> PathBuf {
    if builtin_rel(path).is_some() {
        path.to_path_buf()
    } else {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Where `extends = base` of the file at `path` points: a plain `.toml` file name beside it,
/// else the built-in machine of that name.
fn extends_target(path: &Path, base: &str) -> Result<PathBuf, String> {
    let plain = !base.is_empty()
        && !base.contains(['/', '\\', ':'])
        && base != "."
        && base != ".."
        && base.ends_with(".toml");
    if !plain {
        return Err(format!(
            "`extends = {base:?}` must be the file name of a machine file beside this one or of              a built-in machine (`craterlake.toml`), not a path"
        ));
    }
    let beside = path.with_file_name(base);
    if is_file(&beside) {
        return Ok(beside);
    }
    let built = builtin_dir().join("machines").join(base);
    if is_file(&built) {
        return Ok(built);
    }
    Err(format!(
        "`extends = {base:?}`: no such file beside this one, and not a built-in machine (one of          {})",
        builtin_machines().join(", ")
    ))
}

/// The TOML of the machine file at `path`, with its `extends` chain resolved (the base first,
/// this file laid over it with `merge`).
///
/// # Errors
/// [`SimError::Io`] / [`SimError::Parse`]; a bad, missing, too deep or cyclic `extends`.
pub(crate) fn read_machine_table(
    path: &Path,
    merge: fn(&mut toml::Table, toml::Table),
) -> Result<toml::Table, SimError> {
    let mut chain: Vec<(PathBuf, toml::Table)> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut cur = path.to_path_buf();
    loop {
        let bad = |message: String| SimError::Parse { path: cur.clone(), message };
        let id = identity(&cur);
        if seen.contains(&id) {
            let names: Vec<String> = chain.iter().map(|(p, _)| p.display().to_string()).collect();
            return Err(SimError::Parse {
                path: path.into(),
                message: format!(
                    "`extends` forms a cycle: {} -> {}",
                    names.join(" -> "),
                    cur.display()
                ),
            });
        }
        if chain.len() > MAX_EXTENDS_DEPTH {
            return Err(SimError::Parse {
                path: path.into(),
                message: format!("`extends` chains more than {MAX_EXTENDS_DEPTH} files"),
            });
        }
        let text = read_to_string(&cur)?;
        let mut root: toml::Table = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let next = match root.remove("extends") {
            None => None,
            Some(toml::Value::String(base)) => Some(extends_target(&cur, &base).map_err(bad)?),
            Some(_) => return Err(bad("`extends` must be a file name".into())),
        };
        seen.push(id);
        chain.push((cur.clone(), root));
        match next {
            Some(n) => cur = n,
            None => break,
        }
    }
    let (_, mut table) = chain.pop().expect("the chain holds at least the file itself");
    while let Some((_, top)) = chain.pop() {
        merge(&mut table, top);
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Machine;

    fn data() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
    }

    /// Every file of the repository's machines folder is built in, byte for byte.
    #[test]
    fn every_shipped_data_file_is_built_in() {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() { walk(&p, out) } else { out.push(p) }
            }
        }
        let mut files = Vec::new();
        walk(&data().join("machines"), &mut files);
        assert_eq!(files.len(), FILES.len());
        for f in files {
            let rel = f.strip_prefix(data()).unwrap().to_str().unwrap().replace('\\', "/");
            assert_eq!(builtin_file(&rel), Some(std::fs::read_to_string(&f).unwrap().as_str()));
        }
    }

    #[test]
    fn built_in_machines_load_by_name() {
        let names = builtin_machines();
        assert!(names.contains(&"craterlake") && names.contains(&"craterlake_128k"), "{names:?}");
        for n in names {
            Machine::load(resolve_machine(n).unwrap()).unwrap_or_else(|e| panic!("{n}: {e}"));
        }
        let e = resolve_machine("no_such_chip").unwrap_err().to_string();
        assert!(e.contains("craterlake, craterlake_128k"), "{e}");
        let gpus = list_dir(&builtin_dir().join("machines/gpu")).unwrap();
        assert!(gpus.iter().any(|p| p.ends_with("titan_rtx_nufhe.toml")), "{gpus:?}");
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("basalt-extends-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_file_extending_itself_is_a_named_error() {
        let d = tmp("self");
        let p = write(&d, "loop.toml", "extends = \"loop.toml\"\n");
        let e = Machine::load(&p).unwrap_err().to_string();
        assert!(e.contains("cycle"), "{e}");
        write(&d, "a.toml", "extends = \"b.toml\"\n");
        write(&d, "b.toml", "extends = \"a.toml\"\n");
        let e = Machine::load(d.join("a.toml")).unwrap_err().to_string();
        assert!(e.contains("cycle") && e.contains("b.toml"), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn long_extends_chains_are_refused() {
        let d = tmp("deep");
        for i in 0..20 {
            write(&d, &format!("m{i}.toml"), &format!("extends = \"m{}.toml\"\n", i + 1));
        }
        let e = Machine::load(d.join("m0.toml")).unwrap_err().to_string();
        assert!(e.contains("more than 8"), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn extends_cannot_reach_outside_the_machine_folder() {
        let d = tmp("path");
        for base in ["/etc/passwd", "../../etc/passwd", "sub/x.toml", "..", "passwd", ""] {
            let p = write(&d, "m.toml", &format!("extends = {base:?}\n"));
            let e = Machine::load(&p).unwrap_err().to_string();
            assert!(e.contains("not a path") || e.contains("no such file"), "{base}: {e}");
            assert!(!e.contains("root:"), "{base}: {e}");
        }
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A user's variant in any folder can extend a shipped machine by its file name.
    #[test]
    fn a_user_file_extends_a_built_in_machine() {
        let d = tmp("user");
        let p = write(
            &d,
            "mine.toml",
            "extends = \"craterlake.toml\"\nname = \"mine\"\n[memory]\nhbm_gbps = 2000.0\n",
        );
        let m = Machine::load(&p).unwrap();
        assert_eq!(m.memory.hbm_gbps, 2000.0);
        assert_eq!(m.name, "mine");
        std::fs::remove_dir_all(d).unwrap();
    }
}
