//! The ranking side of a schedule: what each client holds, which job it waits with, and the
//! charges of the jobs it runs, kept in one place and told to a [`Ranker`] as they change.
//!
//! A scheduler that starts jobs itself and an adapter that watches another scheduler start
//! them need the same bookkeeping: a started job adds its holding (fractions of each
//! resource) to its client's and, for policies that charge jobs, starts accruing its rate;
//! a finished job takes both back. [`Book`] does exactly that for both: the adapters'
//! reconcile (`fairshare-reconcile`), which replays a cluster's accounting through a ranker,
//! and the batch engine (`fairshare-sim`), so that the two cannot charge a job differently.
//! The adapter tells the ranker at every change ([`Book::started`], [`Book::finished`]); the
//! engine, whose pass moves a client's head after a start, takes and gives back quietly
//! ([`Book::take`], [`Book::give_back`]) and tells once, with the new head ([`Book::waits`]).

use super::rows::Rows;
use super::{Head, RankError, Ranker, Standing};
use crate::model::Time;

/// A ranker with the holdings and heads it ranks by.
pub struct Book {
    ranker: Box<dyn Ranker>,
    holdings: Rows,
    heads: Vec<Option<Head>>,
    /// Per client: whether it holds what the ranker has not heard of ([`Book::take`]).
    untold: Vec<bool>,
}

impl Clone for Book {
    /// A copy in the present state ([`Ranker::boxed_clone`]), to try decisions on.
    fn clone(&self) -> Book {
        self.copy_with(self.ranker.boxed_clone())
    }
}

impl Book {
    /// A copy in the present state to play decisions out on at this one instant
    /// ([`Ranker::frozen_clone`]).
    pub fn frozen(&self) -> Book {
        self.copy_with(self.ranker.frozen_clone())
    }

    /// This book's holdings, heads and what the ranker has not heard of, told to `ranker`, a
    /// copy of this book's.
    fn copy_with(&self, ranker: Box<dyn Ranker>) -> Book {
        Book {
            ranker,
            holdings: self.holdings.clone(),
            heads: self.heads.clone(),
            untold: self.untold.clone(),
        }
    }

    /// A book of `clients` clients over `resources` resources, holding nothing, waiting for
    /// nothing, told to `ranker`.
    pub fn new(ranker: Box<dyn Ranker>, clients: usize, resources: usize) -> Book {
        Book {
            ranker,
            holdings: Rows::zeros(clients, resources),
            heads: vec![None; clients],
            untold: vec![false; clients],
        }
    }

    /// Brings the ranker's time-dependent priorities to `now`.
    pub fn advance(&mut self, now: Time) -> Result<(), RankError> {
        self.ranker.advance(now)
    }

    /// A job of `client` holding `holding` started now; `rate` is its usage per second for
    /// policies that charge jobs (`None`: the policy charges nothing).
    pub fn started(
        &mut self,
        client: u32,
        holding: &[f64],
        rate: Option<f64>,
    ) -> Result<(), RankError> {
        self.take(client, holding, rate)?;
        self.tell(client)
    }

    /// A job of `client` holding `holding` finished now, after `ran_s` seconds at `rate`.
    pub fn finished(
        &mut self,
        client: u32,
        holding: &[f64],
        rate: Option<f64>,
        ran_s: f64,
    ) -> Result<(), RankError> {
        self.give_back(client, holding, rate, ran_s)?;
        self.tell(client)
    }

    /// As [`Book::started`], but the ranker hears of the holding only at the client's next
    /// [`Book::waits`] (the charge it hears at once).
    pub fn take(
        &mut self,
        client: u32,
        holding: &[f64],
        rate: Option<f64>,
    ) -> Result<(), RankError> {
        let held = self.client(client)?;
        held.iter_mut().zip(holding).for_each(|(h, d)| *h += d);
        self.untold[client as usize] = true;
        match rate {
            Some(rate) => self.ranker.job_started(client, rate),
            None => Ok(()),
        }
    }

    /// As [`Book::finished`], but the ranker hears of the holding only at the client's next
    /// [`Book::waits`] (the charge it hears at once).
    pub fn give_back(
        &mut self,
        client: u32,
        holding: &[f64],
        rate: Option<f64>,
        ran_s: f64,
    ) -> Result<(), RankError> {
        let held = self.client(client)?;
        held.iter_mut()
            .zip(holding)
            .for_each(|(h, d)| *h = (*h - d).max(0.0));
        self.untold[client as usize] = true;
        match rate {
            Some(rate) => self.ranker.job_finished(client, rate, ran_s),
            None => Ok(()),
        }
    }

    /// `client` now waits with `head` first (`None`: it waits for nothing).
    pub fn waits(&mut self, client: u32, head: Option<Head>) -> Result<(), RankError> {
        self.client(client)?;
        self.heads[client as usize] = head;
        self.tell(client)
    }

