//! Architecture test: dependencies point one way, between crates and between modules.
//!
//! Import circles make code hard to split, test and reason about, and they creep back in one
//! harmless-looking `use` at a time. This test makes them loud:
//!
//! 1. **Crate layers.** Every workspace crate may depend (normal dependencies, not
//!    dev-dependencies) only on the crates [`LAYERS`] allows:
//!    core → trace, sim → lab → report; core → wire → service, agent (the service's wire model
//!    and pure cycle, so the agent links no server); core → reconcile → slurm, gridengine (the
//!    scheduler-neutral reconcile any adapter reuses, so an adapter keeps only what is its
//!    scheduler's); slurm → lab (a what-if of the lab reads a site's adapter configuration
//!    with the Slurm adapter's own type); report also draws the service's API answers (from
//!    wire), the agent's reports and the adapters' passes; cli on top of all.
//! 2. **Module circles.** Inside every crate's `src/`, at every level of the module tree, the
//!    child modules of one module are siblings, and sibling `A` depends on sibling `B` when any
//!    file under `A` names a path into `B` (`use crate::…`, `use super::…`, `use self::…`, or
//!    an inline `crate::b::f()`). Those sibling graphs must have no cycle. A failure prints each
//!    cycle as `crate: a -> b -> c -> a` with one `file:line` for every edge.
//!
//! The module scanner reads source text, not the compiler's name resolution: comments, doc
//! comments and string literals are blanked out, `#[cfg(test)]` items and `tests.rs` files are
//! skipped (tests may use anything), and a name a module imports with `use` is followed to where
//! it comes from, so `super::Name` re-exported from a sibling counts as an edge to that sibling.
//! Glob imports (`use super::*`) are not followed.
//!
//! Run it with `cargo test -p fairshare --test integration architecture::`.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace crates (by folder under `crates/`) each crate may depend on.
const LAYERS: &[(&str, &[&str])] = &[
    ("core", &[]),
    ("trace", &["core"]),
    ("sim", &["core"]),
    ("lab", &["core", "trace", "sim", "reconcile", "slurm"]),
    (
        "report",
        &[
            "core",
            "sim",
            "lab",
            "wire",
            "agent",
            "reconcile",
            "slurm",
            "gridengine",
        ],
    ),
    ("wire", &["core"]),
    ("service", &["core", "wire"]),
    ("agent", &["core", "wire"]),
    ("reconcile", &["core"]),
    ("slurm", &["core", "trace", "reconcile"]),
    ("gridengine", &["core", "reconcile"]),
    (
        "cli",
        &[
            "core",
            "trace",
            "sim",
            "lab",
            "report",
            "wire",
            "service",
            "agent",
            "reconcile",
            "slurm",
            "gridengine",
        ],
    ),
];

/// `from → to → evidence` (for module graphs, the `file:line` of one reference).
type Graph<E> = BTreeMap<String, BTreeMap<String, E>>;

