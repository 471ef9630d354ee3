//! The QuickJS driver behind [`super::run_hook`] and [`super::run_script`]: one fresh
//! runtime and context per run, the prelude (console, `tools`, verdict helpers), budget
//! enforcement, and a loop that serves `tools.*` calls between microtask drains.
//!
//! `tools.<name>(input)` returns a promise and queues the call on the Rust side; once the
//! job queue is empty the driver serves queued calls through the [`Bridge`] in issue order,
//! settles their promises and drains again, until the run's promise settles. So calls
//! awaited together (`Promise.all`) all reach the bridge, and nothing in JavaScript can block.
//!
//! Body evaluation: the body is first run as an async global script (QuickJS's
//! `JS_EVAL_FLAG_ASYNC`), which allows top-level `await` and yields the completion value
//! (`{ value }`); a body that uses top-level `return` fails that parse with "return not in a
//! function" and is then run as `(async () => { <body> })()`, the prefix on the body's first
//! line so line numbers stay true.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Function, Promise, Runtime, Value};

use super::memory::MemoryBudget;
use super::source::{camel_case, referenced_tools, snake_from_camel};
use super::{Bridge, BudgetKind, Budgets, CancelToken, SandboxError, Verdict};

/// What kind of run, with its input.
pub(crate) enum Job<'a> {
    /// A lifecycle hook called with this input object.
    Hook {
        /// The hook input (without `tools`).
        input: &'a serde_json::Value,
    },
    /// An `archmax_run` script with this `args` global.
    Script {
        /// The `args` global.
        args: &'a serde_json::Value,
    },
}

/// Native stack QuickJS may use, in bytes; deep recursion becomes a `RangeError`.
const STACK_LIMIT_BYTES: usize = 1024 * 1024;
/// Total `console.*` text kept per run, in bytes; later lines are dropped with one marker.
const LOG_LIMIT_BYTES: usize = 1024 * 1024;
/// Memory a syntax check may use, in bytes ([`compile_only`]).
const COMPILE_MEMORY_LIMIT_BYTES: usize = 64 * 1024 * 1024;
/// Most CPU time one compile-only syntax check may parse: 1,000 ms of the calling thread's
/// CPU time. A 1 MiB script of ordinary code parses in tens of ms; 65,000 `let` names in one
/// function took 13.8 s (break-it pass 4, F3), and `check` promises about 1 s per file
/// (docs/security.md). CPU time, not wall-clock time, so whether a file is checked does not
/// depend on how busy the machine is (issue 24: under load an ordinary 0.6 s parse passed a
/// wall-clock bound, and the server caches a check's result by the file's text).
pub const COMPILE_TIME_LIMIT_MS: u64 = 1_000;
/// Prefix of the fallback wrapper for bodies with top-level `return`.
pub(crate) const IIFE_PREFIX: &str = "(async () => {";
/// Suffix of that wrapper.
const IIFE_SUFFIX: &str = "\n})()";
/// The message QuickJS gives for a top-level `return` in a script.
const RETURN_OUTSIDE_FUNCTION: &str = "return not in a function";

/// Installed in every run: console capture, the `tools` bridge and the settle hook. The
/// host functions are taken off the global object so a script cannot call them.
const PRELUDE: &str = r#""use strict";
(() => {
  const enqueue = globalThis.__wfxEnqueue;
  const log = globalThis.__wfxLog;
  const names = JSON.parse(globalThis.__wfxNames);
  delete globalThis.__wfxEnqueue;
  delete globalThis.__wfxLog;
  delete globalThis.__wfxNames;
  const show = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof Error) return String(v);
    if (typeof v === "function") return "[function " + (v.name || "anonymous") + "]";
    try {
      const s = JSON.stringify(v);
      return s === undefined ? String(v) : s;
    } catch {
      return String(v);
    }
  };
  const line = (...parts) => { log(parts.map(show).join(" ")); };
  globalThis.console = Object.freeze({ log: line, info: line, warn: line, error: line, debug: line, trace: line });
  const pending = new Map();
  const tools = {};
  for (const [camel, snake] of names) {
    tools[camel] = (input) => new Promise((resolve, reject) => {
      const args = input !== null && typeof input === "object" && !Array.isArray(input) ? input : {};
      const id = enqueue(snake, JSON.stringify(args));
      if (id < 0) {
        reject(new Error("too many tool calls are waiting (" + (-id) + " is the runner's bound on calls not yet served, and 16 MiB on their inputs); await some before making more"));
        return;
      }
      pending.set(id, { resolve, reject });
    });
  }
  globalThis.tools = Object.freeze(tools);
  Object.defineProperty(globalThis, "__wfxSettle", {
    value: (id, ok, text) => {
      const entry = pending.get(id);
      pending.delete(id);
      if (!entry) return;
      if (ok) entry.resolve(text);
      else entry.reject(new Error(text));
    },
  });
})();
"#;

