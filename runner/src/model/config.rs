//! The reference's model configuration (design doc §1.1): `ARCHMAX_API_BASE_URL`,
//! `ARCHMAX_API_KEY` and `ARCHMAX_MODEL` (all three required for a live run),
//! `ARCHMAX_TEMPERATURE`, `ARCHMAX_MAX_TOKENS` and the price variables, from the process
//! environment over the workspace root's `.env` (the real environment wins). The model of
//! a call: the state's `model`, then `settings.model`, then `ARCHMAX_MODEL`; the judge's:
//! `tests.judge.model` and `tests.judge.modelOptions` over the environment (FORMAT §A.1).
//!
//! The key is held in [`ModelEnv::api_key`] and nowhere else: `Debug` prints it as
//! `<redacted>`, and no message built here contains it ("no secrets in output").

use std::collections::BTreeMap;

use wfx_schemas::model::workflow::Workflow;
use wfx_schemas::yaml::Node;

/// The variables a live run cannot do without, in the order they are named.
pub const REQUIRED: [&str; 3] = ["ARCHMAX_API_BASE_URL", "ARCHMAX_API_KEY", "ARCHMAX_MODEL"];

/// USD per 1,000,000 tokens (`ARCHMAX_PRICE_*`); cost is only computed when input and
/// output prices are both set.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prices {
    /// `ARCHMAX_PRICE_INPUT`.
    pub input: Option<f64>,
    /// `ARCHMAX_PRICE_OUTPUT`.
    pub output: Option<f64>,
    /// `ARCHMAX_PRICE_CACHE_READ` (cached prompt tokens; defaults to the input price).
    pub cache_read: Option<f64>,
}

impl Prices {
    /// The cost in USD of `usage`, or `None` without input and output prices.
    pub fn cost(&self, usage: super::wire::Usage) -> Option<f64> {
        let (i, o) = (self.input?, self.output?);
        let cached = usage.cached_tokens.min(usage.prompt_tokens);
        let fresh = usage.prompt_tokens - cached;
        let cr = self.cache_read.unwrap_or(i);
        Some((fresh as f64 * i + cached as f64 * cr + usage.completion_tokens as f64 * o) / 1e6)
    }
}

/// The resolved settings of a live run.
#[derive(Clone, PartialEq)]
pub struct ModelEnv {
    /// `ARCHMAX_API_BASE_URL`, without a trailing `/`.
    pub base_url: String,
    /// `ARCHMAX_API_KEY`. Never printed.
    pub api_key: String,
    /// `ARCHMAX_MODEL`.
    pub model: String,
    /// `ARCHMAX_TEMPERATURE`.
    pub temperature: Option<f64>,
    /// `ARCHMAX_MAX_TOKENS`.
    pub max_tokens: Option<u64>,
    /// The price variables.
    pub prices: Prices,
}

impl ModelEnv {
    /// The key as a redaction set (`ARCHMAX_API_KEY` → `<ENV:ARCHMAX_API_KEY>`, with the
    /// cassette's length rule: a local server's placeholder key is no secret): what the
    /// endpoint knows and may echo. The HTTP client redacts every answer with it, and the
    /// judge what its verdict parser decodes from an answer ("no secrets in output",
    /// docs/security.md).
    pub fn key_secrets(&self) -> wfx_schemas::cassette::Secrets {
        wfx_schemas::cassette::Secrets::from_env([(
            "ARCHMAX_API_KEY".to_owned(),
            self.api_key.clone(),
        )])
    }
}

impl std::fmt::Debug for ModelEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelEnv")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("prices", &self.prices)
            .finish()
    }
}

/// Parses `.env` text: `KEY=value` lines, `export ` prefixes, `#` comments, single or
/// double quotes around the value (`\n` unescaped in double quotes), an unquoted value's
/// ` #` comment cut. At most 10,000 lines are read (bounded work).
pub fn parse_dotenv(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines().take(10_000) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let k = k.trim();
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let v = v.trim();
        let v = if let Some(inner) = v.strip_prefix('"').and_then(|r| r.rsplit_once('"')) {
            inner.0.replace("\\n", "\n").replace("\\\"", "\"")
        } else if let Some(inner) = v.strip_prefix('\'').and_then(|r| r.rsplit_once('\'')) {
            inner.0.to_owned()
        } else {
            match v.find(" #") {
                Some(i) => v[..i].trim_end().to_owned(),
                None => v.to_owned(),
            }
        };
        out.push((k.to_owned(), v));
    }
    out
}

/// Set by [`merge_env`] when `.env` named an endpoint that was not taken because the key
/// came from the environment; [`from_vars`] then says why the endpoint is missing.
const REFUSED_DOTENV_URL: &str = "\0wfx: .env endpoint refused";

