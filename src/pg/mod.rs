//! PostgreSQL connections for the exporter, the tail and the
//! indexer-database generator: connecting, with TLS as the URL's
//! `sslmode` asks (`tls.rs`), and printing a URL without its password.

mod tls;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres::{Client, Config, Connection, NoTls};

/// The URL with its password (if any) replaced by `***`: the only form in
/// which a database URL is ever printed.
pub fn redact_url(url: &str) -> String {
    // postgres://user:password@host/db: the password sits between the
    // first ':' after the scheme and the last '@' of the authority.
    let Some(scheme_end) = url.find("://") else {
        return redact_key_value(url);
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return redact_query_password(url);
    };
    let userinfo = &authority[..at];
    let redacted_userinfo = match userinfo.find(':') {
        Some(colon) => format!("{}:***", &userinfo[..colon]),
        None => userinfo.to_owned(),
    };
    redact_query_password(&format!(
        "{}{}{}",
        &url[..scheme_end + 3],
        redacted_userinfo,
        &rest[at..]
    ))
}

/// `?password=...` in a URL's query.
fn redact_query_password(url: &str) -> String {
    let Some(q) = url.find('?') else {
        return url.to_owned();
    };
    let params: Vec<String> = url[q + 1..]
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if k == "password" => format!("{k}=***"),
            _ => p.to_owned(),
        })
        .collect();
    format!("{}?{}", &url[..q], params.join("&"))
}

/// `host=... password=...` (libpq's key/value form).
fn redact_key_value(text: &str) -> String {
    text.split_whitespace()
        .map(|p| match p.split_once('=') {
            Some((k, _)) if k == "password" => format!("{k}=***"),
            _ => p.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Connects and spawns the connection's driver task on the current tokio
/// runtime. Errors name the redacted URL and never the password.
pub async fn connect(url: &str, application_name: &str) -> Result<Client, String> {
    let shown = redact_url(url);
    let settings = tls::settings(url).map_err(|e| format!("database URL {shown}: {e}"))?;
    let mut config: Config = settings
        .url
        .parse()
        .map_err(|e| format!("database URL {shown} is not valid: {e}"))?;
    if config.get_application_name().is_none() {
        config.application_name(application_name);
    }
    config.connect_timeout(std::time::Duration::from_secs(10));
    let failed = |e: tokio_postgres::Error| format!("cannot connect to {shown}: {}", describe(&e));
    let client =
        match tls::client_config(&settings).map_err(|e| format!("database URL {shown}: {e}"))? {
            None => {
                let (client, connection) = config.connect(NoTls).await.map_err(failed)?;
                drive(connection);
                client
            }
            Some(tls) => {
                let tls = tokio_postgres_rustls::MakeRustlsConnect::new(tls);
                let (client, connection) = config.connect(tls).await.map_err(failed)?;
                drive(connection);
                client
            }
        };
    Ok(client)
}

/// Runs a connection's driver until the client is dropped.
fn drive<S, T>(connection: Connection<S, T>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("database connection ended: {e}");
        }
    });
}

/// A database error with the server's message, detail and hint (tokio-
/// postgres's `Display` shows only "db error").
pub fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut text = format!("{}: {}", db.severity(), db.message());
        if let Some(detail) = db.detail() {
            text.push_str(&format!(" ({detail})"));
        }
        if let Some(hint) = db.hint() {
            text.push_str(&format!(" [hint: {hint}]"));
        }
        return text;
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_url("postgres://exporter:s3cret@db.internal:5432/efp"),
            "postgres://exporter:***@db.internal:5432/efp"
        );
        assert_eq!(
            redact_url("postgresql://u:p%40ss@h/db?sslmode=disable&password=x"),
            "postgresql://u:***@h/db?sslmode=disable&password=***"
        );
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact_url("host=/tmp user=u password=secret dbname=x"),
            "host=/tmp user=u password=*** dbname=x"
        );
        assert_eq!(
            redact_url("postgres://h/db?password=pw"),
            "postgres://h/db?password=***"
        );
    }
}
