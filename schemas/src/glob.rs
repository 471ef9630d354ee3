//! The one glob matcher of governance guards (`tools.allow` / `tools.forbid` entries'
//! `paths` and path arguments, FORMAT §A.3 and §E.7: picomatch semantics with `dot: true`),
//! the runner's `glob` file tool and the cross-file checks: `**` crosses `/` (`**/` matches
//! zero or more whole segments), `*` and `?` do not, `[abc]` / `[!a-z]` / `[^a-z]` are
//! classes that never match `/`, `{a,b}` are alternatives (nested), `\` escapes the next
//! character (an escaped `{` or `,` is literal).
//!
//! Bounded work (docs/security.md): brace expansion stops at [`MAX_BRACE_DEPTH`] levels,
//! [`MAX_BRACE_EXPANSIONS`] alternatives and [`MAX_EXPANDED_CHARS`] characters, and paths
//! longer than [`MAX_PATH_CHARS`] are not matched; each is a [`GlobLimit`], which `check`
//! reports on the glob (`WFX227`) and the runner turns into a refusal (fail closed, see
//! `wfx_runner::governance`). Matching one expansion is a dynamic programme over
//! (pattern position × path position) keeping two rows: time O(pattern × path), memory
//! O(path), no recursion. So one match costs at most
//! `MAX_EXPANDED_CHARS × MAX_PATH_CHARS` (64 Mi) cell updates.
//!
//! Pure; never panics.

use std::fmt;

/// Deepest nesting of `{…}` groups, in levels: `{a,{b,c}}` is 2.
pub const MAX_BRACE_DEPTH: usize = 8;

/// Most alternatives one glob may expand to (`{a,b}{c,d}` is 4). Thirty `{a,b}` in a row
/// would be 2^30.
pub const MAX_BRACE_EXPANSIONS: usize = 1024;

/// Most characters (Unicode scalar values) all of a glob's expansions may hold together;
/// also the longest glob without braces.
pub const MAX_EXPANDED_CHARS: usize = 16_384;

/// Longest path (in Unicode scalar values) a glob is matched against; longer paths match no
/// glob (`GlobLimit::PathTooLong`). Four times Linux's `PATH_MAX` in bytes for ASCII.
pub const MAX_PATH_CHARS: usize = 4096;

/// A glob or path over one of the bounds; the glob cannot be decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobLimit {
    /// `{…}` nested deeper than [`MAX_BRACE_DEPTH`].
    TooDeep,
    /// More than [`MAX_BRACE_EXPANSIONS`] alternatives.
    TooManyAlternatives,
    /// The expansions hold more than [`MAX_EXPANDED_CHARS`] characters.
    TooLong,
    /// The path is longer than [`MAX_PATH_CHARS`] characters.
    PathTooLong,
    /// The file's globs together expanded to more than [`MAX_FILE_GLOB_CHARS`] characters
    /// while a [`GlobBudget`] was armed (`check`: bounded work per file).
    FileBudget,
}

/// Most characters all the guard globs of one file may expand to, together, while a
/// [`GlobBudget`] is armed (`check` and the editor arm one per file): 256 globs at
/// [`MAX_EXPANDED_CHARS`]. Past it every further glob of the file is over a bound
/// (`WFX227`), so 125,000 globs each within its own bounds cost a few milliseconds, not
/// half a minute (bounded work, docs/security.md §3).
pub const MAX_FILE_GLOB_CHARS: usize = 256 * MAX_EXPANDED_CHARS;