/// Installed for hooks: the verdict helpers, `defineHook`, and the run function that calls
/// the registered hook and reduces its result to a verdict (FORMAT §E.6).
const HOOK_PRELUDE: &str = r#""use strict";
(() => {
  const make = (verdict, reason, fallback) => ({
    verdict,
    reason: reason == null || String(reason).trim() === "" ? fallback : String(reason),
  });
  globalThis.ok = (reason) => make("ok", reason, "ok");
  globalThis.veto = (reason) => make("veto", reason, "vetoed by hook");
  globalThis.correct = (reason) => make("correct", reason, "correction requested");
  const slot = { d: undefined };
  Object.defineProperty(globalThis, "__wfxHook", { value: slot });
  globalThis.defineHook = (fn) => { slot.d = fn; return fn; };
  const isVerdict = (v) => v != null && typeof v === "object" &&
    (v.verdict === "ok" || v.verdict === "veto" || v.verdict === "correct");
  const shape = (v) => {
    if (Array.isArray(v)) return "an array";
    const keys = Object.keys(v);
    if (keys.length === 0) return "an object with no keys";
    const shown = keys.slice(0, 6).map((k) => "'" + k + "'").join(", ");
    return "an object with " + (keys.length > 6 ? "keys including " : "keys ") + shown;
  };
  Object.defineProperty(globalThis, "__wfxRun", {
    value: async (body, completion) => {
      const done = await body;
      const value = await (completion ? done && done.value : done);
      const out = typeof slot.d === "function"
        ? await slot.d(Object.assign({}, globalThis.args, { tools: globalThis.tools }))
        : value;
      if (isVerdict(out)) return JSON.stringify({ verdict: out.verdict, reason: String(out.reason ?? "") });
      if (out === false) return JSON.stringify({ verdict: "veto", reason: "precondition not met" });
      if (out !== null && typeof out === "object") {
        throw new Error("hook returned " + shape(out) + ", which is not a verdict; return ok(), " +
          "veto(reason), correct(reason), false or nothing");
      }
      return JSON.stringify({ verdict: "ok", reason: "ok" });
    },
  });
})();
"#;

/// Installed for `archmax_run` scripts: the run function returning the value as JSON text.
const SCRIPT_PRELUDE: &str = r#""use strict";
Object.defineProperty(globalThis, "__wfxRun", {
  value: async (body, completion) => {
    const done = await body;
    const value = await (completion ? done && done.value : done);
    const text = JSON.stringify(value);
    return text === undefined ? "null" : text;
  },
});
"#;

/// Most tool calls a script may have queued and not yet served (issued without awaiting):
/// bounded memory outside QuickJS's own limit (break-it finding: a loop of un-awaited
/// `tools.readFile` calls queued gigabytes in Rust). A call past it is rejected in the
/// script with an error; the run goes on.
pub const MAX_QUEUED_CALLS: usize = 1024;

/// Most bytes of input JSON the queued calls may hold together (see [`MAX_QUEUED_CALLS`]).
pub const MAX_QUEUED_BYTES: usize = 16 * 1024 * 1024;

