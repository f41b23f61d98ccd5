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

use super::build::{limit, Stop};
use super::intern::Interner;
use super::{prefetch, AccountId};
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

impl EnsField {
    const COUNT: usize = 8;
    /// Every field in slot order (which is also arena order).
    const ALL: [EnsField; EnsField::COUNT] = [
        EnsField::Name,
        EnsField::Avatar,
        EnsField::Header,
        EnsField::Display,
        EnsField::Records,
        EnsField::Chains,
        EnsField::Resolver,
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
        let mut put = |text: Option<&str>| -> Result<TextRef, Stop> {
            let Some(text) = text else {
                return Ok(NULL_TEXT);
            };
            let start = u32::try_from(arena.len())
                .ok()
                .filter(|s| {
                    s.checked_add(text.len() as u32).is_some() && text.len() < u32::MAX as usize
                })
                .ok_or_else(|| limit(file, "more than 4 GiB of profile text"))?;
            arena.push_str(text);
            Ok(TextRef {
                start,
                len: text.len() as u32,
            })
        };
        let addresses: Vec<Address> = ens.iter().map(|e| e.address).collect();
        let ids = interner.ids_par(&addresses);
        drop(addresses);
        let mut slots = Vec::with_capacity(ens.len());
        for e in ens {
            let mut texts = [NULL_TEXT; EnsField::COUNT];
            for field in EnsField::ALL {
                texts[field as usize] = put(field.of(e))?;
            }
            slots.push(ProfileSlots {
                texts,
                fresh: e.fresh,
            });
        }
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
    fn every_field_has_its_own_slot_in_order() {
        for (i, field) in EnsField::ALL.into_iter().enumerate() {
            assert_eq!(field as usize, i);
        }
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
}
