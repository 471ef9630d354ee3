//! Glob matching for governance path guards (`tools.allow[].paths`, FORMAT §A.3) and the
//! `glob` file tool: the bounded matcher of `wfx_schemas::glob` (one implementation for
//! `check` and the runner), plus [`escape`] for substituted values.
//!
//! Bounded work: a glob over a bound (brace depth, alternatives, size) or a path over
//! `MAX_PATH_CHARS` gives `Err(GlobLimit)`; governance blocks the call (fail closed, both
//! for allow and forbid entries), the `glob` tool lists nothing for it.

pub use wfx_schemas::glob::{GlobLimit, glob_match};

/// Escapes glob metacharacters (`\*?[]{}()!+@|^$`) in a substituted `${{…}}` value, as the
/// reference does before putting it in a guard (FORMAT §A.3).
pub fn escape(value: &str) -> String {
    let mut out = String::new();
    for c in value.chars() {
        if "\\*?[]{}()!+@|^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob_match(p: &str, s: &str) -> bool {
        super::glob_match(p, s).unwrap()
    }

    #[test]
    fn glob_semantics() {
        assert!(glob_match(
            "skills/order-enrichment/scripts/**",
            "skills/order-enrichment/scripts/enrich-orders.js"
        ));
        assert!(glob_match("skills/**", "skills/a/b/c"));
        assert!(!glob_match("skills/*", "skills/a/b"));
        assert!(glob_match("skills/*", "skills/a"));
        assert!(glob_match("**/*.json", "a/b/c.json"));
        assert!(glob_match("**/*.json", "c.json"));
        assert!(glob_match("scratchpad/{a,b}.txt", "scratchpad/b.txt"));
        assert!(glob_match("file[0-9].txt", "file7.txt"));
        assert!(!glob_match("file[!0-9].txt", "file7.txt"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "a/c"));
        assert!(glob_match(&escape("x*y"), "x*y"));
        assert!(!glob_match(&escape("x*y"), "xzzy"));
        assert!(glob_match("/scratchpad/*", "scratchpad/x"));
    }
}