/// Rust-side state the host functions write to.
#[derive(Default)]
struct Shared {
    /// Queued tool calls: (id, snake_case name, input JSON).
    calls: Vec<(u32, String, String)>,
    /// Bytes of input JSON in `calls` (bounded by [`MAX_QUEUED_BYTES`]).
    queued_bytes: usize,
    /// Next call id.
    next_id: u32,
    /// Captured console lines.
    logs: Vec<String>,
    /// Bytes in `logs`.
    log_bytes: usize,
}

/// A failure before classification (budgets need the runtime, which is locked while a
/// context is in use).
enum Fail {
    /// Already classified.
    Sandbox(SandboxError),
    /// The interrupt handler fired, or the driver saw the alarm.
    Timeout,
    /// QuickJS reported out-of-memory.
    Memory,
    /// A failure that an exhausted memory budget explains, from QuickJS's out-of-memory paths
    /// that cannot say so: `null` thrown (no memory for the error object), an error without
    /// a message (no memory for its text), no exception at all (a builtin's failed
    /// allocation), the run's promise left pending (a dropped promise job). The memory
    /// budget when the run's allocator refused an allocation ([`MemoryBudget::refusals`]),
    /// else this error.
    IfOutOfMemory(SandboxError),
    /// The body does not parse; the 1-based (line, byte column) in the evaluated code.
    Syntax {
        /// QuickJS's message.
        message: String,
        /// Where, when QuickJS said.
        at: Option<(u32, u32)>,
    },
}

/// Runs `body` as `job`; returns the run's JSON value (the verdict object for hooks) and the
/// console lines. `cancel`, once set, stops the run at QuickJS's next interrupt poll (every
/// back-edge and call) or before the next bridge call: [`SandboxError::Cancelled`].
pub(crate) fn run(
    job: Job<'_>,
    body: &str,
    path: &str,
    bridge: &mut dyn Bridge,
    budgets: &Budgets,
    cancel: Option<&CancelToken>,
) -> (Result<serde_json::Value, SandboxError>, Vec<String>) {
    let shared = Rc::new(RefCell::new(Shared::default()));
    let stop = Stop {
        alarm: Alarm::start(Duration::from_millis(budgets.timeout_ms)),
        cancel: cancel.map(CancelToken::flag),
    };
    let result = run_inner(&job, body, path, bridge, budgets, &shared, &stop);
    let logs = std::mem::take(&mut shared.borrow_mut().logs);
    (result, logs)
}

/// The run's time budget as a flag: a timer thread (the alarm) raises it at the deadline, so
/// QuickJS's interrupt handler, polled at every back-edge and call (the vendored
/// rquickjs-sys sets `JS_INTERRUPT_COUNTER_INIT` to 1, vendor/rquickjs-sys/PATCH.md), is one
/// atomic load instead of a clock read. Dropping the alarm ends its thread at once.
struct Alarm {
    /// Raised at the deadline.
    fired: Arc<AtomicBool>,
    /// The deadline, for checks between bridge calls (also covers a thread that could not
    /// be started).
    deadline: Instant,
    /// Dropped with the alarm: the thread's `recv_timeout` returns and the thread ends.
    _disarm: Option<mpsc::Sender<()>>,
}

impl Alarm {
    /// Starts the timer thread for `budget` from now. If no thread can be started the flag
    /// is raised by the deadline checks between bridge calls and job drains instead.
    fn start(budget: Duration) -> Self {
        let fired = Arc::new(AtomicBool::new(false));
        let deadline = Instant::now() + budget;
        let (tx, rx) = mpsc::channel::<()>();
        let flag = Arc::clone(&fired);
        let spawned = std::thread::Builder::new()
            .name("wfx-sandbox-alarm".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                // Only a timeout raises the flag; a dropped sender (the run ended) does not.
                if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(budget) {
                    flag.store(true, Ordering::Relaxed);
                }
            });
        Self {
            fired,
            deadline,
            _disarm: spawned.is_ok().then_some(tx),
        }
    }

    /// Whether the deadline has passed: the flag, else (rarely) the clock.
    fn expired(&self) -> bool {
        if self.fired.load(Ordering::Relaxed) {
            return true;
        }
        if Instant::now() >= self.deadline {
            self.fired.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }
}

