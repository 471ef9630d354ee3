// Bundles src/extension.ts (+ vscode-languageclient) into dist/extension.js; `vscode` stays external.
//   node esbuild.mjs [--production] [--watch] [--tests]
// --production: minified, no sourcemap (vsce's vscode:prepublish). --tests: also builds test/unit/*.test.ts
// into out/unit/ for `node --test`. The JSON Schemas of the repository (../../schemas/*.schema.json) are copied
// into schemas/ so the VSIX can hand them to the YAML extension when the server is disabled, and
// ../../docs/reference.md into docs/ so the hovers' `docs/reference.md#…` links open the bundled copy (docLinks.ts).
import * as esbuild from 'esbuild';
import * as fs from 'fs';
import * as path from 'path';

const args = new Set(process.argv.slice(2));
const production = args.has('--production');
const here = path.dirname(new URL(import.meta.url).pathname);

function copySchemas() {
  const src = path.join(here, '..', '..', 'schemas');
  const dst = path.join(here, 'schemas');
  if (!fs.existsSync(src)) return;
  const files = fs.readdirSync(src).filter((f) => f.endsWith('.schema.json'));
  if (!files.length) return;
  fs.mkdirSync(dst, { recursive: true });
  for (const f of files) fs.copyFileSync(path.join(src, f), path.join(dst, f));
}

function copyDocs() {
  const src = path.join(here, '..', '..', 'docs', 'reference.md');
  if (!fs.existsSync(src)) return;
  fs.mkdirSync(path.join(here, 'docs'), { recursive: true });
  fs.copyFileSync(src, path.join(here, 'docs', 'reference.md'));
}

const common = { bundle: true, platform: 'node', target: 'node18', format: 'cjs', logLevel: 'warning' };

const ext = {
  ...common,
  entryPoints: [path.join(here, 'src', 'extension.ts')],
  outfile: path.join(here, 'dist', 'extension.js'),
  external: ['vscode'],
  minify: production,
  sourcemap: !production,
};

copySchemas();
copyDocs();
if (production) fs.rmSync(ext.outfile + '.map', { force: true });
if (args.has('--watch')) {
  const ctx = await esbuild.context(ext);
  await ctx.watch();
} else {
  await esbuild.build(ext);
  if (args.has('--tests')) {
    const dir = path.join(here, 'test', 'unit');
    await esbuild.build({
      ...common,
      entryPoints: fs.readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => path.join(dir, f)),
      outdir: path.join(here, 'out', 'unit'),
      external: ['vscode'],
      sourcemap: 'inline',
    });
  }
}
