//! Fixture tests for the stream-level rules (WFX0xx, FORMAT §A.0, §B.0).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::check_file_diagnostics;

#[test]
fn duplicate_key_sits_on_the_second_key() {
    check_file_diagnostics(
        r#"
#- workflows/w/workflow.yaml
states:
  a:
    triggers:
      manual:
#- workflows/w/tests/a.test.yaml
title: a
description: b
title: c
^^^^^ error WFX002: duplicate key `title`
steps: []
"#,
        "workflows/w/tests/a.test.yaml",
    );
}

#[test]
fn syntax_error_is_positioned() {
    check_file_diagnostics(
        r#"
#- workflows/w/tests/a.test.yaml
title: [a
steps: x
#    ^ error WFX001: invalid YAML
"#,
        "workflows/w/tests/a.test.yaml",
    );
}