/// What stops a run early: the alarm (time budget) and the embedder's cancel flag.
struct Stop {
    /// The time budget.
    alarm: Alarm,
    /// Set by the embedder ("cancel run" in the editor).
    cancel: Option<Arc<AtomicBool>>,
}

impl Stop {
    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

fn engine_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Engine {
        message: e.to_string(),
    }
}

fn run_inner(
    job: &Job<'_>,
    body: &str,
    path: &str,
    bridge: &mut dyn Bridge,
    budgets: &Budgets,
    shared: &Rc<RefCell<Shared>>,
    stop: &Stop,
) -> Result<serde_json::Value, SandboxError> {
    if stop.cancelled() {
        return Err(SandboxError::Cancelled);
    }
    // The memory budget is kept by the runtime's allocator (see `super::memory`): it sees
    // every refused allocation, and counts the same bytes whatever the process heap holds.
    let memory = MemoryBudget::new();
    let rt = Runtime::new_with_alloc(memory.allocator()).map_err(engine_error)?;
    rt.set_max_stack_size(STACK_LIMIT_BYTES);
    // Bounded work: the interrupt handler goes in before any code is evaluated, so even
    // code that escapes the body's wrapper (`}); for (;;) {} (async () => {`) runs under
    // `timeoutMs`. QuickJS polls it at every back-edge and call (vendored rquickjs-sys), so it
    // is two atomic loads: the alarm's flag and the cancel flag.
    {
        let fired = Arc::clone(&stop.alarm.fired);
        let cancel = stop.cancel.clone();
        rt.set_interrupt_handler(Some(Box::new(move || {
            fired.load(Ordering::Relaxed)
                || cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
        })));
    }
    let ctx = Context::full(&rt).map_err(engine_error)?;
    // camelCase → snake_case; the first snake name of a camel name wins.
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut snake_names = bridge.tool_names();
    snake_names.sort();
    snake_names.dedup();
    for snake in snake_names {
        names.entry(camel_case(&snake)).or_insert(snake);
    }
    // Names the source calls that the bridge did not list (a delegation the embedder did not
    // enumerate, say) are exposed too; the bridge refuses what does not exist.
    for camel in referenced_tools(body) {
        let snake = snake_from_camel(&camel);
        names.entry(camel).or_insert(snake);
    }
    let pairs: Vec<(String, String)> = names.into_iter().collect();
    ctx.with(|ctx| {
        setup(&ctx, job, &pairs, shared)
            .catch(&ctx)
            .map_err(|e| engine_error(e.to_string()))
    })?;

    if let Some(limit) = budgets.memory_limit_bytes {
        memory.set_limit(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    let outcome = ctx.with(|ctx| drive(&ctx, body, path, bridge, budgets, shared, stop));
    let out_of_memory = || SandboxError::Budget {
        which: BudgetKind::Memory,
        limit: budgets.memory_limit_bytes.unwrap_or(0),
    };
    match outcome {
        Ok(value) => Ok(value),
        // Cancellation wins: the editor asked to stop, whatever the script was doing.
        Err(_) if stop.cancelled() => Err(SandboxError::Cancelled),
        Err(_) if stop.alarm.fired.load(Ordering::Relaxed) => Err(SandboxError::Budget {
            which: BudgetKind::Timeout,
            limit: budgets.timeout_ms,
        }),
        Err(Fail::Timeout) => Err(SandboxError::Budget {
            which: BudgetKind::Timeout,
            limit: budgets.timeout_ms,
        }),
        Err(Fail::Memory) => Err(out_of_memory()),
        Err(Fail::IfOutOfMemory(_)) if memory.refusals() > 0 => Err(out_of_memory()),
        Err(Fail::IfOutOfMemory(e)) => Err(e),
        Err(Fail::Sandbox(e)) => Err(e),
        Err(Fail::Syntax { message, .. }) => Err(SandboxError::Syntax {
            message,
            offset: None,
        }),
    }
}

/// Host functions, globals and preludes.
fn setup<'js>(
    ctx: &Ctx<'js>,
    job: &Job<'_>,
    names: &[(String, String)],
    shared: &Rc<RefCell<Shared>>,
) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let calls = Rc::clone(shared);
    globals.set(
        "__wfxEnqueue",
        Function::new(ctx.clone(), move |name: String, input: String| -> i64 {
            let mut s = calls.borrow_mut();
            // Bounded memory: over either bound the call is refused (a negative id the
            // prelude turns into a rejected promise), its input dropped here.
            if s.calls.len() >= MAX_QUEUED_CALLS
                || s.queued_bytes.saturating_add(input.len()) > MAX_QUEUED_BYTES
            {
                return -(i64::try_from(MAX_QUEUED_CALLS).unwrap_or(i64::MAX));
            }
            let id = s.next_id;
            s.next_id = s.next_id.wrapping_add(1);
            s.queued_bytes = s.queued_bytes.saturating_add(input.len());
            s.calls.push((id, name, input));
            i64::from(id)
        })?,
    )?;
    let logs = Rc::clone(shared);
    globals.set(
        "__wfxLog",
        Function::new(ctx.clone(), move |line: String| {
            let mut s = logs.borrow_mut();
            if s.log_bytes < LOG_LIMIT_BYTES {
                s.log_bytes += line.len();
                s.logs.push(line);
                if s.log_bytes >= LOG_LIMIT_BYTES {
                    s.logs.push("[further console output dropped]".to_string());
                }
            }
        })?,
    )?;
    let names_json = serde_json::to_string(names).unwrap_or_else(|_| "[]".to_string());
    globals.set("__wfxNames", names_json)?;
    ctx.eval::<(), _>(PRELUDE)?;
    let (args, prelude) = match job {
        Job::Hook { input } => (*input, HOOK_PRELUDE),
        Job::Script { args } => (*args, SCRIPT_PRELUDE),
    };
    globals.set("args", ctx.json_parse(args.to_string())?)?;
    ctx.eval::<(), _>(prelude)?;
    Ok(())
}

