// The server's hovers and docs link to the project's own documentation as relative `docs/reference.md#<anchor>`
// links (schemas/src/docs.rs `reference_link`; docs/editors.md "Documentation links"): no network, and readable as
// text in any client. VS Code cannot resolve a relative link in a hover, so the extension points them at the copy
// of docs/reference.md bundled in the VSIX (esbuild.mjs copies it into docs/). Pure: no `vscode` import.

/** Matches the target of a Markdown link to one of the project's docs pages: `](docs/<page>.md#anchor)`. */
const DOC_LINK = /\]\(docs\/([a-z0-9-]+\.md)(#[A-Za-z0-9_-]*)?\)/g;

/**
 * Rewrites `](docs/<page>.md#anchor)` link targets in `markdown` to `](<base><page>#anchor)`, where `base` is the
 * URI of the bundled docs folder ending in `/` (e.g. `file:///…/extensions/wfx.wfx-lsp-0.1.0/docs/`). Pages not in
 * `bundled` are left as they are.
 */
export function resolveDocLinks(markdown: string, base: string, bundled: readonly string[] = ['reference.md']): string {
  return markdown.replace(DOC_LINK, (all, page: string, anchor: string | undefined) =>
    bundled.includes(page) ? `](${base}${page}${anchor ?? ''})` : all,
  );
}
