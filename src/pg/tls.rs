//! TLS to PostgreSQL, with libpq's `sslmode` meanings (tokio-postgres
//! knows only `disable`, `prefer` and `require`, and no `sslrootcert`):
//!
//! | `sslmode` | encrypted | certificate checked |
//! |---|---|---|
//! | `disable` | no | — |
//! | `prefer` (the default) | when the server offers it | no (as libpq) |
//! | `require` | yes | no; against `sslrootcert` when it is given (as libpq) |
//! | `verify-ca` | yes | chain to `sslrootcert`, else the system's CAs |
//! | `verify-full` | yes | chain and host name |
//!
//! `sslmode` and `sslrootcert` are taken out of the URL (URL or key=value
//! form) before tokio-postgres parses the rest. rustls with aws-lc-rs,
//! the provider the object store already uses.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// The TLS settings of a database URL, and the URL without them.
#[derive(Debug, PartialEq, Eq)]
pub struct Settings {
    pub mode: Mode,
    pub root_cert: Option<PathBuf>,
    /// What tokio-postgres parses: `sslmode` as it knows it.
    pub url: String,
}

fn mode_of(value: &str) -> Result<Mode, String> {
    Ok(match value {
        "disable" => Mode::Disable,
        "allow" | "prefer" => Mode::Prefer,
        "require" => Mode::Require,
        "verify-ca" => Mode::VerifyCa,
        "verify-full" => Mode::VerifyFull,
        _ => return Err(format!("sslmode {value:?} is not one of disable, allow, prefer, require, verify-ca, verify-full")),
    })
}

/// tokio-postgres's `sslmode` for `mode`.
fn wire(mode: Mode) -> &'static str {
    match mode {
        Mode::Disable => "disable",
        Mode::Prefer => "prefer",
        Mode::Require | Mode::VerifyCa | Mode::VerifyFull => "require",
    }
}

/// Splits the TLS settings off `url` (either form).
pub fn settings(url: &str) -> Result<Settings, String> {
    let (mut mode, mut root_cert) = (Mode::Prefer, None);
    let mut take = |key: &str, value: &str| -> Result<bool, String> {
        match key {
            "sslmode" => mode = mode_of(value)?,
            "sslrootcert" => root_cert = Some(PathBuf::from(value)),
            _ => return Ok(false),
        }
        Ok(true)
    };
    let rest = if url.contains("://") {
        match url.split_once('?') {
            None => url.to_owned(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for p in query.split('&').filter(|p| !p.is_empty()) {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    if !take(k, &percent_decode(v))? {
                        kept.push(p);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
        }
    } else {
        let mut kept = Vec::new();
        for p in url.split_whitespace() {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            if !take(k, v)? {
                kept.push(p);
            }
        }
        kept.join(" ")
    };
    let sep = if !url.contains("://") {
        " "
    } else if rest.contains('?') {
        "&"
    } else {
        "?"
    };
    let url = format!("{rest}{sep}sslmode={}", wire(mode));
    Ok(Settings {
        mode,
        root_cert,
        url: url.trim_start().to_owned(),
    })
}

fn percent_decode(v: &str) -> String {
    percent_encoding::percent_decode_str(v)
        .decode_utf8_lossy()
        .into_owned()
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The client configuration `s` asks for; `None` for `disable`.
pub fn client_config(s: &Settings) -> Result<Option<ClientConfig>, String> {
    let builder = || {
        ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))
    };
    let checked = |names: bool| -> Result<ClientConfig, String> {
        let roots = Arc::new(roots(s.root_cert.as_ref())?);
        let inner = WebPkiServerVerifier::builder_with_provider(roots, provider())
            .build()
            .map_err(|e| format!("TLS: {e}"))?;
        Ok(builder()?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Verifier { inner, names }))
            .with_no_client_auth())
    };
    Ok(match (s.mode, &s.root_cert) {
        (Mode::Disable, _) => None,
        (Mode::Prefer, _) | (Mode::Require, None) => Some(
            builder()?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unchecked(provider())))
                .with_no_client_auth(),
        ),
        (Mode::Require | Mode::VerifyCa, _) => Some(checked(false)?),
        (Mode::VerifyFull, _) => Some(checked(true)?),
    })
}

/// `sslrootcert`'s certificates, else the system's.
fn roots(file: Option<&PathBuf>) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match file {
        Some(path) => {
            let shown = path.display();
            for cert in CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("sslrootcert {shown}: {e}"))?
            {
                let cert = cert.map_err(|e| format!("sslrootcert {shown}: {e}"))?;
                store
                    .add(cert)
                    .map_err(|e| format!("sslrootcert {shown}: {e}"))?;
            }
            if store.is_empty() {
                return Err(format!("sslrootcert {shown}: no certificate in it"));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err(
                    "no CA certificates on this system (install ca-certificates, or give sslrootcert)"
                        .into(),
                );
            }
        }
    }
    Ok(store)
}

/// The web PKI's check, with or without the host name (`verify-ca`).
#[derive(Debug)]
struct Verifier {
    inner: Arc<WebPkiServerVerifier>,
    names: bool,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.names => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Encryption without a certificate check (`prefer`, `require` without a
/// root certificate), as libpq does; the handshake's signatures are
/// still verified.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_settings_leave_the_url() {
        let s = settings(
            "postgres://u:p@h/db?sslmode=verify-full&sslrootcert=%2Fca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(s.mode, Mode::VerifyFull);
        assert_eq!(s.root_cert, Some(PathBuf::from("/ca.pem")));
        assert_eq!(
            s.url,
            "postgres://u:p@h/db?application_name=x&sslmode=require"
        );
        let s = settings("postgres://h/db").unwrap();
        assert_eq!(
            (s.mode, s.url.as_str()),
            (Mode::Prefer, "postgres://h/db?sslmode=prefer")
        );
        let s = settings("postgres://h/db?sslmode=disable").unwrap();
        assert_eq!(
            (s.mode, s.url.as_str()),
            (Mode::Disable, "postgres://h/db?sslmode=disable")
        );
        let s = settings("host=h sslmode=verify-ca sslrootcert=/c.pem dbname=d").unwrap();
        assert_eq!(s.mode, Mode::VerifyCa);
        assert_eq!(s.url, "host=h dbname=d sslmode=require");
        assert!(settings("postgres://h/db?sslmode=sometimes").is_err());
    }
}