#[test]
fn crates_depend_only_on_lower_layers() {
    let table: Graph<()> = LAYERS
        .iter()
        .map(|(c, deps)| {
            (
                c.to_string(),
                deps.iter().map(|d| (d.to_string(), ())).collect(),
            )
        })
        .collect();
    assert_eq!(
        find_cycles(&table),
        Vec::<Vec<String>>::new(),
        "LAYERS has a cycle"
    );

    let crates = workspace_crates();
    let short: BTreeMap<&str, &str> = crates.iter().map(|c| (&*c.name, &*c.short)).collect();
    let mut violations = Vec::new();
    for c in &crates {
        let Some(allowed) = table.get(&c.short) else {
            violations.push(format!("{}: missing from LAYERS", c.short));
            continue;
        };
        for dep in c.deps.iter().filter_map(|d| short.get(d.as_str())) {
            if !allowed.contains_key(*dep) {
                violations.push(format!("{} must not depend on {dep}", c.short));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "crate layering broken:\n{}",
        violations.join("\n")
    );
}

#[test]
fn sibling_modules_have_no_import_circles() {
    let mut report = Vec::new();
    for c in workspace_crates() {
        for root in &c.roots {
            for (parent, graph) in sibling_edges(&module_tree(root)) {
                for cycle in find_cycles(&graph) {
                    report.push(describe(&c.short, &parent, &cycle, &graph));
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "import circles between sibling modules:\n{}",
        report.join("\n")
    );
}

/// Guards against a vacuous pass: the scanner must see core's modules and a known edge.
#[test]
fn the_scanner_sees_the_code() {
    let core = workspace_crates()
        .into_iter()
        .find(|c| c.short == "core")
        .expect("core crate");
    let tree = module_tree(&core.roots[0]);
    assert!(tree.len() > 20, "only {} modules found in core", tree.len());
    assert!(
        tree.contains_key(&segments("alloc::baa::lp")),
        "nested modules not found"
    );
    let levels = sibling_edges(&tree);
    let top = &levels[&Vec::<String>::new()];
    assert!(
        top["rank"].contains_key("model"),
        "core's rank → model edge not found"
    );
    let edges: usize = levels
        .values()
        .flat_map(|g| g.values())
        .map(BTreeMap::len)
        .sum();
    assert!(edges > 30, "only {edges} sibling edges found in core");
}

#[test]
fn scanner_reads_use_trees_and_skips_comments_strings_and_tests() {
    let src = "use crate::{a::{B, C},\n    d as D};\n// crate::e::F\n/// [`crate::g`]\n\
               let s = \"crate::h\"; let c = '\"';\nlet x = super::super::i::J::<u8>(r#\"self::k\"#);\n\
               #[cfg(test)]\nmod tests { use crate::l; }\n";
    let found: Vec<String> = written_paths(&tokens(src))
        .iter()
        .map(|p| format!("{}@{}={:?}", p.segs.join("::"), p.line, p.name))
        .collect();
    let expected = [
        "crate::a::B@1=Some(\"B\")",
        "crate::a::C@1=Some(\"C\")",
        "crate::d@2=Some(\"D\")",
        "super::super::i::J@6=None",
    ];
    assert_eq!(found, expected);
}

#[test]
fn cycle_finder_on_hand_made_graphs() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: Graph<()> = Graph::new();
        for (a, b) in edges {
            g.entry(a.to_string())
                .or_default()
                .insert(b.to_string(), ());
        }
        g
    };
    let acyclic = graph(&[("a", "b"), ("b", "c"), ("a", "c"), ("d", "a")]);
    assert!(find_cycles(&acyclic).is_empty());
    let cyclic = graph(&[
        ("policy", "rank"),
        ("rank", "livetree"),
        ("livetree", "policy"),
        ("x", "policy"),
    ]);
    assert_eq!(
        find_cycles(&cyclic),
        [["livetree", "policy", "rank", "livetree"]]
    );
}

// ---- Workspace crates, from `cargo metadata` ----

struct Crate {
    /// Package name, as dependencies name it.
    name: String,
    /// Folder under `crates/`.
    short: String,
    /// Normal (and build) dependencies, by package name.
    deps: Vec<String>,
    /// `src/lib.rs` and/or `src/main.rs`.
    roots: Vec<PathBuf>,
}

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().expect("workspace root")
}

fn workspace_crates() -> Vec<Crate> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let text = |v: &Value| v.as_str().expect("a string").to_string();
    let list = |v: &Value| v.as_array().expect("an array").clone();
    list(&meta["packages"])
        .iter()
        .map(|p| {
            let dir = PathBuf::from(text(&p["manifest_path"]))
                .parent()
                .unwrap()
                .to_path_buf();
            let is_root = |t: &Value| list(&t["kind"]).iter().any(|k| k == "lib" || k == "bin");
            Crate {
                name: text(&p["name"]),
                short: dir.file_name().unwrap().to_string_lossy().into(),
                deps: list(&p["dependencies"])
                    .iter()
                    .filter(|d| d["kind"] != "dev")
                    .map(|d| text(&d["name"]))
                    .collect(),
                roots: list(&p["targets"])
                    .iter()
                    .filter(|t| is_root(t))
                    .map(|t| PathBuf::from(text(&t["src_path"])))
                    .filter(|f| f.starts_with(dir.join("src")))
                    .collect(),
            }
        })
        .collect()
}

// ---- Source text to tokens ----

#[derive(Clone)]
struct Tok {
    text: String,
    line: usize,
}

/// The tokens of `src` that count: no comments, no literals' contents, no `#[cfg(test)]` items.
fn tokens(src: &str) -> Vec<Tok> {
    drop_test_items(tokenize(&blank_comments_and_literals(src)))
}

/// `src` with comments and string/char literals replaced by spaces (newlines kept).
fn blank_comments_and_literals(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let end = comment_or_literal_end(&c, i);
        if end == i {
            out.push(c[i]);
            i += 1;
        } else {
            out.extend(
                c[i..end]
                    .iter()
                    .map(|&ch| if ch == '\n' { '\n' } else { ' ' }),
            );
            i = end;
        }
    }
    out
}