thread_local! {
    /// The armed budget of the file being checked on this thread; `None` when unarmed.
    static GLOB_LEFT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Arms [`MAX_FILE_GLOB_CHARS`] for brace expansion on this thread until dropped (the
/// previous state then returns). Unarmed (the runner's matching at run time), each glob is
/// held to its own bounds only.
#[derive(Debug)]
pub struct GlobBudget {
    prev: Option<usize>,
}

impl GlobBudget {
    /// Arms a fresh budget.
    pub fn arm() -> Self {
        let prev = GLOB_LEFT.with(|c| c.replace(Some(MAX_FILE_GLOB_CHARS)));
        Self { prev }
    }
}

impl Drop for GlobBudget {
    fn drop(&mut self) {
        GLOB_LEFT.with(|c| c.set(self.prev));
    }
}

/// Charges `units` to the armed budget: `false` (budget spent) when it cannot pay.
fn charge(units: usize) -> bool {
    GLOB_LEFT.with(|c| match c.get() {
        None => true,
        Some(left) if left >= units => {
            c.set(Some(left - units));
            true
        }
        Some(_) => {
            c.set(Some(0));
            false
        }
    })
}

impl fmt::Display for GlobLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlobLimit::TooDeep => write!(
                f,
                "its `{{…}}` groups nest deeper than {MAX_BRACE_DEPTH} levels"
            ),
            GlobLimit::TooManyAlternatives => write!(
                f,
                "its `{{…}}` groups expand to more than {MAX_BRACE_EXPANSIONS} alternatives"
            ),
            GlobLimit::TooLong => {
                write!(f, "it expands to more than {MAX_EXPANDED_CHARS} characters")
            }
            GlobLimit::PathTooLong => {
                write!(f, "the path is longer than {MAX_PATH_CHARS} characters")
            }
            GlobLimit::FileBudget => write!(
                f,
                "the file's globs together expand to more than {MAX_FILE_GLOB_CHARS} characters"
            ),
        }
    }
}

/// Whether `path` (session-relative, `/`-separated) matches `pattern` (a leading `/` of
/// the pattern is ignored). `Err` when the glob or the path is over a bound: the caller
/// decides which answer is safe (an allow-list treats it as "no match", a forbid-list as
/// "match").
pub fn glob_match(pattern: &str, path: &str) -> Result<bool, GlobLimit> {
    let s: Vec<char> = path.chars().take(MAX_PATH_CHARS + 1).collect();
    if s.len() > MAX_PATH_CHARS {
        return Err(GlobLimit::PathTooLong);
    }
    let expansions = expand_braces(pattern.trim_start_matches('/'))?;
    Ok(expansions.iter().any(|p| matches(&tokens(p), &s)))
}

/// A glob expanded and tokenised once, for matching many paths with one budget (the
/// runner's `glob` and `grep` file tools). Same semantics and bounds as [`glob_match`].
pub struct CompiledGlob {
    alternatives: Vec<Vec<Token>>,
}

impl CompiledGlob {
    /// Expands and tokenises `pattern` (a leading `/` ignored). `Err` over a brace bound.
    pub fn new(pattern: &str) -> Result<Self, GlobLimit> {
        let expansions = expand_braces(pattern.trim_start_matches('/'))?;
        Ok(Self {
            alternatives: expansions.iter().map(|p| tokens(p)).collect(),
        })
    }

    /// The work one match of a path of `path_chars` characters costs, in dynamic-programme
    /// cell updates: the sum over the expansions of (tokens + 1) × (path chars + 1). A
    /// caller with a per-call budget charges this before [`CompiledGlob::is_match`].
    pub fn cost(&self, path_chars: usize) -> u64 {
        let row = path_chars.saturating_add(1) as u64;
        self.alternatives
            .iter()
            .map(|t| (t.len() as u64).saturating_add(1).saturating_mul(row))
            .fold(0, u64::saturating_add)
    }

    /// Whether `path` matches; `Err(GlobLimit::PathTooLong)` past [`MAX_PATH_CHARS`].
    pub fn is_match(&self, path: &str) -> Result<bool, GlobLimit> {
        let s: Vec<char> = path.chars().take(MAX_PATH_CHARS + 1).collect();
        if s.len() > MAX_PATH_CHARS {
            return Err(GlobLimit::PathTooLong);
        }
        Ok(self.alternatives.iter().any(|t| matches(t, &s)))
    }
}

