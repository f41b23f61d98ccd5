//! Section 48, `/users/{addressOrENS}/qr`: an SVG QR code of the account's
//! profile page. The app inlines the document into its page, so nothing
//! from the snapshot enters it unescaped: the label and the avatar URL are
//! XML-escaped, and characters XML 1.0 does not allow become U+FFFD.
//!
//! Layout, in module units: the symbol (`w` modules, error correction H)
//! in a quiet zone of [`QUIET`] modules, on a square `W = w + 2·QUIET`
//! wide; the label in a band under it, so that the view box is `W` by
//! `W·44/39` (the app's 39:44 box). The avatar, when the account has one,
//! sits in a rounded box at the centre of the symbol whose side covers at
//! most 9% of the modules: level H recovers about 30% of the codewords, so
//! the symbol decodes with the box drawn opaque (the avatar not loaded).
//!
//! The body is a function of the payload, the label and the avatar URL:
//! no clock, no network, the same bytes on every replica. Its size is
//! bounded by [`MAX_PREFIX_BYTES`] (the symbol's version) and the avatar
//! rule (at most 2,048 bytes, 6 bytes each once escaped).

use std::fmt::Write as _;

use fast_qr::{QRBuilder, QRCode, ECL};

use crate::graph::Graph;
use crate::snapshot::format_address;

use super::subject::Account;

/// `--qr-url-prefix`'s default: the protocol app's profile pages.
pub const DEFAULT_URL_PREFIX: &str = "https://ethfollow.xyz/";

/// The longest `--qr-url-prefix`: with the address, a payload of at most
/// 170 bytes, a symbol of version 13 at level H (69 modules a side).
pub const MAX_PREFIX_BYTES: usize = 128;

/// The longest avatar URL drawn (longer ones are left out).
const MAX_AVATAR_BYTES: usize = 2048;

/// Labels longer than this many characters are cut and end with `…`.
const LABEL_CHARS: usize = 18;

/// Light modules around the symbol (the specification's minimum is one;
/// two keep it decodable when the page draws nothing around the box).
const QUIET: usize = 2;

const BACKGROUND: &str = "#333333";
const LIGHT_TOP: &str = "#FFE067";
const LIGHT_BOTTOM: &str = "#FFF7D9";

/// Checks a `--qr-url-prefix`: 1 to [`MAX_PREFIX_BYTES`] bytes of
/// printable ASCII without spaces (a URL, which the payload continues).
pub fn check_url_prefix(prefix: &str) -> Result<(), String> {
    if prefix.is_empty() || prefix.len() > MAX_PREFIX_BYTES {
        return Err(format!(
            "the QR URL prefix must be 1 to {MAX_PREFIX_BYTES} bytes long"
        ));
    }
    if !prefix.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the QR URL prefix must be printable ASCII without spaces".into());
    }
    Ok(())
}

/// 48: the account's QR code; `url_prefix` is `--qr-url-prefix`.
pub fn render(g: &Graph, account: &Account, url_prefix: &str, out: &mut String) {
    let address = format_address(&account.address);
    let profile = account.id.and_then(|id| g.profile(id));
    let label = match profile {
        Some(p) => label_of_name(p.name()),
        None => format!("{}…{}", &address[..6], &address[address.len() - 4..]),
    };
    let avatar = profile
        .and_then(|p| p.avatar())
        .filter(|url| url.starts_with("https://") || url.starts_with("http://"))
        .filter(|url| url.len() <= MAX_AVATAR_BYTES);
    let payload = format!("{url_prefix}{address}");
    draw(&payload, &label, avatar, out);
}

/// The name as stored, its first [`LABEL_CHARS`] characters and `…` when
/// it is longer.
fn label_of_name(name: &str) -> String {
    match name.char_indices().nth(LABEL_CHARS) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_owned(),
    }
}

/// The document for `payload`, `label` and `avatar` (a URL to draw, or
/// none).
pub fn draw(payload: &str, label: &str, avatar: Option<&str>, out: &mut String) {
    // Payloads are bounded by `MAX_PREFIX_BYTES`, far below what level H
    // holds (1,273 bytes); an encoder failure would be a bug.
    let Ok(code) = QRBuilder::new(payload).ecl(ECL::H).build() else {
        debug_assert!(false, "QR payload of {} bytes refused", payload.len());
        return;
    };
    let w = code.size;
    let side = w + 2 * QUIET;
    let height = side as f64 * 44.0 / 39.0;
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {side} {}\">",
        num(height)
    );
    let _ = write!(
        out,
        "<defs><linearGradient id=\"followgraph-qr-light\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">\
         <stop offset=\"0\" stop-color=\"{LIGHT_TOP}\"/><stop offset=\"1\" stop-color=\"{LIGHT_BOTTOM}\"/>\
         </linearGradient></defs>"
    );
    let _ = write!(
        out,
        "<rect width=\"{side}\" height=\"{}\" fill=\"{BACKGROUND}\"/>",
        num(height)
    );
    out.push_str("<path fill=\"url(#followgraph-qr-light)\" shape-rendering=\"crispEdges\" d=\"");
    push_modules(&code, w, out);
    out.push_str("\"/>");
    if let Some(url) = avatar {
        push_avatar(w, url, out);
    }
    let font = side as f64 * 0.075;
    let baseline = side as f64 + (height - side as f64) / 2.0 + font * 0.35;
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"{}\" fill=\"{LIGHT_BOTTOM}\">",
        num(side as f64 / 2.0),
        num(baseline),
        num(font)
    );
    push_escaped(out, label);
    out.push_str("</text></svg>");
}

