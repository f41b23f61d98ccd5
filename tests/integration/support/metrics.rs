//! Reading `/metrics`: the samples of a Prometheus text exposition and the
//! value of one sample by name and labels.

/// One sample line of the Prometheus text format.
#[derive(Clone, Debug)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

/// The samples of a Prometheus text exposition (comments skipped).
/// Panics on a line that is not `name[{labels}] value [timestamp]`.
pub fn parse_metrics(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name_end = line
            .find(|c: char| c == '{' || c.is_ascii_whitespace())
            .unwrap_or_else(|| bad_metrics_line(line));
        let name = line[..name_end].to_owned();
        let mut rest = &line[name_end..];
        let mut labels = Vec::new();
        if let Some(r) = rest.strip_prefix('{') {
            let mut r = r;
            loop {
                r = r.trim_start_matches([',', ' ']);
                if let Some(after) = r.strip_prefix('}') {
                    r = after;
                    break;
                }
                let eq = r.find('=').unwrap_or_else(|| bad_metrics_line(line));
                let key = r[..eq].trim().to_owned();
                let v = r[eq + 1..]
                    .strip_prefix('"')
                    .unwrap_or_else(|| bad_metrics_line(line));
                let mut value = String::new();
                let mut chars = v.char_indices();
                let end = loop {
                    match chars.next() {
                        Some((i, '"')) => break i,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, 'n')) => value.push('\n'),
                            Some((_, c)) => value.push(c),
                            None => bad_metrics_line(line),
                        },
                        Some((_, c)) => value.push(c),
                        None => bad_metrics_line(line),
                    }
                };
                labels.push((key, value));
                r = &v[end + 1..];
            }
            rest = r;
        }
        let value_text = rest
            .split_whitespace()
            .next()
            .unwrap_or_else(|| bad_metrics_line(line));
        let value = match value_text {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            v => v.parse().unwrap_or_else(|_| bad_metrics_line(line)),
        };
        out.push(Sample {
            name,
            labels,
            value,
        });
    }
    out
}

fn bad_metrics_line(line: &str) -> ! {
    panic!("bad metrics line {line:?}")
}

/// The value of the sample `name` whose label set is exactly `labels`
/// (in any order).
pub fn metric(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| {
            s.name == name
                && s.labels.len() == labels.len()
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.iter().any(|(sk, sv)| sk == k && sv == v))
        })
        .map(|s| s.value)
}