/// Evaluates the body, then serves tool calls until the run's promise settles.
#[allow(clippy::too_many_arguments)]
fn drive<'js>(
    ctx: &Ctx<'js>,
    body: &str,
    path: &str,
    bridge: &mut dyn Bridge,
    budgets: &Budgets,
    shared: &Rc<RefCell<Shared>>,
    stop: &Stop,
) -> Result<serde_json::Value, Fail> {
    let (body_promise, completion) = match eval_body(ctx, body, path, true) {
        Ok(p) => (p, true),
        Err(Fail::Syntax { message, .. }) if message == RETURN_OUTSIDE_FUNCTION => {
            let wrapped = format!("{IIFE_PREFIX}{body}{IIFE_SUFFIX}");
            let p = eval_body(ctx, &wrapped, path, false)
                .map_err(|f| syntax_in(f, body, IIFE_PREFIX.len()))?;
            (p, false)
        }
        Err(f) => return Err(syntax_in(f, body, 0)),
    };
    let globals = ctx.globals();
    let runner: Function = globals
        .get("__wfxRun")
        .map_err(|e| Fail::Sandbox(engine_error(e)))?;
    let settle: Function = globals
        .get("__wfxSettle")
        .map_err(|e| Fail::Sandbox(engine_error(e)))?;
    let done: Promise = runner
        .call((body_promise, completion))
        .catch(ctx)
        .map_err(|e| classify(e, false, path))?;
    let mut calls_made: u64 = 0;
    loop {
        let mut jobs = 0u32;
        while ctx.execute_pending_job() {
            jobs = jobs.wrapping_add(1);
            if jobs.is_multiple_of(1024) && (stop.alarm.expired() || stop.cancelled()) {
                return Err(Fail::Timeout);
            }
        }
        if stop.alarm.expired() || stop.cancelled() {
            return Err(Fail::Timeout);
        }
        match done.state() {
            PromiseState::Resolved => {
                let text: String = match done.result::<String>() {
                    Some(Ok(t)) => t,
                    Some(Err(e)) => return Err(Fail::IfOutOfMemory(engine_error(e))),
                    None => {
                        return Err(Fail::IfOutOfMemory(engine_error("the run did not settle")));
                    }
                };
                return serde_json::from_str(&text).map_err(|e| Fail::Sandbox(engine_error(e)));
            }
            PromiseState::Rejected => {
                let rejected: rquickjs::Result<Value> = done
                    .result::<Value>()
                    .unwrap_or(Err(rquickjs::Error::Exception));
                return Err(match rejected.catch(ctx) {
                    Err(e) => classify(e, false, path),
                    Ok(_) => Fail::Sandbox(engine_error("the run was rejected without a reason")),
                });
            }
            PromiseState::Pending => {}
        }
        let calls = {
            let mut s = shared.borrow_mut();
            s.queued_bytes = 0;
            std::mem::take(&mut s.calls)
        };
        // Nothing left to run and the run's promise pending: the script awaits something that
        // nothing settles, or QuickJS dropped a promise job it had no memory to enqueue.
        if calls.is_empty() {
            return Err(Fail::IfOutOfMemory(SandboxError::Engine {
                message: "the script awaits a promise that nothing settles (the sandbox has no \
                          timers or events)"
                    .to_string(),
            }));
        }
        for (id, name, input_json) in calls {
            calls_made += 1;
            if let Some(max) = budgets.max_ptc_calls
                && calls_made > max
            {
                return Err(Fail::Sandbox(SandboxError::Budget {
                    which: BudgetKind::PtcCalls,
                    limit: max,
                }));
            }
            if stop.alarm.expired() || stop.cancelled() {
                return Err(Fail::Timeout);
            }
            let input = match serde_json::from_str::<serde_json::Value>(&input_json) {
                Ok(v @ serde_json::Value::Object(_)) => v,
                _ => serde_json::Value::Object(serde_json::Map::new()),
            };
            let (ok, text) = match bridge.call_tool(&name, input) {
                Ok(text) => (true, text),
                Err(text) => (false, text),
            };
            settle
                .call::<_, ()>((id, ok, text))
                .catch(ctx)
                .map_err(|e| classify(e, false, path))?;
        }
        if stop.alarm.expired() || stop.cancelled() {
            return Err(Fail::Timeout);
        }
    }
}

