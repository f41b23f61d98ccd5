//! The one HTTP client configuration of the tests and the benches (the
//! HTTP bench includes this file): statuses are answers, not errors; no
//! redirect; no idle connection kept (none holds one of the server's
//! connection permits); any method (the 405 tests send some).

use std::sync::OnceLock;
use std::time::Duration;

/// The shared agent; each request ends after `timeout` at the latest.
pub fn agent(timeout: Duration) -> &'static ureq::Agent {
    static AGENT: OnceLock<ureq::Agent> = OnceLock::new();
    AGENT.get_or_init(|| {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_idle_connections(0)
            .allow_non_standard_methods(true)
            .timeout_global(Some(timeout))
            .build()
            .into()
    })
}
