//! The workflow graph (FORMAT §E.10 `graph.json`): nodes are `__start__` plus every state,
//! edges are trigger entries (`__start__` → entry state, conditional, labelled with the
//! trigger id), declared transitions (not conditional, labelled with the description) and
//! `on_error` routes (conditional, labelled `on_error`). Renders to the reference's JSON
//! shape, to Mermaid and to Graphviz DOT, optionally with a case's path lit.
//!
//! Pure: layout and SVG are the binary's business; this module only describes the graph.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::model::workflow::{StateType, Workflow};
use crate::text::TextRange;

/// The synthetic start node's id.
pub const START: &str = "__start__";

/// Most nodes (`__start__` included) [`Graph::to_svg`] lays out; bigger graphs are refused.
pub const MAX_SVG_NODES: usize = 64;

/// Most edges [`Graph::to_svg`] lays out; graphs with more are refused.
pub const MAX_SVG_EDGES: usize = 128;

/// Most units of edge-crossing optimization one SVG layout spends (one unit per row entry a
/// crossing count examines; `vendor/layout-rs/PATCH.md`): 8 million. The worst graph within
/// [`MAX_SVG_NODES`] / [`MAX_SVG_EDGES`] (a 64-node ring with chords) needs about 740
/// million (3.7 s of CPU in a dev build); with the budget its whole layout takes 0.35 s of
/// CPU there (docs/performance.md, "Graph layout"). Past it the layout is finished with the
/// best node order found so far: complete, with more crossings ([`SvgLayout::cut`]).
pub const MAX_LAYOUT_WORK: u64 = 8_000_000;

/// What an SVG layout spent ([`Graph::to_svg_measured`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SvgLayout {
    /// Units of edge-crossing optimization spent (see [`MAX_LAYOUT_WORK`]); may pass the
    /// budget by the last row's count.
    pub work: u64,
    /// The budget ran out: the layout is complete but less tidy (more crossings).
    pub cut: bool,
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// `__start__`.
    Start,
    /// An agent state.
    Agent,
    /// A human state.
    Human,
}

/// A node.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphNode {
    /// `__start__` or the state slug.
    pub id: String,
    /// Kind.
    pub kind: NodeKind,
    /// True for a state with no transitions.
    pub terminal: bool,
    /// The state's `title`.
    pub title: Option<String>,
    /// Trigger ids whose entry state this is.
    pub triggers: Vec<String>,
    /// Range of the state's key in `workflow.yaml` (`None` for `__start__`).
    pub range: Option<TextRange>,
}

/// What an edge is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// `__start__` → entry state for a trigger.
    Trigger,
    /// A declared transition, with its `type` if any.
    Transition(Option<String>),
    /// An `on_error` route.
    OnError,
}

/// An edge.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphEdge {
    /// Source node id.
    pub source: String,
    /// Target node id.
    pub target: String,
    /// Conditional (trigger entries and `on_error` routes) or declared.
    pub conditional: bool,
    /// Trigger id, transition description, or `on_error`.
    pub label: Option<String>,
    /// Kind.
    pub kind: EdgeKind,
}

/// The graph of one workflow.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// `__start__` first, then states in document order.
    pub nodes: Vec<GraphNode>,
    /// Trigger edges, then per state its transitions and its `on_error` route.
    pub edges: Vec<GraphEdge>,
    /// The `manual` trigger's entry state, if declared.
    pub entry: Option<String>,
    /// Terminal states, in document order.
    pub finals: Vec<String>,
}

/// Where a case's run went: the states it reached, each with the 1-based number of the case
/// step (the action) during which it was first reached ("step 3" is `steps[2]`), and the transitions it took in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CasePath {
    /// State → 1-based case step number at which it was first reached.
    pub reached: BTreeMap<String, usize>,
    /// Traversed (source, target) pairs, `__start__` first, in order.
    pub edges: Vec<(String, String)>,
    /// Suite coverage rather than one case's path (`wfx-lsp test --coverage`): `reached`
    /// then holds the number of cases that entered each state (labelled `×N`, not a step),
    /// and the SVG draws what is not lit in red (`#c62828`) so uncovered elements stand
    /// apart from covered (blue) ones.
    pub coverage: bool,
}

impl CasePath {
    fn lit_edge(&self, source: &str, target: &str) -> bool {
        self.edges.iter().any(|(s, t)| s == source && t == target)
    }
}

impl Graph {
    /// Builds the graph of a workflow.
    pub fn from_workflow(wf: &Workflow) -> Graph {
        let mut nodes = vec![GraphNode {
            id: START.into(),
            kind: NodeKind::Start,
            terminal: false,
            title: None,
            triggers: Vec::new(),
            range: None,
        }];
        let mut edges = Vec::new();
        for t in wf.triggers() {
            edges.push(GraphEdge {
                source: START.into(),
                target: t.state.clone(),
                conditional: true,
                label: Some(t.id.value.clone()),
                kind: EdgeKind::Trigger,
            });
        }
        for s in &wf.states {
            nodes.push(GraphNode {
                id: s.slug.value.clone(),
                kind: if s.kind == StateType::Human {
                    NodeKind::Human
                } else {
                    NodeKind::Agent
                },
                terminal: s.is_terminal(),
                title: s.title.clone(),
                triggers: s.triggers.iter().map(|t| t.id.value.clone()).collect(),
                range: Some(s.slug.range),
            });
            for tr in &s.transitions {
                edges.push(GraphEdge {
                    source: s.slug.value.clone(),
                    target: tr.to.value.clone(),
                    conditional: false,
                    label: tr
                        .description
                        .as_deref()
                        .map(crate::text::collapse_whitespace),
                    kind: EdgeKind::Transition(tr.kind.as_ref().map(|k| k.value.clone())),
                });
            }
            if let Some(on_error) = &s.on_error {
                edges.push(GraphEdge {
                    source: s.slug.value.clone(),
                    target: on_error.value.clone(),
                    conditional: true,
                    label: Some("on_error".into()),
                    kind: EdgeKind::OnError,
                });
            }
        }
        Graph {
            nodes,
            edges,
            entry: wf.trigger("manual").map(|t| t.state.clone()),
            finals: wf
                .states
                .iter()
                .filter(|s| s.is_terminal())
                .map(|s| s.slug.value.clone())
                .collect(),
        }
    }

