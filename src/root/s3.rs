//! A snapshot root on S3-compatible object storage (`s3://bucket/prefix`):
//! the same layout and publishing protocol as on disk (docs/snapshot.md),
//! read and written through `object_store`; `CURRENT` is replaced with a
//! conditional write where the store has them. A replica downloads a snapshot's files into
//! memory, checks their sizes, and validates them with the ordinary reader
//! (which also checks the manifest's sha256).
//!
//! The calls are async; the reload thread is not, so an `S3Root` carries
//! a small runtime of its own and blocks on it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as StorePath;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    RetryConfig, UpdateVersion,
};

use super::{Listed, RootError};
use crate::snapshot::{
    is_valid_snapshot_name, Manifest, MemoryFiles, SnapshotError, SnapshotErrorKind,
};

/// How to reach the store: flags, or the standard `AWS_*` variables
/// (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ALLOW_HTTP`, and the keys).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct StoreOptions {
    /// S3 endpoint URL (for S3-compatible stores), e.g. http://127.0.0.1:8333.
    #[arg(long = "s3-endpoint", env = "AWS_ENDPOINT_URL")]
    pub endpoint: Option<String>,
    /// S3 region.
    #[arg(long = "s3-region", env = "AWS_REGION", default_value = "us-east-1")]
    pub region: String,
    /// Allow plain http:// endpoints.
    #[arg(long = "s3-allow-http", env = "AWS_ALLOW_HTTP")]
    pub allow_http: bool,
    /// Address buckets by path (http://endpoint/bucket) rather than by
    /// virtual host (the usual for S3-compatible stores).
    #[arg(long = "s3-path-style", env = "FOLLOWGRAPH_S3_PATH_STYLE")]
    pub path_style: bool,
    /// Retries of a failed request (the library's default waits minutes).
    #[arg(
        long = "s3-retries",
        env = "FOLLOWGRAPH_S3_RETRIES",
        default_value_t = 2
    )]
    pub retries: usize,
    /// Seconds a request may take.
    #[arg(
        long = "s3-timeout",
        env = "FOLLOWGRAPH_S3_TIMEOUT",
        default_value_t = 30
    )]
    pub timeout_secs: u64,
}

/// `s3://bucket/prefix` -> (bucket, prefix without slashes at the ends).
pub fn parse_s3_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("s3://")?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    (!bucket.is_empty()).then(|| (bucket.to_owned(), prefix.trim_matches('/').to_owned()))
}

/// A snapshot root in a bucket.
pub struct S3Root {
    store: Arc<dyn ObjectStore>,
    url: String,
    prefix: String,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for S3Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "S3Root({})", self.url)
    }
}

