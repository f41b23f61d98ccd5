//! The model of endpoint 48, the QR code: what its document shows, as
//! `support::read_qr` reads it back (the differential compares that
//! reading, as JSON, with this).

use followgraph::snapshot::Address;
use serde_json::{json, Value};

use super::{addr_text, Expected, Model};

impl Model<'_> {
    /// `{"payload", "label", "avatar"}` of `param`'s QR code, under the
    /// default URL prefix.
    pub(super) fn qr(&self, param: &str) -> Result<Value, Expected> {
        let a: Address = self.account(param)?;
        let address = addr_text(&a);
        let (label, avatar) = match self.ens(&a) {
            Some(e) => {
                let chars: Vec<char> = e.name.chars().collect();
                let mut label: String = chars.iter().take(18).collect();
                if chars.len() > 18 {
                    label.push('…');
                }
                let avatar = e.avatar.clone().filter(|url| {
                    (url.starts_with("https://") || url.starts_with("http://")) && url.len() <= 2048
                });
                (label, avatar)
            }
            None => (format!("{}…{}", &address[..6], &address[38..]), None),
        };
        // What XML 1.0 cannot carry arrives as U+FFFD.
        let xml = |text: String| -> String {
            text.chars()
                .map(|c| match c {
                    '\t' | '\n' | '\r' => c,
                    c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
                    c => c,
                })
                .collect()
        };
        Ok(json!({
            "payload": format!("https://ethfollow.xyz/{address}"),
            "label": xml(label),
            "avatar": avatar.map(xml),
        }))
    }
}
