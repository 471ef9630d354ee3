//! `docs/diagnostics.md` is generated from the code registry; this test fails when the
//! checked-in file is stale and rewrites it when `UPDATE_EXPECT=1`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[test]
fn diagnostics_page_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/diagnostics.md");
    let want = wfx_schemas::diagnostics::render_markdown();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/diagnostics.md is stale; run `UPDATE_EXPECT=1 cargo test -p wfx-schemas --test generated_docs`"
    );
}
