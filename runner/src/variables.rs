//! The run variables of one session (FORMAT §E.4, "The store": `{ [name]: {value, locked} }`
//! in the order names were first set), kept once and read in place.
//!
//! Bounded memory (issue 24; docs/security.md "Bounded work"): before, every tool call
//! copied the whole store (twice) to substitute references and check guards, and nothing
//! bounded its size; one send of 100 calls storing 4 MiB each took 788 MB and 24 s. Now
//! * governance reads the store through [`crate::governance::Vars`], with no copy;
//! * the `{name: value}` view agents, hooks and scripts are given is built once per change
//!   ([`Variables::plain`]), and an assertion's view shares the entries
//!   ([`Variables::shared`], copy-on-write);
//! * the store's size ([`Variables::bytes`], counted by [`entry_bytes`]) is held against the
//!   session folder's bound together with the session's files
//!   ([`crate::session_fs::SessionFs::hold`], [`crate::session_fs::MAX_SESSION_DISK_BYTES`]):
//!   the reference keeps them in the same folder (`variables.json`, FORMAT §E.10). A change
//!   past it is refused whole (the simulator's callers say so: a refused
//!   `archmax_set_variables`, a case that dies on its seeds).
//!
//! Must not: read files, the clock or the environment.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use crate::governance::Vars;
use crate::sim::Var;

/// What one value node costs beside its text, bytes: the node itself.
const NODE_BYTES: u64 = std::mem::size_of::<Value>() as u64;
/// What one mapping entry costs beside its key's text and its value, bytes: the key's
/// `String` and the map's index and hash of it (an estimate of `indexmap`'s bucket).
const ENTRY_BYTES: u64 = std::mem::size_of::<String>() as u64 + 16;

