//! Live indexes built poll after poll over one base, each sharing and
//! patching what the previous one built, against a build of the same
//! entities from the base alone: every follower order, tagger, count.

use super::refresh_tests::{address, base, reread, ACCOUNTS};
use super::Overlay;
use crate::graph::Graph;
use crate::rng::SplitMix64;
use crate::snapshot::format_address;

/// Every follower value of every account `g` knows, by address (ids and
/// tag-set ids differ between the two builds).
fn follower_values(g: &Graph) -> Vec<String> {
    let addresses = |ids: &[u32]| -> Vec<String> {
        ids.iter()
            .map(|&id| format_address(g.address(id)))
            .collect()
    };
    let mut out = Vec::new();
    for i in 0..ACCOUNTS {
        for new in [false, true] {
            // A new account that earlier polls named stays known to the
            // chain with nothing; a build from the base lacks it.
            let Some(t) = g.account_id(&address(i, new)) else {
                out.push(format!(
                    "{i} {new}: latest [] by address [] by count [] tagged [] shown 0 count 0"
                ));
                continue;
            };
            let tagged: Vec<(String, Vec<&str>)> = g
                .tagged_by(t)
                .map(|(a, set)| {
                    let tags = g.tagset(set).iter().map(|&tag| g.tag_text(tag)).collect();
                    (format_address(a), tags)
                })
                .collect();
            out.push(format!(
                "{i} {new}: latest {:?} by address {:?} by count {:?} tagged {tagged:?} \
                 shown {} count {}",
                addresses(g.followers_latest(t)),
                addresses(g.followers_by_address(t)),
                addresses(g.followers_by_count(t)),
                g.followers_shown(t),
                g.followers_count(t),
            ));
        }
    }
    out
}

#[test]
fn a_chain_of_live_builds_answers_as_a_build_from_the_base() {
    let mut chained = 0;
    for seed in 0..40 {
        let r = &mut SplitMix64::new(1000 + seed);
        let tables = base(r);
        let Ok(g) = Graph::from_tables("base".into(), 0, tables.clone()) else {
            continue;
        };
        let mut overlay = Overlay::default();
        let mut prev: Option<Graph> = None;
        for poll in 1..=8 {
            overlay.apply(reread(r, &tables), poll);
            let changes = overlay.changes();
            let (Ok(got), Ok(want)) = (
                g.with_live(&changes, prev.as_ref()),
                g.with_live(&changes, None),
            ) else {
                // The hidden-ops case waits for a compaction: start over.
                overlay = Overlay::default();
                prev = None;
                continue;
            };
            let (a, b) = (follower_values(&got), follower_values(&want));
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x, y, "seed {seed} poll {poll}");
            }
            chained += usize::from(prev.is_some());
            prev = Some(got);
        }
    }
    assert!(chained > 200, "{chained} chained builds");
}