/// Evaluates `code` as an async global script (`completion`, resolving to `{ value }`) or as
/// a plain script whose value is a promise.
fn eval_body<'js>(
    ctx: &Ctx<'js>,
    code: &str,
    path: &str,
    completion: bool,
) -> Result<Promise<'js>, Fail> {
    let mut opts = EvalOptions::default();
    opts.global = true;
    opts.strict = false;
    opts.promise = completion;
    opts.filename = Some(path.to_string());
    ctx.eval_with_options::<Promise, _>(code, opts)
        .catch(ctx)
        .map_err(|e| classify(e, true, path))
}

/// Turns a caught error into a [`Fail`]; `compiling` marks evaluation of the body itself,
/// where a `SyntaxError` is the source failing to parse.
fn classify(err: CaughtError<'_>, compiling: bool, path: &str) -> Fail {
    match err {
        CaughtError::Exception(ex) => {
            let message = ex.message().unwrap_or_default();
            let name: String = ex.as_object().get("name").unwrap_or_default();
            if message == "interrupted" {
                Fail::Timeout
            } else if message == "out of memory" {
                Fail::Memory
            } else if compiling && name == "SyntaxError" {
                Fail::Syntax {
                    message,
                    at: ex.stack().and_then(|s| stack_position(&s, path)),
                }
            } else if message.is_empty() {
                // QuickJS's own errors always have a message unless it had no memory for
                // the text (its out-of-memory error among them).
                Fail::IfOutOfMemory(SandboxError::Threw { message })
            } else {
                Fail::Sandbox(SandboxError::Threw { message })
            }
        }
        CaughtError::Value(v) => {
            if v.is_null() {
                // QuickJS throws `null` when it has no memory for the error object.
                Fail::IfOutOfMemory(SandboxError::Threw {
                    message: "null".to_string(),
                })
            } else if v.type_of() == rquickjs::Type::Uninitialized {
                // No script can throw this value: QuickJS failed an allocation without
                // setting an exception (`normalize`, an `Error`'s `stack`; break-it pass 4,
                // F4).
                Fail::IfOutOfMemory(engine_error("the engine failed without an exception"))
            } else {
                Fail::Sandbox(SandboxError::Threw {
                    message: value_text(&v),
                })
            }
        }
        CaughtError::Error(rquickjs::Error::Allocation) => Fail::Memory,
        CaughtError::Error(e) => Fail::Sandbox(engine_error(e)),
    }
}

