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

/// Checks every page's links with `check` (page, its text → each link as
/// written and whether it holds; `None` for a link it does not judge) and
/// fails naming the broken ones (`what`), or when fewer than `least` links
/// were judged (the parser missed them).
fn check_links(
    what: &str,
    least: usize,
    check: impl Fn(&Path, &str) -> Vec<Option<(String, bool)>>,
) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (link, holds) in check(&page, &text).into_iter().flatten() {
            checked += 1;
            if !holds {
                broken.push(format!(
                    "{}: ({link})",
                    page.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(broken.is_empty(), "{what}:\n{}", broken.join("\n"));
    assert!(
        checked >= least,
        "only {checked} links found: the parser missed them"
    );
}

#[test]
fn every_relative_link_in_the_docs_names_a_file() {
    check_links("links to files that do not exist", 20, |page, text| {
        let dir = page.parent().unwrap();
        links(text)
            .into_iter()
            .map(|t| Some((t.clone(), dir.join(&t).exists())))
            .collect()
    });
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
    check_links("links to sections that do not exist", 10, |page, text| {
        anchored_links(text)
            .into_iter()
            .map(|(target, anchor)| {
                let target_page = if target.is_empty() {
                    page.to_path_buf()
                } else {
                    page.parent().unwrap().join(&target)
                };
                if target_page.extension().is_none_or(|e| e != "md") {
                    return None;
                }
                // A missing page is the other test's failure.
                let target_text = std::fs::read_to_string(&target_page).ok()?;
                let holds = heading_ids(&target_text).contains(&anchor);
                Some((format!("{target}#{anchor}"), holds))
            })
            .collect()
    });
}
