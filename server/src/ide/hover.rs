//! Hover: key docs from the one table (`wfx_schemas::docs`), state and trigger cards from
//! the workflow, and regex tokens (pattern, flags, or "plain string"). Uses the tree when the
//! text parses, else the line-based context (key docs and symbol cards still work).
//!
//! Must not: put workspace text into a card as Markdown. Titles, summaries, descriptions,
//! slugs, ids, types and patterns go through [`super::markdown`] (`text` for prose, `code`
//! for names), so a summary `![x](https://…/p.png)` shows as text and fetches nothing.

use wfx_schemas::docs::{self, DocFile, path_matches};
use wfx_schemas::jsregex;
use wfx_schemas::model::workflow::{SigEntry, State, StateType, Workflow};

use super::Hover;
use super::analysis::{Analysis, DocKind, Hit, Sym, locate, symbol_at, tight};
use super::context::{Slot, context};
use super::markdown::{code, text};

/// Case value paths whose strings are matched by `partialMatch` or as reply tokens
/// (FORMAT §B.2 "Regex syntax"): `(pattern, substring)`.
const REGEX_PATHS: &[(&str, bool)] = &[
    ("steps.-.reply.includes|excludes", true),
    ("steps.-.reply.includes|excludes.-", true),
    ("steps.-.raised.reason", false),
];

fn regex_context(segs: &[&str]) -> Option<bool> {
    if let Some((_, sub)) = REGEX_PATHS.iter().find(|(p, _)| path_matches(p, segs)) {
        return Some(*sub);
    }
    let tool_input = segs.len() > 4
        && path_matches(
            "steps.-.calledTool|notCalledTool|blockedTool.input",
            segs.get(..4).unwrap_or(&[]),
        );
    let when_input =
        segs.len() > 3 && path_matches("mocks.-.whenInput", segs.get(..3).unwrap_or(&[]));
    (tool_input || when_input).then_some(false)
}

/// Hover at `offset`; see [`super::hover`].
pub(crate) fn hover(an: &Analysis<'_>, offset: u32) -> Option<Hover> {
    let file = match an.kind {
        DocKind::Case => DocFile::Case,
        DocKind::Workflow => DocFile::Workflow,
        DocKind::Agent => return None,
    };
    if let Some(root) = an.root() {
        let loc = locate(root, offset)?;
        let segs = loc.segs();
        if let Some((sym, range)) = symbol_at(an.kind, &loc)
            && let Some(md) = symbol_card(an, &sym)
        {
            return Some(Hover {
                range: tight(an.text, range),
                markdown: md,
            });
        }
        return match loc.hit {
            Hit::Key(e) => docs::lookup(file, &segs).map(|d| Hover {
                range: e.key.range,
                markdown: d.markdown(),
            }),
            Hit::Value(n) => {
                if let (Some(substring), Some(s)) = (regex_context(&segs), n.as_str()) {
                    return Some(Hover {
                        range: tight(an.text, n.range),
                        markdown: regex_card(s, substring),
                    });
                }
                None
            }
        };
    }
    // Broken text: the line context still names the key or the value's path.
    let cx = context(an.text, offset)?;
    let word = an.text.get(cx.word.as_usize())?.to_owned();
    let mut segs: Vec<&str> = cx.path.iter().map(String::as_str).collect();
    match cx.slot {
        Slot::Key => {
            segs.push(&word);
            let d = docs::lookup(file, &segs)?;
            Some(Hover {
                range: cx.word,
                markdown: d.markdown(),
            })
        }
        Slot::Value => {
            let is_state = match an.kind {
                DocKind::Case => super::analysis::CASE_STATE_PATHS
                    .iter()
                    .any(|p| path_matches(p, &segs)),
                DocKind::Workflow => super::analysis::WF_STATE_PATHS
                    .iter()
                    .any(|p| path_matches(p, &segs)),
                DocKind::Agent => false,
            };
            let is_trigger = an.kind == DocKind::Case
                && super::analysis::CASE_TRIGGER_PATHS
                    .iter()
                    .any(|p| path_matches(p, &segs));
            let sym = if is_state {
                Sym::State(word)
            } else if is_trigger {
                Sym::Trigger(word)
            } else {
                return None;
            };
            Some(Hover {
                range: cx.word,
                markdown: symbol_card(an, &sym)?,
            })
        }
    }
}

