//! The user documentation's links hold: every relative link in README.md
//! and docs/*.md (`[text](path)` or `![alt](path)`, any `#anchor` aside)
//! names a file that exists, relative to the page that links it.

use std::path::{Path, PathBuf};

/// The relative link targets of a Markdown text, outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            if !target.contains("://") && !target.starts_with('#') && !target.starts_with("mailto:")
            {
                out.push(target.split('#').next().unwrap_or("").to_string());
            }
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_names_a_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages: Vec<PathBuf> = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let dir = page.parent().unwrap();
        for target in links(&text) {
            checked += 1;
            if !dir.join(&target).exists() {
                broken.push(format!(
                    "{}: ({target})",
                    page.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to files that do not exist:\n{}",
        broken.join("\n")
    );
    assert!(
        checked >= 20,
        "only {checked} links found: the parser missed them"
    );
}

/// The book (`mdbook build docs`) holds every chapter: each page in docs/
/// is linked from docs/SUMMARY.md, so none is left out of the built book.
#[test]
fn every_page_in_docs_is_a_chapter_of_the_book() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).expect("docs/SUMMARY.md");
    let chapters = links(&summary);
    for entry in std::fs::read_dir(&docs).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.extension().is_some_and(|e| e == "md") && name != "SUMMARY.md" {
            assert!(
                chapters.contains(&name),
                "docs/{name} is not a chapter of docs/SUMMARY.md (the book would leave it out)"
            );
        }
    }
}