/// Where a comment or string/char literal starting at `i` ends; `i` if none starts there.
fn comment_or_literal_end(c: &[char], i: usize) -> usize {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    let find = |from: usize, hit: &dyn Fn(usize) -> bool| (from..c.len()).find(|&k| hit(k));
    let word_start = i == 0 || !(at(i - 1).is_alphanumeric() || at(i - 1) == '_');
    match (at(i), at(i + 1)) {
        ('/', '/') => find(i, &|k| at(k) == '\n').unwrap_or(c.len()),
        ('/', '*') => {
            let (mut depth, mut k) = (0, i);
            while k < c.len() {
                match (at(k), at(k + 1)) {
                    ('/', '*') => (depth, k) = (depth + 1, k + 2),
                    ('*', '/') if depth == 1 => return k + 2,
                    ('*', '/') => (depth, k) = (depth - 1, k + 2),
                    _ => k += 1,
                }
            }
            c.len()
        }
        ('"', _) => {
            let mut k = i + 1;
            while k < c.len() && at(k) != '"' {
                k += if at(k) == '\\' { 2 } else { 1 };
            }
            (k + 1).min(c.len())
        }
        ('r' | 'b', _) if word_start => {
            let start = if at(i) == 'b' { i + 1 } else { i };
            let hashes = (start + 1..c.len()).take_while(|&k| at(k) == '#').count();
            let quote = start + 1 + hashes;
            if at(start) != 'r' || at(quote) != '"' {
                return i;
            }
            let closes = |k: usize| at(k) == '"' && (1..=hashes).all(|h| at(k + h) == '#');
            find(quote + 1, &closes).map_or(c.len(), |k| k + 1 + hashes)
        }
        ('\'', '\\') => find(i + 3, &|k| at(k) == '\'').map_or(c.len(), |k| k + 1),
        ('\'', _) if at(i + 2) == '\'' => i + 3,
        _ => i, // also a lifetime `'a`
    }
}

/// Identifiers, `::`, and single punctuation characters, with their line numbers.
fn tokenize(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let word = |ch: char| ch.is_alphanumeric() || ch == '_';
    let (mut toks, mut line, mut i) = (Vec::new(), 1, 0);
    while i < c.len() {
        let len = if word(c[i]) {
            c[i..].iter().take_while(|&&ch| word(ch)).count()
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            2
        } else {
            1
        };
        if c[i] == '\n' {
            line += 1;
        } else if !c[i].is_whitespace() {
            toks.push(Tok {
                text: c[i..i + len].iter().collect(),
                line,
            });
        }
        i += len;
    }
    toks
}

/// `toks` without the items marked `#[cfg(test)]`: test code may reference anything.
fn drop_test_items(toks: Vec<Tok>) -> Vec<Tok> {
    let cfg_test = ["#", "[", "cfg", "(", "test", ")", "]"];
    let mut kept = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks.len() - i >= 7 && toks[i..i + 7].iter().map(|t| &*t.text).eq(cfg_test) {
            i = item_end(&toks, i + 7);
        } else {
            kept.push(toks[i].clone());
            i += 1;
        }
    }
    kept
}

