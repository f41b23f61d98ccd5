//! The deployment examples (deploy/) say what the server needs: the
//! probes on `/health` and `/ready`, a grace period above the drain, the
//! memory a reload peaks at, flags that exist, the open-files limit.
//! Their schemas are checked by `.ci/deploy`.

use std::path::Path;

use serde_yaml_ng::Value;

fn yaml(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// `512Mi`, `1Gi` in bytes.
fn quantity(v: &Value) -> u64 {
    let s = v.as_str().expect("a quantity");
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = n.parse().unwrap();
    n * match unit {
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "" => 1,
        other => panic!("unit {other}"),
    }
}

/// The `FOLLOWGRAPH_*` variables `followgraph <command> --help` names.
fn known_env(command: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_followgraph"))
        .args([command, "--help"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn env_names(container: &Value) -> Vec<String> {
    container["env"]
        .as_sequence()
        .into_iter()
        .flatten()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_kubernetes_deployment_probes_drains_and_sizes_as_the_server_needs() {
    let d = yaml("kubernetes/deployment.yaml");
    let pod = &d["spec"]["template"]["spec"];
    // Above the server's 30 s drain after SIGTERM.
    assert!(pod["terminationGracePeriodSeconds"].as_u64().unwrap() > 30);
    let c = &pod["containers"][0];
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/health");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/ready");
    assert_eq!(c["startupProbe"]["httpGet"]["path"], "/ready");
    // At the protocol's size (docs/operations.md, "Sizing"): the steady
    // size requested; the limit holds a reload's or the tail's compaction
    // (289 MiB at most in the live bench) and a full response cache
    // (256 MiB).
    let limit = quantity(&c["resources"]["limits"]["memory"]);
    let request = quantity(&c["resources"]["requests"]["memory"]);
    assert!(request >= 100 << 20 && limit >= (289 + 256) << 20 && limit >= request);
    // Every variable it sets is one `serve` reads.
    let help = known_env("serve");
    for name in env_names(c) {
        assert!(
            !name.starts_with("FOLLOWGRAPH_") || help.contains(&name),
            "serve reads no {name}"
        );
    }
    let ports: Vec<u64> = c["ports"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|p| p["containerPort"].as_u64().unwrap())
        .collect();
    let env = |name: &str| {
        c["env"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .and_then(|e| e["value"].as_str())
            .unwrap_or_else(|| panic!("no {name}"))
            .to_owned()
    };
    for var in ["FOLLOWGRAPH_LISTEN", "FOLLOWGRAPH_ADMIN_LISTEN"] {
        let at = env(var);
        assert!(at.starts_with("0.0.0.0:"), "{var}={at}");
        let port: u64 = at.rsplit(':').next().unwrap().parse().unwrap();
        assert!(ports.contains(&port), "{var}'s port is not exposed");
    }
    // The PDB and the Service select the Deployment's pods.
    let labels = &d["spec"]["template"]["metadata"]["labels"];
    assert_eq!(
        &yaml("kubernetes/pdb.yaml")["spec"]["selector"]["matchLabels"],
        labels
    );
    assert_eq!(&yaml("kubernetes/service.yaml")["spec"]["selector"], labels);
}

#[test]
fn the_exporter_job_uses_flags_that_exist() {
    let job = yaml("kubernetes/exporter-cronjob.yaml");
    let c = &job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["args"][0], "export");
    let help = known_env("export");
    for flag in c["args"].as_sequence().unwrap().iter().skip(1) {
        let flag = flag.as_str().unwrap();
        if let Some(name) = flag.strip_prefix("--") {
            assert!(help.contains(&format!("--{name}")), "export has no {flag}");
        }
    }
    for name in env_names(c) {
        assert!(
            !name.starts_with("FOLLOWGRAPH_") || help.contains(&name),
            "export reads no {name}"
        );
    }
    // Two exports never run at once.
    assert_eq!(job["spec"]["concurrencyPolicy"], "Forbid");
}

#[test]
fn the_systemd_unit_raises_the_open_files_limit_and_drains() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/systemd/followgraph.service");
    let unit = std::fs::read_to_string(path).unwrap();
    let value = |key: &str| {
        unit.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("no {key}"))
            .to_owned()
    };
    // --max-connections (10,000) and some room.
    assert!(value("LimitNOFILE").parse::<u64>().unwrap() > 10_064);
    assert_eq!(value("KillSignal"), "SIGTERM");
    assert!(value("TimeoutStopSec").parse::<u64>().unwrap() > 30);
    assert!(value("ExecReload").ends_with("-HUP $MAINPID"));
    let help = known_env("serve");
    for line in unit.lines().filter_map(|l| l.strip_prefix("Environment=")) {
        let name = line.split('=').next().unwrap();
        assert!(help.contains(name), "serve reads no {name}");
    }
}

/// The `followgraph_*` and `process_*` names a PromQL expression reads.
fn metric_names(expr: &str) -> Vec<String> {
    expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("followgraph_") || w.starts_with("process_"))
        .map(str::to_owned)
        .collect()
}

/// Every series name `/metrics` exports (a histogram's with its
/// `_bucket`, `_sum` and `_count`), from a server with a tail on a
/// database that is not there (its metrics are exported all the same).
fn exported_names() -> std::collections::BTreeSet<String> {
    use crate::support::Requests;
    let srv = crate::support::TestServer::start_args(
        &crate::fixtures::graph(),
        &[
            "--database-url",
            "postgres://nobody@127.0.0.1:1/none",
            "--fresh-wait",
            "100",
        ],
    );
    let text = srv.get("/metrics").text();
    let mut names = std::collections::BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split_whitespace();
            let (name, kind) = (parts.next().unwrap(), parts.next().unwrap());
            names.insert(name.to_owned());
            if kind == "histogram" {
                for suffix in ["_bucket", "_sum", "_count"] {
                    names.insert(format!("{name}{suffix}"));
                }
            }
        }
    }
    names
}