/// `Ok` when `pattern` is within every glob bound ([`MAX_BRACE_DEPTH`],
/// [`MAX_BRACE_EXPANSIONS`], [`MAX_EXPANDED_CHARS`]); `check` reports the `Err`.
pub fn check_pattern(pattern: &str) -> Result<(), GlobLimit> {
    expand_braces(pattern.trim_start_matches('/')).map(|_| ())
}

/// Expands `{a,b}` groups, in order (`x{a,b}{c,d}` → `xac xad xbc xbd`). A `{` without its
/// `}` is literal; escapes stay in the output for the matcher. `Err` over a bound, found
/// before more than the bound's worth of work is done.
pub fn expand_braces(pattern: &str) -> Result<Vec<String>, GlobLimit> {
    // A spent budget refuses before any work; otherwise the glob's own length is charged
    // up front and its expansion after (each is bounded by MAX_EXPANDED_CHARS).
    if !charge(pattern.len().clamp(1, MAX_EXPANDED_CHARS + 1)) {
        return Err(GlobLimit::FileBudget);
    }
    let chars: Vec<char> = pattern.chars().take(MAX_EXPANDED_CHARS + 1).collect();
    if chars.len() > MAX_EXPANDED_CHARS {
        return Err(GlobLimit::TooLong);
    }
    let close_of = match_braces(&chars);
    let seq = parse(&chars, 0, chars.len(), &close_of, 0)?;
    let out = expand(&seq)?;
    if !charge(out.iter().map(String::len).sum()) {
        return Err(GlobLimit::FileBudget);
    }
    Ok(out)
}

/// One part of a parsed glob: literal text or a `{…}` group of alternatives.
enum Piece {
    Lit(String),
    Alt(Vec<Vec<Piece>>),
}