/// Just past the item starting at `i`: its `;` or the `}` of its body.
fn item_end(toks: &[Tok], mut i: usize) -> usize {
    let mut depth = 0;
    while i < toks.len() {
        match &*toks[i].text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" => depth -= 1,
            "}" if depth == 1 => return i + 1,
            "}" => depth -= 1,
            ";" if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

// ---- Paths written in a file ----

/// A path as written: `use` leaves (with the name they import) or inline `crate::`/`super::`/`self::` paths.
struct Written {
    segs: Vec<String>,
    line: usize,
    name: Option<String>,
}

fn written_paths(toks: &[Tok]) -> Vec<Written> {
    let text = |k: usize| toks.get(k).map_or("", |t| &*t.text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let path_start = matches!(text(i), "crate" | "super" | "self") && text(i + 1) == "::";
        if text(i) == "use" {
            i += 1;
            use_tree(toks, &mut i, Vec::new(), true, &mut out);
        } else if path_start && (i == 0 || text(i - 1) != "::") {
            use_tree(toks, &mut i, Vec::new(), false, &mut out);
        } else {
            i += 1;
        }
    }
    out
}

/// Reads one use tree (`a::b::{c, d::{e as f}}`, or an inline path) at `*i`, after `prefix`.
fn use_tree(
    toks: &[Tok],
    i: &mut usize,
    mut segs: Vec<String>,
    is_use: bool,
    out: &mut Vec<Written>,
) {
    let text = |k: usize| toks.get(k).map_or("", |t| &*t.text);
    let is_word = |s: &str| s.starts_with(|ch: char| ch.is_alphabetic() || ch == '_');
    loop {
        match text(*i) {
            "::" if segs.is_empty() => *i += 1,
            "{" => {
                *i += 1;
                while !matches!(text(*i), "}" | "") {
                    let before = *i;
                    use_tree(toks, i, segs.clone(), is_use, out);
                    *i += usize::from(text(*i) == "," || *i == before);
                }
                *i += 1;
                return;
            }
            s if is_word(s) || s == "*" => {
                segs.push(s.to_string());
                *i += 1;
                if text(*i) != "::" {
                    break;
                }
                *i += 1;
            }
            _ => break,
        }
    }
    let Some(last) = segs.last() else { return };
    let line = toks[*i - 1].line;
    let mut name = match &**last {
        "self" => segs.iter().rev().nth(1).cloned(),
        "*" => None,
        _ => Some(last.clone()),
    };
    if text(*i) == "as" {
        name = Some(text(*i + 1).to_string()).filter(|n| n != "_");
        *i += 2;
    }
    out.push(Written {
        segs,
        line,
        name: name.filter(|_| is_use),
    });
}

// ---- Module tree and sibling graphs ----

struct Module {
    file: PathBuf,
    children: BTreeSet<String>,
    paths: Vec<Written>,
}

/// Module path (`["alloc", "baa"]`) → module, for the crate whose root file is `root`.
type Tree = BTreeMap<Vec<String>, Module>;

fn segments(path: &str) -> Vec<String> {
    path.split("::").map(String::from).collect()
}

fn module_tree(root: &Path) -> Tree {
    let mut tree = Tree::new();
    load(
        &mut tree,
        root.parent().unwrap(),
        Vec::new(),
        root.to_path_buf(),
    );
    tree
}

/// Loads the module at `path` from `file`, then its `mod x;` children (not `tests`).
fn load(tree: &mut Tree, src: &Path, path: Vec<String>, file: PathBuf) {
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let toks = tokens(&text);
    let children: BTreeSet<String> = toks
        .windows(3)
        .filter(|w| w[0].text == "mod" && w[2].text == ";" && w[1].text != "tests")
        .map(|w| w[1].text.clone())
        .collect();
    let dir = path.iter().fold(src.to_path_buf(), |d, s| d.join(s));
    for child in &children {
        let candidates = [
            dir.join(format!("{child}.rs")),
            dir.join(child).join("mod.rs"),
        ];
        let Some(f) = candidates.into_iter().find(|f| f.exists()) else {
            panic!("{}: no file for `mod {child};`", file.display());
        };
        load(tree, src, [path.clone(), vec![child.clone()]].concat(), f);
    }
    let paths = written_paths(&toks);
    tree.insert(
        path,
        Module {
            file,
            children,
            paths,
        },
    );
}

/// The deepest module of this crate that `segs`, written in module `at`, points into.
fn resolve(tree: &Tree, at: &[String], segs: &[String], hops: usize) -> Option<Vec<String>> {
    let supers = segs.iter().take_while(|s| *s == "super").count();
    let (mut cur, rest) = match segs.first()?.as_str() {
        "crate" => (Vec::new(), &segs[1..]),
        "self" => (at.to_vec(), &segs[1..]),
        "super" if supers <= at.len() => (at[..at.len() - supers].to_vec(), &segs[supers..]),
        first if tree[at].children.contains(first) => (at.to_vec(), segs),
        _ => return None,
    };
    for (k, seg) in rest.iter().enumerate() {
        if tree[&cur].children.contains(seg) {
            cur.push(seg.clone());
            continue;
        }
        // A name `cur` imports: follow the import (re-exports, `super::Name` from a sibling).
        let import = tree[&cur]
            .paths
            .iter()
            .find(|p| p.name.as_ref() == Some(seg));
        if let Some(import) = import.filter(|_| hops < 8) {
            let via = [import.segs.clone(), rest[k + 1..].to_vec()].concat();
            return resolve(tree, &cur, &via, hops + 1).or(Some(cur));
        }
        break;
    }
    Some(cur)
}

/// For every module (by path), the graph among its children, with one `file:line` per edge.
fn sibling_edges(tree: &Tree) -> BTreeMap<Vec<String>, Graph<String>> {
    let root = workspace_root();
    let mut levels: BTreeMap<Vec<String>, Graph<String>> = BTreeMap::new();
    for (at, module) in tree {
        for p in &module.paths {
            let Some(to) = resolve(tree, at, &p.segs, 0) else {
                continue;
            };
            let k = at.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if k < at.len() && k < to.len() {
                let file = module.file.strip_prefix(&root).unwrap_or(&module.file);
                let graph = levels.entry(at[..k].to_vec()).or_default();
                let tos = graph.entry(at[k].clone()).or_default();
                tos.entry(to[k].clone())
                    .or_insert_with(|| format!("{}:{}", file.display(), p.line));
            }
        }
    }
    levels
}

// ---- Cycles ----

/// Cycles covering every edge that lies on one: for each edge `u → v` not yet covered, the cycle
/// `u → v` plus the shortest way back from `v` to `u`. Each cycle ends where it starts.
fn find_cycles<E>(graph: &Graph<E>) -> Vec<Vec<String>> {
    let mut covered = BTreeSet::new();
    let mut cycles = Vec::new();
    for (u, tos) in graph {
        for v in tos.keys() {
            if covered.contains(&(u.clone(), v.clone())) {
                continue;
            }
            if let Some(back) = shortest_path(graph, v, u) {
                let cycle: Vec<String> = [vec![u.clone()], back].concat();
                covered.extend(cycle.windows(2).map(|w| (w[0].clone(), w[1].clone())));
                cycles.push(cycle);
            }
        }
    }
    cycles
}

/// The shortest path `from → … → to` (both included), breadth first.
fn shortest_path<E>(graph: &Graph<E>, from: &str, to: &str) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::from([(from, "")]);
    let mut queue = VecDeque::from([from]);
    while let Some(node) = queue.pop_front() {
        if node == to {
            let mut path = vec![to.to_string()];
            let mut n = to;
            while n != from {
                n = came_from[n];
                path.push(n.to_string());
            }
            path.reverse();
            return Some(path);
        }
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            if !came_from.contains_key(next.as_str()) {
                came_from.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    None
}

/// `crate: a -> b -> a` and, for each edge, where it is.
fn describe(krate: &str, parent: &[String], cycle: &[String], graph: &Graph<String>) -> String {
    let name = |m: &String| [parent, std::slice::from_ref(m)].concat().join("::");
    let chain: Vec<String> = cycle.iter().map(name).collect();
    let mut text = format!("{krate}: {}", chain.join(" -> "));
    for w in cycle.windows(2) {
        let at = &graph[&w[0]][&w[1]];
        text += &format!("\n    {} -> {}  at {at}", name(&w[0]), name(&w[1]));
    }
    text
}