/// Maps a [`Fail::Syntax`] position in code whose first line carried `prefix` extra bytes
/// to a [`SandboxError::Syntax`] offset in `body`.
fn syntax_in(fail: Fail, body: &str, prefix: usize) -> Fail {
    match fail {
        Fail::Syntax { message, at } => Fail::Sandbox(SandboxError::Syntax {
            message,
            offset: at.map(|(line, col)| position_to_offset(body, line, col, prefix)),
        }),
        other => other,
    }
}

/// The thrown value as text: a string as is, anything else as JSON or its type.
fn value_text(v: &Value<'_>) -> String {
    if let Some(s) = v.as_string().and_then(|s| s.to_string().ok()) {
        return s;
    }
    v.ctx()
        .json_stringify(v.clone())
        .ok()
        .flatten()
        .and_then(|s| s.to_string().ok())
        .unwrap_or_else(|| v.type_name().to_string())
}

/// The 1-based (line, byte column) of the first stack frame in `path`
/// (`    at <path>:<line>:<col>` or `    at f (<path>:<line>:<col>)`).
pub(crate) fn stack_position(stack: &str, path: &str) -> Option<(u32, u32)> {
    stack.lines().find_map(|line| {
        let at = line.find(path)?;
        let rest = line.get(at + path.len()..)?.strip_prefix(':')?;
        let mut parts = rest.trim_end_matches(')').splitn(2, ':');
        let l = parts.next()?.trim().parse().ok()?;
        let c = parts.next()?.trim().parse().ok()?;
        Some((l, c))
    })
}

/// Byte offset of a 1-based (line, byte column) in `text`, where the first line carried
/// `first_line_prefix` extra bytes; clamped to the text and to a char boundary.
pub(crate) fn position_to_offset(text: &str, line: u32, col: u32, first_line_prefix: usize) -> u32 {
    let mut start = 0usize;
    let mut current = 1u32;
    for (i, b) in text.bytes().enumerate() {
        if current == line {
            break;
        }
        if b == b'\n' {
            current += 1;
            start = i + 1;
        }
    }
    if current < line {
        start = text.len();
    }
    let mut col = (col.max(1) - 1) as usize;
    if line <= 1 {
        col = col.saturating_sub(first_line_prefix);
    }
    let line_end = text
        .get(start..)
        .and_then(|r| r.find('\n'))
        .map_or(text.len(), |n| start + n);
    let mut offset = (start + col).min(line_end).min(text.len());
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    u32::try_from(offset).unwrap_or(u32::MAX)
}

/// Reads the verdict object a hook run returns.
pub(crate) fn verdict_from_json(value: &serde_json::Value) -> Result<Verdict, SandboxError> {
    let reason = value
        .get("reason")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_string();
    match value.get("verdict").and_then(serde_json::Value::as_str) {
        Some("ok") => Ok(Verdict::Ok),
        Some("correct") => Ok(Verdict::Correct(reason)),
        Some("veto") => Ok(Verdict::Veto(reason)),
        _ => Err(engine_error("the hook run returned no verdict")),
    }
}

/// CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`): the clock of
/// [`COMPILE_TIME_LIMIT_MS`], which a busy machine does not advance for this thread.
#[cfg(unix)]
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// Elsewhere, time since the first call (monotonic wall-clock time).
#[cfg(not(unix))]
fn thread_cpu_time() -> Duration {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed()
}

