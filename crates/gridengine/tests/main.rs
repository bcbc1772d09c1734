//! Tests of the Grid Engine adapter on recorded outputs.

mod recorded;