/// The variables of a run: `dotenv` (the workspace root's `.env`) under `process` (the
/// real environment wins; a variable set but blank in the environment counts as unset
/// there, as the reference's loader reads blank as missing).
///
/// The key and the endpoint come from the same place: when `ARCHMAX_API_KEY` is set in the
/// environment (a CI secret, a developer's shell), `ARCHMAX_API_BASE_URL` is taken from the
/// environment only, never from the repository's `.env`: otherwise a pull request could
/// send the CI's key to a host of its choosing (docs/security.md "The live model",
/// break-it pass 3, F5). Without the endpoint in the environment, [`from_vars`] fails and
/// says so.
pub fn merge_env(
    process: &dyn Fn(&str) -> Option<String>,
    dotenv: &[(String, String)],
) -> impl Fn(&str) -> Option<String> {
    let file: BTreeMap<String, String> = dotenv.iter().cloned().collect();
    let names = [
        "ARCHMAX_API_BASE_URL",
        "ARCHMAX_API_KEY",
        "ARCHMAX_MODEL",
        "ARCHMAX_TEMPERATURE",
        "ARCHMAX_MAX_TOKENS",
        "ARCHMAX_PRICE_INPUT",
        "ARCHMAX_PRICE_OUTPUT",
        "ARCHMAX_PRICE_CACHE_READ",
        "ARCHMAX_STREAMING",
    ];
    let mut merged: BTreeMap<String, String> = BTreeMap::new();
    for n in names {
        let v = process(n)
            .filter(|v| !v.trim().is_empty())
            .or_else(|| file.get(n).cloned().filter(|v| !v.trim().is_empty()));
        if let Some(v) = v {
            merged.insert(n.to_owned(), v);
        }
    }
    let set = |v: Option<String>| v.filter(|v| !v.trim().is_empty()).is_some();
    if set(process("ARCHMAX_API_KEY"))
        && !set(process("ARCHMAX_API_BASE_URL"))
        && merged.remove("ARCHMAX_API_BASE_URL").is_some()
    {
        merged.insert(REFUSED_DOTENV_URL.to_owned(), String::new());
    }
    move |k: &str| merged.get(k).cloned()
}

fn number(get: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<f64>, String> {
    match get(name) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map(Some)
            .ok_or_else(|| format!("{name} must be a number")),
    }
}

/// Reads the live settings; the error names every missing required variable (in
/// [`REQUIRED`] order) or the first malformed number.
pub fn from_vars(get: &dyn Fn(&str) -> Option<String>) -> Result<ModelEnv, String> {
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|n| get(n).is_none_or(|v| v.trim().is_empty()))
        .collect();
    if !missing.is_empty() {
        if get(REFUSED_DOTENV_URL).is_some() {
            return Err("ARCHMAX_API_KEY is set in the environment but ARCHMAX_API_BASE_URL only in the workspace's .env, which may not choose where that key is sent: set ARCHMAX_API_BASE_URL in the environment too (or both in .env).".into());
        }
        return Err(format!(
            "Missing required environment variable{}: {}. Set {} in the environment or in the workspace's .env file.",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        ));
    }
    let base_url = get("ARCHMAX_API_BASE_URL").unwrap_or_default();
    let base_url = base_url.trim().trim_end_matches('/').to_owned();
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err("ARCHMAX_API_BASE_URL must start with http:// or https://".into());
    }
    let max_tokens = match number(get, "ARCHMAX_MAX_TOKENS")? {
        Some(n) if n >= 1.0 && n.fract() == 0.0 => Some(n as u64),
        Some(_) => return Err("ARCHMAX_MAX_TOKENS must be a positive integer".into()),
        None => None,
    };
    Ok(ModelEnv {
        base_url,
        api_key: get("ARCHMAX_API_KEY").unwrap_or_default().trim().to_owned(),
        model: get("ARCHMAX_MODEL").unwrap_or_default().trim().to_owned(),
        temperature: number(get, "ARCHMAX_TEMPERATURE")?,
        max_tokens,
        prices: Prices {
            input: number(get, "ARCHMAX_PRICE_INPUT")?,
            output: number(get, "ARCHMAX_PRICE_OUTPUT")?,
            cache_read: number(get, "ARCHMAX_PRICE_CACHE_READ")?,
        },
    })
}

fn str_at<'n>(node: Option<&'n Node>, key: &str) -> Option<&'n str> {
    node?.get_value(key)?.as_str()
}

/// The model of a state: its `model`, then `settings.model`, then `default`.
pub fn state_model(wf: &Workflow, state: &str, default: &str) -> String {
    let states = wf.root.get_value("states");
    let st = states.and_then(|s| s.get_value(state));
    str_at(st, "model")
        .or_else(|| str_at(wf.root.get_value("settings"), "model"))
        .unwrap_or(default)
        .to_owned()
}

