//! Name-service profiles: the `ens` table's text fields per account.
//!
//! Layout (p profiles, n accounts): every text in one arena string, each
//! profile holding the (offset, length) of its eight fields and its
//! `fresh` time (80 bytes), plus a profile index per account (4 bytes).
//! One arena instead of a heap string per field saves the pointers and
//! allocator overhead of ~6 strings per profile. The JSON object columns
//! are kept as the compact JSON text the reader checked.
//!
//! `EnsField` is the one definition of which slot holds which column: the
//! builder fills the slots and the accessors read them through it.

use super::intern::Interner;
use super::stop::{limit, Stop};
use super::{prefetch, AccountId, FastMap};
use crate::snapshot::{Address, EnsRow};

/// The text columns of `ens`, each the index of its slot in a profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EnsField {
    Name,
    Avatar,
    Header,
    Display,
    Records,
    Chains,
    Resolver,
    Errors,
}

/// Texts up to this long are written to the arena once, however many
/// profiles hold them.
const SHARED_MAX_BYTES: usize = 48;

/// Where `text` lies once written at `start`, or the 4 GiB limit.
fn text_ref(start: usize, text: &str, file: &str) -> Result<TextRef, Stop> {
    let fits = |n: usize| u32::try_from(n).ok().filter(|&n| n != u32::MAX);
    match (fits(start), fits(text.len()), fits(start + text.len())) {
        (Some(start), Some(len), Some(_)) => Ok(TextRef { start, len }),
        _ => Err(limit(file, "more than 4 GiB of profile text")),
    }
}

impl EnsField {
    const COUNT: usize = 8;
    /// The order a profile's texts are written in: longest usually first,
    /// so that a later one found inside an earlier one (the name in an
    /// avatar URL such as `https://euc.li/{name}`, a display name equal to
    /// the name) points there instead of being written again, which
    /// saves much of the arena.
    const WRITE_ORDER: [EnsField; EnsField::COUNT] = [
        EnsField::Avatar,
        EnsField::Header,
        EnsField::Name,
        EnsField::Display,
        EnsField::Resolver,
        EnsField::Records,
        EnsField::Chains,
        EnsField::Errors,
    ];

    /// The field's text in an `ens` row (`None`: null).
    fn of(self, e: &EnsRow) -> Option<&str> {
        match self {
            EnsField::Name => Some(&e.name),
            EnsField::Avatar => e.avatar.as_deref(),
            EnsField::Header => e.header.as_deref(),
            EnsField::Display => e.display.as_deref(),
            EnsField::Records => e.records.as_deref(),
            EnsField::Chains => e.chains.as_deref(),
            EnsField::Resolver => e.resolver.as_deref(),
            EnsField::Errors => e.errors.as_deref(),
        }
    }
}

/// Where a profile field's text lies in the shared arena (`len ==
/// u32::MAX`: null).
#[derive(Clone, Copy, Debug)]
struct TextRef {
    start: u32,
    len: u32,
}

const NULL_TEXT: TextRef = TextRef {
    start: 0,
    len: u32::MAX,
};

/// The fields of one profile.
#[derive(Clone, Copy, Debug)]
struct ProfileSlots {
    /// Indexed by `EnsField`.
    texts: [TextRef; EnsField::COUNT],
    fresh: Option<i64>,
}

/// A name-service profile; JSON object columns hold compact JSON text.
#[derive(Clone, Copy, Debug)]
pub struct Profile<'g> {
    arena: &'g str,
    slots: &'g ProfileSlots,
}

