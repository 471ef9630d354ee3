//! Glob matching for governance path guards (`tools.allow[].paths`, FORMAT §A.3) and the
//! `glob` file tool: `**` crosses `/`, `*` and `?` do not, `[abc]`/`[!a-z]` are classes,
//! `{a,b}` are alternatives, `\` escapes the next character.
//!
//! Pure; never panics; recursion is bounded by the pattern length.

/// True when `path` (session-relative, `/`-separated, no leading `/`) matches `pattern`.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim_start_matches('/');
    expand_braces(pattern).iter().any(|p| {
        let pc: Vec<char> = p.chars().collect();
        let sc: Vec<char> = path.chars().collect();
        matches(&pc, &sc, 0)
    })
}

fn expand_braces(p: &str) -> Vec<String> {
    let chars: Vec<char> = p.chars().collect();
    let Some(open) = chars.iter().position(|c| *c == '{') else {
        return vec![p.to_owned()];
    };
    let mut depth = 0;
    let mut close = None;
    let mut splits = Vec::new();
    for (i, c) in chars.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            ',' if depth == 1 => splits.push(i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return vec![p.to_owned()];
    };
    let head: String = chars.get(..open).unwrap_or_default().iter().collect();
    let tail: String = chars.get(close + 1..).unwrap_or_default().iter().collect();
    let mut bounds = vec![open];
    bounds.extend(splits);
    bounds.push(close);
    let mut out = Vec::new();
    for w in bounds.windows(2) {
        if let [a, b] = w {
            let alt: String = chars.get(a + 1..*b).unwrap_or_default().iter().collect();
            for rest in expand_braces(&format!("{head}{alt}{tail}")) {
                if out.len() < 256 {
                    out.push(rest);
                }
            }
        }
    }
    out
}

fn matches(p: &[char], s: &[char], depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    match p.first() {
        None => s.is_empty(),
        Some('*') if p.get(1) == Some(&'*') => {
            // `**/` matches zero or more whole segments; a bare `**` matches anything.
            let rest = if p.get(2) == Some(&'/') {
                p.get(3..).unwrap_or_default()
            } else {
                p.get(2..).unwrap_or_default()
            };
            (0..=s.len()).any(|i| {
                (i == 0 || s.get(i - 1) == Some(&'/') || p.get(2) != Some(&'/'))
                    && matches(rest, s.get(i..).unwrap_or_default(), depth + 1)
            })
        }
        Some('*') => {
            let rest = p.get(1..).unwrap_or_default();
            for i in 0..=s.len() {
                if matches(rest, s.get(i..).unwrap_or_default(), depth + 1) {
                    return true;
                }
                if s.get(i) == Some(&'/') {
                    break;
                }
            }
            false
        }
        Some('?') => {
            matches!(s.first(), Some(c) if *c != '/')
                && matches(
                    p.get(1..).unwrap_or_default(),
                    s.get(1..).unwrap_or_default(),
                    depth + 1,
                )
        }
        Some('[') => {
            let Some(end) = p.iter().skip(1).position(|c| *c == ']').map(|i| i + 1) else {
                return s.first() == Some(&'[')
                    && matches(
                        p.get(1..).unwrap_or_default(),
                        s.get(1..).unwrap_or_default(),
                        depth + 1,
                    );
            };
            let Some(c) = s.first() else { return false };
            let class = p.get(1..end).unwrap_or_default();
            let (negate, class) = match class.first() {
                Some('!') | Some('^') => (true, class.get(1..).unwrap_or_default()),
                _ => (false, class),
            };
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                match (class.get(i), class.get(i + 1), class.get(i + 2)) {
                    (Some(a), Some('-'), Some(b)) => {
                        hit |= a <= c && c <= b;
                        i += 3;
                    }
                    (Some(a), _, _) => {
                        hit |= a == c;
                        i += 1;
                    }
                    _ => break,
                }
            }
            hit != negate
                && *c != '/'
                && matches(
                    p.get(end + 1..).unwrap_or_default(),
                    s.get(1..).unwrap_or_default(),
                    depth + 1,
                )
        }
        Some('\\') => match (p.get(1), s.first()) {
            (Some(a), Some(b)) if a == b => matches(
                p.get(2..).unwrap_or_default(),
                s.get(1..).unwrap_or_default(),
                depth + 1,
            ),
            _ => false,
        },
        Some(c) => {
            s.first() == Some(c)
                && matches(
                    p.get(1..).unwrap_or_default(),
                    s.get(1..).unwrap_or_default(),
                    depth + 1,
                )
        }
    }
}

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
