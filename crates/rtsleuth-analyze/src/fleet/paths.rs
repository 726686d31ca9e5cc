//! The files a list of arguments names: files as given, directories walked to the bottom.

use std::path::Path;

/// Every file the arguments name, sorted and without repeats: a report in the same order
/// whatever order the shell or the file system listed them in. A directory's files are all
/// candidates, whatever their names: whether one is a trace is decided from its content
/// later. An argument that does not exist is kept, so that reading it reports why.
pub fn expand(args: &[String]) -> Vec<String> {
    let mut files = Vec::new();
    for a in args {
        if Path::new(a).is_dir() {
            walk(Path::new(a), &mut files);
        } else {
            files.push(a.clone());
        }
    }
    files.sort();
    files.dedup();
    files
}

/// Depth first; an unreadable directory entry is skipped (a set is read as far as it can be).
/// Symbolic links to directories are not followed, so a link loop cannot trap the walk.
fn walk(dir: &Path, files: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        files.push(dir.to_string_lossy().into_owned());
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&path, files),
            Ok(_) => files.push(path.to_string_lossy().into_owned()),
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_walked_and_the_result_sorted() {
        let d = tempfile::tempdir().unwrap();
        let p = |s: &str| d.path().join(s).to_string_lossy().into_owned();
        std::fs::create_dir_all(d.path().join("b/c")).unwrap();
        for f in ["b/c/z", "b/a", "y"] {
            std::fs::write(d.path().join(f), "").unwrap();
        }
        let got = expand(&[p("y"), d.path().to_string_lossy().into_owned(), p("nope")]);
        assert_eq!(got, vec![p("b/a"), p("b/c/z"), p("nope"), p("y")]);
    }
}