impl<'g> Profile<'g> {
    #[inline]
    fn text(&self, field: EnsField) -> Option<&'g str> {
        let r = self.slots.texts[field as usize];
        (r.len != u32::MAX).then(|| &self.arena[r.start as usize..(r.start + r.len) as usize])
    }
    pub fn name(&self) -> &'g str {
        self.text(EnsField::Name).unwrap_or("")
    }
    pub fn avatar(&self) -> Option<&'g str> {
        self.text(EnsField::Avatar)
    }
    pub fn header(&self) -> Option<&'g str> {
        self.text(EnsField::Header)
    }
    pub fn display(&self) -> Option<&'g str> {
        self.text(EnsField::Display)
    }
    pub fn records(&self) -> Option<&'g str> {
        self.text(EnsField::Records)
    }
    pub fn chains(&self) -> Option<&'g str> {
        self.text(EnsField::Chains)
    }
    pub fn resolver(&self) -> Option<&'g str> {
        self.text(EnsField::Resolver)
    }
    pub fn errors(&self) -> Option<&'g str> {
        self.text(EnsField::Errors)
    }
    pub fn fresh(&self) -> Option<i64> {
        self.slots.fresh
    }
}

/// `Profiles::of` of an account without a profile.
const NO_PROFILE: u32 = u32::MAX;

/// Every account's profile, if it has one.
pub(super) struct Profiles {
    /// Account -> index into `slots` (`NO_PROFILE`: none).
    of: Vec<u32>,
    slots: Vec<ProfileSlots>,
    arena: String,
}

impl Profiles {
    #[inline]
    pub(super) fn get(&self, id: AccountId) -> Option<Profile<'_>> {
        self.slots
            .get(self.of[id as usize] as usize)
            .map(|slots| Profile {
                arena: &self.arena,
                slots,
            })
    }

    /// Starts loading which profile the account has.
    #[inline(always)]
    pub(super) fn prefetch_index(&self, id: usize) {
        prefetch(&self.of[id]);
    }

    /// Starts loading the account's profile slots and the start of its
    /// name (best after `prefetch_index`, once the index is arriving).
    #[inline(always)]
    pub(super) fn prefetch_profile(&self, id: usize) {
        if let Some(slots) = self.slots.get(self.of[id] as usize) {
            prefetch(slots);
            if let Some(first) = self
                .arena
                .as_bytes()
                .get(slots.texts[EnsField::Name as usize].start as usize)
            {
                prefetch(first);
            }
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.arena.capacity()
            + self.slots.capacity() * std::mem::size_of::<ProfileSlots>()
            + self.of.capacity() * 4
    }
}

/// Profiles while account ids are provisional.
pub(super) struct ProfilesBuilder {
    /// The provisional id of each profile (`ens` row order).
    ids: Vec<u32>,
    slots: Vec<ProfileSlots>,
    arena: String,
}

impl ProfilesBuilder {
    pub(super) fn new(ens: &[EnsRow], interner: &Interner, file: &str) -> Result<Self, Stop> {
        let mut arena = String::new();
        // Short texts many profiles share ("{}", a public resolver) are
        // written once.
        let mut shared: FastMap<&str, TextRef> = FastMap::default();
        let addresses: Vec<Address> = ens.iter().map(|e| e.address).collect();
        let ids = interner.ids_par(&addresses);
        drop(addresses);
        let mut slots = Vec::with_capacity(ens.len());
        for e in ens {
            let mut texts = [NULL_TEXT; EnsField::COUNT];
            let profile_start = arena.len();
            for field in EnsField::WRITE_ORDER {
                let Some(text) = field.of(e) else { continue };
                let within_profile = (!text.is_empty())
                    .then(|| arena[profile_start..].find(text))
                    .flatten();
                texts[field as usize] = if let Some(at) = within_profile {
                    // The name inside its avatar URL, the display name
                    // that is the name.
                    text_ref(profile_start + at, text, file)?
                } else if text.len() <= SHARED_MAX_BYTES {
                    match shared.get(text) {
                        Some(&r) => r,
                        None => {
                            let r = text_ref(arena.len(), text, file)?;
                            arena.push_str(text);
                            shared.insert(text, r);
                            r
                        }
                    }
                } else {
                    let r = text_ref(arena.len(), text, file)?;
                    arena.push_str(text);
                    r
                };
            }
            slots.push(ProfileSlots {
                texts,
                fresh: e.fresh,
            });
        }
        drop(shared);
        arena.shrink_to_fit();
        Ok(ProfilesBuilder { ids, slots, arena })
    }