    /// The reference's `graph.json` shape (FORMAT §E.10):
    /// `{nodes: [ids], edges: [{source, target, conditional, label?}], entry?, finals, mermaid}`.
    pub fn to_reference_json(&self) -> serde_json::Value {
        let edges: Vec<serde_json::Value> = self
            .edges
            .iter()
            .map(|e| {
                let mut m = serde_json::Map::new();
                m.insert("source".into(), e.source.clone().into());
                m.insert("target".into(), e.target.clone().into());
                m.insert("conditional".into(), e.conditional.into());
                if let Some(l) = &e.label {
                    m.insert("label".into(), l.clone().into());
                }
                serde_json::Value::Object(m)
            })
            .collect();
        let mut m = serde_json::Map::new();
        m.insert(
            "nodes".into(),
            self.nodes
                .iter()
                .map(|n| serde_json::Value::from(n.id.clone()))
                .collect(),
        );
        m.insert("edges".into(), edges.into());
        if let Some(e) = &self.entry {
            m.insert("entry".into(), e.clone().into());
        }
        m.insert(
            "finals".into(),
            self.finals
                .iter()
                .map(|f| serde_json::Value::from(f.clone()))
                .collect(),
        );
        m.insert("mermaid".into(), self.to_mermaid(None).into());
        serde_json::Value::Object(m)
    }

