//! TLS to PostgreSQL (`sslmode`, `sslrootcert`; src/pg/tls.rs) against the
//! tests' own cluster with TLS on and a certificate for `localhost` signed
//! by a CA of the test's own.

use crate::pg::Postgres;

/// Connects with `url` as the exporter and the tail do; whether the
/// session is encrypted, or the error.
fn encrypted(url: &str) -> Result<bool, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = followgraph::pg::connect(url, "followgraph-tls-test").await?;
        let row = client
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(row.get::<_, bool>(0))
    })
}

#[test]
fn sslmode_and_sslrootcert_mean_what_they_mean_to_libpq() {
    let pg = Postgres::start();
    let ca = pg.enable_tls();
    let ip = pg.url();
    let host = ip.replace("127.0.0.1", "localhost");
    let with = |url: &str, q: &str| format!("{url}?{q}");
    let root = format!("sslrootcert={}", ca.display());

    assert_eq!(encrypted(&with(&ip, "sslmode=disable")), Ok(false));
    // prefer (the default) and require encrypt without checking the
    // certificate, as libpq does.
    assert_eq!(encrypted(&ip), Ok(true));
    assert_eq!(encrypted(&with(&ip, "sslmode=require")), Ok(true));
    // verify-full: the chain to our CA and the host name.
    assert_eq!(
        encrypted(&with(&host, &format!("sslmode=verify-full&{root}"))),
        Ok(true)
    );
    let wrong_name = encrypted(&with(&ip, &format!("sslmode=verify-full&{root}")));
    assert!(
        wrong_name
            .as_ref()
            .is_err_and(|e| e.contains("certificate")),
        "{wrong_name:?}"
    );
    // verify-ca: the chain only, so the IP address is fine.
    assert_eq!(
        encrypted(&with(&ip, &format!("sslmode=verify-ca&{root}"))),
        Ok(true)
    );
    // require with a root certificate checks the chain (libpq's rule).
    assert_eq!(
        encrypted(&with(&ip, &format!("sslmode=require&{root}"))),
        Ok(true)
    );
    // Another CA than the one that signed the server's certificate.
    let dir = ca.parent().unwrap();
    crate::pg::make_ca(dir, "other");
    let other = format!("sslrootcert={}", dir.join("other.pem").display());
    let wrong_ca = encrypted(&with(&host, &format!("sslmode=verify-full&{other}")));
    assert!(
        wrong_ca.as_ref().is_err_and(|e| e.contains("certificate")),
        "{wrong_ca:?}"
    );
    // The system's CAs do not know the test's CA.
    let unknown = encrypted(&with(&host, "sslmode=verify-full"));
    assert!(
        unknown.as_ref().is_err_and(|e| e.contains("certificate")),
        "{unknown:?}"
    );
    // A root file that is not there is named; the password never is.
    let missing = encrypted(&with(
        &host,
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    ))
    .unwrap_err();
    assert!(missing.contains("/nonexistent/ca.pem"), "{missing}");
    assert!(!missing.contains(crate::pg::PASSWORD), "{missing}");
    let bad_mode = encrypted(&with(&ip, "sslmode=sometimes")).unwrap_err();
    assert!(bad_mode.contains("sslmode"), "{bad_mode}");
}

#[test]
fn the_export_runs_over_verified_tls() {
    let pg = Postgres::start();
    let ca = pg.enable_tls();
    crate::export::indexer(&pg);
    pg.require_tls();
    assert!(encrypted(&format!("{}?sslmode=disable", pg.url())).is_err());
    let url = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        pg.url().replace("127.0.0.1", "localhost"),
        ca.display()
    );
    let out = tempfile::tempdir().unwrap();
    crate::export::export_ok(&url, out.path(), &[]);
    assert!(crate::export::current(out.path()).is_some());
}

#[test]
fn require_fails_against_a_server_without_tls_and_prefer_falls_back() {
    let pg = Postgres::start();
    let url = pg.url();
    let refused = encrypted(&format!("{url}?sslmode=require")).unwrap_err();
    assert!(refused.contains("TLS"), "{refused}");
    assert_eq!(encrypted(&url), Ok(false));
}