fn symbol_card(an: &Analysis<'_>, sym: &Sym) -> Option<String> {
    let wf = an.workflow()?;
    match sym {
        Sym::State(s) => wf.state(s).map(state_card),
        Sym::Trigger(id) => Some(trigger_card(wf, id)),
        Sym::Tool(_) => None,
    }
}

/// Title, summary, type, triggers and edges of a state.
pub(crate) fn state_card(st: &State) -> String {
    let ty = match st.kind {
        StateType::Human => "human",
        StateType::Agent => "agent",
    };
    let mut md = format!(
        "**state {}** ({ty}{})",
        code(&st.slug.value),
        if st.is_terminal() { ", terminal" } else { "" }
    );
    if let Some(t) = &st.title {
        md.push_str(&format!("\n\n{}", text(t)));
    }
    if let Some(s) = &st.summary {
        md.push_str(&format!("\n\n{}", text(s)));
    }
    if !st.triggers.is_empty() {
        let ids: Vec<String> = st.triggers.iter().map(|t| code(&t.id.value)).collect();
        md.push_str(&format!("\n\nTriggers: {}", ids.join(", ")));
    }
    if !st.transitions.is_empty() {
        md.push_str("\n\nEdges:");
        for t in &st.transitions {
            let ty = t
                .kind
                .as_ref()
                .map(|k| format!(" ({})", text(&k.value)))
                .unwrap_or_default();
            let desc = t
                .description
                .as_deref()
                .map(|d| format!(": {}", text(&wfx_schemas::text::collapse_whitespace(d))))
                .unwrap_or_default();
            md.push_str(&format!("\n- → {}{ty}{desc}", code(&t.to.value)));
        }
    }
    if let Some(e) = &st.on_error {
        md.push_str(&format!("\n\non_error → {}", code(&e.value)));
    }
    md
}

fn sig(entries: &[SigEntry]) -> String {
    entries
        .iter()
        .map(|e| match &e.ty {
            Some(t) => code(&format!("{}: {t}", e.name.value)),
            None => code(&e.name.value),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Entry state, session path, requires and returns of a trigger.
pub(crate) fn trigger_card(wf: &Workflow, id: &str) -> String {
    let Some(t) = wf.trigger(id) else {
        return if id == "manual" {
            "**trigger `manual`**: the reserved default trigger; no state of this workflow declares it".into()
        } else {
            format!(
                "**trigger {}**: no state of this workflow declares it",
                code(id)
            )
        };
    };
    let mut md = format!("**trigger {}** → entry state {}", code(id), code(&t.state));
    if let Some(d) = &t.description {
        md.push_str(&format!("\n\n{}", text(d)));
    }
    if let Some(s) = &t.session {
        md.push_str(&format!("\n\nsession: {}", code(s)));
    }
    if !t.requires.is_empty() {
        md.push_str(&format!("\n\nrequires: {}", sig(&t.requires)));
    }
    if !t.returns.is_empty() {
        md.push_str(&format!("\n\nreturns: {}", sig(&t.returns)));
    }
    md
}

/// Pattern and flags of a `/…/flags` token, or how a plain string matches.
pub(crate) fn regex_card(s: &str, substring: bool) -> String {
    match jsregex::regex_token(s) {
        Some((body, flags)) => {
            let mut md = format!("**regular expression** {}", code(&format!("/{body}/")));
            if flags.is_empty() {
                md.push_str("\n\nno flags");
            } else {
                md.push_str(&format!("\n\nflags: {}", code(flags)));
            }
            if let Err(e) = jsregex::compile(body, flags) {
                md.push_str(&format!("\n\n**malformed:** {}", text(&e)));
            }
            md.push_str(&format!(
                "\n\nReference: {}",
                wfx_schemas::docs::reference_link(
                    wfx_schemas::docs::REGEX_ANCHOR,
                    "regular expressions"
                )
            ));
            md
        }
        None if substring => {
            "plain string: matches as a substring (write `/…/flags` for a regex)".into()
        }
        None => "plain string: matches by strict equality (write `/…/flags` for a regex)".into(),
    }
}