    /// Mermaid flowchart text. Node ids are sanitised (`identify-case` → `identify_case`)
    /// and kept distinct: when two names sanitise alike (`a-b` and `a_b`, or two CJK names),
    /// the later one in node order (then edge order, for undeclared targets) gets `_2`,
    /// `_3`, …; labels carry the slug (escaped), the title, and with `path` the case step at
    /// which the state was reached. Lit nodes and edges get the `lit` class / a thick link
    /// style.
    pub fn to_mermaid(&self, path: Option<&CasePath>) -> String {
        let ids = self.mermaid_ids();
        let mermaid_id = |name: &str| ids.get(name).cloned().unwrap_or_else(|| mermaid_id(name));
        let mut out = String::from("flowchart TD\n");
        for n in &self.nodes {
            let id = mermaid_id(&n.id);
            let mut label = escape_mermaid(&n.id);
            if let Some(t) = &n.title {
                label.push_str("<br/><small>");
                label.push_str(&escape_mermaid(t));
                label.push_str("</small>");
            }
            if let Some(p) = path
                && let Some(step) = p.reached.get(&n.id)
            {
                if p.coverage {
                    let _ = write!(label, "<br/>×{step}");
                } else {
                    let _ = write!(label, "<br/>step {step}");
                }
            }
            let shape = match (n.kind, n.terminal) {
                (NodeKind::Start, _) => format!("{id}([\"start\"])"),
                (NodeKind::Human, _) => format!("{id}{{{{\"{label}\"}}}}"),
                (NodeKind::Agent, true) => format!("{id}([\"{label}\"])"),
                (NodeKind::Agent, false) => format!("{id}[\"{label}\"]"),
            };
            let _ = writeln!(out, "    {shape}");
        }
        let mut lit_links = Vec::new();
        for (i, e) in self.edges.iter().enumerate() {
            let arrow = if e.conditional { "-.->" } else { "-->" };
            let label = e
                .label
                .as_deref()
                .map(|l| truncate(l, 48))
                .map(|l| format!("|\"{}\"|", escape_mermaid(&l)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    {} {arrow}{label} {}",
                mermaid_id(&e.source),
                mermaid_id(&e.target)
            );
            if path.is_some_and(|p| p.lit_edge(&e.source, &e.target)) {
                lit_links.push(i);
            }
        }
        out.push_str("    classDef human fill:#fff4d6,stroke:#b8860b\n");
        out.push_str("    classDef terminal fill:#e8f4ea,stroke:#2e7d32\n");
        out.push_str("    classDef lit fill:#d6e9ff,stroke:#1565c0,stroke-width:3px\n");
        for n in &self.nodes {
            let lit = path.is_some_and(|p| {
                p.reached.contains_key(&n.id) || (n.kind == NodeKind::Start && !p.edges.is_empty())
            });
            let class = if lit {
                Some("lit")
            } else if n.kind == NodeKind::Human {
                Some("human")
            } else if n.terminal {
                Some("terminal")
            } else {
                None
            };
            if let Some(c) = class {
                let _ = writeln!(out, "    class {} {c}", mermaid_id(&n.id));
            }
        }
        for i in lit_links {
            let _ = writeln!(out, "    linkStyle {i} stroke:#1565c0,stroke-width:3px");
        }
        out
    }

    /// Graphviz DOT text. Human states are hexagons, terminal states double octagons... kept
    /// simple: boxes, `doublecircle`-free; lit nodes and edges are drawn in blue and bold
    /// with the step index in the label.
    pub fn to_dot(&self, path: Option<&CasePath>) -> String {
        let mut out = String::from(
            "digraph workflow {\n    rankdir=TB;\n    node [fontname=\"Helvetica\"];\n    edge [fontname=\"Helvetica\", fontsize=10];\n",
        );
        for n in &self.nodes {
            let mut label = n.id.clone();
            if let Some(step) = path.and_then(|p| p.reached.get(&n.id)) {
                let _ = write!(label, "\n(step {step})");
            }
            let shape = match (n.kind, n.terminal) {
                (NodeKind::Start, _) => "circle",
                (NodeKind::Human, _) => "hexagon",
                (NodeKind::Agent, true) => "doubleoctagon",
                (NodeKind::Agent, false) => "box",
            };
            let lit = path.is_some_and(|p| {
                p.reached.contains_key(&n.id) || (n.kind == NodeKind::Start && !p.edges.is_empty())
            });
            let color = if lit {
                ", color=\"blue\", penwidth=3, fontcolor=\"blue\""
            } else {
                ""
            };
            let label = if n.kind == NodeKind::Start {
                "start".to_owned()
            } else {
                label
            };
            let _ = writeln!(
                out,
                "    \"{}\" [label=\"{}\", shape={shape}{color}];",
                escape_dot(&n.id),
                escape_dot(&label)
            );
        }
        for e in &self.edges {
            let style = if e.conditional { ", style=dashed" } else { "" };
            let label = e
                .label
                .as_deref()
                .map(|l| truncate(l, 40))
                .map(|l| format!(", label=\"{}\"", escape_dot(&l)))
                .unwrap_or_default();
            let lit = path.is_some_and(|p| p.lit_edge(&e.source, &e.target));
            let color = if lit {
                ", color=\"blue\", penwidth=3"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "    \"{}\" -> \"{}\" [arrowhead=normal{style}{label}{color}];",
                escape_dot(&e.source),
                escape_dot(&e.target)
            );
        }
        out.push_str("}\n");
        out
    }
}

impl Graph {
    /// A distinct Mermaid id for every node and edge endpoint, assigned in node order then
    /// edge order (deterministic).
    fn mermaid_ids(&self) -> BTreeMap<String, String> {
        let mut ids: BTreeMap<String, String> = BTreeMap::new();
        let mut taken: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        let names = self
            .nodes
            .iter()
            .map(|n| &n.id)
            .chain(self.edges.iter().flat_map(|e| [&e.source, &e.target]));
        for name in names {
            if ids.contains_key(name) {
                continue;
            }
            let base = mermaid_id(name);
            let mut id = base.clone();
            let mut n = 2usize;
            while taken.contains(&id) {
                id = format!("{base}_{n}");
                n += 1;
            }
            taken.insert(id.clone());
            ids.insert(name.clone(), id);
        }
        ids
    }
}

/// Words a Mermaid flowchart statement may start with; a node id spelled like one would be
/// read as that statement (`subgraph` opens a subgraph, `end` closes one).
const MERMAID_KEYWORDS: &[&str] = &[
    "end",
    "graph",
    "flowchart",
    "subgraph",
    "style",
    "class",
    "classdef",
    "click",
    "linkstyle",
    "direction",
    "call",
    "href",
];

/// The sanitised Mermaid id of a name: ASCII letters and digits kept, everything else `_`,
/// prefixed with `n` when empty, starting with a digit, or a Mermaid keyword.
fn mermaid_id(id: &str) -> String {
    let mut s: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty()
        || MERMAID_KEYWORDS.contains(&s.to_ascii_lowercase().as_str())
        || s.starts_with(|c: char| c.is_ascii_digit())
    {
        s.insert(0, 'n');
    }
    s
}

/// Escapes text for a quoted Mermaid label (report escaping): `#` (so user text cannot
/// spell an entity code), quotes, pipes, `<`, `>`, `&` and backticks become Mermaid entity
/// codes, so a label can neither close its quotes nor become HTML or a Markdown string;
/// line breaks become `<br/>` (a raw break would end the statement); other control and
/// bidi characters ([`crate::inert::is_unsafe`]) become U+FFFD.
fn escape_mermaid(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '|' => out.push_str("#124;"),
            '<' => out.push_str("#60;"),
            '>' => out.push_str("#62;"),
            '&' => out.push_str("#38;"),
            '`' => out.push_str("#96;"),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\r' => out.push_str("<br/>"),
            c if crate::inert::is_unsafe(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for a quoted DOT string: backslashes and quotes are escaped and line
/// breaks become the `\n` escape (a raw break inside a string splits the statement for
/// some readers); other control and bidi characters become U+FFFD.
fn escape_dot(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace("\r\n", "\\n")
        .replace(['\n', '\r'], "\\n")
        .chars()
        .map(|c| {
            if crate::inert::is_unsafe(c) {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

fn truncate(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max_chars.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wf(src: &str) -> Workflow {
        Workflow::from_node(&crate::yaml::parse(src).documents[0])
    }

    const SRC: &str = "states:\n  a:\n    triggers: { manual: , ping: }\n    on_error: err\n    transitions:\n      - { to: h, description: Go \"review\" }\n  h:\n    type: human\n    transitions:\n      - { to: done, type: approve, description: ok }\n  done: {}\n  err:\n";

    #[test]
    fn model_matches_the_reference_semantics() {
        let g = Graph::from_workflow(&wf(SRC));
        let ids: Vec<_> = g.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["__start__", "a", "h", "done", "err"]);
        let e: Vec<_> = g
            .edges
            .iter()
            .map(|e| {
                (
                    e.source.as_str(),
                    e.target.as_str(),
                    e.conditional,
                    e.label.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            e,
            [
                ("__start__", "a", true, Some("manual")),
                ("__start__", "a", true, Some("ping")),
                ("a", "h", false, Some("Go \"review\"")),
                ("a", "err", true, Some("on_error")),
                ("h", "done", false, Some("ok")),
            ]
        );
        assert_eq!(g.entry.as_deref(), Some("a"));
        assert_eq!(g.finals, ["done", "err"]);
        assert_eq!(g.to_reference_json()["edges"][0]["label"], "manual");
    }

    #[test]
    fn path_is_lit_in_mermaid_and_dot() {
        let g = Graph::from_workflow(&wf(SRC));
        let mut p = CasePath::default();
        p.reached.insert("a".into(), 0);
        p.reached.insert("h".into(), 0);
        p.edges = vec![("__start__".into(), "a".into()), ("a".into(), "h".into())];
        let m = g.to_mermaid(Some(&p));
        assert!(m.contains("class h lit"), "{m}");
        assert!(m.contains("linkStyle 2 stroke:#1565c0"), "{m}");
        assert!(!m.contains("class done lit"));
        let d = g.to_dot(Some(&p));
        assert!(
            d.contains("\"h\" [label=\"h\\n(step 0)\", shape=hexagon, color=\"blue\""),
            "{d}"
        );
        assert!(d.contains("Go \\\"review\\\""), "{d}");
    }
}

/// How one node is drawn for one path (see [`Graph::node_style`]).
struct NodeStyle {
    label: String,
    shape: &'static str,
    fill: &'static str,
    color: &'static str,
}

/// How one edge is drawn for one path (see [`Graph::edge_style`]).
struct EdgeStyle {
    label: String,
    dashed: bool,
    /// `None`: the renderer's default (black).
    color: Option<&'static str>,
}

/// The text `layout-rs` draws for a label written into DOT by [`escape_dot`]: what its
/// lexer reads back (line breaks are `\n`, other controls U+FFFD, escapes undone).
fn dot_text(s: &str) -> String {
    s.replace("\r\n", "\n")
        .replace('\r', "\n")
        .chars()
        .map(|c| {
            if c != '\n' && crate::inert::is_unsafe(c) {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

/// Colour codes that name the node or edge a draw call belongs to in the one layout a
/// [`SvgDrawing`] records (the renderer passes colours through untouched; every real colour
/// is opaque, alpha `ff`, so a code's alpha byte says what it names): `#iiiiii00` the fill
/// and `#iiiiii02` the outline of node `i`, `#jjjjjj01` the line of edge `j`.
const NODE_FILL: u32 = 0x00;
const EDGE_LINE: u32 = 0x01;
const NODE_LINE: u32 = 0x02;

fn code_colour(kind: u32, index: usize) -> String {
    format!("#{:06x}{kind:02x}", index & 0xff_ffff)
}

/// `(kind, index)` of a colour code, or `None` for a real colour.
fn decode_colour(c: &layout::core::color::Color) -> Option<(u32, usize)> {
    let web = c.to_web_color();
    let v = u32::from_str_radix(web.trim_start_matches('#'), 16).ok()?;
    let kind = v & 0xff;
    (kind <= NODE_LINE).then_some((kind, (v >> 8) as usize))
}

/// One call `layout-rs` made on its render backend, as [`SvgDrawing`] recorded it.
#[derive(Clone, Debug)]
enum DrawOp {
    Rect {
        xy: layout::core::geometry::Point,
        size: layout::core::geometry::Point,
        look: layout::core::style::StyleAttr,
        properties: Option<String>,
        clip: Option<layout::core::format::ClipHandle>,
    },
    Line {
        start: layout::core::geometry::Point,
        stop: layout::core::geometry::Point,
        look: layout::core::style::StyleAttr,
        properties: Option<String>,
    },
    Circle {
        xy: layout::core::geometry::Point,
        size: layout::core::geometry::Point,
        look: layout::core::style::StyleAttr,
        properties: Option<String>,
    },
    Text {
        xy: layout::core::geometry::Point,
        text: String,
        look: layout::core::style::StyleAttr,
    },
    Arrow {
        path: Vec<(layout::core::geometry::Point, layout::core::geometry::Point)>,
        dashed: bool,
        head: (bool, bool),
        look: layout::core::style::StyleAttr,
        properties: Option<String>,
        text: String,
    },
    Clip {
        xy: layout::core::geometry::Point,
        size: layout::core::geometry::Point,
        rounded: usize,
    },
}

/// A render backend that keeps the calls for later ([`SvgDrawing::render`]).
#[derive(Default)]
struct Recorder {
    ops: Vec<DrawOp>,
    clips: usize,
}

impl layout::core::format::RenderBackend for Recorder {
    fn draw_rect(
        &mut self,
        xy: layout::core::geometry::Point,
        size: layout::core::geometry::Point,
        look: &layout::core::style::StyleAttr,
        properties: Option<String>,
        clip: Option<layout::core::format::ClipHandle>,
    ) {
        self.ops.push(DrawOp::Rect {
            xy,
            size,
            look: look.clone(),
            properties,
            clip,
        });
    }

    fn draw_line(
        &mut self,
        start: layout::core::geometry::Point,
        stop: layout::core::geometry::Point,
        look: &layout::core::style::StyleAttr,
        properties: Option<String>,
    ) {
        self.ops.push(DrawOp::Line {
            start,
            stop,
            look: look.clone(),
            properties,
        });
    }

    fn draw_circle(
        &mut self,
        xy: layout::core::geometry::Point,
        size: layout::core::geometry::Point,
        look: &layout::core::style::StyleAttr,
        properties: Option<String>,
    ) {
        self.ops.push(DrawOp::Circle {
            xy,
            size,
            look: look.clone(),
            properties,
        });
    }

    fn draw_text(
        &mut self,
        xy: layout::core::geometry::Point,
        text: &str,
        look: &layout::core::style::StyleAttr,
    ) {
        self.ops.push(DrawOp::Text {
            xy,
            text: text.to_owned(),
            look: look.clone(),
        });
    }

    fn draw_arrow(
        &mut self,
        path: &[(layout::core::geometry::Point, layout::core::geometry::Point)],
        dashed: bool,
        head: (bool, bool),
        look: &layout::core::style::StyleAttr,
        properties: Option<String>,
        text: &str,
    ) {
        self.ops.push(DrawOp::Arrow {
            path: path.to_vec(),
            dashed,
            head,
            look: look.clone(),
            properties,
            text: text.to_owned(),
        });
    }

    fn create_clip(
        &mut self,
        xy: layout::core::geometry::Point,
        size: layout::core::geometry::Point,
        rounded_px: usize,
    ) -> layout::core::format::ClipHandle {
        self.ops.push(DrawOp::Clip {
            xy,
            size,
            rounded: rounded_px,
        });
        self.clips += 1;
        self.clips - 1
    }
}

thread_local! {
    /// Layouts [`Graph::svg_drawing`] ran on this thread (see [`layouts_on_this_thread`]).
    static LAYOUTS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many graph layouts (`layout-rs` runs, the expensive part of an SVG) this thread has
/// done: tests and benchmarks count them (the HTML report lays a workflow out once, not
/// once per case).
pub fn layouts_on_this_thread() -> u64 {
    LAYOUTS.with(std::cell::Cell::get)
}

/// A graph laid out once, drawn as SVG with any of the paths it was laid out for lit
/// ([`Graph::svg_drawing`], [`SvgDrawing::render`]). The HTML report lays each workflow out
/// once and draws every case's path on that one layout (200 cases of a 63-state ring with
/// chords were 200 layouts, 27 s of CPU).
#[derive(Clone, Debug)]
pub struct SvgDrawing {
    graph: Graph,
    ops: Vec<DrawOp>,
    layout: SvgLayout,
}

impl SvgDrawing {
    /// What the one layout spent.
    pub fn layout(&self) -> SvgLayout {
        self.layout
    }

    /// The standalone SVG document of the graph with `path` lit, on the recorded layout:
    /// fills, outlines, edge colours and the ` @<step>` / ` ×N` labels are `path`'s, every
    /// position is the layout's. Drawing a path the drawing was not laid out for (see
    /// [`Graph::svg_drawing`]) works, but a longer label than the one reserved may overflow
    /// its box. Errors only if the renderer panics.
    pub fn render(&self, path: Option<&CasePath>) -> Result<String, String> {
        let g = &self.graph;
        let nodes: Vec<NodeStyle> = g.nodes.iter().map(|n| g.node_style(n, path)).collect();
        let edges: Vec<EdgeStyle> = g.edges.iter().map(|e| g.edge_style(e, path)).collect();
        let (nodes, edges) = (&nodes, &edges);
        let colour = |c: &layout::core::color::Color| -> layout::core::color::Color {
            match decode_colour(c) {
                Some((NODE_FILL, i)) => nodes
                    .get(i)
                    .map_or(*c, |n| layout::core::color::Color::fast(n.fill)),
                Some((NODE_LINE, i)) => nodes
                    .get(i)
                    .map_or(*c, |n| layout::core::color::Color::fast(n.color)),
                Some((_, j)) => edges.get(j).map_or(*c, |e| {
                    layout::core::color::Color::fast(e.color.unwrap_or("black"))
                }),
                None => *c,
            }
        };
        let restyle = |look: &layout::core::style::StyleAttr| {
            let mut look = look.clone();
            look.line_color = colour(&look.line_color);
            look.fill_color = look.fill_color.as_ref().map(&colour);
            look
        };
        let ops = &self.ops;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            use layout::core::format::RenderBackend as _;
            let mut svg = layout::backends::svg::SVGWriter::new();
            for op in ops {
                match op {
                    DrawOp::Rect {
                        xy,
                        size,
                        look,
                        properties,
                        clip,
                    } => svg.draw_rect(*xy, *size, &restyle(look), properties.clone(), *clip),
                    DrawOp::Line {
                        start,
                        stop,
                        look,
                        properties,
                    } => svg.draw_line(*start, *stop, &restyle(look), properties.clone()),
                    DrawOp::Circle {
                        xy,
                        size,
                        look,
                        properties,
                    } => svg.draw_circle(*xy, *size, &restyle(look), properties.clone()),
                    DrawOp::Text { xy, text, look } => {
                        // A node's label is the path's; an edge's (drawn with the edge's
                        // look, no fill) is the same for every path.
                        let label = match look.fill_color.as_ref().and_then(decode_colour) {
                            Some((NODE_FILL, i)) => nodes.get(i).map(|n| dot_text(&n.label)),
                            _ => None,
                        };
                        svg.draw_text(*xy, label.as_deref().unwrap_or(text), &restyle(look));
                    }
                    DrawOp::Arrow {
                        path,
                        dashed,
                        head,
                        look,
                        properties,
                        text,
                    } => svg.draw_arrow(
                        path,
                        *dashed,
                        *head,
                        &restyle(look),
                        properties.clone(),
                        text,
                    ),
                    DrawOp::Clip { xy, size, rounded } => {
                        svg.create_clip(*xy, *size, *rounded);
                    }
                }
            }
            svg.finalize()
        }))
        .map_err(|_| "graph layout failed (renderer panicked)".to_owned())
    }
}

impl Graph {
    /// How node `n` is drawn with `path` lit: its label (` @<step>` when the path reached
    /// it, ` ×N` / ` (not covered)` for coverage), shape, fill and outline.
    fn node_style(&self, n: &GraphNode, path: Option<&CasePath>) -> NodeStyle {
        let lit = path.is_some_and(|p| {
            p.reached.contains_key(&n.id) || (n.kind == NodeKind::Start && !p.edges.is_empty())
        });
        let mut label = match n.kind {
            NodeKind::Start => "start".to_owned(),
            NodeKind::Human => format!("{} (human)", n.id),
            NodeKind::Agent if n.terminal => format!("{} (end)", n.id),
            NodeKind::Agent => n.id.clone(),
        };
        let coverage = path.is_some_and(|p| p.coverage);
        if let Some(step) = path.and_then(|p| p.reached.get(&n.id)) {
            if coverage {
                let _ = write!(label, " ×{step}");
            } else {
                let _ = write!(label, " @{step}");
            }
        } else if coverage && n.kind != NodeKind::Start {
            label.push_str(" (not covered)");
        }
        let (shape, fill) = match n.kind {
            NodeKind::Start => ("circle", "white"),
            NodeKind::Human => ("box", "#fff4d6"),
            NodeKind::Agent if n.terminal => ("box", "#e8f4ea"),
            NodeKind::Agent => ("box", "white"),
        };
        let fill = if lit { "#bcdcff" } else { fill };
        let color = match (lit, coverage) {
            (true, _) => "#1565c0",
            (false, true) => "#c62828",
            (false, false) => "black",
        };
        NodeStyle {
            label,
            shape,
            fill,
            color,
        }
    }

    /// How edge `e` is drawn with `path` lit: its label, dashes and colour.
    fn edge_style(&self, e: &GraphEdge, path: Option<&CasePath>) -> EdgeStyle {
        let label = match &e.kind {
            EdgeKind::Trigger | EdgeKind::OnError => e.label.clone().unwrap_or_default(),
            EdgeKind::Transition(Some(t)) => t.clone(),
            EdgeKind::Transition(None) => String::new(),
        };
        let color = if path.is_some_and(|p| p.lit_edge(&e.source, &e.target)) {
            Some("#1565c0")
        } else if path.is_some_and(|p| p.coverage) {
            Some("#c62828")
        } else {
            None
        };
        EdgeStyle {
            label,
            dashed: e.conditional,
            color,
        }
    }

    /// DOT in the subset the `layout-rs` renderer reads (boxes and circles, `fillcolor`,
    /// `color`, edge labels) for one layout: each node's label is the widest any of `paths`
    /// gives it (so every path's label fits its box), and its colours are codes naming the
    /// node or edge ([`NODE_FILL`], [`NODE_LINE`], [`EDGE_LINE`]) for [`SvgDrawing::render`]
    /// to replace. Colours do not move anything; labels do (a box is as wide as its label).
    fn to_layout_dot(&self, paths: &[Option<&CasePath>]) -> String {
        let paths: &[Option<&CasePath>] = if paths.is_empty() { &[None] } else { paths };
        let mut out = String::from("digraph workflow {\n");
        for (i, n) in self.nodes.iter().enumerate() {
            let mut widest: Option<NodeStyle> = None;
            for p in paths {
                let st = self.node_style(n, *p);
                let wider = widest.as_ref().is_none_or(|w| {
                    dot_text(&st.label).chars().count() > dot_text(&w.label).chars().count()
                });
                if wider {
                    widest = Some(st);
                }
            }
            let Some(st) = widest else { continue };
            let _ = writeln!(
                out,
                "  \"{}\" [label=\"{}\", shape={}, style=filled, fillcolor=\"{}\", color=\"{}\"];",
                escape_dot(&n.id),
                escape_dot(&st.label),
                st.shape,
                code_colour(NODE_FILL, i),
                code_colour(NODE_LINE, i),
            );
        }
        for (j, e) in self.edges.iter().enumerate() {
            let st = self.edge_style(e, None);
            let mut attrs = Vec::new();
            if !st.label.is_empty() {
                attrs.push(format!("label=\"{}\"", escape_dot(&st.label)));
            }
            if st.dashed {
                attrs.push("style=dashed".into());
            }
            attrs.push(format!("color=\"{}\"", code_colour(EDGE_LINE, j)));
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\" [{}];",
                escape_dot(&e.source),
                escape_dot(&e.target),
                attrs.join(", ")
            );
        }
        out.push_str("}\n");
        out
    }

    /// Lays the graph out with `layout-rs` and renders a standalone SVG document (no external
    /// resources). Lit states carry ` @<step>` (the case step at which they were reached).
    /// Errors carry the renderer's message; a renderer panic is caught and reported as an
    /// error. Graphs with more than [`MAX_SVG_NODES`] nodes or [`MAX_SVG_EDGES`] edges are
    /// refused with an error before layout: `layout-rs` takes time that grows much faster
    /// than the graph (measured in a debug build on a ring of states with chords: 51 nodes
    /// 0.8 s, 101 nodes 43 s), so a big workflow could stall its caller. A state name
    /// holding U+0000 is also an error (the renderer's lexer reads NUL as end of input).
    /// To draw several paths on one graph, lay it out once with [`Self::svg_drawing`].
    pub fn to_svg(&self, path: Option<&CasePath>) -> Result<String, String> {
        self.to_svg_measured(path).map(|(svg, _)| svg)
    }

    /// [`Self::to_svg`], also saying what the layout spent: at most [`MAX_LAYOUT_WORK`] units
    /// of edge-crossing optimization (then [`SvgLayout::cut`]), so no graph within the node
    /// and edge bounds takes seconds.
    pub fn to_svg_measured(&self, path: Option<&CasePath>) -> Result<(String, SvgLayout), String> {
        let drawing = self.svg_drawing(&[path])?;
        Ok((drawing.render(path)?, drawing.layout))
    }

    /// Lays the graph out once for drawing each of `paths` ([`SvgDrawing::render`]): every
    /// node's box is as wide as the widest label any of them gives it, so each path's
    /// ` @<step>` fits; positions do not depend on the path. One `layout-rs` run, with the
    /// bounds and errors of [`Self::to_svg`]; `to_svg(p)` is `svg_drawing(&[p])` rendered
    /// with `p`, byte for byte.
    pub fn svg_drawing(&self, paths: &[Option<&CasePath>]) -> Result<SvgDrawing, String> {
        if self.nodes.len() > MAX_SVG_NODES || self.edges.len() > MAX_SVG_EDGES {
            return Err(format!(
                "the graph has {} nodes and {} edges; SVG layout is limited to {MAX_SVG_NODES} nodes and {MAX_SVG_EDGES} edges (use the Mermaid or DOT output)",
                self.nodes.len(),
                self.edges.len()
            ));
        }
        let dot = self.to_layout_dot(paths);
        LAYOUTS.with(|c| c.set(c.get().saturating_add(1)));
        let laid_out =
            std::panic::catch_unwind(move || -> Result<(Vec<DrawOp>, SvgLayout), String> {
                let mut parser = layout::gv::DotParser::new(&dot);
                let ast = parser
                    .process()
                    .map_err(|e| format!("graph layout failed: {e}"))?;
                let mut builder = layout::gv::GraphBuilder::new();
                builder.visit_graph(&ast);
                let mut vg = builder.get();
                let mut rec = Recorder::default();
                let work = vg.do_it_budgeted(false, false, false, &mut rec, MAX_LAYOUT_WORK);
                Ok((
                    rec.ops,
                    SvgLayout {
                        work: work.units,
                        cut: work.exhausted,
                    },
                ))
            })
            .unwrap_or_else(|_| Err("graph layout failed (renderer panicked)".into()));
        let (ops, layout) = laid_out?;
        Ok(SvgDrawing {
            graph: self.clone(),
            ops,
            layout,
        })
    }
}

#[cfg(test)]
mod svg_tests {
    use super::*;

    /// The SVG as `to_svg` made it before drawings were recorded (issue 24): the DOT with
    /// the path's real colours and labels, laid out and written in one go. The styles come
    /// from `node_style` and `edge_style` (what a path looks like is not under test here;
    /// recording a drawing and rendering it per path is).
    fn old_layout_dot(g: &Graph, path: Option<&CasePath>) -> String {
        let mut out = String::from("digraph workflow {\n");
        for n in &g.nodes {
            let NodeStyle {
                label,
                shape,
                fill,
                color,
            } = g.node_style(n, path);
            let _ = writeln!(
                out,
                "  \"{}\" [label=\"{}\", shape={shape}, style=filled, fillcolor=\"{fill}\", color=\"{color}\"];",
                escape_dot(&n.id),
                escape_dot(&label)
            );
        }
        for e in &g.edges {
            let st = g.edge_style(e, path);
            let mut attrs = Vec::new();
            if !st.label.is_empty() {
                attrs.push(format!("label=\"{}\"", escape_dot(&st.label)));
            }
            if st.dashed {
                attrs.push("style=dashed".into());
            }
            if let Some(c) = st.color {
                attrs.push(format!("color=\"{c}\""));
            }
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\" [{}];",
                escape_dot(&e.source),
                escape_dot(&e.target),
                attrs.join(", ")
            );
        }
        out.push_str("}\n");
        out
    }

    fn old_svg(g: &Graph, path: Option<&CasePath>) -> String {
        let dot = old_layout_dot(g, path);
        let mut parser = layout::gv::DotParser::new(&dot);
        let ast = parser.process().unwrap();
        let mut builder = layout::gv::GraphBuilder::new();
        builder.visit_graph(&ast);
        let mut vg = builder.get();
        let mut svg = layout::backends::svg::SVGWriter::new();
        vg.do_it_budgeted(false, false, false, &mut svg, MAX_LAYOUT_WORK);
        svg.finalize()
    }

    /// The `<style>` block holds one rule per font size in hash-map order; the rest is
    /// deterministic. Sorted lines of it, the rest as is.
    fn canonical(svg: &str) -> String {
        match (svg.find("<style>"), svg.find("</style>")) {
            (Some(a), Some(b)) => {
                let mut rules: Vec<&str> = svg[a..b].lines().collect();
                rules.sort_unstable();
                format!("{}{}{}", &svg[..a], rules.join("\n"), &svg[b..])
            }
            _ => svg.to_owned(),
        }
    }

    fn example_graphs() -> Vec<Graph> {
        let mut out: Vec<Graph> = [
            include_str!("../../tests/corpus/customer-support/workflows/order-lookup/workflow.yaml"),
            include_str!("../../tests/corpus/customer-support/workflows/enrich-order/workflow.yaml"),
            "states:\n  a:\n    title: \"x<script>\\\"]] \\\\ & `md` \\u001b[2J\"\n    triggers: { manual: }\n    transitions:\n      - { to: \"b\\\"\\\\\\nq\", type: \"a\\tb\\r\\nc\", description: \"a|b\\n::error x \\e[2J \\\"q\" }\n  \"b\\\"\\\\\\nq\": {}\n",
        ]
        .iter()
        .map(|src| Graph::from_workflow(&Workflow::from_node(&crate::yaml::parse(src).documents[0])))
        .collect();
        let mut ring = String::from("states:\n");
        for i in 0..63 {
            ring.push_str(&format!(
                "  s{i}:\n{}    transitions:\n      - {{ to: s{}, description: next }}\n      - {{ to: s{} }}\n",
                if i == 0 { "    triggers: { manual: }\n" } else { "" },
                (i + 1) % 63,
                (i * 7 + 3) % 63
            ));
        }
        out.push(Graph::from_workflow(&Workflow::from_node(
            &crate::yaml::parse(&ring).documents[0],
        )));
        out
    }

    /// Some paths through `g`: none lit, the first three states in order, every state at a
    /// two-digit step, and coverage of every other state.
    fn paths_of(g: &Graph) -> Vec<Option<CasePath>> {
        let states: Vec<&GraphNode> = g
            .nodes
            .iter()
            .filter(|n| n.kind != NodeKind::Start)
            .collect();
        let mut first = CasePath::default();
        let mut prev = START.to_owned();
        for (k, n) in states.iter().take(3).enumerate() {
            first.reached.insert(n.id.clone(), k + 1);
            first.edges.push((prev, n.id.clone()));
            prev = n.id.clone();
        }
        let mut all = CasePath::default();
        for (k, n) in states.iter().enumerate() {
            all.reached.insert(n.id.clone(), 10 + k);
        }
        let mut cov = CasePath {
            coverage: true,
            ..CasePath::default()
        };
        for n in states.iter().step_by(2) {
            cov.reached.insert(n.id.clone(), 3);
        }
        cov.edges = g
            .edges
            .iter()
            .step_by(2)
            .map(|e| (e.source.clone(), e.target.clone()))
            .collect();
        vec![None, Some(first), Some(all), Some(cov)]
    }

    /// A recorded drawing rendered for the path it was laid out for is the SVG the renderer
    /// wrote directly before (issue 24: the HTML report's example output is unchanged where
    /// one path is drawn on its own layout).
    #[test]
    fn a_drawing_for_one_path_is_the_direct_svg_byte_for_byte() {
        for g in example_graphs() {
            for p in paths_of(&g) {
                let new = g.to_svg(p.as_ref()).unwrap();
                assert_eq!(
                    canonical(&new),
                    canonical(&old_svg(&g, p.as_ref())),
                    "{p:?}"
                );
            }
        }
    }

    /// Issue 24: the HTML report laid the graph out again for every case (200 one-line cases
    /// of a 63-state ring: 27 s of CPU). One drawing serves every path: one layout, every
    /// box wide enough for the widest label it gets, the same geometry for each path, and
    /// each path's own labels and colours.
    #[test]
    fn one_layout_draws_every_path() {
        let rect_geometry = |svg: &str| -> Vec<String> {
            svg.split("<rect ")
                .skip(1)
                .map(|r| r.split(" fill=").next().unwrap_or("").to_owned())
                .collect()
        };
        for g in example_graphs() {
            let paths = paths_of(&g);
            let refs: Vec<Option<&CasePath>> = paths.iter().map(Option::as_ref).collect();
            let before = layouts_on_this_thread();
            let d = g.svg_drawing(&refs).unwrap();
            let svgs: Vec<String> = refs.iter().map(|p| d.render(*p).unwrap()).collect();
            assert_eq!(layouts_on_this_thread(), before + 1);
            let geometry = rect_geometry(&svgs[0]);
            assert!(!geometry.is_empty());
            for (svg, p) in svgs.iter().zip(&refs) {
                assert_eq!(rect_geometry(svg), geometry, "{p:?}");
                for n in &g.nodes {
                    let want = dot_text(&g.node_style(n, *p).label);
                    let shown = want
                        .lines()
                        .next()
                        .unwrap_or("")
                        .replace('&', "&amp;")
                        .replace('<', "&lt;")
                        .replace('>', "&gt;")
                        .replace('"', "&quot;")
                        .replace('\'', "&apos;");
                    assert!(svg.contains(&format!(">{shown}<")), "{shown} in {p:?}");
                }
                let lit = svg.matches("#1565c0ff").count();
                assert_eq!(
                    lit == 0,
                    p.is_none_or(|p| p.reached.is_empty() && p.edges.is_empty()),
                    "{p:?}"
                );
                // Every colour is a real one (opaque), or the renderer's transparent: no code left.
                for attr in [" fill=\"#", " stroke=\"#"] {
                    for (k, _) in svg.match_indices(attr) {
                        let c = &svg[k + attr.len()..k + attr.len() + 8];
                        assert!(c.ends_with("ff") || c == "00000000", "colour #{c} in {p:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn svg_names_every_state_of_the_example_workflows() {
        // Included at compile time: the format crate does no IO, not even in its tests.
        let mut rendered = 0;
        for (slug, text) in [
            (
                "order-lookup",
                include_str!(
                    "../../tests/corpus/customer-support/workflows/order-lookup/workflow.yaml"
                ),
            ),
            (
                "enrich-order",
                include_str!(
                    "../../tests/corpus/customer-support/workflows/enrich-order/workflow.yaml"
                ),
            ),
        ] {
            let wf = Workflow::from_node(&crate::yaml::parse(text).documents[0]);
            assert!(!wf.states.is_empty());
            let svg = Graph::from_workflow(&wf).to_svg(None).expect("renders");
            assert!(
                svg.starts_with("<svg") || svg.contains("<svg"),
                "{}",
                &svg[..100.min(svg.len())]
            );
            for s in &wf.states {
                assert!(
                    svg.contains(&s.slug.value),
                    "state {} missing from the SVG of {slug}",
                    s.slug.value
                );
            }
            rendered += 1;
        }
        assert_eq!(rendered, 2);
    }

    /// Hostile titles and transition descriptions stay inside their quoted labels: no raw
    /// HTML, no entity spelled by the user, no closed quote, no raw control character.
    #[test]
    fn hostile_labels_are_escaped_in_mermaid_and_dot() {
        let src = "states:\n  a:\n    title: \"x<script>alert(1)</script>\\\"]] --> b & #quot; `md` \\u001b[2J\"\n    transitions:\n      - { to: b, description: \"a|b\\n::error x \\e[2J \\\"q\" }\n  b: {}\n";
        let g = Graph::from_workflow(&Workflow::from_node(&crate::yaml::parse(src).documents[0]));
        let m = g.to_mermaid(None);
        for bad in [
            "<script",
            "</script",
            "\u{1b}",
            "#quot; `",
            "`md`",
            "a|b",
            "\n::error",
        ] {
            assert!(!m.contains(bad), "{bad:?} in {m}");
        }
        assert!(m.contains("#60;script#62;"), "{m}");
        assert!(m.contains("#35;quot;"), "{m}");
        assert!(m.contains("#96;md#96;"), "{m}");
        // The description's line break is collapsed by the model; no line starts a command.
        assert!(
            m.contains("|\"a#124;b ::error x \u{fffd}[2J #quot;q\"|"),
            "{m}"
        );
        assert!(!m.lines().any(|l| l.trim_start().starts_with("::")), "{m}");
        // Every label opens and closes its quotes on one line.
        for line in m.lines() {
            assert_eq!(line.matches('"').count() % 2, 0, "{line}");
        }
        let d = g.to_dot(None);
        assert!(!d.contains('\u{1b}'), "{d}");
        assert!(
            d.contains("label=\"a|b ::error x \u{fffd}[2J \\\"q\""),
            "{d}"
        );
    }
}
