# followgraph's image: a glibc base (the allocator tuning of
# src/allocator.rs is glibc's), CA certificates for S3 and PostgreSQL over
# TLS, a non-root user, the committed default snapshot. The binary is
# built outside (`cargo build --release`) and copied in; `.ci/image` makes
# the base locally (mmdebstrap) and builds, runs and stops the image.
FROM debian:bookworm-slim

COPY LICENSE-MIT LICENSE-APACHE /usr/share/doc/followgraph/
COPY target/release/followgraph /usr/local/bin/followgraph
COPY snapshots /srv/followgraph/snapshots

ENV FOLLOWGRAPH_LISTEN=0.0.0.0:8080 \
    FOLLOWGRAPH_SNAPSHOT=/srv/followgraph/snapshots \
    FOLLOWGRAPH_LOG_FORMAT=json
WORKDIR /srv/followgraph
# No account needed: a numeric user owns nothing in the image.
USER 10001:10001
EXPOSE 8080
# /ready without curl (bash's /dev/tcp), on the port FOLLOWGRAPH_LISTEN names.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5m \
  CMD ["bash", "-c", "port=${FOLLOWGRAPH_LISTEN##*:}; exec 3<>/dev/tcp/127.0.0.1/$port && printf 'GET /ready HTTP/1.0\\r\\n\\r\\n' >&3 && head -1 <&3 | grep -q ' 200 '"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/followgraph"]
CMD ["serve"]
