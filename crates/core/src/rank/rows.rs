//! Per-client vectors of one length kept in one allocation, so that copying a ranker or a
//! book (the adapters copy one at every pass) copies a few arrays, not one per client.

/// One row of `m` amounts per client, in one allocation.
#[derive(Debug, Clone)]
pub(crate) struct Rows {
    clients: usize,
    m: usize,
    values: Vec<f64>,
}

impl Rows {
    /// `clients` rows of `m` zeros.
    pub(crate) fn zeros(clients: usize, m: usize) -> Rows {
        Rows {
            clients,
            m,
            values: vec![0.0; clients * m],
        }
    }

    /// How many rows there are.
    pub(crate) fn clients(&self) -> usize {
        self.clients
    }

    /// Client `c`'s row.
    pub(crate) fn row(&self, c: usize) -> &[f64] {
        &self.values[c * self.m..(c + 1) * self.m]
    }

    /// Client `c`'s row, to change.
    pub(crate) fn row_mut(&mut self, c: usize) -> &mut [f64] {
        &mut self.values[c * self.m..(c + 1) * self.m]
    }

    /// Client `c`'s row, if there is one.
    pub(crate) fn get(&self, c: usize) -> Option<&[f64]> {
        (c < self.clients).then(|| self.row(c))
    }

    /// Every row, in order of client.
    pub(crate) fn all(&self) -> Vec<&[f64]> {
        (0..self.clients).map(|c| self.row(c)).collect()
    }
}