    /// The provisional account id of each profile, in `ens` row order.
    pub(super) fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// The profiles by final account id (`perm`: provisional -> final).
    pub(super) fn finish(self, n: usize, perm: &[u32]) -> Profiles {
        let mut of = vec![NO_PROFILE; n];
        for (row, &prov) in self.ids.iter().enumerate() {
            of[perm[prov as usize] as usize] = row as u32;
        }
        Profiles {
            of,
            slots: self.slots,
            arena: self.arena,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_written_and_has_its_own_slot() {
        let mut slots: Vec<usize> = EnsField::WRITE_ORDER.iter().map(|&f| f as usize).collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..EnsField::COUNT).collect::<Vec<_>>());
    }

    #[test]
    fn each_accessor_reads_its_own_column() {
        let row = EnsRow {
            address: [7; 20],
            name: "Name".into(),
            avatar: Some("avatar".into()),
            header: None,
            display: Some("display".into()),
            records: Some("{\"a\":1}".into()),
            chains: Some("{}".into()),
            resolver: Some("resolver".into()),
            errors: None,
            fresh: Some(42),
        };
        let interner = Interner::new(1);
        let profiles = ProfilesBuilder::new(std::slice::from_ref(&row), &interner, "ens")
            .unwrap_or_else(|_| panic!("valid profile"));
        let profiles = profiles.finish(2, &[1]);
        assert!(profiles.get(0).is_none());
        let p = profiles.get(1).expect("account 1 has the profile");
        assert_eq!(p.name(), "Name");
        assert_eq!(p.avatar(), Some("avatar"));
        assert_eq!(p.header(), None);
        assert_eq!(p.display(), Some("display"));
        assert_eq!(p.records(), Some("{\"a\":1}"));
        assert_eq!(p.chains(), Some("{}"));
        assert_eq!(p.resolver(), Some("resolver"));
        assert_eq!(p.errors(), None);
        assert_eq!(p.fresh(), Some(42));
    }

    #[test]
    fn texts_inside_another_or_shared_are_written_once() {
        let row = |name: &str, records: &str| EnsRow {
            address: [name.len() as u8; 20],
            name: name.into(),
            avatar: Some(format!("https://euc.li/{name}")),
            header: Some(String::new()),
            display: Some(name.into()),
            records: Some(records.into()),
            chains: Some("{}".into()),
            resolver: Some("0x231b0ee14048e9dccd1d247744d114a4eb5e8e63".into()),
            errors: Some("{}".into()),
            fresh: None,
        };
        let long = format!("{{\"description\":\"{}\"}}", "x".repeat(60));
        let rows = [row("alice.eth", "{}"), row("bob.eth", &long)];
        let interner = Interner::new(2);
        let profiles = ProfilesBuilder::new(&rows, &interner, "ens")
            .unwrap_or_else(|_| panic!("valid profiles"))
            .finish(2, &[0, 1]);
        // Each avatar, the long records and "{}", the resolver and "" once.
        let written = 2 * "https://euc.li/".len() + "alice.eth".len() + "bob.eth".len();
        assert_eq!(profiles.arena.len(), written + long.len() + 2 + 42);
        for (id, r) in rows.iter().enumerate() {
            let p = profiles.get(id as u32).expect("a profile");
            assert_eq!(p.name(), r.name);
            assert_eq!(p.avatar(), r.avatar.as_deref());
            assert_eq!(p.header(), Some(""));
            assert_eq!(p.display(), Some(r.name.as_str()));
            assert_eq!(p.records(), r.records.as_deref());
            assert_eq!(p.chains(), Some("{}"));
            assert_eq!(p.resolver(), r.resolver.as_deref());
            assert_eq!(p.errors(), Some("{}"));
        }
    }
}
