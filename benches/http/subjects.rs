//! The subjects requests name, collected through the API itself: random
//! list ids give random accounts (with their names and primary lists), the
//! leaderboard top gives the hubs, and `/primary-list` the hubs' lists.

use std::collections::HashMap;
use std::time::Instant;

use followgraph::api::Endpoint as E;
use followgraph::rng::ModuloRng;
use serde_json::Value;

use crate::client::{enc, get_ok, http_get};
use crate::die;
use crate::options::Opts;

#[derive(Clone, Debug)]
pub struct Account {
    pub address: String,
    pub name: Option<String>,
    pub list: Option<u64>,
}

impl Account {
    /// How a client names the account: its name half of the time when it
    /// has one, else its address.
    pub fn ident(&self, rng: &mut ModuloRng) -> String {
        match &self.name {
            Some(n) if rng.with_probability(0.5) => enc(n),
            _ => self.address.clone(),
        }
    }
}

pub struct Subjects {
    pub accounts: Vec<Account>,
    pub hubs: Vec<Account>,
    /// Accounts (random or hub) with a primary list.
    pub listed: Vec<Account>,
    pub listed_hubs: Vec<Account>,
    pub names: Vec<String>,
    /// The snapshot's `created_at`, epoch seconds.
    pub created_at_s: i64,
}

impl Subjects {
    /// 10% hubs (the leaderboard top), 90% accounts drawn at random.
    pub fn account(&self, rng: &mut ModuloRng) -> &Account {
        if !self.hubs.is_empty() && rng.with_probability(0.10) {
            rng.pick_item(&self.hubs)
        } else {
            rng.pick_item(&self.accounts)
        }
    }
    /// A primary list: of a hub 10% of the time, else of a random account.
    pub fn list(&self, rng: &mut ModuloRng) -> u64 {
        let a = if !self.listed_hubs.is_empty() && rng.with_probability(0.10) {
            rng.pick_item(&self.listed_hubs)
        } else {
            rng.pick_item(&self.listed)
        };
        a.list.expect("listed accounts have a list")
    }
}

/// Draws the subjects from the server at `addr` serving `tables` (row
/// counts of `/snapshot`) created at `created_at`.
pub fn collect_subjects(o: &Opts, addr: &str, tables: &Value, created_at: &str) -> Subjects {
    let started = Instant::now();
    let mut rng = ModuloRng(o.seed ^ 0x5eed);
    let lists = tables["lists"].as_u64().unwrap_or(0).max(1);
    let want = if o.quick { 600 } else { 1500 };
    let mut accounts = Vec::new();
    let mut tries = 0;
    while accounts.len() < want && tries < want * 4 {
        tries += 1;
        let id = 1 + rng.below(lists as usize) as u64;
        let Ok(a) = http_get(
            addr,
            &format!("{}?cache=fresh", E::ListDetails.target(&[&id.to_string()])),
        ) else {
            continue;
        };
        if a.status != 200 {
            continue;
        }
        let v = a.json();
        let Some(address) = v["address"].as_str() else {
            continue;
        };
        accounts.push(Account {
            address: address.to_owned(),
            name: v["ens"]["name"].as_str().map(str::to_owned),
            list: v["primary_list"].as_str().and_then(|s| s.parse().ok()),
        });
    }
    if accounts.is_empty() {
        die("found no primary list among random list ids");
    }
    // Hubs: the leaderboard top (every address contains "0x").
    let nhubs = if o.quick { 30 } else { 100 };
    let top = get_ok(
        addr,
        &format!(
            "{}?term=0x&limit={nhubs}&cache=fresh",
            E::LeaderboardSearch.target(&[])
        ),
    );
    let top: Vec<(String, Option<String>)> = top["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some((
                r["address"].as_str()?.to_owned(),
                r["name"].as_str().map(str::to_owned),
            ))
        })
        .collect();
    let lists_of = hub_lists(addr, &top);
    let hubs: Vec<Account> = top
        .into_iter()
        .map(|(address, name)| Account {
            list: lists_of.get(&address).copied(),
            address,
            name,
        })
        .collect();
    let listed: Vec<Account> = accounts
        .iter()
        .filter(|a| a.list.is_some())
        .cloned()
        .collect();
    let listed_hubs: Vec<Account> = hubs.iter().filter(|a| a.list.is_some()).cloned().collect();
    let names: Vec<String> = accounts
        .iter()
        .chain(&hubs)
        .filter_map(|a| a.name.clone())
        .collect();
    let created_at_s = followgraph::time::parse_iso_ms(created_at).unwrap_or(0) / 1000;
    eprintln!(
        "subjects: {} random accounts ({} named), {} hubs ({} with a list found) in {:.1} s",
        accounts.len(),
        names.len(),
        hubs.len(),
        listed_hubs.len(),
        started.elapsed().as_secs_f64()
    );
    Subjects {
        accounts,
        hubs,
        listed,
        listed_hubs,
        names,
        created_at_s,
    }
}

/// The hubs' primary lists (`/users/{a}/primary-list`).
fn hub_lists(addr: &str, hubs: &[(String, Option<String>)]) -> HashMap<String, u64> {
    hubs.iter()
        .filter_map(|(hub, _)| {
            let a = http_get(
                addr,
                &format!("{}?cache=fresh", E::UserPrimaryList.target(&[hub])),
            )
            .ok()?;
            let list = a.json()["primary_list"].as_str()?.parse().ok()?;
            Some((hub.clone(), list))
        })
        .collect()
}