/// The judge's `(model, temperature, max_tokens)`: `tests.judge.model` and
/// `tests.judge.modelOptions.{temperature,maxTokens}` over `env`'s.
pub fn judge_settings(wf: &Workflow, env: &ModelEnv) -> (String, Option<f64>, Option<u64>) {
    let judge = wf
        .root
        .get_value("tests")
        .and_then(|t| t.get_value("judge"));
    let model = str_at(judge, "model").unwrap_or(&env.model).to_owned();
    let opts = judge.and_then(|j| j.get_value("modelOptions"));
    let num = |k: &str| -> Option<f64> {
        let v = opts?.get_value(k)?.to_json();
        v.as_f64()
    };
    let temperature = num("temperature").or(env.temperature);
    let max_tokens = num("maxTokens")
        .filter(|n| *n >= 1.0)
        .map(|n| n as u64)
        .or(env.max_tokens);
    (model, temperature, max_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k: &str| m.get(k).cloned()
    }

    #[test]
    fn missing_variables_are_named() {
        let e = from_vars(&vars(&[("ARCHMAX_MODEL", "m")])).unwrap_err();
        assert!(e.contains("ARCHMAX_API_BASE_URL, ARCHMAX_API_KEY."), "{e}");
        let e = from_vars(&vars(&[
            ("ARCHMAX_MODEL", "m"),
            ("ARCHMAX_API_BASE_URL", "http://x"),
            ("ARCHMAX_API_KEY", " "),
        ]))
        .unwrap_err();
        assert!(e.contains("variable: ARCHMAX_API_KEY."), "{e}");
    }

    #[test]
    fn environment_wins_over_dotenv_and_debug_hides_the_key() {
        let dot = parse_dotenv(
            "# c\nexport ARCHMAX_MODEL=\"from-file\"\nARCHMAX_API_KEY='sk-file'\nARCHMAX_API_BASE_URL=http://h/v1/ # x\nARCHMAX_TEMPERATURE=0.2\n",
        );
        let process = vars(&[("ARCHMAX_MODEL", "from-env"), ("ARCHMAX_API_KEY", "")]);
        let get = merge_env(&process, &dot);
        let env = from_vars(&get).unwrap();
        assert_eq!(env.model, "from-env");
        assert_eq!(env.api_key, "sk-file");
        assert_eq!(env.base_url, "http://h/v1");
        assert_eq!(env.temperature, Some(0.2));
        assert!(!format!("{env:?}").contains("sk-file"));
    }

    #[test]
    fn a_dotenv_endpoint_is_refused_for_a_key_from_the_environment() {
        // Break-it pass 3, F5: the repository's .env chose where the CI's key was sent.
        let dot = parse_dotenv("ARCHMAX_API_BASE_URL=http://evil.example/v1\nARCHMAX_MODEL=m\n");
        let process = vars(&[("ARCHMAX_API_KEY", "sk-from-ci-secret")]);
        let e = from_vars(&merge_env(&process, &dot)).unwrap_err();
        assert!(e.contains("only in the workspace's .env"), "{e}");
        assert!(!e.contains("sk-from-ci"), "{e}");
        // Both in the environment: the environment's endpoint.
        let process = vars(&[
            ("ARCHMAX_API_KEY", "sk-from-ci-secret"),
            ("ARCHMAX_API_BASE_URL", "https://api.example/v1"),
        ]);
        let env = from_vars(&merge_env(&process, &dot)).unwrap();
        assert_eq!(env.base_url, "https://api.example/v1");
        // Both in .env (a developer's own file): taken as before.
        let dot = parse_dotenv(
            "ARCHMAX_API_BASE_URL=http://h/v1\nARCHMAX_API_KEY=sk-file-key\nARCHMAX_MODEL=m\n",
        );
        let env = from_vars(&merge_env(&vars(&[]), &dot)).unwrap();
        assert_eq!(env.base_url, "http://h/v1");
    }

    #[test]
    fn model_precedence() {
        let src = "settings: { model: wf-model }\ntests: { judge: { model: j, modelOptions: { temperature: 0, maxTokens: 9 } } }\nstates:\n  a: { model: a-model, transitions: [{ to: b }] }\n  b: {}\n";
        let wf = Workflow::from_node(wfx_schemas::yaml::parse(src).documents.first().unwrap());
        assert_eq!(state_model(&wf, "a", "env"), "a-model");
        assert_eq!(state_model(&wf, "b", "env"), "wf-model");
        let env = from_vars(&vars(&[
            ("ARCHMAX_MODEL", "env"),
            ("ARCHMAX_API_BASE_URL", "http://x"),
            ("ARCHMAX_API_KEY", "k"),
            ("ARCHMAX_TEMPERATURE", "0.7"),
        ]))
        .unwrap();
        assert_eq!(judge_settings(&wf, &env), ("j".into(), Some(0.0), Some(9)));
        let bare = Workflow::from_node(
            wfx_schemas::yaml::parse("states: { a: {} }\n")
                .documents
                .first()
                .unwrap(),
        );
        assert_eq!(state_model(&bare, "a", "env"), "env");
        assert_eq!(judge_settings(&bare, &env), ("env".into(), Some(0.7), None));
    }
}
