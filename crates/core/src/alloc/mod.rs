//! Allocators (being written).