#[test]
fn the_dashboard_and_the_alerts_read_metrics_the_server_exports() {
    let exported = exported_names();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/grafana/followgraph.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut exprs: Vec<String> = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        assert!(panel["title"].is_string());
        for target in panel["targets"].as_array().unwrap() {
            exprs.push(target["expr"].as_str().unwrap().to_owned());
        }
    }
    assert!(exprs.len() >= 10);
    let alerts = yaml("prometheus/alerts.yaml");
    let rules = alerts["groups"][0]["rules"].as_sequence().unwrap();
    for rule in rules {
        assert!(rule["alert"]
            .as_str()
            .is_some_and(|a| a.starts_with("Followgraph")));
        assert!(["critical", "warning"].contains(&rule["labels"]["severity"].as_str().unwrap()));
        assert!(rule["annotations"]["summary"].is_string());
        exprs.push(rule["expr"].as_str().unwrap().to_owned());
    }
    for expr in &exprs {
        let names = metric_names(expr);
        assert!(!names.is_empty(), "{expr} reads no metric of ours");
        for name in names {
            assert!(exported.contains(&name), "{expr}: /metrics has no {name}");
        }
    }
}

#[test]
fn the_compose_services_use_commands_and_variables_that_exist() {
    let mut compose = yaml("compose.yaml");
    compose.apply_merge().unwrap();
    let services = compose["services"].as_mapping().unwrap();
    let mut ours = 0;
    for (name, service) in services {
        if !service["image"]
            .as_str()
            .is_some_and(|i| i.starts_with("followgraph:"))
        {
            continue;
        }
        ours += 1;
        let command = service["command"][0].as_str().unwrap();
        let help = known_env(command);
        assert!(help.contains("Usage"), "{name:?}: no command {command}");
        let env = service["environment"].as_mapping().into_iter().flatten();
        for key in env.filter_map(|(k, _)| k.as_str()) {
            assert!(
                !key.starts_with("FOLLOWGRAPH_") || help.contains(key),
                "{name:?}: {command} reads no {key}"
            );
        }
    }
    // generate, the exporter, two replicas.
    assert_eq!(ours, 4);
    let prometheus = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus/prometheus.yml"),
    )
    .unwrap();
    for replica in ["server-1", "server-2"] {
        let admin = compose["services"][replica]["environment"]["FOLLOWGRAPH_ADMIN_LISTEN"]
            .as_str()
            .unwrap();
        let port = admin.rsplit(':').next().unwrap();
        assert!(
            prometheus.contains(&format!("{replica}:{port}")),
            "{replica} is not scraped"
        );
    }
}