/// The dark modules as one path: a rectangle per run of dark modules in a
/// row, each after the first of its row moved relative to the one before.
fn push_modules(code: &QRCode, w: usize, out: &mut String) {
    for y in 0..w {
        let row = &code[y];
        let mut last_x: Option<usize> = None;
        let mut x = 0;
        while x < w {
            if !row[x].value() {
                x += 1;
                continue;
            }
            let start = x;
            while x < w && row[x].value() {
                x += 1;
            }
            let len = x - start;
            let _ = match last_x {
                None => write!(out, "M{} {}", start + QUIET, y + QUIET),
                Some(prev) => write!(out, "m{} 0", start - prev),
            };
            let _ = write!(out, "h{len}v1h-{len}z");
            last_x = Some(start);
        }
    }
}

/// The avatar's box at the centre of the symbol: an opaque rounded square
/// (what shows while, or if, the image does not load), the image clipped
/// to it. Its side has the symbol's parity, so that it is centred on
/// module edges, and covers at most 9% of the modules.
fn push_avatar(w: usize, url: &str, out: &mut String) {
    let mut box_side = w * 3 / 10;
    if box_side % 2 != w % 2 {
        box_side -= 1;
    }
    let at = QUIET + (w - box_side) / 2;
    let radius = num(box_side as f64 * 0.2);
    let _ = write!(
        out,
        "<clipPath id=\"followgraph-qr-avatar\"><rect x=\"{at}\" y=\"{at}\" width=\"{box_side}\" height=\"{box_side}\" rx=\"{radius}\"/></clipPath>\
         <rect x=\"{at}\" y=\"{at}\" width=\"{box_side}\" height=\"{box_side}\" rx=\"{radius}\" fill=\"{BACKGROUND}\"/>\
         <image x=\"{at}\" y=\"{at}\" width=\"{box_side}\" height=\"{box_side}\" preserveAspectRatio=\"xMidYMid slice\" clip-path=\"url(#followgraph-qr-avatar)\" href=\""
    );
    push_escaped(out, url);
    out.push_str("\"/>");
}

/// `text` as XML character data or attribute value: the five special
/// characters escaped; tab, line feed and carriage return as character
/// references (a parser would otherwise normalise them: to spaces in an
/// attribute, CR to LF in text); characters XML 1.0 forbids replaced by
/// U+FFFD.
fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// A coordinate: at most two decimals, no trailing zeros.
fn num(v: f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_cut_after_18_characters() {
        assert_eq!(label_of_name("alice.eth"), "alice.eth");
        assert_eq!(label_of_name("abcdefghijklmnopqr"), "abcdefghijklmnopqr");
        assert_eq!(label_of_name("abcdefghijklmnopqrs"), "abcdefghijklmnopqr…");
        // Characters, not bytes.
        assert_eq!(
            label_of_name(&"é".repeat(20)),
            format!("{}…", "é".repeat(18))
        );
    }

    #[test]
    fn escaping_covers_markup_and_forbidden_characters() {
        let mut out = String::new();
        push_escaped(&mut out, "<a href=\"x\">&'</a>\u{0}\u{1b}\t\r\n\u{FFFF}ok");
        assert_eq!(
            out,
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;\u{FFFD}\u{FFFD}&#9;&#13;&#10;\u{FFFD}ok"
        );
    }

    #[test]
    fn prefixes_are_checked() {
        assert!(check_url_prefix(DEFAULT_URL_PREFIX).is_ok());
        assert!(check_url_prefix("").is_err());
        assert!(check_url_prefix("https://a b/").is_err());
        assert!(check_url_prefix(&"x".repeat(MAX_PREFIX_BYTES)).is_ok());
        assert!(check_url_prefix(&"x".repeat(MAX_PREFIX_BYTES + 1)).is_err());
    }

    /// The largest document the rules allow stays within 32 KiB: the
    /// longest prefix, an avatar URL of 2,048 characters that each escape
    /// to 6 bytes, a label of 18 escaped characters.
    #[test]
    fn the_largest_document_is_under_32_kib() {
        let payload = format!("{}0x{}", "h".repeat(MAX_PREFIX_BYTES), "f".repeat(40));
        let avatar = format!("https://{}", "\"".repeat(MAX_AVATAR_BYTES - 8));
        let label = format!("{}…", "&".repeat(LABEL_CHARS));
        let mut out = String::new();
        draw(&payload, &label, Some(&avatar), &mut out);
        assert!(out.len() <= 32 * 1024, "{} bytes", out.len());
        // The symbol alone, with a dense payload of the same length.
        let mut out = String::new();
        draw(&payload, "", None, &mut out);
        assert!(out.len() < 20 * 1024, "{} bytes", out.len());
    }

    #[test]
    fn numbers_have_at_most_two_decimals() {
        assert_eq!(num(49.0), "49");
        assert_eq!(num(55.282), "55.28");
        assert_eq!(num(3.5), "3.5");
    }
}
