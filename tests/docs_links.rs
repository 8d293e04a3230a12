//! The user documentation's links hold: every relative link in README.md
//! and docs/*.md (`[text](path)` or `![alt](path)`) names a file that
//! exists, relative to the page that links it, and every `#anchor` a
//! heading of the page it points into.

use std::path::{Path, PathBuf};

/// Every link target of a Markdown text (`[text](target)`), outside code
/// blocks, as written.
fn targets(text: &str) -> Vec<String> {
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
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// The relative link targets of a Markdown text, any `#anchor` aside.
fn links(text: &str) -> Vec<String> {
    targets(text)
        .into_iter()
        .filter(|t| !t.contains("://") && !t.starts_with('#') && !t.starts_with("mailto:"))
        .map(|t| t.split('#').next().unwrap_or("").to_string())
        .collect()
}

/// README.md and every page of docs/.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages: Vec<PathBuf> = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages
}

#[test]
fn every_relative_link_in_the_docs_names_a_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = pages();
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

/// The links of a Markdown text that carry an anchor: (the page, empty
/// for the same page; the anchor).
fn anchored_links(text: &str) -> Vec<(String, String)> {
    targets(text)
        .into_iter()
        .filter(|t| !t.contains("://"))
        .filter_map(|t| {
            t.split_once('#')
                .map(|(page, anchor)| (page.to_string(), anchor.to_string()))
        })
        .collect()
}

/// The ids mdBook gives a page's headings: the heading's text lower-cased,
/// spaces as `-`, every character but letters, digits, `-` and `_` left
/// out; a repeated id gets `-1`, `-2`, … (GitHub names them the same way).
fn heading_ids(text: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let id: String = title
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
                _ => None,
            })
            .collect();
        let n = seen.entry(id.clone()).or_insert(0);
        ids.push(if *n == 0 { id } else { format!("{id}-{n}") });
        *n += 1;
    }
    ids
}

/// Links to a section (`page.md#id`, `#id`) name a heading that page has.
#[test]
fn every_anchor_in_the_docs_names_a_heading() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = pages();
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (target, anchor) in anchored_links(&text) {
            let target_page = if target.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(&target)
            };
            if target_page.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let Ok(target_text) = std::fs::read_to_string(&target_page) else {
                continue; // a missing page is the other test's failure
            };
            checked += 1;
            if !heading_ids(&target_text).contains(&anchor) {
                broken.push(format!(
                    "{}: ({target}#{anchor})",
                    page.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to sections that do not exist:\n{}",
        broken.join("\n")
    );
    assert!(checked >= 10, "only {checked} anchored links found");
}
