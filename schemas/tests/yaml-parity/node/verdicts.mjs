// Reads a JSON array of base64 documents on stdin and prints one JSON line per document: the
// verdict of the reference's YAML call, `YAML.parse(text)` of `yaml` 2.9.1 with its defaults
// (FORMAT "The YAML library", §A.0 step 2, §B.0):
//   {"ok":true,"v":<the decoded value as JSON>}
//   {"ok":true,"v":null,"cyclic":true} (accepted, but the value is cyclic)
//   {"ok":false,"e":"<message>","pos":<UTF-16 offset of the error or null>}
// The bytes are decoded as Node's `readFile(path, 'utf8')` does (invalid UTF-8 becomes U+FFFD).
// Warnings do not fail a parse (the library only logs them); they are silenced here.
import { parse } from 'yaml';

process.emitWarning = () => {};
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const docs = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const out = [];
for (const b64 of docs) {
  const text = Buffer.from(b64, 'base64').toString('utf8');
  let line;
  try {
    const v = parse(text);
    try {
      line = JSON.stringify({ ok: true, v: v === undefined ? null : v });
    } catch {
      // An alias inside its own anchor gives a cyclic value, which JSON cannot hold.
      line = JSON.stringify({ ok: true, v: null, cyclic: true });
    }
  } catch (e) {
    const pos = Array.isArray(e.pos) ? e.pos[0] : null;
    line = JSON.stringify({ ok: false, e: String(e.message).split('\n')[0], pos });
  }
  out.push(line);
}
process.stdout.write(out.join('\n') + '\n');