    /// Each client of `waiting` waits with its head (or for nothing), as [`Book::waits`] one
    /// by one would tell it, the ranker settling its order once, after all of them (the first
    /// error stops the telling).
    pub fn waits_all(
        &mut self,
        waiting: impl IntoIterator<Item = (u32, Option<Head>)>,
    ) -> Result<(), RankError> {
        self.ranker.defer_order();
        let told = (waiting.into_iter()).try_for_each(|(client, head)| self.waits(client, head));
        self.ranker.settle_order();
        told
    }

    /// Whether the ranker knows that `client` waits for nothing and all it holds, so that
    /// telling it so again would change nothing.
    pub fn known_idle(&self, client: u32) -> bool {
        let c = client as usize;
        self.heads.get(c).is_some_and(Option::is_none) && !self.untold[c]
    }

    /// What `client` holds, as fractions of each resource (empty for a client not in the book).
    pub fn holdings(&self, client: u32) -> &[f64] {
        self.holdings.get(client as usize).unwrap_or(&[])
    }

    /// How many clients the book keeps.
    pub fn clients(&self) -> usize {
        self.holdings.clients()
    }

    /// The ranker, to ask whom it serves first or a client's priority.
    pub fn ranker(&self) -> &dyn Ranker {
        self.ranker.as_ref()
    }

    /// The ranker, for a scheduler's pass to set clients aside and restore them
    /// ([`Ranker::set_aside`], [`Ranker::restore`]); what clients hold and wait with goes
    /// through the book.
    pub fn ranker_mut(&mut self) -> &mut dyn Ranker {
        self.ranker.as_mut()
    }

    /// The waiting clients, first to last.
    pub fn order(&self) -> Vec<u32> {
        self.ranker.iter().collect()
    }

    /// The standing of each client of `asked` (in that order) were it waiting now with its
    /// given head first, holding what it holds ([`Ranker::standings`]), where the ranker
    /// orders by them (`None` too when one is not in the book, and where the ranker gives not
    /// one standing of each asked client, in order).
    pub fn standings(&self, asked: &[(u32, Head)]) -> Option<Vec<Standing>> {
        let rows = asked.iter().map(|&(c, head)| {
            let row = self.holdings.get(c as usize)?;
            Some((c, row, head))
        });
        let standings = self.ranker.standings(&rows.collect::<Option<Vec<_>>>()?)?;
        let each = standings.len() == asked.len()
            && (standings.iter().zip(asked))
                .all(|(standing, &(client, _))| standing.client == client);
        each.then_some(standings)
    }

    /// Every client, first to last, were each waiting now with `heads[c]` first, holding what
    /// it holds ([`Ranker::order_of_all`]).
    pub fn order_of_all(&self, heads: &[Head]) -> Result<Vec<u32>, RankError> {
        self.ranker.order_of_all(&self.holdings.all(), heads)
    }

    /// The holdings of `client`, or the ranker's own error for a client it does not have.
    fn client(&mut self, client: u32) -> Result<&mut [f64], RankError> {
        let clients = self.holdings.clients();
        if client as usize >= clients {
            return Err(RankError::Input {
                client,
                problem: format!("no such client; the book has {clients}"),
            });
        }
        Ok(self.holdings.row_mut(client as usize))
    }

    /// Tells the ranker what `client` holds and waits with.
    fn tell(&mut self, client: u32) -> Result<(), RankError> {
        let c = client as usize;
        self.untold[c] = false;
        self.ranker
            .update(client, self.holdings.row(c), self.heads[c])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::PriorityForm;
    use crate::rank::{FifoRanker, SdrfRanker, Share};

    fn secs(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    #[test]
    fn holdings_follow_starts_and_finishes() {
        let mut book = Book::new(Box::new(FifoRanker::new(2)), 2, 2);
        book.started(0, &[0.5, 0.25], None).unwrap();
        book.started(0, &[0.25, 0.25], None).unwrap();
        assert_eq!(book.holdings(0), &[0.75, 0.5]);
        book.finished(0, &[0.5, 0.25], None, 10.0).unwrap();
        assert_eq!(book.holdings(0), &[0.25, 0.25]);
        assert_eq!(book.holdings(1), &[0.0, 0.0]);
        assert!(book.started(2, &[0.1, 0.1], None).is_err());
    }

    #[test]
    fn only_waiting_clients_are_ranked_and_sdrf_remembers_who_held() {
        let mut book = Book::new(
            Box::new(SdrfRanker::with_delta(
                2,
                0.99,
                PriorityForm::SumOfMaxes,
                &Share::equal(2),
            )),
            2,
            2,
        );
        book.started(0, &[1.0, 1.0], None).unwrap();
        book.advance(secs(600.0)).unwrap();
        book.finished(0, &[1.0, 1.0], None, 600.0).unwrap();
        assert!(book.order().is_empty());
        book.waits(0, Some(Head::new(secs(600.0), 1))).unwrap();
        book.waits(1, Some(Head::new(secs(600.0), 2))).unwrap();
        assert_eq!(book.order(), vec![1, 0]);
        book.waits(1, None).unwrap();
        assert_eq!(book.order(), vec![0]);
    }
}