/// Parses `code` as an ES module without evaluating any of it; on a syntax error returns
/// QuickJS's message and the 1-based (line, byte column).
///
/// No execution: the module is only declared (`Module::declare`, QuickJS's
/// `JS_EVAL_FLAG_COMPILE_ONLY`), so no statement of `code` runs, not even one that closes a
/// wrapper the caller put around a body. The runtime has no module loader, so an `import`
/// the code declares is refused, never loaded. Module code is strict mode (FORMAT §A.6: hook
/// files are ES modules), so this check is at least as strict as the run. The parse runs in
/// a fresh runtime with a 1 MiB stack, a 64 MiB memory budget (kept as a run's, see
/// `super::memory`) and [`COMPILE_TIME_LIMIT_MS`] of the calling thread's CPU time
/// (bounded work): a parse still going at that deadline, or out of memory, stops (the
/// vendored parser polls at every token and declaration) and the message says so.
pub(crate) fn compile_only(code: &str, filename: &str) -> Option<(String, Option<(u32, u32)>)> {
    let memory = MemoryBudget::new();
    let rt = match Runtime::new_with_alloc(memory.allocator()) {
        Ok(rt) => rt,
        Err(e) => return Some((format!("the sandbox failed to start: {e}"), None)),
    };
    rt.set_max_stack_size(STACK_LIMIT_BYTES);
    // A handler that fires only at the deadline: a parse that ends before it keeps
    // QuickJS's error positions. The clock is read every 1,024th poll.
    let budget = Duration::from_millis(COMPILE_TIME_LIMIT_MS);
    let start = thread_cpu_time();
    let fired = Arc::new(AtomicBool::new(false));
    {
        let fired = Arc::clone(&fired);
        let mut polls: u32 = 0;
        rt.set_interrupt_handler(Some(Box::new(move || {
            polls = polls.wrapping_add(1);
            if polls.is_multiple_of(1024) && thread_cpu_time().saturating_sub(start) >= budget {
                fired.store(true, Ordering::Relaxed);
            }
            fired.load(Ordering::Relaxed)
        })));
    }
    let ctx = match Context::full(&rt) {
        Ok(ctx) => ctx,
        Err(e) => return Some((format!("the sandbox failed to start: {e}"), None)),
    };
    memory.set_limit(COMPILE_MEMORY_LIMIT_BYTES);
    ctx.with(
        |ctx| match rquickjs::Module::declare(ctx.clone(), filename, code).catch(&ctx) {
            Ok(_) => None,
            Err(_) if fired.load(Ordering::Relaxed) => Some((
                format!(
                    "parsing it took longer than the {COMPILE_TIME_LIMIT_MS} ms bound of a syntax check, so it was not checked (a function with tens of thousands of `let` or `const` names parses in quadratic time)"
                ),
                None,
            )),
            Err(_) if memory.refusals() > 0 => Some((
                format!(
                    "parsing it needed more than the {} MiB a syntax check may use, so it was not checked",
                    COMPILE_MEMORY_LIMIT_BYTES >> 20
                ),
                None,
            )),
            Err(CaughtError::Exception(ex)) => {
                let message = ex.message().unwrap_or_default();
                let at = ex.stack().and_then(|s| stack_position(&s, filename));
                Some((message, at))
            }
            Err(other) => Some((other.to_string(), None)),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_positions_are_read_from_the_first_matching_frame() {
        assert_eq!(
            stack_position("    at hooks/a.js:2:19\n", "hooks/a.js"),
            Some((2, 19))
        );
        assert_eq!(
            stack_position("    at f (hooks/a.js:7:3)\n", "hooks/a.js"),
            Some((7, 3))
        );
        assert_eq!(stack_position("    at other.js:1:1\n", "hooks/a.js"), None);
    }

    #[test]
    fn positions_map_to_byte_offsets() {
        let text = "ab\nc\u{fc}d\n";
        assert_eq!(position_to_offset(text, 1, 1, 0), 0);
        assert_eq!(position_to_offset(text, 2, 4, 0), 6);
        assert_eq!(position_to_offset(text, 1, 20, 18), 1);
        assert_eq!(position_to_offset(text, 9, 1, 0), text.len() as u32);
        // Inside the two bytes of `ü`: backs off to its start.
        assert_eq!(position_to_offset(text, 2, 3, 0), 4);
    }
}
