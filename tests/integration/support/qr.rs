//! Reading 48's SVG as a client would see it: parsed as XML (so it must be
//! well-formed), rendered to pixels (resvg, which loads nothing from the
//! network: the avatar's box shows opaque), colours inverted, its symbol
//! decoded (rqrr).

use resvg::{tiny_skia, usvg};

/// What a QR answer shows.
#[derive(Debug, PartialEq)]
pub struct QrSeen {
    /// The decoded symbol.
    pub payload: String,
    /// The label's text, unescaped.
    pub label: String,
    /// The avatar's `href`, unescaped.
    pub href: Option<String>,
    /// The colour at the centre of the symbol (`#333333` under an
    /// avatar's opaque box).
    pub centre: [u8; 3],
}

/// Reads `svg`; panics with the document when it is not a well-formed
/// SVG of aspect ratio 39:44 (within 5%) holding one decodable symbol.
pub fn read_qr(svg: &str) -> QrSeen {
    let (label, href) = read_qr_text(svg);
    let (payload, centre) = decode(svg);
    QrSeen {
        payload,
        label,
        href,
        centre,
    }
}

/// The label and the avatar's URL of `svg` (panics as [`read_qr`] does
/// when it is not well-formed).
pub fn read_qr_text(svg: &str) -> (String, Option<String>) {
    let doc = roxmltree::Document::parse(svg)
        .unwrap_or_else(|e| panic!("not well-formed XML ({e}): {svg}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg", "{svg}");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    let element = |name: &str| root.descendants().find(|n| n.has_tag_name(name));
    let label = element("text")
        .unwrap_or_else(|| panic!("no label: {svg}"))
        .text()
        .unwrap_or("")
        .to_owned();
    let href = element("image").map(|n| n.attribute("href").expect("href").to_owned());
    (label, href)
}

/// Renders `svg` 4 pixels a unit, inverts it and decodes its one symbol;
/// also the colour at the centre of the symbol (the square above the
/// label).
fn decode(svg: &str) -> (String, [u8; 3]) {
    let tree = usvg::Tree::from_str(svg, &usvg::Options::default())
        .unwrap_or_else(|e| panic!("not an SVG usvg reads ({e}): {svg}"));
    let size = tree.size();
    let aspect = size.width() / size.height();
    assert!(
        (aspect / (39.0 / 44.0) - 1.0).abs() < 0.05,
        "aspect ratio {aspect}: {svg}"
    );
    // Four pixels a module: enough for the decoder, and cheap in the
    // differential test, which reads every QR answer it draws.
    let scale = 4.0;
    let w = (size.width() * scale).ceil() as u32;
    let h = (size.height() * scale).ceil() as u32;
    let mut pixmap = tiny_skia::Pixmap::new(w, h).expect("pixmap");
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    // Opaque throughout (the background covers the view box), so the
    // premultiplied bytes are the colours.
    let rgba = pixmap.data();
    let at = |x: usize, y: usize| &rgba[4 * (y * w as usize + x)..][..3];
    let inverted: Vec<u8> = rgba
        .chunks_exact(4)
        .map(|p| {
            let [r, g, b] = [p[0], p[1], p[2]].map(u32::from);
            255 - ((299 * r + 587 * g + 114 * b) / 1000) as u8
        })
        .collect();
    let inverted_grey = |x: usize, y: usize| inverted[y * w as usize + x];
    let mut image =
        rqrr::PreparedImage::prepare_from_greyscale(w as usize, h as usize, inverted_grey);
    let grids = image.detect_grids();
    assert_eq!(grids.len(), 1, "symbols found in {svg}");
    let (_, payload) = grids[0]
        .decode()
        .unwrap_or_else(|e| panic!("the symbol does not decode ({e:?}): {svg}"));
    let centre = at(w as usize / 2, w as usize / 2);
    (payload, [centre[0], centre[1], centre[2]])
}