/// For each `{`, the index of its `}` (innermost pairing, escapes skipped).
fn match_braces(chars: &[char]) -> Vec<Option<usize>> {
    let mut close_of = vec![None; chars.len()];
    let mut open = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars.get(i) {
            Some('\\') => i += 1,
            Some('{') => open.push(i),
            Some('}') => {
                if let Some(o) = open.pop()
                    && let Some(slot) = close_of.get_mut(o)
                {
                    *slot = Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    close_of
}

/// Parses `chars[start..end]`; `depth` is the number of groups around it.
fn parse(
    chars: &[char],
    start: usize,
    end: usize,
    close_of: &[Option<usize>],
    depth: usize,
) -> Result<Vec<Piece>, GlobLimit> {
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut i = start;
    while i < end {
        let Some(&c) = chars.get(i) else { break };
        match (c, close_of.get(i).copied().flatten()) {
            ('\\', _) => {
                lit.push('\\');
                if let Some(&n) = chars.get(i + 1).filter(|_| i + 1 < end) {
                    lit.push(n);
                }
                i += 2;
            }
            ('{', Some(close)) if close < end => {
                if depth + 1 > MAX_BRACE_DEPTH {
                    return Err(GlobLimit::TooDeep);
                }
                if !lit.is_empty() {
                    out.push(Piece::Lit(std::mem::take(&mut lit)));
                }
                let mut alts = Vec::new();
                let mut from = i + 1;
                let mut k = i + 1;
                while k < close {
                    match chars.get(k) {
                        Some('\\') => k += 1,
                        Some('{') => {
                            if let Some(c) = close_of.get(k).copied().flatten() {
                                k = c;
                            }
                        }
                        Some(',') => {
                            alts.push(parse(chars, from, k, close_of, depth + 1)?);
                            from = k + 1;
                        }
                        _ => {}
                    }
                    k += 1;
                }
                alts.push(parse(chars, from, close, close_of, depth + 1)?);
                out.push(Piece::Alt(alts));
                i = close + 1;
            }
            (c, _) => {
                lit.push(c);
                i += 1;
            }
        }
    }
    if !lit.is_empty() {
        out.push(Piece::Lit(lit));
    }
    Ok(out)
}

/// Every expansion of `seq`, checking the bounds after each step (the lists only grow).
fn expand(seq: &[Piece]) -> Result<Vec<String>, GlobLimit> {
    let mut acc = vec![String::new()];
    for piece in seq {
        match piece {
            Piece::Lit(s) => {
                for a in &mut acc {
                    a.push_str(s);
                }
            }
            Piece::Alt(alts) => {
                // Every option appears in the result at least once, so the options alone
                // are held to both bounds as they are collected.
                let mut options = Vec::new();
                let mut option_chars = 0usize;
                for alt in alts {
                    let more = expand(alt)?;
                    option_chars += more.iter().map(|o| o.chars().count()).sum::<usize>();
                    options.extend(more);
                    if options.len() > MAX_BRACE_EXPANSIONS {
                        return Err(GlobLimit::TooManyAlternatives);
                    }
                    if option_chars > MAX_EXPANDED_CHARS {
                        return Err(GlobLimit::TooLong);
                    }
                }
                if acc.len().saturating_mul(options.len()) > MAX_BRACE_EXPANSIONS {
                    return Err(GlobLimit::TooManyAlternatives);
                }
                let mut next = Vec::with_capacity(acc.len() * options.len());
                for a in &acc {
                    for o in &options {
                        next.push(format!("{a}{o}"));
                    }
                }
                acc = next;
            }
        }
        let chars: usize = acc.iter().map(|a| a.chars().count()).sum();
        if chars > MAX_EXPANDED_CHARS {
            return Err(GlobLimit::TooLong);
        }
    }
    Ok(acc)
}

/// One matching step of a brace-free glob.
enum Token {
    Lit(char),
    /// `?`
    One,
    /// `*`
    Star,
    /// `**` not followed by `/`: anything, `/` included.
    GlobStar,
    /// `**/`: zero or more whole segments.
    GlobStarSlash,
    /// `[…]`: `(negated, items)`, each item an inclusive range.
    Class(bool, Vec<(char, char)>),
    /// A trailing lone `\`: matches nothing.
    Never,
}

fn tokens(p: &str) -> Vec<Token> {
    let p: Vec<char> = p.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = p.get(i) {
        match c {
            '*' if p.get(i + 1) == Some(&'*') => {
                if p.get(i + 2) == Some(&'/') {
                    out.push(Token::GlobStarSlash);
                    i += 3;
                } else {
                    out.push(Token::GlobStar);
                    i += 2;
                }
            }
            '*' => {
                out.push(Token::Star);
                i += 1;
            }
            '?' => {
                out.push(Token::One);
                i += 1;
            }
            '\\' => {
                match p.get(i + 1) {
                    Some(&n) => out.push(Token::Lit(n)),
                    None => out.push(Token::Never),
                }
                i += 2;
            }
            '[' => {
                let end = p
                    .get(i + 1..)
                    .and_then(|r| r.iter().position(|c| *c == ']'))
                    .map(|e| i + 1 + e);
                let Some(end) = end else {
                    out.push(Token::Lit('['));
                    i += 1;
                    continue;
                };
                let class = p.get(i + 1..end).unwrap_or_default();
                let (negate, class) = match class.first() {
                    Some('!' | '^') => (true, class.get(1..).unwrap_or_default()),
                    _ => (false, class),
                };
                let mut items = Vec::new();
                let mut k = 0;
                while let Some(&a) = class.get(k) {
                    match (class.get(k + 1), class.get(k + 2)) {
                        (Some('-'), Some(&b)) => {
                            items.push((a, b));
                            k += 3;
                        }
                        _ => {
                            items.push((a, a));
                            k += 1;
                        }
                    }
                }
                out.push(Token::Class(negate, items));
                i = end + 1;
            }
            c => {
                out.push(Token::Lit(c));
                i += 1;
            }
        }
    }
    out
}

/// Whether the whole of `s` matches `toks`: `row[j]` is "tokens `t..` match `s[j..]`",
/// computed from the last token back, one row per token.
fn matches(toks: &[Token], s: &[char]) -> bool {
    let m = s.len();
    let mut next: Vec<bool> = (0..=m).map(|j| j == m).collect();
    let mut cur = vec![false; m + 1];
    let at = |row: &[bool], j: usize| row.get(j).copied().unwrap_or(false);
    for tok in toks.iter().rev() {
        let mut acc = false;
        for j in (0..=m).rev() {
            let c = s.get(j).copied();
            let single = |ok: &dyn Fn(char) -> bool| c.is_some_and(|c| c != '/' && ok(c));
            let v = match tok {
                Token::Lit(l) => c == Some(*l) && at(&next, j + 1),
                Token::One => single(&|_| true) && at(&next, j + 1),
                Token::Class(negate, items) => {
                    single(&|c| items.iter().any(|(a, b)| *a <= c && c <= *b) != *negate)
                        && at(&next, j + 1)
                }
                Token::Never => false,
                Token::Star => at(&next, j) || (single(&|_| true) && at(&cur, j + 1)),
                Token::GlobStar => at(&next, j) || (c.is_some() && at(&cur, j + 1)),
                Token::GlobStarSlash => {
                    let v = at(&next, j) || acc;
                    if j > 0 && s.get(j - 1) == Some(&'/') && at(&next, j) {
                        acc = true;
                    }
                    v
                }
            };
            if let Some(slot) = cur.get_mut(j) {
                *slot = v;
            }
        }
        std::mem::swap(&mut next, &mut cur);
    }
    at(&next, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(p: &str, s: &str) -> bool {
        glob_match(p, s).unwrap()
    }

    #[test]
    fn the_file_budget_stops_many_globs_within_their_own_bounds() {
        let glob = "{a,b}".repeat(10);
        // Unarmed (the runner at run time): every glob is held to its own bounds only.
        for _ in 0..500 {
            assert!(check_pattern(&glob).is_ok());
        }
        let budget = GlobBudget::arm();
        let mut ok = 0;
        while check_pattern(&glob).is_ok() {
            ok += 1;
            assert!(ok < 1000, "the budget never ran out");
        }
        assert!(ok > 300, "{ok}");
        assert_eq!(check_pattern(&glob), Err(GlobLimit::FileBudget));
        assert_eq!(glob_match("x", "x"), Err(GlobLimit::FileBudget));
        drop(budget);
        assert_eq!(glob_match("x", "x"), Ok(true));
    }

    #[test]
    fn glob_semantics() {
        assert!(g(
            "skills/order-enrichment/scripts/**",
            "skills/order-enrichment/scripts/enrich-orders.js"
        ));
        assert!(g("skills/**", "skills/a/b/c"));
        assert!(!g("skills/*", "skills/a/b"));
        assert!(g("skills/*", "skills/a"));
        assert!(g("**/*.json", "a/b/c.json"));
        assert!(g("**/*.json", "c.json"));
        assert!(!g("**/*.json", "a/b/c.jsonx"));
        assert!(g("a/**/b", "a/b"));
        assert!(g("a/**/b", "a/x/y/b"));
        assert!(!g("a/**/b", "a/xb"));
        assert!(g("scratchpad/{a,b}.txt", "scratchpad/b.txt"));
        assert!(!g("scratchpad/{a,b}.txt", "scratchpad/c.txt"));
        assert!(g("x/{a,{b,c}d}", "x/cd"));
        assert!(g("file[0-9].txt", "file7.txt"));
        assert!(!g("file[!0-9].txt", "file7.txt"));
        assert!(g("file[^0-9].txt", "filex.txt"));
        assert!(g("a?c", "abc"));
        assert!(!g("a?c", "a/c"));
        assert!(!g("a[/]c", "a/c"));
        assert!(g("/scratchpad/*", "scratchpad/x"));
        assert!(g(".*", ".hidden"));
        assert!(g("a[b", "a[b"));
        assert!(!g("a\\", "a"));
        // Escaped braces and commas are literal.
        assert!(g("x\\{a,b\\}", "x{a,b}"));
        assert!(!g("x\\{a,b\\}", "xa"));
        // An unclosed `{` is literal.
        assert!(g("x{a,b", "x{a,b"));
        // Long literal paths (the old recursive matcher stopped at 64 characters).
        let long = format!("{}/end.txt", "d".repeat(300));
        assert!(g(&long, &long));
        assert!(g("**/end.txt", &long));
    }

    #[test]
    fn brace_bombs_are_refused_before_expanding() {
        let bomb = "{a,b}".repeat(30);
        assert_eq!(
            expand_braces(&bomb).err(),
            Some(GlobLimit::TooManyAlternatives)
        );
        assert_eq!(
            glob_match(&bomb, "ab").err(),
            Some(GlobLimit::TooManyAlternatives)
        );
        // Ten groups of two is exactly 1,024: within the bound.
        assert_eq!(
            expand_braces(&"{a,b}".repeat(10)).map(|v| v.len()),
            Ok(1024)
        );
        assert_eq!(
            expand_braces(&"{a,b}".repeat(11)).err(),
            Some(GlobLimit::TooManyAlternatives)
        );
        let deep = format!("{}x{}", "{a,".repeat(9), "}".repeat(9));
        assert_eq!(check_pattern(&deep), Err(GlobLimit::TooDeep));
        let ok = format!("{}x{}", "{a,".repeat(8), "}".repeat(8));
        assert_eq!(check_pattern(&ok), Ok(()));
        let very_deep = format!("{}x{}", "{".repeat(100_000), "}".repeat(100_000));
        assert_eq!(check_pattern(&very_deep), Err(GlobLimit::TooLong));
        let deep_small = format!("{}x{}", "{a,".repeat(2_000), "}".repeat(2_000));
        assert_eq!(check_pattern(&deep_small), Err(GlobLimit::TooDeep));
        assert_eq!(
            check_pattern(&"a".repeat(MAX_EXPANDED_CHARS + 1)),
            Err(GlobLimit::TooLong)
        );
        // Alternatives that each expand to much text: refused as soon as the options
        // alone are over the size bound.
        let group = format!("{}{}", "{a,b}".repeat(9), "x".repeat(20));
        let many = format!("{{{}}}", vec![group; 40].join(","));
        assert!(many.chars().count() < MAX_EXPANDED_CHARS);
        assert_eq!(check_pattern(&many), Err(GlobLimit::TooLong));
        let group = format!("{}{}", "{a,b}".repeat(2), "x".repeat(2_000));
        let heavy = format!("{{{}}}", vec![group; 3].join(","));
        assert_eq!(check_pattern(&heavy), Err(GlobLimit::TooLong));
        // Many alternatives of long text: under the count bound, over the size bound.
        let wide = format!(
            "{}{{{}}}",
            "{a,b}".repeat(9),
            vec!["x".repeat(40); 2].join(",")
        );
        assert_eq!(check_pattern(&wide), Err(GlobLimit::TooLong));
    }

    #[test]
    fn pathological_patterns_against_long_paths_are_decided() {
        // `*a*a*…*b` against `aaaa…` is exponential for a backtracking matcher.
        let pattern = format!("{}b", "*a".repeat(200));
        let path = "a".repeat(MAX_PATH_CHARS);
        assert_eq!(glob_match(&pattern, &path), Ok(false));
        let pattern = format!("{}b", "**/a".repeat(100));
        let path = vec!["a"; MAX_PATH_CHARS / 2].join("/");
        assert_eq!(glob_match(&pattern, &path), Ok(false));
        assert_eq!(
            glob_match(&format!("{}*", "*a".repeat(100)), &path.replace('/', "")),
            Ok(true)
        );
        assert_eq!(
            glob_match("**", &"a".repeat(MAX_PATH_CHARS + 1)),
            Err(GlobLimit::PathTooLong)
        );
    }
}
