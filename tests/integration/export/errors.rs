//! Database errors: a wrong password and a missing source table are one
//! clear line each (the password never printed), and publish nothing.

use crate::pg::Postgres;
use crate::support::run_to_exit;

use super::{export, indexer, snapshot_dirs, EXPORT_TIMEOUT};

#[test]
fn a_wrong_password_is_a_clear_error_that_never_prints_the_password() {
    let pg = Postgres::start();
    indexer(&pg);
    let out = tempfile::tempdir().unwrap();
    let secret = "hunter2-very-secret";
    let (code, stderr) = export(&pg.url_with_password(secret), out.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    assert!(stderr.contains("postgres:***@127.0.0.1"), "{stderr}");
    assert!(
        !stderr.contains(secret),
        "the password was printed:\n{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one line:\n{stderr}");
    assert!(snapshot_dirs(out.path()).is_empty());
    // From the environment too (DATABASE_URL), same rules.
    let (status, _, stderr) = run_to_exit(
        &[
            "export".into(),
            "--out".into(),
            out.path().as_os_str().to_owned(),
        ],
        &[("DATABASE_URL", pg.url_with_password(secret).into())],
        EXPORT_TIMEOUT,
    );
    assert_eq!(status.and_then(|s| s.code()), Some(1));
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    assert!(!stderr.contains(secret), "{stderr}");
}

#[test]
fn a_missing_source_table_is_one_line_naming_it() {
    let pg = Postgres::start();
    let out = tempfile::tempdir().unwrap();
    let (code, stderr) = export(&pg.url(), out.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("efp_list_metadata: ERROR: relation \"efp_list_metadata\" does not exist"),
        "{stderr}"
    );
    assert!(snapshot_dirs(out.path()).is_empty());
}
