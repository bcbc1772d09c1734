//! Ledgers (being written).