impl S3Root {
    pub fn open(url: &str, opts: &StoreOptions) -> Result<S3Root, RootError> {
        let (bucket, prefix) = parse_s3_url(url).ok_or_else(|| RootError::NotS3Url {
            url: url.to_owned(),
        })?;
        let client = ClientOptions::new()
            .with_timeout(Duration::from_secs(opts.timeout_secs.max(1)))
            .with_connect_timeout(Duration::from_secs(opts.timeout_secs.clamp(1, 10)));
        let retry = RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(2),
                base: 2.0,
            },
            max_retries: opts.retries,
            retry_timeout: Duration::from_secs(opts.timeout_secs.max(1) * 2),
        };
        // Client options first: setting them after allow_http turns plain
        // HTTP off again.
        let mut builder = AmazonS3Builder::from_env()
            .with_client_options(client)
            .with_retry(retry)
            .with_bucket_name(bucket)
            .with_region(&opts.region)
            .with_allow_http(opts.allow_http)
            .with_virtual_hosted_style_request(!opts.path_style);
        if let Some(endpoint) = &opts.endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        let store = builder.build().map_err(|source| RootError::Open {
            url: url.to_owned(),
            source,
        })?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(RootError::Runtime)?;
        Ok(S3Root {
            store: Arc::new(store),
            url: url.trim_end_matches('/').to_owned(),
            prefix,
            runtime,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn key(&self, rel: &str) -> StorePath {
        if self.prefix.is_empty() {
            StorePath::from(rel)
        } else {
            StorePath::from(format!("{}/{rel}", self.prefix))
        }
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.runtime.block_on(f)
    }

    /// The snapshot name `CURRENT` holds.
    pub fn current_name(&self) -> Result<String, RootError> {
        self.block_on(self.read_current_name())
    }

    /// `CURRENT`'s snapshot name and the named manifest's ETag: what a
    /// replica polls.
    pub fn fingerprint(&self) -> Result<(String, Option<String>), RootError> {
        self.block_on(async {
            let name = self.read_current_name().await?;
            let meta = self
                .store
                .head(&self.key(&format!("{name}/manifest.json")))
                .await
                .map_err(|e| {
                    RootError::store("read", format!("{}/{name}/manifest.json", self.url), e)
                })?;
            Ok((name, meta.e_tag))
        })
    }

    async fn read_current_name(&self) -> Result<String, RootError> {
        let shown = format!("{}/CURRENT", self.url);
        let text = self
            .store
            .get(&self.key("CURRENT"))
            .await
            .map_err(|e| RootError::store("read", &shown, e))?
            .bytes()
            .await
            .map_err(|e| RootError::store("read", &shown, e))?;
        let name = String::from_utf8_lossy(&text).trim().to_owned();
        if !is_valid_snapshot_name(&name) {
            return Err(RootError::InvalidCurrent {
                current: shown,
                name,
            });
        }
        Ok(name)
    }

    /// Downloads snapshot `name` (manifest and every table file named in
    /// it) into memory; each file's length must match the object's size.
    pub fn fetch(&self, name: &str) -> Result<MemoryFiles, SnapshotError> {
        let shown = format!("{}/{name}", self.url);
        self.block_on(async {
            let mut files = MemoryFiles::default();
            let manifest_bytes = self.get_checked(name, "manifest.json").await?;
            let manifest: Manifest = serde_json::from_slice(&manifest_bytes).map_err(|e| {
                SnapshotError::new(
                    SnapshotErrorKind::Manifest,
                    "manifest.json",
                    format!("malformed manifest: {e}"),
                )
            })?;
            files.0.insert("manifest.json".into(), manifest_bytes);
            for entry in manifest.tables.values() {
                if files.0.contains_key(&entry.file) || entry.file.contains('/') {
                    continue; // the reader rejects names that are not plain
                }
                match self.get_checked(name, &entry.file).await {
                    Ok(bytes) => {
                        files.0.insert(entry.file.clone(), bytes);
                    }
                    // A missing file is the reader's to report, as on disk.
                    Err(e) if e.kind == SnapshotErrorKind::MissingFile => {}
                    Err(e) => return Err(e),
                }
            }
            tracing::debug!(snapshot = %shown, files = files.0.len(), "downloaded");
            Ok(files)
        })
    }

    async fn get_checked(&self, name: &str, file: &str) -> Result<Bytes, SnapshotError> {
        let key = self.key(&format!("{name}/{file}"));
        let got = match self.store.get(&key).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(SnapshotError::new(
                    SnapshotErrorKind::MissingFile,
                    file,
                    "file is missing",
                ))
            }
            Err(e) => {
                return Err(SnapshotError::new(
                    SnapshotErrorKind::StoreUnreachable,
                    file,
                    format!(
                        "store unreachable: {}",
                        RootError::store("read", format!("{}/{name}/{file}", self.url), e)
                    ),
                ))
            }
        };
        let size = got.meta.size;
        let bytes = got.bytes().await.map_err(|e| {
            SnapshotError::new(
                SnapshotErrorKind::StoreUnreachable,
                file,
                format!(
                    "store unreachable: {}",
                    RootError::store("read", format!("{}/{name}/{file}", self.url), e)
                ),
            )
        })?;
        if bytes.len() as u64 != size {
            return Err(SnapshotError::new(
                SnapshotErrorKind::Unreadable,
                file,
                format!("downloaded {} bytes, the object has {size}", bytes.len()),
            ));
        }
        Ok(bytes)
    }

    /// Uploads the snapshot directory `dir` as `<root>/<name>/`: the table
    /// files, then the manifest (a snapshot is one once its manifest is
    /// there). A name already published is refused.
    pub(super) fn upload(&self, dir: &std::path::Path, name: &str) -> Result<(), RootError> {
        let manifest_bytes = std::fs::read(dir.join("manifest.json"))
            .map_err(|e| RootError::io("read", format!("{}/manifest.json", dir.display()), e))?;
        let manifest: Manifest =
            serde_json::from_slice(&manifest_bytes).map_err(|source| RootError::Malformed {
                what: format!("{}/manifest.json", dir.display()),
                source,
            })?;
        if self.manifest(name)?.is_some() {
            return Err(RootError::AlreadyPublished {
                location: format!("{}/{name}", self.url),
            });
        }
        self.block_on(async {
            // export.json rides along when present (the server ignores it).
            let extra = dir
                .join("export.json")
                .is_file()
                .then(|| "export.json".to_owned());
            for file in manifest
                .tables
                .values()
                .map(|e| e.file.clone())
                .chain(extra)
            {
                let bytes = std::fs::read(dir.join(&file))
                    .map_err(|e| RootError::io("read", format!("{}/{file}", dir.display()), e))?;
                self.store
                    .put(
                        &self.key(&format!("{name}/{file}")),
                        PutPayload::from(bytes),
                    )
                    .await
                    .map_err(|e| RootError::store("upload", format!("{name}/{file}"), e))?;
            }
            self.store
                .put(
                    &self.key(&format!("{name}/manifest.json")),
                    PutPayload::from(manifest_bytes),
                )
                .await
                .map_err(|e| RootError::store("upload", format!("{name}/manifest.json"), e))?;
            Ok(())
        })
    }

    /// `CURRENT`'s name, `None` when the root has none yet.
    pub(super) fn read_current(&self) -> Result<Option<String>, RootError> {
        match self.block_on(self.store.head(&self.key("CURRENT"))) {
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(RootError::store("read", format!("{}/CURRENT", self.url), e)),
            Ok(_) => self.current_name().map(Some),
        }
    }

    /// Snapshot `name`'s manifest; `None` when no such snapshot is
    /// published.
    pub(super) fn manifest(&self, name: &str) -> Result<Option<Manifest>, RootError> {
        let key = self.key(&format!("{name}/manifest.json"));
        self.block_on(async {
            let got = match self.store.get(&key).await {
                Ok(got) => got,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(RootError::store("read", format!("{}/{key}", self.url), e)),
            };
            let bytes = got
                .bytes()
                .await
                .map_err(|e| RootError::store("read", format!("{}/{key}", self.url), e))?;
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| RootError::Malformed {
                    what: format!("{}/{name}/manifest.json", self.url),
                    source,
                })
        })
    }

    /// Every published snapshot (a folder holding a readable manifest)
    /// with the bytes of its objects.
    pub(super) fn list(&self) -> Result<Vec<Listed>, RootError> {
        let prefix = (!self.prefix.is_empty()).then(|| StorePath::from(self.prefix.as_str()));
        let folders = self
            .block_on(self.store.list_with_delimiter(prefix.as_ref()))
            .map_err(|e| RootError::store("list", &self.url, e))?
            .common_prefixes;
        let mut out = Vec::new();
        for folder in folders {
            let Some(name) = folder.filename().map(str::to_owned) else {
                continue;
            };
            if !is_valid_snapshot_name(&name) {
                continue;
            }
            // Not a snapshot (or not readable as one): listed by no one.
            let Ok(Some(manifest)) = self.manifest(&name) else {
                continue;
            };
            let objects = self
                .block_on(self.store.list_with_delimiter(Some(&self.key(&name))))
                .map_err(|e| RootError::store("list", format!("{}/{name}", self.url), e))?
                .objects;
            let bytes = objects.iter().map(|o| o.size).sum();
            out.push(Listed::new(name, &manifest, bytes));
        }
        Ok(out)
    }

    /// Deletes snapshot `name`'s objects, the manifest first: a
    /// half-deleted snapshot is then no longer one.
    pub(super) fn delete(&self, name: &str) -> Result<(), RootError> {
        self.block_on(async {
            let listed = self
                .store
                .list_with_delimiter(Some(&self.key(name)))
                .await
                .map_err(|e| RootError::store("list", name, e))?;
            let mut objects: Vec<StorePath> =
                listed.objects.into_iter().map(|o| o.location).collect();
            objects.sort_by_key(|p| p.filename() != Some("manifest.json"));
            for object in objects {
                self.store
                    .delete(&object)
                    .await
                    .map_err(|e| RootError::store("delete", object.to_string(), e))?;
            }
            Ok(())
        })
    }

    /// Points `CURRENT` at `name` (see `replace_current`).
    pub(super) fn set_current(&self, name: &str) -> Result<(), RootError> {
        self.block_on(self.replace_current(name))
    }

    /// `CURRENT` <- `name`: created if absent, else replaced only if it is
    /// still the version read just before.
    async fn replace_current(&self, name: &str) -> Result<(), RootError> {
        let key = self.key("CURRENT");
        let payload = || PutPayload::from(format!("{name}\n").into_bytes());
        let mode = match self.store.head(&key).await {
            Ok(meta) => PutMode::Update(UpdateVersion {
                e_tag: meta.e_tag,
                version: meta.version,
            }),
            Err(object_store::Error::NotFound { .. }) => PutMode::Create,
            Err(e) => return Err(RootError::store("read", "CURRENT", e)),
        };
        let opts = PutOptions {
            mode,
            ..PutOptions::default()
        };
        match self.store.put_opts(&key, payload(), opts).await {
            Ok(_) => Ok(()),
            Err(object_store::Error::Precondition { .. })
            | Err(object_store::Error::AlreadyExists { .. }) => Err(RootError::CurrentChanged {
                current: format!("{}/CURRENT", self.url),
                name: name.to_owned(),
            }),
            // Stores without conditional writes: a plain atomic replace.
            Err(object_store::Error::NotImplemented { .. }) => self
                .store
                .put(&key, payload())
                .await
                .map(|_| ())
                .map_err(|e| RootError::store("write", "CURRENT", e)),
            Err(e) => Err(RootError::store("write", "CURRENT", e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_urls() {
        assert_eq!(
            parse_s3_url("s3://bucket/a/b/"),
            Some(("bucket".into(), "a/b".into()))
        );
        assert_eq!(
            parse_s3_url("s3://bucket"),
            Some(("bucket".into(), "".into()))
        );
        assert_eq!(parse_s3_url("s3:///x"), None);
        assert_eq!(parse_s3_url("/srv/root"), None);
    }
}
