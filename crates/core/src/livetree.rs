//! The kinetic live tree (being written).