/// The bytes `value` holds in memory, estimated from below: `NODE_BYTES` per value,
/// `ENTRY_BYTES` plus the key's length per mapping entry, and every string's length.
/// Never less than the number of nodes times the node size, so a list of 30 million zeros
/// (60 MB of JSON, 2.4 GB in memory) counts as what it holds, not as its text. Walks the
/// value once, without recursion.
pub fn held_bytes(value: &Value) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(NODE_BYTES);
        match v {
            Value::String(s) => total = total.saturating_add(s.len() as u64),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(m) => {
                for (k, x) in m {
                    total = total.saturating_add(ENTRY_BYTES + k.len() as u64);
                    stack.push(x);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    total
}

/// The bytes one store entry `name` → `value` holds: its own entry, the name's text and
/// [`held_bytes`] of the value.
pub fn entry_bytes(name: &str, value: &Value) -> u64 {
    (ENTRY_BYTES + name.len() as u64).saturating_add(held_bytes(value))
}

/// The store: entries in insertion order (read through `Deref` as an
/// `IndexMap<String, Var>`), their size in bytes, and the `{name: value}` view.
#[derive(Clone, Debug, Default)]
pub struct Variables {
    entries: Arc<IndexMap<String, Var>>,
    bytes: u64,
    plain: OnceCell<Value>,
}

impl Deref for Variables {
    type Target = IndexMap<String, Var>;

    fn deref(&self) -> &Self::Target {
        &self.entries
    }
}

impl PartialEq for Variables {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Vars for Variables {
    fn var(&self, name: &str) -> Option<&Value> {
        self.entries.get(name).map(|v| &v.value)
    }
}

impl Variables {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bytes the store holds: [`entry_bytes`] summed over its entries.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The bytes the store would hold with `set` inserted in order (an entry replaces the
    /// one of the same name). Walks the new values and the values they replace only.
    pub fn bytes_with(&self, set: &[(String, Var)]) -> u64 {
        let mut total = self.bytes;
        let mut sizes: HashMap<&str, u64> = HashMap::new();
        for (name, var) in set {
            let old = match sizes.get(name.as_str()) {
                Some(n) => *n,
                None => self
                    .entries
                    .get(name)
                    .map_or(0, |v| entry_bytes(name, &v.value)),
            };
            let new = entry_bytes(name, &var.value);
            total = total.saturating_sub(old).saturating_add(new);
            sizes.insert(name, new);
        }
        total
    }

    /// Inserts `set` in order; `bytes` is [`Variables::bytes_with`] of it, which the caller
    /// has held against the session's bound. Copies the entries only while a
    /// [`Variables::shared`] snapshot of them is alive (copy-on-write).
    pub(crate) fn insert_all(&mut self, set: Vec<(String, Var)>, bytes: u64) {
        if set.is_empty() {
            return;
        }
        let entries = Arc::make_mut(&mut self.entries);
        for (name, var) in set {
            entries.insert(name, var);
        }
        self.bytes = bytes;
        self.plain = OnceCell::new();
    }

    /// The entries, shared: an O(1) snapshot for a session view (FORMAT §E.8).
    pub fn shared(&self) -> Arc<IndexMap<String, Var>> {
        Arc::clone(&self.entries)
    }

    /// The variables as one `{name: value}` object, built on the first read after a change
    /// and then lent, not copied, until the next change.
    pub fn plain(&self) -> &Value {
        self.plain.get_or_init(|| {
            Value::Object(
                self.entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.value.clone()))
                    .collect(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn var(value: Value) -> Var {
        Var {
            value,
            locked: false,
        }
    }

    #[test]
    fn held_bytes_counts_nodes_and_text() {
        assert_eq!(held_bytes(&json!(1)), NODE_BYTES);
        assert_eq!(held_bytes(&json!("abc")), NODE_BYTES + 3);
        assert_eq!(held_bytes(&json!([0, 0])), 3 * NODE_BYTES);
        assert_eq!(
            held_bytes(&json!({"ab": null})),
            2 * NODE_BYTES + ENTRY_BYTES + 2
        );
        // A list of small numbers holds far more than its text.
        let zeros = Value::Array(vec![json!(0); 1000]);
        assert!(held_bytes(&zeros) >= 1000 * NODE_BYTES);
        const { assert!(NODE_BYTES >= 16) };
    }

    #[test]
    fn bytes_follow_inserts_and_replacements() {
        let mut v = Variables::new();
        let set = vec![
            ("a".to_owned(), var(json!("x".repeat(100)))),
            ("b".to_owned(), var(json!(1))),
        ];
        let after = v.bytes_with(&set);
        assert_eq!(
            after,
            entry_bytes("a", &json!("x".repeat(100))) + entry_bytes("b", &json!(1))
        );
        v.insert_all(set, after);
        assert_eq!(v.bytes(), after);
        // Replacing `a` (twice in one set: the last wins) counts the new value only.
        let set = vec![
            ("a".to_owned(), var(json!("y".repeat(10)))),
            ("a".to_owned(), var(json!("z"))),
        ];
        let after = v.bytes_with(&set);
        assert_eq!(
            after,
            entry_bytes("a", &json!("z")) + entry_bytes("b", &json!(1))
        );
        v.insert_all(set, after);
        assert_eq!(v.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(v.plain(), &json!({"a": "z", "b": 1}));
    }

    #[test]
    fn a_snapshot_is_shared_until_the_next_change_and_the_plain_view_is_rebuilt() {
        let mut v = Variables::new();
        let set = vec![("a".to_owned(), var(json!(1)))];
        let n = v.bytes_with(&set);
        v.insert_all(set, n);
        let snap = v.shared();
        assert!(Arc::ptr_eq(&snap, &v.shared()), "a snapshot is not a copy");
        assert_eq!(v.plain(), &json!({"a": 1}));
        let set = vec![("b".to_owned(), var(json!(2)))];
        let n = v.bytes_with(&set);
        v.insert_all(set, n);
        assert_eq!(snap.len(), 1, "the snapshot keeps what it saw");
        assert_eq!(v.plain(), &json!({"a": 1, "b": 2}));
        assert_eq!(v.var("b"), Some(&json!(2)));
    }
}
