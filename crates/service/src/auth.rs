//! Bearer tokens: the daemon keeps only their SHA-256 digests, compares in constant time, and
//! lets each role do what its holder needs and no more.

use fairshare_core::error::Invalid;
use rand::rngs::OsRng;
use rand::RngCore;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;
use subtle::ConstantTimeEq;

/// What a token may do; each role can do everything the roles below it can.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads priorities, explanations and nodes.
    Reader,
    /// A node agent: reports usage, and reads.
    Agent,
    /// An operator or the cloud's control plane: registers and removes nodes, users and workloads.
    Admin,
}

impl Role {
    /// The role's name as the configuration spells it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Agent => "agent",
            Role::Admin => "admin",
        }
    }
}

impl FromStr for Role {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Role, Invalid> {
        match s {
            "reader" => Ok(Role::Reader),
            "agent" => Ok(Role::Agent),
            "admin" => Ok(Role::Admin),
            _ => Err(Invalid(format!(
                "role {s:?} is not one of admin, agent, reader"
            ))),
        }
    }
}

/// The SHA-256 digest of a token, written as 64 hex digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenDigest([u8; 32]);

impl TokenDigest {
    /// The digest of a token.
    pub fn of(token: &str) -> TokenDigest {
        TokenDigest(Sha256::digest(token.as_bytes()).into())
    }

    /// The 64 lowercase hex digits.
    pub fn to_hex(self) -> String {
        hex::encode(self.0)
    }

    /// Whether two digests are equal, in time that does not depend on where they differ.
    pub fn matches(&self, other: &TokenDigest) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.to_hex())
    }
}

impl FromStr for TokenDigest {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<TokenDigest, Invalid> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(s, &mut bytes).map_err(|_| {
            format!("sha256 must be 64 hex digits (the digest of the token, not the token), found {} characters", s.len())
        })?;
        Ok(TokenDigest(bytes))
    }
}

impl Serialize for TokenDigest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for TokenDigest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TokenDigest, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A fresh token: `fs_` and 256 random bits from the operating system, as 64 hex digits.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    format!("fs_{}", hex::encode(bytes))
}

/// Which configured token, if any, a presented token is; every digest is compared, so the time
/// taken does not tell which one nearly matched.
pub fn identify(digests: &[TokenDigest], presented: &str) -> Option<usize> {
    let digest = TokenDigest::of(presented);
    let mut found = None;
    for (i, d) in digests.iter().enumerate() {
        if d.matches(&digest) && found.is_none() {
            found = Some(i);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_identified_by_its_digest_only() {
        let token = new_token();
        assert_eq!(token.len(), 67);
        let other = new_token();
        assert_ne!(token, other);
        let digests = [TokenDigest::of(&other), TokenDigest::of(&token)];
        assert_eq!(identify(&digests, &token), Some(1));
        assert_eq!(identify(&digests, &other), Some(0));
        assert_eq!(identify(&digests, "fs_guess"), None);
        assert_eq!(identify(&digests, &digests[1].to_hex()), None);
    }

    #[test]
    fn digests_round_trip_through_hex() {
        let d = TokenDigest::of("secret");
        assert_eq!(
            d.to_hex(),
            "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
        );
        assert_eq!(d.to_hex().parse::<TokenDigest>().unwrap(), d);
        assert!("abc".parse::<TokenDigest>().is_err());
        assert!("z".repeat(64).parse::<TokenDigest>().is_err());
    }

    #[test]
    fn roles_are_ordered_by_what_they_may_do() {
        assert!(Role::Admin > Role::Agent && Role::Agent > Role::Reader);
        assert_eq!("agent".parse::<Role>(), Ok(Role::Agent));
        assert!("root".parse::<Role>().is_err());
    }
}
